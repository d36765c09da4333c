/**
 * A small certificate authority for development: a self-signed CA and the serving certificates it
 * signs. The API server trusts the CA (a webhook configuration's or CRD conversion's `caBundle`),
 * so the serving certificate can be made again, for other hosts, without registering anything
 * anew. Deployments use cert-manager instead (docs/webhooks.md).
 *
 * Guarantees: see x509-certificate.ts (ECDSA P-256, SANs for the hosts, a CA that may only sign).
 * A serving certificate never outlives its CA, and is checked against it before it is returned:
 * issued by it (names match) and signed by its key.
 */
import { createPrivateKey, X509Certificate } from "node:crypto";
import type { CertificatePair } from "./serving-certificate.ts";
import { generateKeyPair, privateKeyPem, signCertificate } from "./x509-certificate.ts";

/** A CA: its certificate and private key, in PEM. */
export interface CertificateAuthority {
  cert: string;
  key: string;
}

/** How long a CA is valid: a year, long beyond a development session; it is renewed when it runs out. */
export const CA_VALIDITY_MS = 365 * 24 * 60 * 60 * 1000;
/** Backdated an hour, so that an API server whose clock lags a little accepts a certificate made a moment ago. */
const BACKDATE_MS = 60 * 60 * 1000;

/** A new self-signed CA named `commonName`. */
export function createCertificateAuthority(options: { commonName: string; now?: Date }): CertificateAuthority {
  const now = options.now ?? new Date();
  const { publicKey, privateKey } = generateKeyPair();
  const cert = signCertificate({
    commonName: options.commonName,
    publicKey,
    issuer: { commonName: options.commonName, privateKey, publicKey },
    usage: { ca: true },
    notBefore: new Date(now.getTime() - BACKDATE_MS),
    notAfter: new Date(now.getTime() + CA_VALIDITY_MS),
  });
  return { cert, key: privateKeyPem(privateKey) };
}

/**
 * Why `ca` cannot sign serving certificates valid at `now` for at least `remainingMs`, or undefined
 * when it can: not a certificate and key in PEM, not a CA, a key of another certificate, expired
 * or about to.
 */
export function unusableCertificateAuthority(ca: CertificateAuthority, now: Date, remainingMs = 0): string | undefined {
  let x: X509Certificate;
  try {
    x = new X509Certificate(ca.cert);
    if (!x.checkPrivateKey(createPrivateKey(ca.key))) return "its key is not the certificate's";
  } catch (err) {
    return `it does not load (${(err as Error).message})`;
  }
  if (!x.ca) return "it is not a CA certificate";
  if (commonNameOf(x) === undefined) return "its subject is not a common name alone";
  if (new Date(x.validFrom) > now) return `it is valid only from ${new Date(x.validFrom).toISOString()}`;
  if (new Date(x.validTo).getTime() - now.getTime() <= remainingMs) {
    return `it expires ${new Date(x.validTo).toISOString()}`;
  }
  return undefined;
}

/**
 * A serving certificate for `hosts` (its SANs) signed by `ca`, valid until the CA expires. Throws
 * when the CA cannot sign (see {@link unusableCertificateAuthority}).
 */
export function issueServingCertificate(
  ca: CertificateAuthority,
  options: { hosts: readonly string[]; commonName?: string; now?: Date },
): CertificatePair {
  const now = options.now ?? new Date();
  const unusable = unusableCertificateAuthority(ca, now);
  if (unusable !== undefined) throw new Error(`the CA cannot sign a serving certificate: ${unusable}`);
  const caCert = new X509Certificate(ca.cert);
  const caKey = createPrivateKey(ca.key);
  const { publicKey, privateKey } = generateKeyPair();
  const cert = signCertificate({
    commonName: options.commonName ?? options.hosts[0] ?? "localhost",
    publicKey,
    issuer: { commonName: commonNameOf(caCert) as string, privateKey: caKey, publicKey: caCert.publicKey },
    usage: { ca: false, hosts: options.hosts },
    notBefore: new Date(now.getTime() - BACKDATE_MS),
    notAfter: new Date(caCert.validTo),
  });
  const issued = new X509Certificate(cert);
  // The issuer name must match the CA's subject byte for byte: a CA not made here may spell it otherwise.
  if (!issued.checkIssued(caCert) || !issued.verify(caCert.publicKey)) {
    throw new Error(`the serving certificate does not chain to the CA ${caCert.subject}`);
  }
  return { cert, key: privateKeyPem(privateKey) };
}

/** The subject's common name when the subject is a common name alone (as {@link createCertificateAuthority} writes). */
function commonNameOf(x: X509Certificate): string | undefined {
  return /^CN=([^\n]*)$/.exec(x.subject)?.[1];
}
