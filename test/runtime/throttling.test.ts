import { waitUntil } from "capstan-dev/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ApiError } from "../../packages/capstan/src/client/errors.ts";
import type { KubeClient } from "../../packages/capstan/src/client/resource-client.ts";
import type { KubeObject, ResourceKind } from "../../packages/capstan/src/client/types.ts";
import { Controller, type ControllerOptions } from "../../packages/capstan/src/runtime/controller.ts";
import { exponentialFailureRateLimiter } from "../../packages/capstan/src/runtime/rate-limiter.ts";
import { throttledForMs } from "../../packages/capstan/src/runtime/throttling.ts";
import { ConfigMapKind, clientFor } from "../client/support/client.ts";
import {
  json,
  type RecordingHttpsServer,
  startRecordingHttpsServer,
  status,
} from "../client/support/recording-https-server.ts";
import { FakeSource } from "./controller-fakes.ts";

const Widget: ResourceKind = {
  group: "example.com",
  version: "v1",
  kind: "Widget",
  plural: "widgets",
  namespaced: true,
};

function widget(name: string): KubeObject {
  return {
    apiVersion: "example.com/v1",
    kind: "Widget",
    metadata: { name, namespace: "default", uid: `uid-${name}`, resourceVersion: "1" },
  };
}

let server: RecordingHttpsServer;
let client: KubeClient;
const controllers: Controller[] = [];

beforeEach(async () => {
  server = await startRecordingHttpsServer();
  // Retry-After honoured up to 30 s as in production (the shared test client caps it at 20 ms).
  client = clientFor(server, { retry: { baseDelayMs: 1, maxDelayMs: 30_000 } });
});
afterEach(async () => {
  for (const c of controllers.splice(0)) c.stopNow();
  await client.close();
  await server.close();
});

/**
 * One worker; the reconcile GETs the ConfigMap named after the object. The first GET of `a` is
 * answered 429 with Retry-After: 1, every other GET 200. Returns the order in which reconciles
 * finished ("a" or "b", with "a!" for a's failed attempt) and when.
 */
function run(throttled: ControllerOptions<KubeObject>["throttled"]) {
  let throttledOnce = false;
  server.on("GET", "/api/v1/namespaces/default/configmaps/a", (_req, res) => {
    if (throttledOnce) return json(res, 200, { metadata: { name: "a" } });
    throttledOnce = true;
    json(res, 429, status(429, "TooManyRequests", "later"), { "retry-after": "1" });
  });
  server.on("GET", "/api/v1/namespaces/default/configmaps/b", (_req, res) =>
    json(res, 200, { metadata: { name: "b" } }),
  );
  const finished: { key: string; at: number }[] = [];
  const source = new FakeSource();
  const c = new Controller({
    name: "widget",
    kind: Widget,
    primary: source,
    client,
    throttled,
    maxConcurrentReconciles: 1,
    rateLimiter: exponentialFailureRateLimiter({ baseDelay: 1, maxDelay: 50 }),
    reconcile: async (_target, ctx) => {
      try {
        await ctx.client.resource(ConfigMapKind, "default").get(ctx.key.name);
        finished.push({ key: ctx.key.name, at: performance.now() });
      } catch (err) {
        finished.push({ key: `${ctx.key.name}!`, at: performance.now() });
        throw err;
      }
    },
  });
  controllers.push(c);
  c.start();
  const started = performance.now();
  source.upsert(widget("a"));
  source.upsert(widget("b"));
  return { finished, started };
}

describe("a reconcile throttled with 429 and Retry-After", () => {
  it('"requeue" (the default): fails at once, frees the worker for other keys, and comes back after Retry-After', async () => {
    const { finished } = run(undefined);
    await waitUntil(() => finished.some((f) => f.key === "a"), { what: "a reconciled", timeout: 10_000 });
    expect(finished.map((f) => f.key)).toEqual(["a!", "b", "a"]);
    const [failed, , a] = finished as { at: number }[];
    // b was served while a waited (the order above); a came back when the server asked, not before.
    expect((a?.at ?? 0) - (failed?.at ?? 0)).toBeGreaterThanOrEqual(950);
    expect(server.requests.filter((r) => r.path.endsWith("/a"))).toHaveLength(2);
  });

  it('"wait": sleeps Retry-After out inside the request, holding the worker (client-go\'s behaviour)', async () => {
    const { finished, started } = run("wait");
    await waitUntil(() => finished.length === 2, { what: "a and b reconciled", timeout: 10_000 });
    expect(finished.map((f) => f.key)).toEqual(["a", "b"]);
    expect((finished[1] as { at: number }).at - started).toBeGreaterThanOrEqual(950);
  });
});

describe("throttledForMs", () => {
  const throttled = (seconds?: number) =>
    new ApiError(status(429, "TooManyRequests", "later") as ConstructorParameters<typeof ApiError>[0], seconds);

  it("is the Retry-After of a 429, also when wrapped as a cause, capped at 30 s", () => {
    expect(throttledForMs(throttled(2))).toBe(2000);
    expect(throttledForMs(new Error("reconcile failed", { cause: throttled(1) }))).toBe(1000);
    expect(throttledForMs(throttled(600))).toBe(30_000);
  });

  it("is undefined for a 429 without Retry-After and for other errors", () => {
    expect(throttledForMs(throttled())).toBeUndefined();
    expect(throttledForMs(new ApiError(status(500, "InternalError", "boom") as never, 1))).toBeUndefined();
    expect(throttledForMs(new Error("x"))).toBeUndefined();
  });
});
