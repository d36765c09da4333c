/**
 * Leader election on a coordination.k8s.io/v1 Lease, with client-go's algorithm.
 *
 * ## Expected flow
 * `new LeaderElector({ leases, namespace, name, identity, onStartedLeading, onStoppedLeading })`
 * then `await elector.run(signal)`. The elector is a `candidate` until it acquires the Lease, then
 * `leader` (calls `onStartedLeading(leaderSignal)` and renews every `retryPeriod`), then
 * `stopping` (leaderSignal aborted, Lease released on a graceful stop), then `stopped`, and
 * `run` resolves. Lost leadership ends `run` too: the caller decides whether to exit (as
 * controller-runtime does) or to run a new elector.
 *
 * ## Guarantees
 * - A candidate takes the Lease only if it is free (no holder), or its record has not changed for
 *   the lease duration the record announces, measured on this process's clock from when this
 *   candidate first saw that record (remote timestamps are not trusted; clock skew between nodes
 *   does not matter, only clock rate).
 * - Every write carries the resourceVersion that was read: two candidates racing for a free Lease
 *   cannot both win (the loser gets 409 Conflict and stays a candidate). A leader renews with one
 *   write on the resourceVersion it last wrote, as client-go's fast path does, and reads the Lease
 *   only when that write fails.
 * - No request can stall the elector: an acquire attempt is abandoned after `renewDeadline`, and
 *   the leader stops at `renewDeadline` after the start of its last successful renewal, however
 *   many attempts are in flight.
 * - `leaderSignal` aborts as soon as `renewDeadline` has passed since the start of the last
 *   successful renewal (or the acquisition), or when the run signal aborts — before anything else
 *   happens (release, `onStoppedLeading`). The deadline is a timer armed at each renewal, not a
 *   round started after the pause between renewals: a process paused (GC, SIGSTOP, a frozen VM)
 *   past its deadline aborts `leaderSignal` on the first timer turn after it resumes, without a
 *   renewal attempt, where client-go would start a new round and lead on for up to renewDeadline.
 * - A leader stops acting (`renewDeadline` after its last renewal started) before any other
 *   candidate may take over (`leaseDuration` after it saw that renewal, which is later), given
 *   clocks that run at the same rate.
 * - On a graceful stop (run signal aborted while leading) with `releaseOnCancel` (default), the
 *   elector waits for the `onStartedLeading` promise to settle — the guarded work has finished —
 *   then clears `holderIdentity` and sets `leaseDurationSeconds: 1`, as client-go's
 *   ReleaseOnCancel does, so another candidate takes over at its next try instead of waiting a
 *   full lease duration.
 *
 * ## Assumptions
 * - leaseDuration > renewDeadline > 1.2 * retryPeriod > 0 (enforced, as client-go does).
 * - `onStartedLeading` stops its work promptly when its signal aborts; a graceful release waits
 *   for it.
 *
 * ## Caveats
 * - This is not fencing: requests a leader sent before a pause may still reach the API server
 *   after another candidate took over, and timers due before the deadline timer (a requeue) run
 *   in the same turn as it; only the work's signal tells it to stop.
 * - Worst-case hand-over after a leader crashed, with client-go's defaults: up to
 *   leaseDuration + 2 * 2.2 * retryPeriod = 23.8 s (docs/runtime.md derives it).
 * - Lease expiry, the renew deadline and the pauses between attempts follow `clock` (a test's
 *   manual clock moves them); the limit on one attempt's requests is real time, as it guards
 *   against a request that hangs on the network.
 */
import type { Lease, LeaseSpec } from "kubernetes-types/coordination/v1.d.ts";
import { isNotFound } from "../client/errors.ts";
import type { ResourceKind } from "../client/types.ts";
import { type Clock, sleep, systemClock } from "./clock.ts";
import { type Duration, toMilliseconds } from "./duration.ts";
import type { ActivityTracker } from "./idleness.ts";
import { type RuntimeLogger, silentLogger } from "./log.ts";

/** The coordination.k8s.io/v1 Lease kind (leader election's and sharding's Leases). */
export const LEASE_KIND: ResourceKind<Lease> = {
  group: "coordination.k8s.io",
  version: "v1",
  kind: "Lease",
  plural: "leases",
  namespaced: true,
};

/** The Lease calls the elector makes: a structural subset of the client's `ResourceClient<Lease>`. */
export interface LeaseApi {
  get(name: string, opts?: { namespace?: string; signal?: AbortSignal }): Promise<Lease>;
  create(obj: Lease): Promise<Lease>;
  update(obj: Lease): Promise<Lease>;
}

/** Where an elector is. */
export type LeaderElectionState = "idle" | "candidate" | "leader" | "stopping" | "stopped";

/** Options of a {@link LeaderElector}. */
export interface LeaderElectionOptions {
  leases: LeaseApi;
  namespace: string;
  /** Name of the Lease object. */
  name: string;
  /** This candidate's identity (pod name + random suffix is customary); must be unique. */
  identity: string;
  /** Labels the Lease carries (sharding finds its members' Leases by them); kept on every write. */
  labels?: Readonly<Record<string, string>>;
  /**
   * How long a Lease is valid after its last observed change (default 15 s, client-go's): a
   * crashed leader is replaced between leaseDuration - retryPeriod and leaseDuration + 4.4 *
   * retryPeriod later. Shorter means faster failover but less tolerance for API-server hiccups.
   */
  leaseDuration?: Duration;
  /**
   * How long after the start of its last successful renewal the leader steps down if it could not
   * renew again (default 10 s): it must be shorter than `leaseDuration` so it has stopped acting
   * before anyone else may take over; 10 s leaves room for 4 retries and a 5 s safety margin.
   */
  renewDeadline?: Duration;
  /**
   * Pause between attempts to acquire or renew (default 2 s): 0.5 writes per second per
   * candidate is negligible load, and 5 renewals fit in one renewDeadline.
   */
  retryPeriod?: Duration;
  /** Release the Lease when the run signal aborts while leading (default true). */
  releaseOnCancel?: boolean;
  /** Called when this candidate becomes leader; its signal aborts when leadership ends. */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  /** Called once leadership has ended (after the signal aborted and, if graceful, the release). */
  onStoppedLeading?(): void;
  /** Called when the observed holder changes (including to this candidate). */
  onNewLeader?(identity: string): void;
  logger?: RuntimeLogger;
  /** The clock of lease expiry, the renew deadline and the retry period (default {@link systemClock}). */
  clock?: Clock;
  /** Told of each acquire or renew attempt in flight (the manager's idleness: `whenIdle` waits for it). */
  activity?: ActivityTracker;
  random?: () => number;
}

// client-go's JitterFactor: candidates retry after retryPeriod * [1, 2.2), so several candidates
// started together do not hit the Lease in lockstep.
const ACQUIRE_JITTER = 1.2;

/**
 * client-go's defaults (and controller-runtime's): a crashed leader is replaced 15-24 s later; the
 * leader gives up 10 s after its last renewal started, 5 s before anyone may take over; 2 s between
 * attempts is 0.5 requests/s per candidate and room for 4 retries within the renew deadline.
 */
export const LEADER_ELECTION_DEFAULTS = { leaseDuration: "15s", renewDeadline: "10s", retryPeriod: "2s" } as const;

/** The three timings in milliseconds. */
export interface LeaderElectionTimings {
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

/**
 * Converts leader election timings (defaults {@link LEADER_ELECTION_DEFAULTS}) and checks them as
 * client-go's NewLeaderElector does: each greater than zero, leaseDuration > renewDeadline (the
 * leader must stop before others may take over) and renewDeadline > 1.2 * retryPeriod (room for a
 * jittered retry). Throws an error naming the values otherwise.
 */
export function leaderElectionTimings(
  timings: { leaseDuration?: Duration; renewDeadline?: Duration; retryPeriod?: Duration } = {},
): LeaderElectionTimings {
  const leaseDurationMs = toMilliseconds(timings.leaseDuration ?? LEADER_ELECTION_DEFAULTS.leaseDuration);
  const renewDeadlineMs = toMilliseconds(timings.renewDeadline ?? LEADER_ELECTION_DEFAULTS.renewDeadline);
  const retryPeriodMs = toMilliseconds(timings.retryPeriod ?? LEADER_ELECTION_DEFAULTS.retryPeriod);
  for (const [name, ms] of [
    ["leaseDuration", leaseDurationMs],
    ["renewDeadline", renewDeadlineMs],
    ["retryPeriod", retryPeriodMs],
  ] as const) {
    if (ms <= 0) throw new Error(`leader election: ${name} must be greater than zero, got ${ms} ms`);
  }
  if (leaseDurationMs <= renewDeadlineMs) {
    throw new Error(
      `leader election: leaseDuration (${leaseDurationMs} ms) must be greater than renewDeadline (${renewDeadlineMs} ms), or a leader that cannot renew could still act after another took over`,
    );
  }
  if (renewDeadlineMs <= ACQUIRE_JITTER * retryPeriodMs) {
    throw new Error(
      `leader election: renewDeadline (${renewDeadlineMs} ms) must be greater than retryPeriod * ${ACQUIRE_JITTER} (${ACQUIRE_JITTER * retryPeriodMs} ms), client-go's JitterFactor`,
    );
  }
  return { leaseDurationMs, renewDeadlineMs, retryPeriodMs };
}

/** Formats a time as a Kubernetes MicroTime (RFC 3339 with 6 fractional digits). */
function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

/** Lease-based leader election; see the module documentation for the contract. */
export class LeaderElector {
  private readonly options: LeaderElectionOptions;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly logger: RuntimeLogger;
  private readonly clock: Clock;
  private readonly random: () => number;
  private current: LeaderElectionState = "idle";
  /** The last Lease read or written, with its resourceVersion. */
  private lease: Lease | undefined;
  private observedRecord = "";
  private observedAt = 0;
  private reportedLeader = "";
  /** The renewal attempt that may still be in flight after a deadline gave up on it. */
  private inflight: Promise<boolean> = Promise.resolve(false);

  constructor(options: LeaderElectionOptions) {
    this.options = options;
    ({
      leaseDurationMs: this.leaseDurationMs,
      renewDeadlineMs: this.renewDeadlineMs,
      retryPeriodMs: this.retryPeriodMs,
    } = leaderElectionTimings(options));
    this.logger = options.logger ?? silentLogger;
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    if (!options.identity) throw new Error("leader election: identity must not be empty");
  }

  /** Where the elector is. */
  get state(): LeaderElectionState {
    return this.current;
  }

  /** Whether this elector is leading right now (false again as soon as its leader signal aborted). */
  isLeader(): boolean {
    return this.current === "leader";
  }

  /** The holder of the Lease according to the last record seen (`""` if none). */
  leader(): string {
    return this.lease?.spec?.holderIdentity ?? "";
  }

  /** Campaigns, leads, and resolves once leadership ended or `signal` aborted. Runs once. */
  async run(signal: AbortSignal): Promise<void> {
    if (this.current !== "idle") throw new Error("leader elector can run only once");
    this.current = "candidate";
    let acquiredAt = 0;
    while (!signal.aborted) {
      acquiredAt = this.clock.now();
      // One attempt may take at most renewDeadline: a hung request must not stall the candidate.
      if (await this.attemptWithin(this.renewDeadlineMs, signal)) break;
      const wait = this.retryPeriodMs * (1 + ACQUIRE_JITTER * this.random());
      await sleep(wait, signal, this.clock);
    }
    if (signal.aborted) {
      // An attempt may have won the Lease just as we were told to stop: give it back.
      if (this.options.releaseOnCancel ?? true) {
        await this.inflight;
        await this.release();
      }
      this.current = "stopped";
      return;
    }

    this.current = "leader";
    this.logger.info({ lease: this.options.name, identity: this.options.identity }, "became leader");
    const leading = new AbortController();
    let expired = false;
    let renewedAt = acquiredAt;
    // The deadline: renewDeadline after the start of the last successful renewal. A timer, so that a
    // process resuming from a pause aborts `leading` in its first timer turn.
    let cancelDeadline: (() => void) | undefined;
    const expire = () => {
      expired = true;
      leading.abort();
    };
    const arm = () => {
      cancelDeadline?.();
      cancelDeadline = this.clock.setTimer(Math.max(0, renewedAt + this.renewDeadlineMs - this.clock.now()), expire);
    };
    arm();
    const stopLeading = () => leading.abort();
    signal.addEventListener("abort", stopLeading, { once: true });
    const work = Promise.resolve()
      .then(() => this.options.onStartedLeading(leading.signal))
      .catch((err: unknown) => this.logger.error({ err }, "onStartedLeading failed"));

    // Renew every retryPeriod; a failed attempt is retried after retryPeriod until the deadline.
    while (!leading.signal.aborted) {
      if (!(await sleep(this.retryPeriodMs, leading.signal, this.clock))) break;
      const startedAt = this.clock.now();
      if (startedAt >= renewedAt + this.renewDeadlineMs) {
        expire(); // the timer is due too; do not even try
        break;
      }
      // A fresh signal per attempt (listeners on `leading` would pile up over a long leadership).
      const remaining = renewedAt + this.renewDeadlineMs - startedAt;
      if ((await this.attemptWithin(remaining, leading.signal)) && !leading.signal.aborted) {
        renewedAt = startedAt;
        arm();
      }
    }
    cancelDeadline?.();
    const lost = expired && !signal.aborted;
    this.current = "stopping";
    leading.abort();
    signal.removeEventListener("abort", stopLeading);
    if (lost) {
      this.logger.warn({ lease: this.options.name, identity: this.options.identity }, "lost leadership");
    } else if (this.options.releaseOnCancel ?? true) {
      await work;
      // An abandoned renewal could still land and change the resourceVersion; let it settle.
      await this.inflight;
      await this.release();
    }
    try {
      this.options.onStoppedLeading?.();
    } finally {
      this.current = "stopped";
    }
  }

  /** One acquire attempt, given up (false) after `ms` of real time or when `signal` aborts. */
  private async attemptWithin(ms: number, signal: AbortSignal): Promise<boolean> {
    const end = this.options.activity?.begin(`lease ${this.options.namespace}/${this.options.name}: acquire or renew`);
    const limit = new AbortController();
    const timer = setTimeout(() => limit.abort(), ms);
    const onAbort = () => limit.abort();
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      const attempt = this.tryAcquireOrRenew(limit.signal);
      this.inflight = attempt;
      return await Promise.race([attempt, abortedAsFalse(limit.signal)]);
    } finally {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      limit.abort();
      end?.();
    }
  }

  /** One read-modify-write of the Lease; true if this candidate holds it afterwards. */
  private async tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    const { leases, namespace, name, identity } = this.options;
    const now = this.clock.now();
    const mine: LeaseSpec = {
      holderIdentity: identity,
      leaseDurationSeconds: Math.ceil(this.leaseDurationMs / 1000),
      acquireTime: microTime(now),
      renewTime: microTime(now),
      leaseTransitions: 0,
    };
    // client-go's fast path: a leader whose view of the Lease is still valid renews with one write
    // on the resourceVersion it last wrote, without reading first. A renewal is then one round trip,
    // which matters on a busy API server: each request waits its turn there (see docs/runtime.md,
    // "Sharding"). Any failure (409: someone else wrote it) falls through to the read below.
    const held = this.lease;
    if (this.current === "leader" && held !== undefined && this.holdsValidLease(held, now)) {
      const spec = held.spec ?? {};
      try {
        const renewed = await leases.update({
          ...this.labelled(held),
          spec: {
            ...spec,
            ...mine,
            acquireTime: spec.acquireTime ?? mine.acquireTime,
            leaseTransitions: spec.leaseTransitions ?? 0,
          },
        });
        this.observe(renewed, this.clock.now());
        return true;
      } catch (err) {
        if (signal.aborted) return false;
        this.logger.debug({ err, lease: name }, "cannot renew the lease as last written; reading it");
      }
    }
    let current: Lease;
    try {
      current = await leases.get(name, { namespace, signal });
    } catch (err) {
      if (signal.aborted) return false;
      if (!isNotFound(err)) {
        this.logger.warn({ err, lease: name }, "cannot read the lease");
        return false;
      }
      try {
        const created = await leases.create({
          apiVersion: "coordination.k8s.io/v1",
          kind: "Lease",
          metadata: {
            name,
            namespace,
            ...(this.options.labels === undefined ? {} : { labels: { ...this.options.labels } }),
          },
          spec: mine,
        });
        this.observe(created, this.clock.now());
        return true;
      } catch (createErr) {
        this.logger.debug({ err: createErr, lease: name }, "cannot create the lease (another candidate did?)");
        return false;
      }
    }

    this.observe(current, now);
    const spec = current.spec ?? {};
    const holder = spec.holderIdentity ?? "";
    const validForMs = (spec.leaseDurationSeconds ?? 0) * 1000;
    if (holder !== "" && holder !== identity && this.observedAt + validForMs > now) return false;

    if (holder === identity) {
      mine.acquireTime = spec.acquireTime ?? mine.acquireTime;
      mine.leaseTransitions = spec.leaseTransitions ?? 0;
    } else {
      mine.leaseTransitions = (spec.leaseTransitions ?? 0) + 1;
    }
    try {
      // The read resourceVersion rides along: a concurrent writer makes this a 409.
      const updated = await leases.update({ ...this.labelled(current), spec: { ...spec, ...mine } });
      this.observe(updated, this.clock.now());
      return true;
    } catch (err) {
      this.logger.debug({ err, lease: name }, "cannot update the lease");
      return false;
    }
  }

  /** Whether `lease` (the last one read or written) is this candidate's and not expired at `now`, as client-go's isLeaseValid. */
  private holdsValidLease(lease: Lease, now: number): boolean {
    const spec = lease.spec ?? {};
    return (
      spec.holderIdentity === this.options.identity && this.observedAt + (spec.leaseDurationSeconds ?? 0) * 1000 > now
    );
  }

  /** `lease` with the elector's labels added (an unchanged object when it has none to add). */
  private labelled(lease: Lease): Lease {
    const wanted = this.options.labels;
    if (wanted === undefined) return lease;
    return { ...lease, metadata: { ...lease.metadata, labels: { ...lease.metadata?.labels, ...wanted } } };
  }

  /** Gives the Lease up so another candidate can take it at once. */
  private async release(): Promise<void> {
    const lease = this.lease;
    if (lease === undefined || lease.spec?.holderIdentity !== this.options.identity) return;
    const now = microTime(this.clock.now());
    try {
      const released = await this.options.leases.update({
        ...lease,
        spec: {
          ...lease.spec,
          holderIdentity: "",
          leaseDurationSeconds: 1,
          acquireTime: now,
          renewTime: now,
          leaseTransitions: lease.spec?.leaseTransitions ?? 0,
        },
      });
      this.observe(released, this.clock.now());
      this.logger.info({ lease: this.options.name }, "released the lease");
    } catch (err) {
      this.logger.warn({ err, lease: this.options.name }, "cannot release the lease");
    }
  }

  /** Records the Lease; restarts the expiry clock when its record changed. */
  private observe(lease: Lease, now: number): void {
    this.lease = lease;
    const spec = lease.spec ?? {};
    const record = leaseRecord(lease);
    if (record !== this.observedRecord) {
      this.observedRecord = record;
      this.observedAt = now;
    }
    const holder = spec.holderIdentity ?? "";
    if (holder !== this.reportedLeader) {
      this.reportedLeader = holder;
      if (holder !== "") {
        try {
          this.options.onNewLeader?.(holder);
        } catch (err) {
          this.logger.error({ err }, "onNewLeader failed");
        }
      }
    }
  }
}

function abortedAsFalse(signal: AbortSignal): Promise<false> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(false), { once: true }));
}

/**
 * What identifies one renewal of a Lease, as client-go's observedRecord does: a watcher restarts
 * the Lease's expiry clock (on its own clock, never the holder's timestamps) only when this changes.
 */
export function leaseRecord(lease: Lease): string {
  const spec = lease.spec ?? {};
  return JSON.stringify([
    spec.holderIdentity ?? "",
    spec.leaseDurationSeconds,
    spec.acquireTime,
    spec.renewTime,
    spec.leaseTransitions,
  ]);
}
