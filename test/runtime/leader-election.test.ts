import { getEventListeners } from "node:events";
import { ManualClock, waitUntil } from "capstan-dev/testing";
import type { Lease } from "kubernetes-types/coordination/v1.d.ts";
import { afterEach, describe, expect, it } from "vitest";
import {
  LEADER_ELECTION_DEFAULTS,
  type LeaderElectionOptions,
  LeaderElector,
  leaderElectionTimings,
} from "../../packages/capstan/src/runtime/leader-election.ts";
import { FakeLeases } from "./support/fake-leases.ts";
import { trackRuntimeTimers } from "./support/fake-lister-watcher.ts";

// Short, consistent timings (lease 1 s > renew deadline 0.5 s > retry 0.1 s * 1.2) instead of
// client-go's 15 s / 10 s / 2 s, so hand-overs happen within a second or two.
const timings = { leaseDuration: "1s", renewDeadline: 500, retryPeriod: 100 };

const stops: AbortController[] = [];
const runs: Promise<void>[] = [];
afterEach(async () => {
  for (const s of stops.splice(0)) s.abort();
  await Promise.all(runs.splice(0));
});

/** Tracks who leads, and whether two ever led at once. */
function arena() {
  const leaders = new Set<string>();
  const log: string[] = [];
  let overlaps = 0;
  const candidate = (leases: FakeLeases, identity: string, extra: Partial<LeaderElectionOptions> = {}) => {
    const view = leases.view();
    let leaderSignal: AbortSignal | undefined;
    const elector = new LeaderElector({
      leases: view,
      namespace: "ops",
      name: "capstan-lock",
      identity,
      ...timings,
      onStartedLeading: (signal) => {
        if (leaders.size > 0) overlaps++;
        leaders.add(identity);
        log.push(`${identity} leads`);
        leaderSignal = signal;
        signal.addEventListener("abort", () => {
          leaders.delete(identity);
          log.push(`${identity} stops`);
        });
      },
      onStoppedLeading: () => log.push(`${identity} stopped`),
      ...extra,
    });
    const stop = new AbortController();
    stops.push(stop);
    const run = elector.run(stop.signal);
    runs.push(run);
    return { elector, view, stop, run, signal: () => leaderSignal };
  };
  return { leaders, log, candidate, overlaps: () => overlaps };
}

describe("LeaderElector", () => {
  it("elects exactly one of two candidates started together", async () => {
    const leases = new FakeLeases();
    const a = arena();
    const one = a.candidate(leases, "one");
    const two = a.candidate(leases, "two");
    await waitUntil(() => a.leaders.size === 1, { what: "a leader", timeout: 3000 });
    const leader = [...a.leaders][0];
    expect(leases.lease?.spec?.holderIdentity).toBe(leader);
    expect(leases.lease?.spec?.leaseDurationSeconds).toBe(1);
    expect(leases.lease?.spec?.renewTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    // Renewals keep it; the other stays a candidate.
    await waitUntil(() => leases.writes.length >= 4, { what: "renewals", timeout: 3000 });
    expect(a.leaders.size).toBe(1);
    const states = [one.elector.state, two.elector.state].sort();
    expect(states).toEqual(["candidate", "leader"]);
    expect(a.overlaps()).toBe(0);
  });

  it("hands over at once when the leader stops gracefully, releasing the lease after its work finished", async () => {
    const leases = new FakeLeases();
    const a = arena();
    let workDone = false;
    const first = a.candidate(leases, "first", {
      onStartedLeading: async (signal) => {
        a.leaders.add("first");
        a.log.push("first leads");
        await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve()));
        a.leaders.delete("first");
        // Work guarded by the lease finishes after the signal; the release must wait for it.
        await new Promise((r) => setTimeout(r, 20));
        workDone = true;
        a.log.push("first finished work");
      },
    });
    await waitUntil(() => first.elector.state === "leader", { what: "first leads", timeout: 3000 });
    const second = a.candidate(leases, "second");
    // Still a candidate while the lease is held and renewed.
    await waitUntil(() => leases.writes.length >= 3, { what: "renewals", timeout: 3000 });
    expect(second.elector.state).toBe("candidate");

    first.stop.abort();
    await first.run;
    expect(workDone).toBe(true);
    const released = leases.writes.at(-1)!;
    expect(released.spec).toMatchObject({ holderIdentity: "", leaseDurationSeconds: 1, leaseTransitions: 0 });
    expect(a.log).toEqual(["first leads", "first finished work", "first stopped"]);

    // The released lease is free: the second takes it at its next try, well within the lease duration.
    const releasedAt = Date.now();
    await waitUntil(() => second.elector.state === "leader", { what: "second leads", timeout: 3000 });
    expect(Date.now() - releasedAt).toBeLessThan(1000);
    expect(leases.lease?.spec).toMatchObject({ holderIdentity: "second", leaseTransitions: 1 });
    expect(first.elector.state).toBe("stopped");
  });

  it("aborts the leader's signal when it cannot renew, and the other candidate takes over only after that", async () => {
    const leases = new FakeLeases();
    const a = arena();
    const first = a.candidate(leases, "first");
    await waitUntil(() => first.elector.state === "leader", { what: "first leads", timeout: 3000 });
    const second = a.candidate(leases, "second");
    await waitUntil(() => leases.writes.length >= 3, { what: "renewals", timeout: 3000 });

    first.view.partitioned = true;
    await waitUntil(() => first.signal()?.aborted === true, { what: "first's signal aborted", timeout: 3000 });
    await first.run;
    expect(first.elector.state).toBe("stopped");
    // The Lease still names it (it could not write), but it knows it is no longer leading.
    expect(first.elector.isLeader()).toBe(false);
    expect(a.log.slice(0, 3)).toEqual(["first leads", "first stops", "first stopped"]);

    await waitUntil(() => second.elector.state === "leader", { what: "second takes over", timeout: 5000 });
    expect(a.log.at(-1)).toBe("second leads");
    expect(a.overlaps()).toBe(0);
    expect(leases.lease?.spec).toMatchObject({ holderIdentity: "second", leaseTransitions: 1 });
  });

  it("does not take a lease that another holder keeps renewing", async () => {
    const leases = new FakeLeases();
    const a = arena();
    a.candidate(leases, "holder");
    await waitUntil(() => a.leaders.has("holder"), { what: "holder leads", timeout: 3000 });
    const other = a.candidate(leases, "other");
    // Several lease durations' worth of renewals later, the other is still waiting.
    await waitUntil(() => leases.writes.length >= 25, { what: "many renewals", timeout: 6000 });
    expect(other.elector.state).toBe("candidate");
    expect(other.elector.leader()).toBe("holder");
  });

  it("renews with one write and no read while it leads, and reads again only when that write conflicts", async () => {
    const leases = new FakeLeases();
    const real = leases.view();
    let reads = 0;
    const counting = {
      ...real,
      get: (name: string) => {
        reads++;
        return real.get(name);
      },
    };
    const a = arena();
    const c = a.candidate(leases, "fast", { leases: counting });
    await waitUntil(() => c.elector.state === "leader", { what: "leadership", timeout: 3000 });
    const readsWhenLeading = reads;
    const writesWhenLeading = leases.writes.length;
    await waitUntil(() => leases.writes.length >= writesWhenLeading + 3, { what: "three renewals", timeout: 3000 });
    expect(reads).toBe(readsWhenLeading); // client-go's fast path: no Get before each Update
    // Someone else writes the Lease (same holder, a new resourceVersion): the next fast write is a
    // 409, the elector reads the Lease and renews on what it read, and stays the leader.
    await leases.view().update({ ...structuredClone(leases.lease as Lease), metadata: { ...leases.lease?.metadata } });
    const writesAfterBump = leases.writes.length;
    await waitUntil(() => leases.writes.length >= writesAfterBump + 2, {
      what: "renewals after the 409",
      timeout: 3000,
    });
    expect(reads).toBeGreaterThan(readsWhenLeading);
    expect(c.elector.state).toBe("leader");
    expect(leases.lease?.spec?.holderIdentity).toBe("fast");
  });

  it("gives up an acquire attempt that hangs and tries again", async () => {
    const leases = new FakeLeases();
    const real = leases.view();
    let hung = 0;
    const hanging = {
      ...real,
      get: (name: string) => {
        if (hung++ === 0) return new Promise<never>(() => {}); // the first request never answers
        return real.get(name);
      },
    };
    const a = arena();
    const c = a.candidate(leases, "patient", { leases: hanging });
    await waitUntil(() => c.elector.state === "leader", { what: "leadership after the hung request", timeout: 5000 });
    expect(hung).toBeGreaterThan(1);
  });

  it("gives back a Lease that an attempt won just as the candidate was stopped", async () => {
    const leases = new FakeLeases();
    const real = leases.view();
    let created!: () => void;
    const createdSignal = new Promise<void>((r) => {
      created = r;
    });
    let creating!: () => void;
    const creatingSignal = new Promise<void>((r) => {
      creating = r;
    });
    const slow = {
      ...real,
      create: async (obj: Parameters<typeof real.create>[0]) => {
        creating();
        await new Promise((r) => setTimeout(r, 50));
        const out = await real.create(obj);
        created();
        return out;
      },
    };
    const a = arena();
    const c = a.candidate(leases, "late", { leases: slow });
    // Stopped while its create is in flight (a fixed pause could end before the attempt began).
    await creatingSignal;
    c.stop.abort();
    await c.run;
    await createdSignal;
    expect(a.log).toEqual([]); // never led
    expect(leases.lease?.spec).toMatchObject({ holderIdentity: "", leaseDurationSeconds: 1 });
  });

  it("rejects timings where the leader could act after others may take over", () => {
    const base = {
      leases: new FakeLeases().view(),
      namespace: "ns",
      name: "l",
      identity: "me",
      onStartedLeading: () => {},
    };
    expect(() => new LeaderElector({ ...base, leaseDuration: "10s", renewDeadline: "10s" })).toThrow(
      "leader election: leaseDuration (10000 ms) must be greater than renewDeadline (10000 ms)",
    );
    expect(() => new LeaderElector({ ...base, renewDeadline: "2s", retryPeriod: "2s" })).toThrow(
      "leader election: renewDeadline (2000 ms) must be greater than retryPeriod * 1.2 (2400 ms)",
    );
    // Exactly 1.2 x is refused too (client-go: renewDeadline <= JitterFactor * retryPeriod).
    expect(() => leaderElectionTimings({ renewDeadline: 1200, retryPeriod: 1000, leaseDuration: 5000 })).toThrow(
      /retryPeriod \* 1.2/,
    );
    for (const name of ["leaseDuration", "renewDeadline", "retryPeriod"]) {
      expect(() => leaderElectionTimings({ [name]: 0 })).toThrow(`leader election: ${name} must be greater than zero`);
    }
    expect(() => leaderElectionTimings({ retryPeriod: -1 })).toThrow(/invalid duration -1/);
    expect(() => new LeaderElector({ ...base, identity: "" })).toThrow(/identity/);
    // client-go's defaults are valid.
    expect(new LeaderElector(base).state).toBe("idle");
  });

  it("defaults to client-go's 15 s / 10 s / 2 s", () => {
    expect(LEADER_ELECTION_DEFAULTS).toEqual({ leaseDuration: "15s", renewDeadline: "10s", retryPeriod: "2s" });
    expect(leaderElectionTimings()).toEqual({ leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 });
    expect(leaderElectionTimings({ retryPeriod: "500ms" })).toMatchObject({
      leaseDurationMs: 15_000,
      retryPeriodMs: 500,
    });
  });

  it("stops leading on resuming from a pause longer than renewDeadline, without renewing first", async () => {
    const leases = new FakeLeases();
    const a = arena();
    const leader = a.candidate(leases, "paused");
    await waitUntil(() => leader.elector.state === "leader", { what: "leads", timeout: 3000 });
    await waitUntil(() => leases.writes.length >= 3, { what: "renewals", timeout: 3000 });
    // Freeze the whole thread for longer than renewDeadline (500 ms), as a GC pause or SIGSTOP
    // would. Nobody else could take the Lease meanwhile, so renewing on resume would succeed:
    // client-go would start a fresh renew round and lead on. The deadline has passed all the same.
    const writesBefore = leases.writes.length;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 800);
    await leader.run;
    expect(leader.signal()?.aborted).toBe(true);
    expect(a.log).toEqual(["paused leads", "paused stops", "paused stopped"]);
    expect(leases.writes.length).toBe(writesBefore); // no renewal after the pause, no release either
    expect(leases.lease?.spec?.holderIdentity).toBe("paused");
  });

  it("keeps the listeners on its leader signal bounded however many times it renews", async () => {
    const leases = new FakeLeases();
    const a = arena();
    const leader = a.candidate(leases, "long");
    await waitUntil(() => leader.elector.state === "leader", { what: "leads", timeout: 3000 });
    const signal = leader.signal() as AbortSignal;
    const before = getEventListeners(signal, "abort").length;
    await waitUntil(() => leases.writes.length >= 15, { what: "15 renewals", timeout: 5000 });
    expect(getEventListeners(signal, "abort").length).toBeLessThanOrEqual(before + 1);
  });

  it("under a manual clock, steps a partitioned leader down at renewDeadline and hands over at leaseDuration of that clock", async () => {
    const clock = new ManualClock("2030-01-01T00:00:00Z");
    // client-go's 15 s / 10 s / 2 s, no jitter: minutes of waiting that take no real time here.
    const extra = { clock, random: () => 0, ...LEADER_ELECTION_DEFAULTS };
    const leases = new FakeLeases();
    const a = arena();
    const old = a.candidate(leases, "old", extra);
    await waitUntil(() => old.elector.isLeader(), { what: "old leads" });
    old.view.partitioned = true; // its renewals fail from now on
    const next = a.candidate(leases, "next", extra);
    await waitUntil(() => leases.writes.length === 1 && next.elector.leader() === "old", {
      what: "next saw old's lease",
    });
    await clock.advance("9s");
    expect(old.signal()?.aborted).toBe(false); // renewDeadline (10 s) not reached
    await clock.advance("1s");
    expect(old.signal()?.aborted).toBe(true);
    expect(next.elector.isLeader()).toBe(false);
    await clock.advance("4s"); // 14 s after next first saw the record: still valid for 15 s
    expect(next.elector.isLeader()).toBe(false);
    await clock.advance("2s"); // its attempt at 16 s finds the record expired
    expect(next.elector.isLeader()).toBe(true);
    expect(a.log).toEqual(["old leads", "old stops", "old stopped", "next leads"]);
    expect(a.overlaps()).toBe(0);
  });

  it("leaves no timer behind once stopped, as candidate or as leader", async () => {
    const timers = trackRuntimeTimers();
    const leases = new FakeLeases();
    const a = arena();
    const leader = a.candidate(leases, "l");
    await waitUntil(() => leader.elector.state === "leader", { what: "leader", timeout: 3000 });
    const waiting = a.candidate(leases, "w");
    await waitUntil(() => leases.writes.length >= 2, { what: "a renewal", timeout: 3000 });
    expect(await timers.pending()).toBeGreaterThan(0);
    leader.stop.abort();
    waiting.stop.abort();
    await Promise.all([leader.run, waiting.run]);
    expect(await timers.pending()).toBe(0);
    timers.stop();
  });
});
