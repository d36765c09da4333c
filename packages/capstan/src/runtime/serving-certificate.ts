/**
 * The serving certificate of the secure metrics endpoint: the pair in a certificate directory when
 * there is one (`tls.crt`/`tls.key`, e.g. a cert-manager Secret mounted there), else a self-signed
 * one made at start, as controller-runtime's metrics server does. Self-signed is enough there:
 * what matters is that scrapes and their bearer tokens are encrypted; Prometheus scrapes such
 * endpoints with `insecureSkipVerify` (as it does kube-controller-manager's) or with the mounted
 * pair's CA.
 *
 * Guarantees: the self-signed certificate is ECDSA P-256 / SHA-256 (generated in milliseconds,
 * where an RSA-2048 key alone can take a hundred), valid for serverAuth only, not a CA, with SANs
 * `localhost`, 127.0.0.1, ::1 and the given host names (the pod's hostname by default).
 */
import { readFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { generateKeyPair, privateKeyPem, signCertificate } from "./x509-certificate.ts";

/** controller-runtime's default: `<temp dir>/k8s-metrics-server/serving-certs`. */
export const DEFAULT_METRICS_CERT_DIR = join(tmpdir(), "k8s-metrics-server", "serving-certs");
export const DEFAULT_CERT_NAME = "tls.crt";
export const DEFAULT_KEY_NAME = "tls.key";

/** A year, as client-go's self-signed certificates: the process restarts (and makes a new one) long before. */
const VALIDITY_MS = 365 * 24 * 60 * 60 * 1000;
/** Backdated an hour, so a scraper whose clock lags a little still accepts a certificate made a moment ago. */
const BACKDATE_MS = 60 * 60 * 1000;

/** PEM certificate (chain) and private key. */
export interface CertificatePair {
  cert: string;
  key: string;
}

/** Where a certificate pair is read from: `dir`/`certName` and `dir`/`keyName`. */
export interface CertificateFiles {
  dir: string;
  certName?: string;
  keyName?: string;
}

/** The paths of the pair's files. */
export function certificatePaths(files: CertificateFiles): { cert: string; key: string } {
  return {
    cert: join(files.dir, files.certName ?? DEFAULT_CERT_NAME),
    key: join(files.dir, files.keyName ?? DEFAULT_KEY_NAME),
  };
}

/**
 * The pair in the directory, or `undefined` when either file is missing (then the caller makes a
 * self-signed one, as controller-runtime does). Other read errors (permissions) are thrown.
 */
export async function readCertificatePair(files: CertificateFiles): Promise<CertificatePair | undefined> {
  const paths = certificatePaths(files);
  try {
    const [cert, key] = await Promise.all([readFile(paths.cert, "utf8"), readFile(paths.key, "utf8")]);
    return { cert, key };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new Error(
      `cannot read the metrics serving certificate ${paths.cert} / ${paths.key}: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
}

/** Options of {@link selfSignedCertificate}. */
export interface SelfSignedOptions {
  /** Extra DNS names or IP addresses (default: this host's name). */
  hosts?: readonly string[];
  /** Issue time (tests). */
  now?: Date;
}

/** A fresh self-signed serving certificate and its key; see the module documentation. */
export function selfSignedCertificate(options: SelfSignedOptions = {}): CertificatePair {
  const { publicKey, privateKey } = generateKeyPair();
  const now = options.now ?? new Date();
  const commonName = `${hostname()}@metrics`;
  const cert = signCertificate({
    commonName,
    publicKey,
    issuer: { commonName, privateKey, publicKey },
    usage: { ca: false, hosts: ["localhost", "127.0.0.1", "::1", ...(options.hosts ?? [hostname()])] },
    notBefore: new Date(now.getTime() - BACKDATE_MS),
    notAfter: new Date(now.getTime() + VALIDITY_MS),
  });
  return { cert, key: privateKeyPem(privateKey) };
}
