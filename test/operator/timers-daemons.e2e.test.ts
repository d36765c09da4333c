import { startTestCluster, waitUntil } from "capstan-dev/testing";
import { describe, expect, it } from "vitest";
import { operator, TemporaryError } from "../../packages/capstan/src/operator/index.ts";
import { fileFixture } from "../support/file-fixture.ts";
import { Machine, machineCrd, namespace, run, trackTimers } from "./support/cluster.ts";

const cluster = fileFixture(() => startTestCluster({ crds: [machineCrd] }));

const machines = (ns: string) => cluster.client.resource(Machine, ns);
const statusOf = async (ns: string, name: string) =>
  ((await machines(ns).get(name)).status ?? {}) as Record<string, unknown>;

describe("timers", () => {
  it("runs every interval per object, stores the result in status, and stops for an object being deleted", async () => {
    const ns = await namespace(cluster, "timer");
    const op = operator({ name: "ticker" });
    const ticks: string[] = [];
    op.timer(Machine, { interval: 40 }, async function tick({ name, patch }) {
      ticks.push(name);
      patch.status.flips = ticks.length;
      return ticks.filter((t) => t === name).length;
    });
    const running = await run(op, cluster, { namespaces: [ns] });
    try {
      await machines(ns).create(
        Machine.make({
          metadata: { name: "m", namespace: ns, finalizers: ["test.example.com/hold"] },
          spec: { switchPosition: "up" },
        }),
      );
      await waitUntil(async () => Number((await statusOf(ns, "m")).tick) >= 3, { what: "three ticks stored" });
      await machines(ns).delete("m");
      await waitUntil(async () => (await machines(ns).get("m")).metadata.deletionTimestamp, {
        what: "deletion started",
      });
      // The operator learns of the deletion from its watch, which on a loaded machine may lag this
      // client by more than a few intervals: wait for a quiet spell of many intervals (a timer that
      // keeps running never gives one, and the wait fails), then prove it stays quiet.
      let counted = ticks.length;
      let since = performance.now();
      await waitUntil(
        () => {
          if (ticks.length !== counted) [counted, since] = [ticks.length, performance.now()];
          return performance.now() - since >= 300;
        },
        { what: "the timer to stop for the object being deleted" },
      );
      const before = ticks.length;
      await new Promise((r) => setTimeout(r, 300));
      expect(ticks.length).toBe(before);
    } finally {
      await running.stop();
      await machines(ns).patch("m", { metadata: { finalizers: null } }, { type: "merge" });
    }
  });

  it("waits for the object to be idle (no essential change) for `idle` before running", async () => {
    const ns = await namespace(cluster, "idle");
    const op = operator({ name: "idler" });
    const runs: { size: number; at: number }[] = [];
    op.timer(Machine, { interval: 30, idle: 1500 }, async function settle({ spec }) {
      runs.push({ size: spec.size ?? 0, at: Date.now() });
    });
    const running = await run(op, cluster, { namespaces: [ns] });
    try {
      // When each size was sent: the operator sees it later, so a run that saw `size` may come no
      // sooner than `idle` after this.
      const sentAt: number[] = [Date.now()];
      await machines(ns).create(
        Machine.make({ metadata: { name: "m", namespace: ns }, spec: { switchPosition: "up", size: 0 } }),
      );
      // Keep changing the spec faster than `idle`: the timer must not run meanwhile.
      for (let size = 1; size <= 5; size++) {
        await new Promise((r) => setTimeout(r, 100));
        sentAt[size] = Date.now();
        await machines(ns).patch("m", { spec: { size } }, { type: "merge" });
      }
      await waitUntil(() => runs.some((r) => r.size === 5), { what: "the timer after the object settled" });
      // The rule, not the usual instance: on a loaded machine a write may take longer than `idle`,
      // and then a run between writes is right. A few ms for timer rounding.
      for (const r of runs) expect(r.at - sentAt[r.size]!, `run that saw size ${r.size}`).toBeGreaterThanOrEqual(1490);
    } finally {
      await running.stop();
    }
  });
});

describe("daemons", () => {
  it("runs one daemon per object with the latest object, restarts it after a failure, and aborts it when the object is deleted", async () => {
    const ns = await namespace(cluster, "daemon");
    const op = operator({ name: "watcher" });
    const seenSizes: number[] = [];
    let starts = 0;
    let aborted = 0;
    op.daemon(Machine, { backoff: 10 }, async function monitor({ signal, retry }) {
      starts++;
      if (retry === 0) throw new TemporaryError("first start fails", { delay: 10 });
      await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
      aborted++;
    });
    op.daemon(Machine, async function sizes(ctx) {
      while (!ctx.signal.aborted) {
        const size = ctx.obj.spec.size ?? 0;
        if (seenSizes.at(-1) !== size) seenSizes.push(size);
        await new Promise((r) => setTimeout(r, 10));
      }
    });
    const running = await run(op, cluster, { namespaces: [ns] });
    try {
      await machines(ns).create(
        Machine.make({ metadata: { name: "m", namespace: ns }, spec: { switchPosition: "up", size: 1 } }),
      );
      await waitUntil(() => starts === 2 && op.runningDaemons() === 2, { what: "the restarted daemon" });
      await machines(ns).patch("m", { spec: { size: 2 } }, { type: "merge" });
      await waitUntil(() => seenSizes.includes(2), { what: "the daemon to see the new spec" });
      await machines(ns).delete("m");
      await waitUntil(() => aborted === 1 && op.runningDaemons() === 0, { what: "daemons aborted by the deletion" });
      expect(seenSizes).toEqual([1, 2]);
      expect(starts).toBe(2);
    } finally {
      await running.stop();
    }
  });

  it("stops every daemon and timer when the operator stops, leaving no timer behind", async () => {
    const ns = await namespace(cluster, "shutdown");
    const timers = trackTimers();
    try {
      const op = operator({ name: "sleeper" });
      let exited = 0;
      op.daemon(Machine, async ({ signal }) => {
        // Sleeps in long steps; each step ends on abort.
        while (!signal.aborted) {
          await new Promise<void>((resolve) => {
            const t = setTimeout(resolve, 60_000);
            signal.addEventListener("abort", () => {
              clearTimeout(t);
              resolve();
            });
          });
        }
        exited++;
      });
      op.timer(Machine, { interval: "1h" }, async () => {});
      const running = await run(op, cluster, { namespaces: [ns] });
      for (const name of ["a", "b", "c"]) {
        await machines(ns).create(Machine.make({ metadata: { name, namespace: ns }, spec: { switchPosition: "up" } }));
      }
      await waitUntil(() => op.runningDaemons() === 3, { what: "three daemons" });
      await running.stop();
      expect(exited).toBe(3);
      expect(op.runningDaemons()).toBe(0);
      expect(await timers.pending()).toBe(0);
    } finally {
      timers.stop();
    }
  });
});
