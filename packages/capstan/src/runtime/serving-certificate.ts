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
import { generateKeyPairSync, randomBytes, sign } from "node:crypto";
import { readFile } from "node:fs/promises";
import { isIP } from "node:net";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import {
  bitString,
  boolean,
  type Der,
  explicit,
  implicit,
  objectIdentifier,
  octetString,
  sequence,
  set,
  time,
  unsignedInteger,
  utf8String,
} from "./der.ts";

/** controller-runtime's default: `<temp dir>/k8s-metrics-server/serving-certs`. */
export const DEFAULT_METRICS_CERT_DIR = join(tmpdir(), "k8s-metrics-server", "serving-certs");
export const DEFAULT_CERT_NAME = "tls.crt";
export const DEFAULT_KEY_NAME = "tls.key";

/** A year, as client-go's self-signed certificates: the process restarts (and makes a new one) long before. */
const VALIDITY_MS = 365 * 24 * 60 * 60 * 1000;
/** Backdated an hour, so a scraper whose clock lags a little still accepts a certificate made a moment ago. */
const BACKDATE_MS = 60 * 60 * 1000;

const OID = {
  ecdsaWithSha256: "1.2.840.10045.4.3.2",
  commonName: "2.5.4.3",
  basicConstraints: "2.5.29.19",
  keyUsage: "2.5.29.15",
  extendedKeyUsage: "2.5.29.37",
  subjectAltName: "2.5.29.17",
  serverAuth: "1.3.6.1.5.5.7.3.1",
} as const;

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
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const now = options.now ?? new Date();
  const name = sequence(set(sequence(objectIdentifier(OID.commonName), utf8String(`${hostname()}@metrics`))));
  const algorithm = sequence(objectIdentifier(OID.ecdsaWithSha256));
  const serial = randomBytes(16);
  serial[0] = (serial[0] ?? 0) & 0x7f; // RFC 5280: a positive serial of at most 20 bytes
  const tbs = sequence(
    explicit(0, unsignedInteger(Buffer.from([2]))), // v3
    unsignedInteger(serial),
    algorithm,
    name,
    sequence(time(new Date(now.getTime() - BACKDATE_MS)), time(new Date(now.getTime() + VALIDITY_MS))),
    name,
    publicKey.export({ type: "spki", format: "der" }),
    explicit(3, sequence(...extensions(["localhost", "127.0.0.1", "::1", ...(options.hosts ?? [hostname()])]))),
  );
  const signature = sign("sha256", tbs, privateKey); // DER-encoded ECDSA signature, as X.509 wants
  const cert = sequence(tbs, algorithm, bitString(signature));
  return {
    cert: pem("CERTIFICATE", cert),
    key: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
  };
}

function extensions(hosts: readonly string[]): Der[] {
  const names = [...new Set(hosts.filter((h) => h !== ""))].map((h) => {
    const version = isIP(h);
    if (version === 0) return implicit(2, Buffer.from(h, "ascii")); // dNSName
    return implicit(7, ipBytes(h, version)); // iPAddress
  });
  const extension = (oid: string, critical: boolean, value: Der) =>
    sequence(objectIdentifier(oid), ...(critical ? [boolean(true)] : []), octetString(value));
  return [
    extension(OID.basicConstraints, true, sequence()), // cA FALSE (the default, so left out)
    extension(OID.keyUsage, true, bitString(Buffer.from([0x80]), 7)), // digitalSignature
    extension(OID.extendedKeyUsage, false, sequence(objectIdentifier(OID.serverAuth))),
    extension(OID.subjectAltName, false, sequence(...names)),
  ];
}

function ipBytes(ip: string, version: number): Buffer {
  if (version === 4) return Buffer.from(ip.split(".").map(Number));
  // Expand "::" then write eight 16-bit groups.
  const [head = "", tail = ""] = ip.split("::");
  const groups = (s: string) => (s === "" ? [] : s.split(":"));
  const h = groups(head);
  const t = ip.includes("::") ? groups(tail) : [];
  const all = [...h, ...Array(8 - h.length - t.length).fill("0"), ...t];
  const out = Buffer.alloc(16);
  for (const [i, g] of all.entries()) out.writeUInt16BE(Number.parseInt(g, 16), i * 2);
  return out;
}

function pem(label: string, der: Buffer): string {
  const lines = der.toString("base64").match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join("\n")}\n-----END ${label}-----\n`;
}
