/**
 * The devcluster's own certificate authority and serving certificate, made fresh at every start.
 *
 * ECDSA P-256 through WebCrypto: key generation and signing take a few milliseconds, where RSA-2048
 * key generation alone would eat most of the 150 ms start-up budget.
 */
import { webcrypto } from "node:crypto";
import { isIP } from "node:net";
import type * as X509 from "@peculiar/x509";
import "./reflect-metadata-shim.ts";

type CryptoKeyPair = webcrypto.CryptoKeyPair;
const crypto = webcrypto;

let loaded: Promise<typeof X509> | undefined;
/** @peculiar/x509 loads tsyringe, which needs Reflect metadata: import it only after the shim is installed. */
function loadX509(): Promise<typeof X509> {
  loaded ??= import("@peculiar/x509").then((x509) => {
    x509.cryptoProvider.set(crypto as unknown as Parameters<typeof x509.cryptoProvider.set>[1]);
    return x509;
  });
  return loaded;
}

const ecdsa = { name: "ECDSA", namedCurve: "P-256" } as const;
const signing = { name: "ECDSA", hash: "SHA-256" } as const;

/** Why a year: the devcluster is recreated at every start; a year is beyond any session and any clock skew. */
const VALIDITY_MS = 365 * 24 * 60 * 60 * 1000;
/** Backdated so that a client whose clock lags a little still accepts a certificate made a moment ago. */
const BACKDATE_MS = 60 * 60 * 1000;

/** PEM material of a fresh CA and of the server certificate it signed. */
export interface ServingCertificates {
  caPem: string;
  certPem: string;
  keyPem: string;
}

/**
 * Makes a CA and a serving certificate whose SANs cover 127.0.0.1, ::1, localhost and `host`
 * (an IP address or a DNS name).
 */
export async function createServingCertificates(host = "127.0.0.1"): Promise<ServingCertificates> {
  const x509 = await loadX509();
  const [caKeys, serverKeys] = await Promise.all([
    crypto.subtle.generateKey(ecdsa, true, ["sign", "verify"]) as Promise<CryptoKeyPair>,
    crypto.subtle.generateKey(ecdsa, true, ["sign", "verify"]) as Promise<CryptoKeyPair>,
  ]);
  const notBefore = new Date(Date.now() - BACKDATE_MS);
  const notAfter = new Date(Date.now() + VALIDITY_MS);
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: "CN=capstan-devcluster-ca",
    notBefore,
    notAfter,
    keys: caKeys,
    signingAlgorithm: signing,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
    ],
  });

  const names: { type: "ip" | "dns"; value: string }[] = [
    { type: "ip", value: "127.0.0.1" },
    { type: "ip", value: "::1" },
    { type: "dns", value: "localhost" },
  ];
  if (!names.some((n) => n.value === host) && host !== "" && host !== "0.0.0.0" && host !== "::") {
    names.push({ type: isIP(host) ? "ip" : "dns", value: host });
  }
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: "CN=capstan-devcluster",
    issuer: ca.subject,
    notBefore,
    notAfter,
    publicKey: serverKeys.publicKey,
    signingKey: caKeys.privateKey,
    signingAlgorithm: signing,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(names),
    ],
  });
  const pkcs8 = await crypto.subtle.exportKey("pkcs8", serverKeys.privateKey);
  return {
    caPem: ca.toString("pem"),
    certPem: cert.toString("pem"),
    keyPem: toPem("PRIVATE KEY", new Uint8Array(pkcs8)),
  };
}

function randomSerial(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[0] = (bytes[0] ?? 0) & 0x7f; // a positive INTEGER in DER
  return Buffer.from(bytes).toString("hex");
}

function toPem(label: string, der: Uint8Array): string {
  const b64 = Buffer.from(der).toString("base64");
  const lines = b64.match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join("\n")}\n-----END ${label}-----\n`;
}
