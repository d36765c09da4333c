/**
 * Run traces (runtime/run-trace.ts): what an observer hears about each reconcile, handler and timer
 * run, and the writes attributed to it (client/write-trace.ts), against the embedded API server.
 */
import { startTestCluster, waitUntil } from "capstan-dev/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { currentWriteRecorder, resourcePath } from "../../packages/capstan/src/client/write-trace.ts";
import { PermanentError, TemporaryError } from "../../packages/capstan/src/operator/errors.ts";
import { operator } from "../../packages/capstan/src/operator/index.ts";
import { Event } from "../../packages/capstan/src/resources/builtins.ts";
import { Controller, type ReconcileFunction } from "../../packages/capstan/src/runtime/controller.ts";
import { exponentialFailureRateLimiter } from "../../packages/capstan/src/runtime/rate-limiter.ts";
import { TerminalError } from "../../packages/capstan/src/runtime/reconcile.ts";
import { observeReconciles, type ReconcileRun } from "../../packages/capstan/src/runtime/run-trace.ts";
import { Machine, machineCrd, namespace, run } from "../operator/support/cluster.ts";
import { deferred, FakeSource } from "./controller-fakes.ts";
import { ConfigMap, type ConfigMapObject, type Widget, Widget as WidgetKind } from "./support/widget.ts";

type Cluster = Awaited<ReturnType<typeof startTestCluster>>;
let cluster: Cluster;
beforeAll(async () => {
  cluster = await startTestCluster({ crds: [machineCrd] });
}, 30_000);
afterAll(async () => {
  await cluster?.stop();
});

const runs: ReconcileRun[] = [];
let unobserve: (() => void) | undefined;
const controllers: Controller<Widget>[] = [];
afterEach(() => {
  unobserve?.();
  unobserve = undefined;
  runs.length = 0;
  for (const c of controllers.splice(0)) c.stopNow();
});
function observe(): void {
  unobserve = observeReconciles({ onRun: (r) => runs.push(r) });
}

function widget(name: string): Widget {
  return {
    apiVersion: "example.com/v1",
    kind: "Widget",
    metadata: { name, namespace: "default", uid: `uid-${name}`, resourceVersion: "1" },
    spec: { size: 1 },
  };
}

/** A controller of Widgets from a fake source, writing through the test cluster's client. */
function widgets(reconcile: ReconcileFunction<Widget>, baseDelay = 1000): { source: FakeSource<Widget> } {
  const source = new FakeSource<Widget>();
  const c = new Controller<Widget>({
    name: "widget",
    kind: WidgetKind,
    primary: source,
    reconcile,
    client: cluster.client,
    // A long, known first delay: the trace must report it, and no retry comes during the test.
    rateLimiter: exponentialFailureRateLimiter({ baseDelay, maxDelay: 60_000 }),
  });
  controllers.push(c);
  c.start();
  return { source };
}

function configMap(name: string): ConfigMapObject {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "default" }, data: { a: "1" } };
}

const runsOf = (name: string) => runs.filter((r) => r.object.name === name);

describe("reconcile runs", () => {
  it("reports a success with its writes, a requeueAfter, a thrown error with its retry delay, and a TerminalError without one", async () => {
    observe();
    const { source } = widgets(async (_target, ctx) => {
      switch (ctx.key.name) {
        case "ok":
          await ctx.client.resource(ConfigMap, "default").create(configMap("trace-ok"));
          return;
        case "later":
          return { requeueAfter: "1h" };
        case "bad":
          throw new Error("the rate source answered 500");
        default:
          throw new TerminalError("spec.currency is not a currency");
      }
    });
    for (const name of ["ok", "later", "bad", "final"]) source.upsert(widget(name));
    await waitUntil(() => ["ok", "later", "bad", "final"].every((n) => runsOf(n).length === 1), { what: "4 runs" });

    const [ok] = runsOf("ok");
    expect(ok).toMatchObject({
      type: "reconcile",
      controller: "widget",
      object: { group: "example.com", version: "v1", kind: "Widget", namespace: "default", name: "ok", uid: "uid-ok" },
      outcome: { result: "ok" },
      writes: [{ verb: "POST", group: "", resource: "configmaps", namespace: "default", name: "trace-ok", code: 201 }],
    });
    expect(ok?.durationMs).toBeGreaterThanOrEqual(0);
    expect(ok?.start).toBeLessThanOrEqual(Date.now());
    expect(runsOf("later")[0]?.outcome).toEqual({ result: "requeue", afterMs: 3_600_000 });
    expect(runsOf("bad")[0]?.outcome).toEqual({
      result: "error",
      message: "the rate source answered 500",
      retryInMs: 1000,
    });
    expect(runsOf("final")[0]?.outcome).toEqual({
      result: "error",
      message: "spec.currency is not a currency",
    });
  });

  it("reports the growing retry delay of each failed attempt", async () => {
    observe();
    let attempts = 0;
    const { source } = widgets(async () => {
      attempts++;
      if (attempts < 3) throw new Error(`attempt ${attempts} failed`);
    }, 20);
    source.upsert(widget("flaky"));
    await waitUntil(() => runsOf("flaky").length === 3, { what: "3 runs" });
    expect(runsOf("flaky").map((r) => r.outcome)).toEqual([
      { result: "error", message: "attempt 1 failed", retryInMs: 20 },
      { result: "error", message: "attempt 2 failed", retryInMs: 40 },
      { result: "ok" },
    ]);
  });

  it("gives each run its own writes when two reconciles write at the same time, and a write after a run ended to none", async () => {
    observe();
    const aMayWrite = deferred();
    const bWrote = deferred();
    let late: Promise<unknown> | undefined;
    const { source } = widgets(async (_target, ctx) => {
      const configMaps = ctx.client.resource(ConfigMap, "default");
      if (ctx.key.name === "a") {
        await configMaps.create(configMap("trace-a1"));
        await aMayWrite.promise; // b's write happens while a is in flight
        await configMaps.patch("trace-a1", { data: { a: "2" } }, { type: "merge" });
        // Started inside a's run, finished after it ended: nobody's.
        late = new Promise((resolve) => setTimeout(resolve, 50)).then(() =>
          configMaps.create(configMap("trace-a-late")),
        );
      } else {
        await configMaps.create(configMap("trace-b"));
        bWrote.resolve();
      }
    });
    source.upsert(widget("a"));
    source.upsert(widget("b"));
    await bWrote.promise;
    aMayWrite.resolve();
    await waitUntil(() => runsOf("a").length === 1 && runsOf("b").length === 1, { what: "both runs" });
    await late;
    const names = (r: ReconcileRun | undefined) => r?.writes.map((w) => `${w.verb} ${w.name}`);
    expect(names(runsOf("a")[0])).toEqual(["POST trace-a1", "PATCH trace-a1"]);
    expect(names(runsOf("b")[0])).toEqual(["POST trace-b"]);
  });

  it("records a refused write with the server's code", async () => {
    observe();
    const { source } = widgets(async () => {
      await ctxlessCreate("trace-dup");
      await ctxlessCreate("trace-dup"); // 409 AlreadyExists
    });
    source.upsert(widget("dup"));
    await waitUntil(() => runsOf("dup").length === 1, { what: "the run" });
    expect(runsOf("dup")[0]?.writes.map((w) => w.code)).toEqual([201, 409]);
    expect(runsOf("dup")[0]?.outcome).toMatchObject({
      result: "error",
      message: expect.stringMatching(/already exists/),
    });
  });

  it("without an observer, reports nothing and runs reconcile outside any write recorder", async () => {
    let recorder: unknown = "not run";
    const { source } = widgets(async () => {
      recorder = currentWriteRecorder();
    });
    source.upsert(widget("quiet"));
    await waitUntil(() => recorder !== "not run", { what: "the reconcile" });
    expect(recorder).toBeUndefined();
    expect(runs).toEqual([]);
  });
});

function ctxlessCreate(name: string): Promise<unknown> {
  return cluster.client.resource(ConfigMap, "default").create(configMap(name));
}

describe("handler and timer runs", () => {
  it("reports a failing handler's error and retry delay, its successful retry with its writes, nested in its reconcile", async () => {
    const ns = await namespace(cluster, "trace-handlers");
    observe();
    const op = operator({ name: "tracer" });
    let attempt = 0;
    op.on.create(Machine, { id: "fetch", backoff: "300ms" }, async (ctx) => {
      attempt++;
      if (attempt === 1) throw new Error("GET http://rates.test/latest: 500");
      await ctx.api.resource(ConfigMap, ns).create(configMap(`${ctx.name}-rate`));
      return { rate: 1.08 };
    });
    op.on.update(Machine, { id: "never" }, async () => {
      throw new PermanentError("cannot update");
    });
    const running = await run(op, cluster, { namespaces: [ns] });
    try {
      await cluster.client
        .resource(Machine, ns)
        .create(Machine.make({ metadata: { name: "m", namespace: ns }, spec: { switchPosition: "up" } }));
      const handlerRuns = () => runs.filter((r) => r.type === "handler" && r.object.namespace === ns);
      await waitUntil(() => handlerRuns().length >= 2, { what: "two handler runs" });
      const [failed, retried] = handlerRuns();
      expect(failed).toMatchObject({
        controller: `machine-handlers-${ns}`,
        handler: "fetch",
        cause: "create",
        object: { kind: "Machine", namespace: ns, name: "m" },
        outcome: { result: "error", message: "GET http://rates.test/latest: 500", retryInMs: 300 },
      });
      // Its bookkeeping (the retry record) is its write.
      expect(failed?.writes.map((w) => `${w.verb} ${w.resource}/${w.subresource ?? ""} ${w.code}`)).toEqual([
        "PATCH machines/status 200",
      ]);
      expect(retried).toMatchObject({ handler: "fetch", outcome: { result: "ok" } });
      expect(retried?.writes.map((w) => `${w.verb} ${w.resource} ${w.name}`)).toEqual([
        `POST configmaps m-rate`,
        "PATCH machines m",
      ]);
      expect(retried?.start).toBeGreaterThanOrEqual((failed?.start ?? 0) + 300);
      // Each handler run names the reconcile it ran in, reported after it with a requeue for the retry.
      const parent = runs.find((r) => r.id === failed?.parent);
      expect(parent).toMatchObject({ type: "reconcile", controller: `machine-handlers-${ns}`, object: { name: "m" } });
      expect(parent?.outcome).toMatchObject({ result: "requeue" });
      expect(parent?.writes.every((w) => w.subresource !== "status")).toBe(true);

      await cluster.client.resource(Machine, ns).patch("m", { spec: { switchPosition: "down" } }, { type: "merge" });
      await waitUntil(() => handlerRuns().some((r) => r.handler === "never"), { what: "the update handler" });
      expect(handlerRuns().find((r) => r.handler === "never")?.outcome).toEqual({
        result: "error",
        message: "cannot update",
      });
    } finally {
      await running.stop();
    }
  }, 20_000);

  it("reports a timer's run, its next run after the interval, and a failure with the TemporaryError's delay", async () => {
    const ns = await namespace(cluster, "trace-timers");
    observe();
    const op = operator({ name: "ticker" });
    let ticks = 0;
    op.timer(Machine, { id: "tick", interval: "150ms", storeResult: false }, async () => {
      ticks++;
      if (ticks === 2) throw new TemporaryError("source down", { delay: "200ms" });
    });
    const running = await run(op, cluster, { namespaces: [ns] });
    try {
      await cluster.client
        .resource(Machine, ns)
        .create(Machine.make({ metadata: { name: "t", namespace: ns }, spec: { switchPosition: "up" } }));
      const timerRuns = () => runs.filter((r) => r.type === "timer" && r.object.namespace === ns);
      await waitUntil(() => timerRuns().length >= 3, { what: "three timer runs" });
      expect(
        timerRuns()
          .slice(0, 3)
          .map((r) => [r.handler, r.outcome]),
      ).toEqual([
        ["tick", { result: "requeue", afterMs: 150 }],
        ["tick", { result: "error", message: "source down", retryInMs: 200 }],
        ["tick", { result: "requeue", afterMs: 150 }],
      ]);
    } finally {
      await running.stop();
    }
  }, 20_000);
});

describe("events", () => {
  it("leaves the Events a run records out of its writes, even when they are written before it ends", async () => {
    const ns = await namespace(cluster, "trace-events");
    observe();
    const op = operator({ name: "eventful" });
    op.on.create(Machine, { id: "announce" }, async (ctx) => {
      ctx.event("Normal", "Announced", "hello");
      // The Event is written in the background: wait for it, so that it ends inside this run.
      await waitUntil(async () => (await ctx.api.resource(Event, ns).list()).items.length > 0, { what: "the Event" });
    });
    const running = await run(op, cluster, { namespaces: [ns] });
    try {
      await cluster.client
        .resource(Machine, ns)
        .create(Machine.make({ metadata: { name: "e", namespace: ns }, spec: { switchPosition: "up" } }));
      await waitUntil(() => runs.some((r) => r.handler === "announce"), { what: "the handler's run" });
      const announced = runs.find((r) => r.handler === "announce");
      expect(announced?.outcome).toEqual({ result: "ok" });
      expect(announced?.writes.map((w) => w.resource)).toEqual(["machines"]);
    } finally {
      await running.stop();
    }
  }, 20_000);
});

describe("daemons", () => {
  it("runs a daemon outside the run that started it: its writes are no run's", async () => {
    const ns = await namespace(cluster, "trace-daemons");
    observe();
    const op = operator({ name: "daemonic" });
    let recorderInDaemon: unknown = "not run";
    op.daemon(Machine, { id: "watcher" }, async (ctx) => {
      recorderInDaemon = currentWriteRecorder();
      await ctx.api
        .resource(ConfigMap, ns)
        .create({ ...configMap("from-daemon"), metadata: { name: "from-daemon", namespace: ns } });
      await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve, { once: true }));
    });
    const running = await run(op, cluster, { namespaces: [ns] });
    try {
      await cluster.client
        .resource(Machine, ns)
        .create(Machine.make({ metadata: { name: "d", namespace: ns }, spec: { switchPosition: "up" } }));
      await waitUntil(async () => (await cluster.client.resource(ConfigMap, ns).list()).items.length > 0, {
        what: "the daemon's ConfigMap",
      });
      expect(recorderInDaemon).toBeUndefined();
      expect(runs.some((r) => r.type === "reconcile" && r.object.name === "d")).toBe(true);
      expect(runs.flatMap((r) => r.writes).some((w) => w.name === "from-daemon")).toBe(false);
    } finally {
      await running.stop();
    }
  }, 20_000);
});

describe("resource paths of writes", () => {
  it("reads group, namespace, resource, name and subresource from the URL", () => {
    expect(resourcePath("/api/v1/namespaces/ns/configmaps/cm?fieldManager=x")).toEqual({
      group: "",
      resource: "configmaps",
      namespace: "ns",
      name: "cm",
    });
    expect(resourcePath("/apis/example.com/v1/namespaces/ns/widgets/w/status")).toEqual({
      group: "example.com",
      resource: "widgets",
      namespace: "ns",
      name: "w",
      subresource: "status",
    });
    expect(resourcePath("/api/v1/namespaces/ns")).toEqual({ group: "", resource: "namespaces", name: "ns" });
    expect(resourcePath("/api/v1/namespaces/ns/finalize")).toEqual({
      group: "",
      resource: "namespaces",
      name: "ns",
      subresource: "finalize",
    });
    expect(resourcePath("/apis/example.com/v1/clusterwidgets")).toEqual({
      group: "example.com",
      resource: "clusterwidgets",
    });
    expect(resourcePath("/healthz")).toBeUndefined();
  });
});
