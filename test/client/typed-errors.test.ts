import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import type { ClientConfig } from "../../packages/capstan/src/client/config.ts";
import { ConnectionError, isConnectionError } from "../../packages/capstan/src/client/connection-error.ts";
import { CredentialError, isCredentialError } from "../../packages/capstan/src/client/credential-error.ts";
import { StaticCredentials } from "../../packages/capstan/src/client/credentials.ts";
import { DecodeError, isDecodeError } from "../../packages/capstan/src/client/decode-error.ts";
import { isApiError } from "../../packages/capstan/src/client/errors.ts";
import { KubeClient } from "../../packages/capstan/src/client/kube-client.ts";
import { isRequestError, RequestError } from "../../packages/capstan/src/client/request-error.ts";
import { isNoKindMatch, NoKindMatchError } from "../../packages/capstan/src/client/rest-mapper.ts";
import { isWatchError, WatchError } from "../../packages/capstan/src/client/watch-error.ts";
import { decodeWatchStream } from "../../packages/capstan/src/client/watch-stream.ts";

const servers: Server[] = [];
const clients: KubeClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

function configFor(server: string): ClientConfig {
  return {
    server,
    tls: { insecureSkipTLSVerify: false },
    credentials: new StaticCredentials({}),
    namespace: "default",
    source: "test",
  };
}

async function listening(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function client(url: string): KubeClient {
  const c = new KubeClient(configFor(url), { retry: false, timeoutMs: 2_000 });
  clients.push(c);
  return c;
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error("expected a rejection");
}

describe("the client's failures, told apart by class", () => {
  it("a server that cannot be reached: a RequestError naming the call, whose cause is a ConnectionError", async () => {
    const url = await listening(() => {});
    await new Promise((r) => servers.pop()?.close(r));
    const err = await rejection(client(url).request("GET", "/version"));
    expect(err).toBeInstanceOf(RequestError);
    expect((err as RequestError).message).toMatch(/^GET \/version to http:\/\/127\.0\.0\.1:\d+ failed: cannot connect/);
    expect((err as RequestError).cause).toBeInstanceOf(ConnectionError);
    expect([isRequestError(err), isConnectionError(err)]).toEqual([true, true]);
    expect([isDecodeError(err), isWatchError(err), isApiError(err)]).toEqual([false, false, false]);
  });

  it("a JSON answer that is not JSON: a DecodeError keeping the parser's message", async () => {
    const url = await listening((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end("<html>a proxy's page</html>");
    });
    const err = await rejection(client(url).request("GET", "/version"));
    expect(err).toBeInstanceOf(DecodeError);
    expect((err as DecodeError).cause).toBeInstanceOf(SyntaxError);
    expect((err as DecodeError).message).toBe(((err as DecodeError).cause as Error).message);
    expect([isDecodeError(err), isRequestError(err), isConnectionError(err)]).toEqual([true, false, false]);
  });

  it("a watch line that is not JSON, or not an event: a DecodeError with the old message", async () => {
    for (const [line, message] of [
      ["not json", /^watch: cannot decode event "not json": /],
      ['{"type":"SOMETHING","object":{}}', /^watch: malformed event /],
    ] as const) {
      const body = new PassThrough();
      const read = (async () => {
        for await (const _ of decodeWatchStream(body)) {
          // consume
        }
      })();
      body.write(`${line}\n`);
      const err = await rejection(read);
      expect(err).toBeInstanceOf(DecodeError);
      expect((err as Error).message).toMatch(message);
      expect(isWatchError(err)).toBe(false);
    }
  });

  it("a watch body that fails (not one that ends): a WatchError with the failure's message and code", async () => {
    const body = new PassThrough();
    const read = (async () => {
      for await (const _ of decodeWatchStream(body)) {
        // consume
      }
    })();
    body.destroy(Object.assign(new Error("certificate has expired"), { code: "CERT_HAS_EXPIRED" }));
    const err = await rejection(read);
    expect(err).toBeInstanceOf(WatchError);
    expect((err as WatchError).message).toBe("certificate has expired");
    expect((err as WatchError).code).toBe("CERT_HAS_EXPIRED");
    expect([isWatchError(err), isDecodeError(err)]).toEqual([true, false]);
  });

  it("a kind the server does not serve: a NoKindMatchError", async () => {
    const url = await listening((req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      if (req.url === "/api") res.end(JSON.stringify({ versions: ["v1"] }));
      else if (req.url === "/apis") res.end(JSON.stringify({ groups: [] }));
      else res.end(JSON.stringify({ groupVersion: "v1", resources: [] }));
    });
    const err = await rejection(client(url).kindFor("v1", "Widget"));
    expect(err).toBeInstanceOf(NoKindMatchError);
    expect((err as Error).message).toBe("the server does not serve kind Widget in v1");
    expect(isNoKindMatch(new Error("apply failed", { cause: err }))).toBe(true);
  });

  it("the is* helpers look through causes and recognise another copy's error by its name", () => {
    const foreign = Object.assign(new Error("exec plugin failed"), { name: "CredentialError" });
    expect(isCredentialError(foreign)).toBe(true);
    expect(isCredentialError(new Error("load failed", { cause: new CredentialError("no token") }))).toBe(true);
    expect(isCredentialError(new Error("plain"))).toBe(false);
    expect(isCredentialError("CredentialError")).toBe(false);
  });
});
