/**
 * Fault injection proven over HTTP: each fault as a client sees it (status, Status body, headers,
 * broken watch streams, 410s), armed both through `server.faults` and through `/capstan/faults`.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, request } from "undici";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ApiError } from "../../../packages/capstan/src/client/errors.ts";
import { KubeClient } from "../../../packages/capstan/src/client/resource-client.ts";
import { ConfigMapKind } from "../../client/support/client.ts";
import { configMap, type RawHttpCluster, startRawHttpCluster } from "../support/http.ts";

let t: RawHttpCluster;
const cleanups: (() => Promise<void> | void)[] = [];

beforeEach(async () => {
  t = await startRawHttpCluster({ builtinPlugins: false });
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await t.stop();
});

const CM = "/api/v1/namespaces/default/configmaps";

async function admin(body: unknown, token?: string) {
  return t.request("POST", "/capstan/faults", { body, ...(token ? { token } : {}) });
}

/**
 * A raw watch that tells a clean end of the stream from a connection broken mid-stream (the test
 * helper's watch treats both as "ended").
 */
async function rawWatch(path: string) {
  const agent = new Agent({ connect: { ca: t.server.caPem } });
  const controller = new AbortController();
  cleanups.push(async () => {
    controller.abort();
    await agent.close();
  });
  const res = await request(`${t.server.url}${path}`, {
    headers: { authorization: `Bearer ${t.server.token}` },
    dispatcher: agent,
    signal: controller.signal,
  });
  // biome-ignore lint/suspicious/noExplicitAny: watch events are arbitrary JSON
  const events: any[] = [];
  let waiting: (() => void) | undefined;
  const outcome = (async (): Promise<"ended" | "broken"> => {
    let buffer = "";
    try {
      for await (const chunk of res.body) {
        buffer += (chunk as Buffer).toString("utf8");
        for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
          events.push(JSON.parse(buffer.slice(0, nl)));
          buffer = buffer.slice(nl + 1);
        }
        waiting?.();
      }
      return "ended";
    } catch {
      return "broken";
    } finally {
      waiting?.();
    }
  })();
  let done = false;
  void outcome.then(() => {
    done = true;
  });
  const eventCount = async (n: number) => {
    while (events.length < n && !done) await new Promise<void>((r) => (waiting = r));
    return events.length >= n;
  };
  return { status: res.statusCode, events, outcome, eventCount };
}

describe("failing requests", () => {
  it("fails the next N matching requests with a real InternalError Status, then serves again", async () => {
    await t.request("POST", CM, { body: configMap("a") });
    t.server.faults.failNext(2, { code: 500, verbs: ["get"], resources: ["configmaps"] });

    const list = await t.request("GET", CM); // a list does not match the filter
    expect(list.status).toBe(200);
    for (let i = 0; i < 2; i++) {
      const res = await t.request("GET", `${CM}/a`);
      expect(res.status).toBe(500);
      expect(res.body).toEqual({
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: "Internal error occurred: fault injected by capstan",
        reason: "InternalError",
        details: { causes: [{ message: "fault injected by capstan" }] },
        code: 500,
      });
    }
    expect((await t.request("GET", `${CM}/a`)).status).toBe(200);
    expect(t.server.faults.counts.failed500).toBe(2);
  });

  it("answers 429 TooManyRequests with Retry-After and retryAfterSeconds", async () => {
    t.server.faults.failNext(1, { code: 429, retryAfterSeconds: 3 });
    const res = await t.request("GET", CM);
    expect(res.status).toBe(429);
    expect(res.headers["retry-after"]).toBe("3");
    expect(res.body).toMatchObject({
      kind: "Status",
      status: "Failure",
      reason: "TooManyRequests",
      message: "Too many requests, please try again later.",
      details: { retryAfterSeconds: 3 },
      code: 429,
    });
  });

  it("leaves discovery, health and the admin endpoint reliable while every resource request fails", async () => {
    t.server.faults.failFraction(1);
    expect((await t.request("GET", CM)).status).toBe(500);
    expect((await t.request("GET", "/api/v1")).status).toBe(200);
    expect((await t.request("GET", "/healthz")).status).toBe(200);
    expect((await admin({ action: "reset" })).status).toBe(200);
    expect((await t.request("GET", CM)).status).toBe(200);
  });

  it("fails a seeded fraction of requests, the same ones again after reseeding", async () => {
    const pattern = async () => {
      const codes: number[] = [];
      for (let i = 0; i < 60; i++) codes.push((await t.request("GET", CM)).status);
      return codes;
    };
    expect((await admin({ action: "seed", seed: 7 })).status).toBe(200);
    expect((await admin({ action: "fail", fraction: 0.3, code: 429, retryAfterSeconds: 0 })).status).toBe(200);
    const first = await pattern();
    const failed = first.filter((c) => c === 429).length;
    expect(failed).toBeGreaterThan(5);
    expect(failed).toBeLessThan(40);
    expect(first.every((c) => c === 200 || c === 429)).toBe(true);

    await admin({ action: "reset" });
    await admin({ action: "seed", seed: 7 });
    await admin({ action: "fail", fraction: 0.3, code: 429, retryAfterSeconds: 0 });
    expect(await pattern()).toEqual(first);
  });

  it("is ridden out by the client's retry loop, which sees each injected failure", async () => {
    const dir = mkdtempSync(join(tmpdir(), "capstan-faults-"));
    const kubeconfig = join(dir, "kubeconfig");
    writeFileSync(kubeconfig, t.server.kubeconfig);
    const seen: string[] = [];
    const client = await KubeClient.load({
      kubeconfig,
      env: {},
      retry: { baseDelayMs: 1, maxDelayMs: 10 },
      onResponse: (method: string, code: string) => seen.push(`${method} ${code}`),
    });
    cleanups.push(async () => {
      await client.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const cms = client.resource(ConfigMapKind, "default");
    await cms.create({ metadata: { name: "retried" }, data: { v: "1" } });
    seen.length = 0;
    t.server.faults.failNext(1, { code: 500, verbs: ["get"] });
    t.server.faults.failNext(1, { code: 429, retryAfterSeconds: 0, verbs: ["get"] });
    expect((await cms.get("retried")).data).toEqual({ v: "1" });
    expect(seen).toEqual(["GET 500", "GET 429", "GET 200"]);

    // More failures than the client's attempts: the caller gets the Status as an error.
    t.server.faults.failNext(10, { code: 500, verbs: ["get"] });
    const err = await cms.get("retried").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toMatchObject({ code: 500, reason: "InternalError" });
  });
});

describe("latency", () => {
  it("holds matching requests back while others are answered, and counts them", async () => {
    const seenVerbs: string[] = [];
    t.server.faults.addLatency(
      (info) => {
        seenVerbs.push(`${info.verb} ${info.resource}`);
        return info.resource === "configmaps" ? 400 : 0;
      },
      { verbs: ["list"] },
    );
    let slowDone = false;
    const slow = t.request("GET", CM).then((r) => {
      slowDone = true;
      return r;
    });
    const fast = await t.request("GET", "/api/v1/namespaces/default/secrets");
    expect(fast.status).toBe(200);
    expect(slowDone).toBe(false);
    expect((await slow).status).toBe(200);
    expect(seenVerbs).toEqual(["list configmaps", "list secrets"]);
    expect(t.server.faults.counts.delayed).toBe(1);
  });

  it("accepts fixed and ranged latency over the admin endpoint and reports it", async () => {
    let res = await admin({ action: "latency", minMs: 1, maxMs: 5, verbs: ["get"] });
    expect(res.body.state).toMatchObject({ latency: { minMs: 1, maxMs: 5 }, latencyFilter: { verbs: ["get"] } });
    res = await admin({ action: "latency", ms: 2 });
    expect(res.body.state.latency).toEqual({ fixedMs: 2 });
    expect((await t.request("GET", CM)).status).toBe(200);
    expect(t.server.faults.counts.delayed).toBe(1);
  });
});

describe("dropping watches", () => {
  it("breaks open watch connections mid-stream; a watch resumed from the last version misses nothing", async () => {
    const created = await t.request("POST", CM, { body: configMap("w1") });
    const rv = created.body.metadata.resourceVersion;
    const watch = await rawWatch(`${CM}?watch=true&resourceVersion=0`);
    expect(await watch.eventCount(1)).toBe(true);
    expect(watch.events[0]).toMatchObject({ type: "ADDED", object: { metadata: { name: "w1" } } });

    const res = await admin({ action: "dropWatches" });
    expect(res.body.result).toEqual({ watchesDropped: 1 });
    expect(await watch.outcome).toBe("broken");

    await t.request("POST", CM, { body: configMap("w2") });
    const resumed = await rawWatch(`${CM}?watch=true&resourceVersion=${rv}`);
    expect(await resumed.eventCount(1)).toBe(true);
    expect(resumed.events[0]).toMatchObject({ type: "ADDED", object: { metadata: { name: "w2" } } });
  });

  it("drops watches periodically until reset", async () => {
    t.server.faults.dropWatchesEvery(50);
    for (let i = 0; i < 2; i++) {
      const watch = await rawWatch(`${CM}?watch=true`);
      expect(await watch.outcome).toBe("broken");
    }
    expect(t.server.faults.state().dropWatchesEveryMs).toBe(50);
    t.server.faults.reset();
    expect(t.server.faults.state().dropWatchesEveryMs).toBeNull();
    const survivor = await rawWatch(`${CM}?watch=true`);
    await t.request("POST", CM, { body: configMap("after-reset") });
    expect(await survivor.eventCount(1)).toBe(true);
  });
});

describe("compaction", () => {
  it("answers 410 to watches, exact lists and continue tokens from before the compaction", async () => {
    for (const name of ["c1", "c2", "c3"]) await t.request("POST", CM, { body: configMap(name) });
    const page = await t.request("GET", `${CM}?limit=1`);
    const oldRv = page.body.metadata.resourceVersion;
    const token = page.body.metadata.continue;
    expect(token).toBeTruthy();
    await t.request("POST", CM, { body: configMap("c4") });

    const res = await admin({ action: "compact" });
    expect(res.status).toBe(200);
    const oldest = res.body.result.oldestResourceVersion;
    expect(Number(oldest)).toBeGreaterThan(Number(oldRv));

    const next = await t.request("GET", `${CM}?limit=1&continue=${encodeURIComponent(token)}`);
    expect(next.status).toBe(410);
    expect(next.body).toMatchObject({ reason: "Expired", code: 410 });
    expect(next.body.message).toMatch(/^The provided continue parameter is too old/);

    const exact = await t.request("GET", `${CM}?resourceVersion=${oldRv}&resourceVersionMatch=Exact`);
    expect(exact.status).toBe(410);

    const watch = await rawWatch(`${CM}?watch=true&resourceVersion=${oldRv}`);
    expect(await watch.eventCount(1)).toBe(true);
    expect(watch.events[0]).toMatchObject({
      type: "ERROR",
      object: {
        kind: "Status",
        code: 410,
        reason: "Expired",
        message: `too old resource version: ${oldRv} (${oldest})`,
      },
    });

    // From the compaction point on, all is served.
    expect((await t.request("GET", `${CM}?resourceVersion=${oldest}&resourceVersionMatch=Exact`)).status).toBe(200);
  });

  it("refuses a compaction beyond the current resourceVersion", async () => {
    const res = await admin({ action: "compact", resourceVersion: "999999" });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/cannot compact to resourceVersion 999999, the current one is \d+/);
  });
});

describe("restart", () => {
  it("drops every connection and watch, keeps the data, and makes older versions 410", async () => {
    const created = await t.request("POST", CM, { body: configMap("survivor", { k: "v" }) });
    const rv = created.body.metadata.resourceVersion;
    const watch = await rawWatch(`${CM}?watch=true&resourceVersion=${rv}`);
    expect(watch.status).toBe(200);

    const res = await admin({ action: "restart" });
    expect(res.status).toBe(200);
    expect(res.headers.connection).toBe("close");
    expect(res.body.result.watchesDropped).toBe(1);
    expect(res.body.result.connectionsDropped).toBeGreaterThanOrEqual(1); // at least the watch's
    expect(await watch.outcome).toBe("broken");

    const after = await t.request("GET", `${CM}/survivor`);
    expect(after.status).toBe(200);
    expect(after.body.data).toEqual({ k: "v" });
    await t.request("POST", CM, { body: configMap("later") });
    const stale = await rawWatch(`${CM}?watch=true&resourceVersion=${Number(rv) - 1}`);
    expect(await stale.eventCount(1)).toBe(true);
    expect(stale.events[0]).toMatchObject({ type: "ERROR", object: { code: 410, reason: "Expired" } });
  });
});

describe("the admin endpoint", () => {
  it("is refused to users outside system:masters with kube-apiserver's non-resource Forbidden", async () => {
    t.server.internals.authenticator.add("alice-token", { username: "alice", groups: ["system:authenticated"] });
    const res = await admin({ action: "reset" }, "alice-token");
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({
      kind: "Status",
      reason: "Forbidden",
      message: 'forbidden: User "alice" cannot post path "/capstan/faults"',
      code: 403,
    });
    expect((await admin({ action: "reset" }, "wrong-token")).status).toBe(401);
  });

  it("answers bad commands with 400 naming the problem, arming nothing", async () => {
    const cases: [unknown, RegExp][] = [
      [{ action: "explode" }, /unknown action "explode"/],
      [{ action: "fail", count: 1, fraction: 0.5 }, /exactly one of count or fraction/],
      [{ action: "fail", fraction: 2 }, /fraction must be a number from 0 to 1, got 2/],
      [{ action: "fail", count: 1, code: 404 }, /code must be 500 or 429, got 404/],
      [{ action: "fail", count: 1, verbs: "get" }, /verbs must be an array of strings/],
      [{ action: "latency", ms: -1 }, /latency must be a non-negative number/],
      [{ action: "dropWatches", now: true }, /unknown field\(s\) for action "dropWatches": now/],
      [[1, 2], /must be a JSON object/],
    ];
    for (const [body, message] of cases) {
      const res = await admin(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body).toMatchObject({ kind: "Status", reason: "BadRequest", code: 400 });
      expect(res.body.message).toMatch(message);
    }
    const raw = await t.request("POST", "/capstan/faults", { raw: "{nope" });
    expect(raw.status).toBe(400);
    expect(raw.body.message).toMatch(/not valid JSON/);
    const state = await t.request("GET", "/capstan/faults");
    expect(state.body).toMatchObject({ failures: [], latency: null, dropWatchesEveryMs: null });
  });

  it("shows what is armed", async () => {
    await admin({ action: "fail", count: 3, code: 429, resources: ["configmaps"] });
    await admin({ action: "fail", fraction: 0.1, message: "disk on fire" });
    const state = await t.request("GET", "/capstan/faults");
    expect(state.body.failures).toEqual([
      { remaining: 3, resources: ["configmaps"], code: 429, retryAfterSeconds: 1 },
      { fraction: 0.1, code: 500, message: "disk on fire" },
    ]);
    t.server.faults.failNext(1, { verbs: ["list"] }); // in-process and HTTP share one injector
    expect((await t.request("GET", "/capstan/faults")).body.failures).toHaveLength(3);
  });
});
