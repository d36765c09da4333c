import { defineResource, isDeleted, operator, TemporaryError, Type, toCrd } from "capstan";
import { ConfigMap, Lease } from "capstan/core";
import { ManualClock, startTestCluster, type TestCluster } from "capstan-dev/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

/** A schedule-driven kind, as a CronJob-style operator would reconcile. */
const Schedule = defineResource({
  group: "time.capstan.test",
  version: "v1",
  kind: "Schedule",
  scope: "Namespaced",
  spec: Type.Object({ every: Type.String() }),
  status: Type.Object({}, { additionalProperties: true }),
});

const start = Date.parse("2030-01-01T00:00:00Z");
/** Minutes since the clock's start, for readable expectations. */
const minute = (d: Date) => (d.getTime() - start) / 60_000;

let cluster: TestCluster;
beforeEach(async () => {
  cluster = await startTestCluster({ clock: new ManualClock(start), crds: [toCrd(Schedule)] });
});
afterEach(() => cluster.stop());

const create = (name: string) =>
  cluster.client
    .resource(Schedule)
    .create(Schedule.make({ metadata: { name, namespace: "default" }, spec: { every: "1h" } }));

describe("time travel with cluster.advance", () => {
  it("reconciles again after advancing past requeueAfter, and not a minute before", async () => {
    const op = operator({ name: "poller" });
    const reconciled: number[] = [];
    op.controller(Schedule).reconcile((target, ctx) => {
      if (!isDeleted(target)) reconciled.push(minute(ctx.now()));
      return { requeueAfter: "1h" };
    });
    await cluster.run(op);
    await create("hourly");
    await cluster.whenIdle();
    expect(reconciled).toEqual([0]);
    await cluster.advance("59m");
    expect(reconciled).toEqual([0]);
    await cluster.advance("1m");
    expect(reconciled).toEqual([0, 60]);
    await cluster.advance("3h");
    expect(reconciled).toEqual([0, 60, 120, 180, 240]);
  });

  it("runs an op.timer with a 10m interval 6 times in advance('1h'), each at its due time", async () => {
    const op = operator({ name: "ticker" });
    const runs: number[] = [];
    op.timer(Schedule, { interval: "10m" }, async function tick({ now }) {
      runs.push(minute(now()));
      return runs.length; // stored in status.tick: a write of the operator's own each run
    });
    await cluster.run(op);
    await create("ticking");
    await cluster.whenIdle();
    expect(runs).toEqual([0]); // the first run comes at once (no initialDelay)
    await cluster.advance("1h");
    expect(runs).toEqual([0, 10, 20, 30, 40, 50, 60]);
    const stored = await cluster.client.resource(Schedule).get("ticking", { namespace: "default" });
    expect(stored.status).toMatchObject({ tick: 7 });
  });

  it("retries a handler that failed with a retry delay once the clock passes that delay", async () => {
    const op = operator({ name: "retrier" });
    const attempts: number[] = [];
    op.on.create(Schedule, async function provision({ retry, now }) {
      attempts.push(minute(now()));
      if (retry === 0) throw new TemporaryError("the bucket is not there yet", { delay: "5m" });
      return "provisioned";
    });
    await cluster.run(op);
    await create("retried");
    await cluster.whenIdle();
    expect(attempts).toEqual([0]);
    await cluster.advance("4m");
    expect(attempts).toEqual([0]);
    await cluster.advance("1m");
    expect(attempts).toEqual([0, 5]);
    const stored = await cluster.client.resource(Schedule).get("retried", { namespace: "default" });
    expect(stored.status).toMatchObject({ provision: "provisioned" });
  });

  it("moves a daemon's ctx.sleep and its restart backoff with the clock", async () => {
    const op = operator({ name: "sleeper" });
    let starts = 0;
    const ticks: number[] = [];
    op.daemon(Schedule, { backoff: "1m" }, async (ctx) => {
      starts++;
      if (starts === 1) throw new Error("the first start fails");
      while (await ctx.sleep("10m")) ticks.push(minute(ctx.now()));
    });
    await cluster.run(op);
    await create("daemon");
    await cluster.whenIdle();
    expect(starts).toBe(1);
    await cluster.advance("59s");
    expect(starts).toBe(1);
    await cluster.advance("1s");
    expect(starts).toBe(2);
    await cluster.advance("30m");
    expect(ticks).toEqual([11, 21, 31]);
  });

  it("retries a failed reconcile after its rate-limited backoff on the clock (5 ms the first time)", async () => {
    const op = operator({ name: "failing" });
    const attempts: number[] = [];
    op.controller(Schedule).reconcile((target, ctx) => {
      if (isDeleted(target)) return;
      attempts.push(ctx.now().getTime() - start);
      if (attempts.length === 1) throw new Error("the first reconcile fails");
    });
    await cluster.run(op);
    await create("flaky");
    await cluster.whenIdle();
    expect(attempts).toEqual([0]);
    await cluster.advance(4);
    expect(attempts).toEqual([0]);
    await cluster.advance(1);
    expect(attempts).toEqual([0, 5]);
  });

  it("whenIdle returns only after the reconcile that the operator's own child write caused", async () => {
    const op = operator({ name: "owner" });
    const sawChild: boolean[] = [];
    op.controller(Schedule)
      .owns(ConfigMap)
      .reconcile(async (target, ctx) => {
        if (isDeleted(target)) return;
        const key = `default/${target.metadata.name}`;
        sawChild.push(ctx.cache(ConfigMap).get(key) !== undefined);
        await ctx.apply(ConfigMap, ctx.adopt({ metadata: { name: target.metadata.name }, data: { every: "1h" } }));
      });
    await cluster.run(op);
    await create("parent");
    await cluster.whenIdle();
    // The first reconcile wrote the child; the child's event made it run again, seeing it cached.
    expect(sawChild[0]).toBe(false);
    expect(sawChild.at(-1)).toBe(true);
  });

  it("renews the leader's Lease on the manual clock's time", async () => {
    const op = operator({ name: "elected" });
    op.controller(Schedule).reconcile(() => undefined);
    // Renewals every 10 s of the clock: six in the minute below, each a real request to the server.
    const timings = { leaseDuration: "1m", renewDeadline: "40s", retryPeriod: "10s" };
    await cluster.run(op, { leaderElection: { namespace: "default", name: "elected-leader", ...timings } });
    await cluster.whenIdle();
    await cluster.advance("1m");
    const lease = await cluster.client.resource(Lease, "default").get("elected-leader");
    // The last renewal is stamped one minute in, though the test took a fraction of a second.
    expect(Date.parse(lease.spec?.renewTime ?? "")).toBe(start + 60_000);
    expect(Date.parse(lease.spec?.acquireTime ?? "")).toBe(start);
  });
});

describe("the cluster's clock", () => {
  it("holds no timer of an operator once it stopped: requeues, timers, daemons, leader election", async () => {
    const op = operator({ name: "everything" });
    op.controller(Schedule).reconcile(() => ({ requeueAfter: "1h" }));
    op.timer(Schedule, { interval: "10m" }, () => undefined);
    op.daemon(Schedule, async (ctx) => {
      while (await ctx.sleep("5m")) {}
    });
    const running = await cluster.run(op, {
      // Few renewals in the half hour below: each is a real request.
      leaderElection: { namespace: "default", leaseDuration: "1h", renewDeadline: "40m", retryPeriod: "10m" },
    });
    await create("busy");
    await cluster.advance("30m");
    const clock = cluster.clock as ManualClock;
    expect(clock.pendingTimers).toBeGreaterThanOrEqual(4);
    await running.stop();
    expect(clock.pendingTimers).toBe(0);
  });

  it("is a ManualClock at the real time now with clock: 'manual', and the system's by default, which cannot advance", async () => {
    const before = Date.now();
    const manual = await startTestCluster({ clock: "manual" });
    const plain = await startTestCluster();
    try {
      expect(manual.clock).toBeInstanceOf(ManualClock);
      expect(manual.clock.now()).toBeGreaterThanOrEqual(before);
      await manual.advance("1h"); // no operator: nothing to wait for
      expect(manual.clock.now()).toBeGreaterThanOrEqual(before + 3_600_000);
      await expect(plain.advance("1s")).rejects.toThrow('startTestCluster({ clock: "manual" })');
      await plain.whenIdle(); // waiting for idleness needs no manual clock
    } finally {
      await Promise.all([manual.stop(), plain.stop()]);
    }
  });
});
