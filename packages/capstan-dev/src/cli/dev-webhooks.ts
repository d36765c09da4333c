/**
 * Webhooks under `capstan dev`: each operator's webhook server listens on 127.0.0.1 at a port
 * chosen once per `capstan dev` (kept across restarts), with a serving certificate from
 * `.capstan/webhook-certs` (made on first use, then kept, so configurations registered with its CA
 * stay valid), and the operator registers its own webhook configurations and CRD conversions
 * calling it there (`capstan run --managed-webhooks-url`).
 */
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import { createCertificateAuthority, issueServingCertificate } from "capstan/internal";

/** Makes (or finds) the certificate files in `dir`; resolves with the folder. */
export async function devWebhookCertificates(dir: string): Promise<string> {
  const files = { ca: join(dir, "ca.crt"), cert: join(dir, "tls.crt"), key: join(dir, "tls.key") };
  if (existsSync(files.ca) && existsSync(files.cert) && existsSync(files.key)) {
    const cert = await readFile(files.cert, "utf8");
    if (cert.includes("BEGIN CERTIFICATE")) return dir;
  }
  // The production package's development CA (as `capstan run --managed-webhooks-url` makes it).
  const ca = createCertificateAuthority({ commonName: "capstan dev webhook CA" });
  const serving = issueServingCertificate(ca, { hosts: ["127.0.0.1", "localhost", "::1"] });
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await writeFile(files.key, serving.key, { mode: 0o600 });
  await writeFile(files.cert, serving.cert, { mode: 0o644 });
  await writeFile(files.ca, ca.cert, { mode: 0o644 });
  return dir;
}

/** A port free on 127.0.0.1 now (the operator's webhook server binds it next). */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0));
    });
  });
}

/** `capstan run`'s flags for an operator whose webhook server listens on `port` with the certificates in `dir`. */
export function devWebhookArgs(port: number, dir: string): string[] {
  return [
    "--webhook-host",
    "127.0.0.1",
    "--webhook-port",
    String(port),
    "--webhook-cert-dir",
    dir,
    "--managed-webhooks-url",
    `https://127.0.0.1:${port}`,
    "--managed-webhooks-ca",
    join(dir, "ca.crt"),
  ];
}
