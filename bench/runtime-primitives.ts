/**
 * Micro-benchmarks of the runtime primitives, in-process, no API server: one JSON line per scenario.
 *   node --expose-gc --import tsx bench/runtime-primitives.ts
 * - queue: keys through add -> get -> done with 4 workers (ops/s)
 * - informer-events: watch events applied to the cache and delivered to a handler (events/s)
 * - cache-memory: heap and RSS growth per cached ~1 KiB ConfigMap with managedFields, 100,000 objects
 * - controller-runs: keys through a controller whose reconcile only awaits (reconciles/s), the
 *   framework's own cost per reconcile; with BENCH_OBSERVE_RUNS=1 an observer of run traces is
 *   registered first (what `capstan dev` adds), so comparing the two runs gives what observing costs
 *   per reconcile (a trace, AsyncLocalStorage around the call, and Node's promise hook it turns on)
 */
import type { KubeObject, ListerWatcher, WatchEvent } from "../packages/capstan/src/client/types.ts";
import { Controller } from "../packages/capstan/src/runtime/controller.ts";
import { Informer } from "../packages/capstan/src/runtime/informer.ts";
import { observeReconciles } from "../packages/capstan/src/runtime/run-trace.ts";
import { WorkQueue } from "../packages/capstan/src/runtime/workqueue.ts";
import { FakeSource } from "../test/runtime/controller-fakes.ts";

const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});

function configMap(i: number, rv: number): KubeObject & { data: Record<string, string> } {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: `cm-${i}`,
      namespace: "bench",
      uid: `0f8e3c5e-1a2b-4c3d-9e8f-${String(i).padStart(12, "0")}`,
      resourceVersion: String(rv),
      creationTimestamp: "2026-11-22T10:00:00Z",
      managedFields: [
        {
          manager: "bench",
          operation: "Update",
          apiVersion: "v1",
          time: "2026-11-22T10:00:00Z",
          fieldsType: "FieldsV1",
          fieldsV1: { "f:data": { "f:payload": {} } },
        },
      ],
    },
    data: { payload: `${"x".repeat(999)}${i % 10}` },
  };
}

async function queueScenario(): Promise<void> {
  const keys = 200_000;
  const queue = new WorkQueue<string>();
  const stop = new AbortController();
  let done = 0;
  const start = performance.now();
  const workers = Array.from({ length: 4 }, async () => {
    for (let key = await queue.get(stop.signal); key !== undefined; key = await queue.get(stop.signal)) {
      queue.done(key);
      if (++done === keys) stop.abort();
    }
  });
  for (let i = 0; i < keys; i++) queue.add(`ns/key-${i}`);
  await Promise.all(workers);
  const seconds = (performance.now() - start) / 1000;
  queue.shutDown();
  console.log(JSON.stringify({ scenario: "queue", keys, workers: 4, seconds, ops_per_s: Math.round(keys / seconds) }));
}

async function informerScenario(): Promise<void> {
  const events = 100_000;
  const objects = 10_000;
  let delivered = 0;
  let finish: () => void = () => {};
  const allDelivered = new Promise<void>((r) => {
    finish = r;
  });
  const lw: ListerWatcher<KubeObject> = {
    list: async () => ({ metadata: { resourceVersion: "1" }, items: [] }),
    watch: async () => ({
      async *[Symbol.asyncIterator](): AsyncIterator<WatchEvent<KubeObject>> {
        for (let i = 0; i < events; i++) {
          // Parsed from JSON per event, as the client's stream decoder does.
          yield JSON.parse(JSON.stringify({ type: "MODIFIED", object: configMap(i % objects, 2 + i) }));
        }
        await allDelivered;
      },
    }),
  };
  const informer = new Informer({ listerWatcher: lw });
  informer.addEventHandler({
    onAdd: () => {
      if (++delivered === events) finish();
    },
    onUpdate: () => {
      if (++delivered === events) finish();
    },
  });
  const stop = new AbortController();
  const start = performance.now();
  const running = informer.run(stop.signal);
  await allDelivered;
  const seconds = (performance.now() - start) / 1000;
  stop.abort();
  await running;
  console.log(
    JSON.stringify({
      scenario: "informer-events",
      events,
      objects,
      seconds,
      events_per_s: Math.round(events / seconds),
    }),
  );
}

async function cacheScenario(): Promise<void> {
  const objects = 100_000;
  const pageSize = 500;
  gc();
  gc();
  const before = process.memoryUsage();
  const lw: ListerWatcher<KubeObject> = {
    list: async (o) => {
      const start = o.continue ? Number(o.continue) : 0;
      const end = Math.min(objects, start + (o.limit ?? objects));
      const items = [];
      for (let i = start; i < end; i++) items.push(configMap(i, 1000 + i));
      // A JSON round trip, like a real response: no strings shared with the generator.
      return JSON.parse(
        JSON.stringify({
          apiVersion: "v1",
          kind: "ConfigMapList",
          metadata: { resourceVersion: "99999999", continue: end < objects ? String(end) : undefined },
          items,
        }),
      );
    },
    watch: async (o) => ({
      async *[Symbol.asyncIterator]() {
        await new Promise((r) => o.signal?.addEventListener("abort", r));
      },
    }),
  };
  const informer = new Informer({ listerWatcher: lw, pageSize });
  const stop = new AbortController();
  const start = performance.now();
  const running = informer.run(stop.signal);
  await informer.waitForSync();
  const syncSeconds = (performance.now() - start) / 1000;
  gc();
  gc();
  const after = process.memoryUsage();
  console.log(
    JSON.stringify({
      scenario: "cache-memory",
      objects: informer.store.size,
      sync_seconds: syncSeconds,
      heap_bytes_per_object: Math.round((after.heapUsed - before.heapUsed) / objects),
      rss_bytes_per_object: Math.round((after.rss - before.rss) / objects),
      gc_exposed: (globalThis as { gc?: unknown }).gc !== undefined,
    }),
  );
  stop.abort();
  await running;
}

async function controllerRunsScenario(): Promise<void> {
  const keys = 100_000;
  const observing = process.env.BENCH_OBSERVE_RUNS === "1";
  let observed = 0;
  const unobserve = observing ? observeReconciles({ onRun: () => observed++ }) : () => {};
  const source = new FakeSource();
  for (let i = 0; i < keys; i++) source.upsert({ metadata: { name: `w-${i}`, namespace: "bench", uid: `u-${i}` } });
  let done = 0;
  let finished: () => void = () => {};
  const all = new Promise<void>((resolve) => {
    finished = resolve;
  });
  const controller = new Controller({
    name: "bench",
    kind: { group: "", version: "v1", kind: "ConfigMap", plural: "configmaps", namespaced: true },
    primary: source,
    // Two awaits: a reconcile that waits on something, as every real one does.
    async reconcile() {
      await null;
      await null;
      if (++done === keys) finished();
    },
  });
  gc();
  const cpu = process.cpuUsage();
  const start = performance.now();
  controller.start();
  await all;
  const seconds = (performance.now() - start) / 1000;
  const used = process.cpuUsage(cpu);
  controller.stopNow();
  unobserve();
  console.log(
    JSON.stringify({
      scenario: "controller-runs",
      observing,
      keys,
      seconds: Math.round(seconds * 1000) / 1000,
      reconciles_per_s: Math.round(keys / seconds),
      cpu_us_per_reconcile: Math.round(((used.user + used.system) / keys) * 100) / 100,
      observed,
    }),
  );
}

await queueScenario();
await informerScenario();
await cacheScenario();
await controllerRunsScenario();
