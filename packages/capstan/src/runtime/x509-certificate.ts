/**
 * Writes X.509 v3 certificates (RFC 5280) with Node's crypto and der.ts, so that the production
 * package makes its own certificates without a certificate library: the metrics server's
 * self-signed one (serving-certificate.ts), and a development CA with the serving certificates it
 * signs (certificate-authority.ts).
 *
 * Guarantees: keys are ECDSA P-256 and signatures ECDSA with SHA-256 (a key in about a millisecond,
 * where RSA-2048 takes up to a hundred); a CA certificate has `cA TRUE` with path length 0 and may
 * only sign certificates (keyCertSign, cRLSign); a serving certificate is not a CA, is valid for
 * serverAuth only, and names its hosts as SANs (an IP address as an iPAddress, anything else as a
 * dNSName), which is what Go's and Node's TLS clients check, never the common name. The issuer name
 * is encoded exactly as the CA's subject (a common name in a UTF8String), which chain building
 * compares byte for byte.
 */
import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from "node:crypto";
import { isIP } from "node:net";
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

const OID = {
  ecdsaWithSha256: "1.2.840.10045.4.3.2",
  commonName: "2.5.4.3",
  subjectKeyIdentifier: "2.5.29.14",
  keyUsage: "2.5.29.15",
  subjectAltName: "2.5.29.17",
  basicConstraints: "2.5.29.19",
  authorityKeyIdentifier: "2.5.29.35",
  extendedKeyUsage: "2.5.29.37",
  serverAuth: "1.3.6.1.5.5.7.3.1",
} as const;

/** What a certificate says and who signs it. */
export interface CertificateTemplate {
  /** The subject's common name. */
  commonName: string;
  /** The subject's public key. */
  publicKey: KeyObject;
  /** The issuer: its common name and private key; the subject's own for a self-signed certificate. */
  issuer: { commonName: string; privateKey: KeyObject; publicKey: KeyObject };
  /** A CA certificate (signs certificates, serves nothing), or a serving certificate for `hosts`. */
  usage: { ca: true } | { ca: false; hosts: readonly string[] };
  notBefore: Date;
  notAfter: Date;
}

/** A fresh ECDSA P-256 key pair. */
export function generateKeyPair(): { publicKey: KeyObject; privateKey: KeyObject } {
  return generateKeyPairSync("ec", { namedCurve: "P-256" });
}

/** The certificate of `template`, signed by its issuer, in PEM. */
export function signCertificate(template: CertificateTemplate): string {
  const algorithm = sequence(objectIdentifier(OID.ecdsaWithSha256));
  const serial = randomBytes(16);
  serial[0] = (serial[0] ?? 0) & 0x7f; // RFC 5280: a positive serial of at most 20 bytes
  const subjectKey = template.publicKey.export({ type: "spki", format: "der" });
  const tbs = sequence(
    explicit(0, unsignedInteger(Buffer.from([2]))), // v3
    unsignedInteger(serial),
    algorithm,
    name(template.issuer.commonName),
    sequence(time(template.notBefore), time(template.notAfter)),
    name(template.commonName),
    subjectKey,
    explicit(3, sequence(...extensions(template))),
  );
  const signature = sign("sha256", tbs, template.issuer.privateKey); // DER-encoded ECDSA, as X.509 wants
  return pem("CERTIFICATE", sequence(tbs, algorithm, bitString(signature)));
}

/** A private key in PKCS #8 PEM, the form Node's TLS and Go's `tls.X509KeyPair` read. */
export function privateKeyPem(key: KeyObject): string {
  return key.export({ type: "pkcs8", format: "pem" }).toString();
}

function name(commonName: string): Der {
  return sequence(set(sequence(objectIdentifier(OID.commonName), utf8String(commonName))));
}

function extensions(template: CertificateTemplate): Der[] {
  const extension = (oid: string, critical: boolean, value: Der) =>
    sequence(objectIdentifier(oid), ...(critical ? [boolean(true)] : []), octetString(value));
  // Key identifiers (RFC 5280 4.2.1.2, method 1): let a verifier pick the right CA among several of one name.
  const keyId = (key: KeyObject) => createHash("sha1").update(publicKeyBits(key)).digest();
  const identifiers = [
    extension(OID.subjectKeyIdentifier, false, octetString(keyId(template.publicKey))),
    extension(OID.authorityKeyIdentifier, false, sequence(implicit(0, keyId(template.issuer.publicKey)))),
  ];
  if (template.usage.ca) {
    return [
      extension(OID.basicConstraints, true, sequence(boolean(true), unsignedInteger(Buffer.from([0])))),
      extension(OID.keyUsage, true, bitString(Buffer.from([0x06]), 1)), // keyCertSign, cRLSign
      ...identifiers,
    ];
  }
  const names = [...new Set(template.usage.hosts.filter((h) => h !== ""))].map((h) => {
    const version = isIP(h);
    if (version === 0) return implicit(2, Buffer.from(h, "ascii")); // dNSName
    return implicit(7, ipBytes(h, version)); // iPAddress
  });
  return [
    extension(OID.basicConstraints, true, sequence()), // cA FALSE (the default, so left out)
    extension(OID.keyUsage, true, bitString(Buffer.from([0x80]), 7)), // digitalSignature
    extension(OID.extendedKeyUsage, false, sequence(objectIdentifier(OID.serverAuth))),
    extension(OID.subjectAltName, false, sequence(...names)),
    ...identifiers,
  ];
}

/** The subjectPublicKey BIT STRING's content: the last 65 bytes of a P-256 SPKI (an uncompressed point). */
function publicKeyBits(key: KeyObject): Buffer {
  const spki = key.export({ type: "spki", format: "der" });
  return spki.subarray(spki.length - 65);
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
