import { connect } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configMap, type RawHttpCluster, startRawHttpCluster } from "./support/http.ts";

let t: RawHttpCluster;
beforeAll(async () => {
  t = await startRawHttpCluster({ builtinPlugins: false });
  expect((await t.request("POST", "/api/v1/namespaces/default/configmaps", { body: configMap("one") })).status).toBe(
    201,
  );
});
afterAll(() => t.stop());

/** Sends one raw HTTP/1.1 request over TLS and returns everything the server wrote before closing. */
function rawRequest(head: string): Promise<string> {
  const url = new URL(t.server.url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port), ca: t.server.caPem }, () => {
      socket.write(head);
    });
    let text = "";
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString("latin1");
    });
    // A server that answers and closes while the request is still being written (the 431) resets the
    // connection under the client's remaining writes: the answer already read is what it sent.
    socket.on("error", (err) => (text === "" ? reject(err) : resolve(text)));
    socket.on("close", () => resolve(text));
  });
}

describe("request headers up to Go's limit", () => {
  it("serves a 100 KB label selector", async () => {
    const values = Array.from({ length: 20_000 }, (_, i) => `v${i}`).join(",");
    const selector = encodeURIComponent(`app in (${values})`);
    expect(selector.length).toBeGreaterThan(100_000);
    const res = await t.request("GET", `/api/v1/namespaces/default/configmaps?labelSelector=${selector}`);
    expect(res.status).toBe(200);
    expect(res.body.kind).toBe("ConfigMapList");
  });

  it("answers headers over 1 MiB with Go's plain-text 431 and closes the connection", async () => {
    const head =
      "GET /api/v1/namespaces HTTP/1.1\r\nHost: localhost\r\n" +
      `Authorization: Bearer ${t.server.token}\r\nX-Big: ${"x".repeat(2 * 1024 * 1024)}\r\n\r\n`;
    const answer = await rawRequest(head);
    expect(answer).toBe(
      "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; charset=utf-8\r\n" +
        "Connection: close\r\n\r\n431 Request Header Fields Too Large",
    );
    expect((await t.request("GET", "/api/v1/namespaces/default")).status).toBe(200);
  });
});

describe("names that are not path segments", () => {
  /** Status code and Status of a request sent with its path as is (fetch clients resolve dot segments). */
  async function sendAsIs(method: string, path: string, body?: object) {
    const payload = body === undefined ? "" : JSON.stringify(body);
    const contentType = method === "PATCH" ? "application/merge-patch+json" : "application/json";
    const answer = await rawRequest(
      `${method} ${path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${t.server.token}\r\n` +
        `Content-Type: ${contentType}\r\nContent-Length: ${payload.length}\r\nConnection: close\r\n\r\n${payload}`,
    );
    const status = Number(answer.slice(9, 12));
    return { status, body: JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)) };
  }

  it.each([
    ["%2e%2e", ".."],
    ["%2E%2E", ".."],
    [".%2e", ".."],
    ["..", ".."],
    ["%2e", "."],
  ])("refuses %s as the store's key function does, instead of resolving it", async (segment, name) => {
    for (const method of ["GET", "DELETE", "PUT", "PATCH"]) {
      const res = await sendAsIs(
        method,
        `/api/v1/namespaces/default/configmaps/${segment}`,
        method === "PUT" ? configMap(name) : method === "PATCH" ? {} : undefined,
      );
      expect([method, res.status, res.body.reason, res.body.message]).toEqual([
        method,
        400,
        "BadRequest",
        `Name parameter invalid: "${name}": may not be '${name}'`,
      ]);
    }
  });

  it("refuses a name holding a % once decoded", async () => {
    const res = await sendAsIs("GET", "/api/v1/namespaces/default/configmaps/a%25b");
    expect([res.status, res.body.message]).toEqual([400, `Name parameter invalid: "a%b": may not contain '%'`]);
  });
});

describe("a watch's resourceVersion", () => {
  it.each([
    ["abc", "invalid syntax"],
    ["-1", "invalid syntax"],
    ["18446744073709551616", "value out of range"],
  ])("%s is the storage's InvalidError, a 500 without a reason", async (rv, problem) => {
    const res = await t.request("GET", `/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${rv}`);
    expect(res.status).toBe(500);
    expect(res.body).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: `resourceVersion: Invalid value: "${rv}": strconv.ParseUint: parsing "${rv}": ${problem}`,
      code: 500,
    });
  });
});
