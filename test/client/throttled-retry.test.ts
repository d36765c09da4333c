import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ApiError } from "../../packages/capstan/src/client/errors.ts";
import type { KubeClient } from "../../packages/capstan/src/client/resource-client.ts";
import { shouldRetryStatus } from "../../packages/capstan/src/client/retry.ts";
import { ConfigMapKind, clientFor } from "./support/client.ts";
import {
  json,
  type RecordingHttpsServer,
  startRecordingHttpsServer,
  status,
} from "./support/recording-https-server.ts";

let server: RecordingHttpsServer;
let client: KubeClient;

beforeEach(async () => {
  server = await startRecordingHttpsServer();
  client = clientFor(server);
});
afterEach(async () => {
  await client.close();
  await server.close();
});

const cm = { metadata: { name: "a", namespace: "ns1" }, data: { k: "v" } };

/** The first request answers 429 (with `retryAfter` as Retry-After when given), the next ones 200. */
function throttleFirst(retryAfter?: string): () => number {
  let n = 0;
  server.on("GET", "/api/v1/namespaces/ns1/configmaps/a", (_r, res) => {
    n++;
    if (n === 1)
      json(res, 429, status(429, "TooManyRequests", "later"), retryAfter ? { "retry-after": retryAfter } : {});
    else json(res, 200, cm);
  });
  return () => n;
}

describe('throttled: "fail"', () => {
  it("rejects a 429 with Retry-After at once, with the seconds the server asked for", async () => {
    const requests = throttleFirst("3");
    const err = await client
      .withRetry({ throttled: "fail" })
      .resource(ConfigMapKind, "ns1")
      .get("a")
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe(429);
    expect((err as ApiError).retryAfterSeconds).toBe(3);
    expect(requests()).toBe(1);
  });

  it("still retries a 429 without Retry-After, with its own backoff", async () => {
    const requests = throttleFirst();
    await expect(
      client.withRetry({ throttled: "fail" }).resource(ConfigMapKind, "ns1").get("a"),
    ).resolves.toMatchObject(cm);
    expect(requests()).toBe(2);
  });

  it("leaves the client it was made from waiting Retry-After out (client-go's behaviour, the default)", async () => {
    client.withRetry({ throttled: "fail" });
    const requests = throttleFirst("1");
    await expect(client.resource(ConfigMapKind, "ns1").get("a")).resolves.toMatchObject(cm);
    expect(requests()).toBe(2);
  });

  it("applies to 429 only: a 503 with Retry-After of an idempotent request is still retried", () => {
    expect(shouldRetryStatus(429, true, { throttled: "fail" }, 1)).toBe(false);
    expect(shouldRetryStatus(429, true, { throttled: "fail" })).toBe(true);
    expect(shouldRetryStatus(429, true, { throttled: "wait" }, 1)).toBe(true);
    expect(shouldRetryStatus(503, true, { throttled: "fail" }, 1)).toBe(true);
  });
});

describe("withRetry views", () => {
  it("share the connection pool and the response observer of the client they come from", async () => {
    const seen: string[] = [];
    const observed = clientFor(server, { onResponse: (method, code) => seen.push(`${method} ${code}`) });
    try {
      throttleFirst("1");
      const view = observed.withRetry({ throttled: "fail" });
      await expect(view.resource(ConfigMapKind, "ns1").get("a")).rejects.toBeInstanceOf(ApiError);
      await view.resource(ConfigMapKind, "ns1").get("a");
      expect(seen).toEqual(["GET 429", "GET 200"]);
      // One pool: closing the client closes the view's sockets too, and a request after fails.
      await observed.close();
      await expect(view.resource(ConfigMapKind, "ns1").get("a")).rejects.toThrow();
    } finally {
      await observed.close();
    }
  });
});
