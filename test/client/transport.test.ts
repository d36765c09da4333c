/**
 * The transport on Node's keep-alive HTTPS agent: sockets reused and closed when idle, the connect,
 * header and body time limits, and aborts before and after the response headers.
 */
import { createServer, type Server, type Socket } from "node:net";
import { waitUntil } from "capstan-dev/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClientConfig } from "../../packages/capstan/src/client/config.ts";
import { StaticCredentials } from "../../packages/capstan/src/client/credentials.ts";
import { Transport } from "../../packages/capstan/src/client/transport.ts";
import { json, type RecordingHttpsServer, startRecordingHttpsServer } from "./support/recording-https-server.ts";

let server: RecordingHttpsServer;
beforeAll(async () => {
  server = await startRecordingHttpsServer();
  server.on("GET", "/ok", (_req, res) => json(res, 200, { ok: true }));
});
afterAll(() => server.close());

function configFor(url: string): ClientConfig {
  return {
    server: url,
    tls: { ca: server.pki.caPem, insecureSkipTLSVerify: false },
    credentials: new StaticCredentials({ authorization: "Bearer t" }),
    namespace: "default",
    source: "test",
  };
}

describe("the transport", () => {
  it("reuses one socket for requests one after another, and closes it once idle", async () => {
    const transport = new Transport(configFor(server.url));
    const before = server.openSockets();
    for (let i = 0; i < 5; i++) {
      const res = await transport.send({ method: "GET", path: "/ok" });
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body)).toEqual({ ok: true });
    }
    expect(server.openSockets() - before).toBe(1);
    // The keep-alive time is 4 s: the idle socket goes away without a request or close().
    await waitUntil(() => server.openSockets() === before, { what: "the idle socket to close", timeout: 15_000 });
    await transport.close();
  });

  it("sends the credentials, the base path of the server URL and the body with its length", async () => {
    server.on("POST", "/prefix/echo", (req, res) =>
      json(res, 201, { body: req.body, len: req.headers["content-length"] }),
    );
    const transport = new Transport(configFor(`${server.url}/prefix/`));
    const res = await transport.send({ method: "POST", path: "/echo", body: "héllo", contentType: "text/plain" });
    expect(res.status).toBe(201);
    expect(JSON.parse(res.body)).toEqual({ body: "héllo", len: "6" });
    const seen = server.requests.at(-1);
    expect(seen?.headers.authorization).toBe("Bearer t");
    expect(seen?.headers["content-type"]).toBe("text/plain");
    await transport.close();
  });

  it("writes each header once as given: names without case (the last wins), a list as one line per value, and the server's Host", async () => {
    server.on("GET", "/headers", (_req, res) => json(res, 200, {}));
    const transport = new Transport(
      {
        ...configFor(server.url),
        credentials: new StaticCredentials({ authorization: "Bearer t", "impersonate-group": ["a,b", "c"] }),
      },
      { headers: { "user-agent": "capstan-test/1", "User-Agent": "capstan-test/2", Accept: "application/yaml" } },
    );
    expect((await transport.send({ method: "GET", path: "/headers" })).status).toBe(200);
    const seen = server.requests.at(-1);
    expect(seen?.headersDistinct.host).toEqual([new URL(server.url).host]);
    expect(seen?.headersDistinct["impersonate-group"]).toEqual(["a,b", "c"]);
    expect(seen?.headersDistinct["user-agent"]).toEqual(["capstan-test/2"]);
    expect(seen?.headersDistinct.accept).toEqual(["application/yaml"]);
    expect(seen?.headersDistinct.authorization).toEqual(["Bearer t"]);
    await transport.close();
  });

  it("refuses a header value that would split the request, before sending anything", async () => {
    const before = server.requests.length;
    const transport = new Transport({
      ...configFor(server.url),
      credentials: new StaticCredentials({ authorization: "Bearer t\r\nX-Injected: 1" }),
    });
    await expect(transport.send({ method: "GET", path: "/ok" })).rejects.toThrow(/Invalid character in header content/);
    expect(server.requests.length).toBe(before);
    await transport.close();
  });

  it("fails a body that pauses longer than the request's time limit", async () => {
    server.on("GET", "/stalls", (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"items":[');
    });
    const transport = new Transport(configFor(server.url));
    await expect(transport.send({ method: "GET", path: "/stalls", timeoutMs: 100 })).rejects.toMatchObject({
      code: "ERR_BODY_TIMEOUT",
    });
    await transport.close();
  });

  it("gives up on a server that accepts the connection but never completes the TLS handshake", async () => {
    const held: Socket[] = [];
    const silent: Server = createServer((socket) => {
      held.push(socket);
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const url = `https://127.0.0.1:${(silent.address() as { port: number }).port}`;
    const transport = new Transport(configFor(url), { connectTimeoutMs: 100 });
    await expect(transport.send({ method: "GET", path: "/ok" })).rejects.toMatchObject({
      name: "ConnectionError",
      failure: "timeout",
      message: expect.stringContaining(`cannot connect to ${url}: timed out`),
    });
    await transport.close();
    for (const s of held) s.destroy();
    await new Promise((resolve) => silent.close(resolve));
  });

  it("ends a streaming body when its signal aborts after the headers, and frees the socket", async () => {
    server.on("GET", "/watch", (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"type":"ADDED"}\n');
    });
    const transport = new Transport(configFor(server.url));
    const ac = new AbortController();
    const res = await transport.stream({ method: "GET", path: "/watch", signal: ac.signal });
    expect(res.status).toBe(200);
    const first = await new Promise<string>((resolve) => res.body.once("data", (c: Buffer) => resolve(c.toString())));
    expect(first).toBe('{"type":"ADDED"}\n');
    const closed = new Promise<void>((resolve) => res.body.once("close", () => resolve()));
    ac.abort();
    await closed;
    await server.requests.at(-1)?.socketClosed;
    await transport.close();
  });

  it("refuses requests after close()", async () => {
    const transport = new Transport(configFor(server.url));
    await transport.close();
    await expect(transport.send({ method: "GET", path: "/ok" })).rejects.toMatchObject({ code: "ERR_CLIENT_CLOSED" });
  });
});
