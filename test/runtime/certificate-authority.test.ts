import { execFile } from "node:child_process";
import { createPrivateKey, X509Certificate } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "node:tls";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import {
  createCertificateAuthority,
  issueServingCertificate,
  unusableCertificateAuthority,
} from "../../packages/capstan/src/runtime/certificate-authority.ts";
import { selfSignedCertificate } from "../../packages/capstan/src/runtime/serving-certificate.ts";

const run = promisify(execFile);
const now = new Date("2026-03-01T12:00:00Z");
const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

describe("the development certificate authority", () => {
  it("is a CA that may only sign certificates, valid a year", () => {
    const ca = createCertificateAuthority({ commonName: "test CA", now });
    const x = new X509Certificate(ca.cert);
    expect(x.ca).toBe(true);
    expect(x.subject).toBe("CN=test CA");
    expect(x.issuer).toBe(x.subject);
    expect(x.verify(x.publicKey)).toBe(true);
    expect(x.checkPrivateKey(createPrivateKey(ca.key))).toBe(true);
    expect(new Date(x.validTo).toISOString()).toBe("2027-03-01T12:00:00.000Z");
    expect(unusableCertificateAuthority(ca, now)).toBeUndefined();
  });

  it("signs serving certificates for IP addresses and names, valid until the CA expires", () => {
    const ca = createCertificateAuthority({ commonName: "test CA", now });
    const { cert, key } = issueServingCertificate(ca, { hosts: ["10.0.0.7", "webhooks.example.test", "::1"], now });
    const x = new X509Certificate(cert);
    const caCert = new X509Certificate(ca.cert);
    expect(x.ca).toBe(false);
    expect(x.checkIssued(caCert)).toBe(true);
    expect(x.verify(caCert.publicKey)).toBe(true);
    expect(x.checkPrivateKey(createPrivateKey(key))).toBe(true);
    expect(x.subjectAltName?.split(", ")).toEqual([
      "IP Address:10.0.0.7",
      "DNS:webhooks.example.test",
      "IP Address:0:0:0:0:0:0:0:1",
    ]);
    expect(x.keyUsage).toEqual(["1.3.6.1.5.5.7.3.1"]); // serverAuth only
    expect(x.validTo).toBe(caCert.validTo);
  });

  it("is accepted by OpenSSL's strict verification as a server certificate chain", async (ctx) => {
    const openssl = await run("openssl", ["version"]).catch(() => undefined);
    if (openssl === undefined) return ctx.skip("no openssl on this machine");
    const dir = await mkdtemp(join(tmpdir(), "capstan-ca-"));
    dirs.push(dir);
    const ca = createCertificateAuthority({ commonName: "test CA" });
    await writeFile(join(dir, "ca.crt"), ca.cert);
    await writeFile(join(dir, "tls.crt"), issueServingCertificate(ca, { hosts: ["127.0.0.1"] }).cert);
    const verified = await run("openssl", [
      "verify",
      "-x509_strict",
      "-purpose",
      "sslserver",
      "-CAfile",
      join(dir, "ca.crt"),
      join(dir, "tls.crt"),
    ]);
    expect(verified.stdout.trim()).toBe(`${join(dir, "tls.crt")}: OK`);
  });

  it("is trusted by a TLS client given only the CA, for the certificate's host and no other", async () => {
    const ca = createCertificateAuthority({ commonName: "test CA" });
    const server = createServer(issueServingCertificate(ca, { hosts: ["127.0.0.1"] }), (_req, res) => res.end("ok"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    const handshake = (servername?: string) =>
      new Promise<string>((resolve) => {
        const socket = connect({ host: "127.0.0.1", port, ca: ca.cert, ...(servername ? { servername } : {}) }, () => {
          socket.end();
          resolve("verified");
        });
        socket.once("error", (err) => resolve(err.message));
      });
    try {
      expect(await handshake()).toBe("verified");
      expect(await handshake("other.example.test")).toMatch(/Hostname\/IP does not match/);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("says why a CA cannot sign: expiring, not a CA, or a key of another certificate", () => {
    const ca = createCertificateAuthority({ commonName: "test CA", now });
    const later = new Date(now.getTime() + 360 * 24 * 3600 * 1000);
    expect(unusableCertificateAuthority(ca, later, 7 * 24 * 3600 * 1000)).toBe("it expires 2027-03-01T12:00:00.000Z");
    const leaf = selfSignedCertificate({ now });
    expect(unusableCertificateAuthority(leaf, now)).toBe("it is not a CA certificate");
    const other = createCertificateAuthority({ commonName: "other", now });
    expect(unusableCertificateAuthority({ cert: ca.cert, key: other.key }, now)).toBe(
      "its key is not the certificate's",
    );
    expect(unusableCertificateAuthority({ cert: "garbage", key: ca.key }, now)).toMatch(/^it does not load/);
    expect(() => issueServingCertificate(leaf, { hosts: ["x"], now })).toThrow(
      "the CA cannot sign a serving certificate: it is not a CA certificate",
    );
  });
});
