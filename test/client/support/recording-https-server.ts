/**
 * A local HTTPS server for client tests: a throwaway CA, a server certificate for 127.0.0.1/localhost,
 * a client certificate signed by the same CA (for mutual TLS), and a route table the test fills in.
 * Every request is recorded (method, path, query, headers, body) so tests can assert on the wire.
 */
import "./reflect-metadata.ts";
import { webcrypto } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer, type Server } from "node:https";
import type { Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import * as x509 from "@peculiar/x509";

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

const alg = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;

export interface Pki {
  caPem: string;
  serverCertPem: string;
  serverKeyPem: string;
  clientCertPem: string;
  clientKeyPem: string;
}

async function keyPem(key: webcrypto.CryptoKey): Promise<string> {
  const der = await webcrypto.subtle.exportKey("pkcs8", key);
  return x509.PemConverter.encode(der, "PRIVATE KEY");
}

let pkiCache: Promise<Pki> | undefined;

/** A CA, a server cert (127.0.0.1, localhost) and a client cert (CN=test-user), generated once per test file. */
export function testPki(): Promise<Pki> {
  pkiCache ??= (async () => {
    const notBefore = new Date(Date.now() - 60_000);
    const notAfter = new Date(Date.now() + 24 * 3600_000);
    const caKeys = (await webcrypto.subtle.generateKey(alg, true, ["sign", "verify"])) as webcrypto.CryptoKeyPair;
    const ca = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: "01",
      name: "CN=capstan-test-ca",
      notBefore,
      notAfter,
      keys: caKeys,
      signingAlgorithm: alg,
      extensions: [
        new x509.BasicConstraintsExtension(true, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      ],
    });
    const leaf = async (serial: string, cn: string, server: boolean) => {
      const keys = (await webcrypto.subtle.generateKey(alg, true, ["sign", "verify"])) as webcrypto.CryptoKeyPair;
      const cert = await x509.X509CertificateGenerator.create({
        serialNumber: serial,
        subject: cn,
        issuer: ca.subject,
        notBefore,
        notAfter,
        publicKey: keys.publicKey,
        signingKey: caKeys.privateKey,
        signingAlgorithm: alg,
        extensions: [
          new x509.BasicConstraintsExtension(false),
          new x509.ExtendedKeyUsageExtension([
            server ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth,
          ]),
          ...(server
            ? [
                new x509.SubjectAlternativeNameExtension([
                  { type: "ip", value: "127.0.0.1" },
                  { type: "dns", value: "localhost" },
                ]),
              ]
            : []),
        ],
      });
      return { cert: cert.toString("pem"), key: await keyPem(keys.privateKey) };
    };
    const server = await leaf("02", "CN=127.0.0.1", true);
    const client = await leaf("03", "CN=test-user", false);
    return {
      caPem: ca.toString("pem"),
      serverCertPem: server.cert,
      serverKeyPem: server.key,
      clientCertPem: client.cert,
      clientKeyPem: client.key,
    };
  })();
  return pkiCache;
}

/** What the server saw of one request. */
export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage["headers"];
  /** Every header's values, one per header line (a repeated header is not joined). */
  headersDistinct: IncomingMessage["headersDistinct"];
  body: string;
  /** CN of the client certificate, if one was presented. */
  clientCn: string | undefined;
  /** Resolves when the connection that carried this request is closed. */
  socketClosed: Promise<void>;
}

export type Handler = (req: RecordedRequest, res: ServerResponse) => void | Promise<void>;

export interface RecordingHttpsServer {
  url: string;
  pki: Pki;
  requests: RecordedRequest[];
  /** Routes by `METHOD /path` (no query); the fallback answers 404 with a NotFound Status. */
  on(method: string, path: string, handler: Handler): void;
  /** Sockets currently open on the server side. */
  openSockets(): number;
  close(): Promise<void>;
}

/** Sends `body` as JSON with `code`. */
export function json(res: ServerResponse, code: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** A Status body as the API server sends it. */
export function status(code: number, reason: string, message: string, extra: Record<string, unknown> = {}) {
  return { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, reason, code, ...extra };
}

/** Starts the server on a random port of 127.0.0.1; asks for (but does not require) a client certificate. */
export async function startRecordingHttpsServer(): Promise<RecordingHttpsServer> {
  const pki = await testPki();
  const routes = new Map<string, Handler>();
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const closed = new WeakMap<Socket, Promise<void>>();
  const server: Server = createServer(
    {
      cert: pki.serverCertPem,
      key: pki.serverKeyPem,
      ca: pki.caPem,
      requestCert: true,
      rejectUnauthorized: false,
    },
    (req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const url = new URL(req.url ?? "/", "https://x");
        const peer = (req.socket as TLSSocket).getPeerCertificate?.();
        const socket = req.socket;
        // One listener per connection, not per request: a keep-alive socket serves many.
        let socketClosed = closed.get(socket);
        if (socketClosed === undefined) {
          socketClosed = socket.destroyed
            ? Promise.resolve()
            : new Promise<void>((resolve) => socket.once("close", () => resolve()));
          closed.set(socket, socketClosed);
        }
        const recorded: RecordedRequest = {
          socketClosed,
          method: req.method ?? "",
          path: url.pathname,
          query: url.searchParams,
          headers: req.headers,
          headersDistinct: req.headersDistinct,
          body: Buffer.concat(chunks).toString("utf8"),
          clientCn: peer && (req.socket as TLSSocket).authorized ? (peer.subject?.CN as string | undefined) : undefined,
        };
        requests.push(recorded);
        const handler = routes.get(`${recorded.method} ${recorded.path}`);
        if (!handler) {
          json(res, 404, status(404, "NotFound", `no route for ${recorded.method} ${recorded.path}`));
          return;
        }
        Promise.resolve(handler(recorded, res)).catch((err: unknown) => {
          if (!res.headersSent) json(res, 500, status(500, "InternalError", String(err)));
          else res.destroy();
        });
      });
    },
  );
  server.on("secureConnection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `https://127.0.0.1:${port}`,
    pki,
    requests,
    on(method, path, handler) {
      routes.set(`${method} ${path}`, handler);
    },
    openSockets: () => sockets.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
