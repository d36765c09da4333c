/**
 * Membership of a shard ring: each replica holds a Lease of its own, and the live members are the
 * Leases that have not expired.
 *
 * ## Expected flow
 * A replica runs one {@link ShardMembership}: `run(signal)` takes its Lease
 * (`<ring>-<member>` in the operator's namespace, labelled `capstan.dev/shard-ring: <ring>`) and
 * renews it with leader election's algorithm and timings (leader-election.ts: nobody contends for
 * it, so the acquisition is immediate). While it holds the Lease it is `member` and runs
 * `onJoined(signal)`, the replica's work. The coordinator reads every Lease of the ring into a
 * {@link LiveMembers} view, which says who is live and calls back when that changes.
 *
 * ## States ({@link ShardMemberState})
 * `idle` -> `joining` (taking the Lease) -> `member` (renewing; work runs) -> `leaving` (graceful
 * stop: work finishes, the Lease is released, then deleted) -> `left`; or `member` -> `lost`
 * (the Lease could not be renewed within `renewDeadline`: the work's signal aborted at once).
 *
 * ## Guarantees
 * - A member stops acting (its work's signal aborts) `renewDeadline` after its last successful
 *   renewal started, before any observer may consider its Lease expired (`leaseDuration` after it
 *   saw that renewal): so when the coordinator sees a Lease expire, its member is not acting, and
 *   its objects can be reassigned at once (given clocks that run at the same rate).
 * - A member that stops gracefully releases its Lease (no holder), so it stops being live at
 *   once, then deletes it; a crashed member's Lease stays until it expires (see the caveats).
 * - {@link LiveMembers} measures expiry on the observer's own clock from when it saw a Lease's
 *   record change, as leader election does: remote timestamps and clock skew do not matter.
 *
 * ## Caveats
 * - A crashed member's Lease is left behind, expired; the coordinator deletes Leases of its ring
 *   that have been expired for a whole lease duration more.
 * - A coordinator that has just started sees every held Lease as live for up to `leaseDuration`,
 *   including those of members that crashed before it started: their objects wait that long.
 */
import type { Lease } from "kubernetes-types/coordination/v1.d.ts";
import type { KubeClient } from "../client/kube-client.ts";
import type { KubeObject } from "../client/types.ts";
import type { Clock } from "./clock.ts";
import type { Duration } from "./duration.ts";
import type { ActivityTracker } from "./idleness.ts";
import { DeletedFinalStateUnknown, Informer, type InformerOptions } from "./informer.ts";
import { LEASE_KIND, LeaderElector, type LeaseApi, leaderElectionTimings, leaseRecord } from "./leader-election.ts";
import { type RuntimeLogger, silentLogger } from "./log.ts";
import { RING_LEASE_LABEL } from "./shard-labels.ts";

/** Where a member is; see the module documentation. */
export type ShardMemberState = "idle" | "joining" | "member" | "leaving" | "left" | "lost";

/** The Lease calls of a member: the elector's, and delete to clean up after a graceful stop. */
export interface MemberLeaseApi extends LeaseApi {
  delete(name: string, opts?: { namespace?: string }): Promise<unknown>;
}

/** Lease timings of a ring (leader election's, client-go's defaults). */
export interface ShardLeaseTimings {
  leaseDuration?: Duration;
  renewDeadline?: Duration;
  retryPeriod?: Duration;
}

/** Options of a {@link ShardMembership}. */
export interface ShardMembershipOptions extends ShardLeaseTimings {
  leases: MemberLeaseApi;
  namespace: string;
  ring: string;
  member: string;
  /** The member's work: runs while it holds its Lease; its signal aborts when it must stop. */
  onJoined(signal: AbortSignal): Promise<void>;
  clock?: Clock;
  logger?: RuntimeLogger;
  activity?: ActivityTracker;
}

/** The name of `member`'s Lease in `ring`. */
export function memberLeaseName(ring: string, member: string): string {
  return `${ring}-${member}`;
}

/** A replica's membership of a ring; see the module documentation. */
export class ShardMembership {
  private current: ShardMemberState = "idle";

  constructor(private readonly options: ShardMembershipOptions) {
    leaderElectionTimings(options);
  }

  /** Where the member is. */
  get state(): ShardMemberState {
    return this.current;
  }

  /**
   * Joins, works while the Lease is held, and resolves `"left"` after a graceful stop (`signal`
   * aborted) or `"lost"` when the Lease could not be renewed in time.
   */
  async run(signal: AbortSignal): Promise<"left" | "lost"> {
    if (this.current !== "idle") throw new Error("a shard membership runs only once");
    const { leases, namespace, ring, member } = this.options;
    const name = memberLeaseName(ring, member);
    this.current = "joining";
    const elector = new LeaderElector({
      leases,
      namespace,
      name,
      identity: member,
      labels: { [RING_LEASE_LABEL]: ring },
      leaseDuration: this.options.leaseDuration,
      renewDeadline: this.options.renewDeadline,
      retryPeriod: this.options.retryPeriod,
      clock: this.options.clock,
      logger: this.options.logger,
      activity: this.options.activity,
      onStartedLeading: async (working) => {
        this.current = "member";
        const logger = this.options.logger ?? silentLogger;
        logger.info({ ring, member }, "joined the shard ring");
        working.addEventListener(
          "abort",
          () => {
            this.current = signal.aborted ? "leaving" : "lost";
          },
          { once: true },
        );
        await this.options.onJoined(working);
      },
    });
    await elector.run(signal);
    if (!signal.aborted) {
      this.current = "lost";
      return "lost";
    }
    // Released by the elector already (no holder: not live); deleted so members do not pile up.
    try {
      await leases.delete(name, { namespace });
    } catch (err) {
      (this.options.logger ?? silentLogger).debug({ err, lease: name }, "cannot delete the member's lease");
    }
    this.current = "left";
    return "left";
  }
}

interface Observed {
  holder: string;
  record: string;
  observedAt: number;
  validForMs: number;
}

/**
 * The live members of a ring from its Leases, on the observer's clock. Feed it every Lease event
 * (`observe`, `forget`); it calls `onChange` when the set of live members changed, including when
 * a Lease expires without any event (a timer on `clock`). `stop()` cancels the timer.
 */
export class LiveMembers {
  private readonly leases = new Map<string, Observed>();
  private live = new Set<string>();
  private cancelTimer: (() => void) | undefined;
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    private readonly onChange: (live: ReadonlySet<string>) => void,
  ) {}

  /** The live members now (holder set, record changed within its lease duration). */
  members(): ReadonlySet<string> {
    return this.live;
  }

  /** Whether `member` is live now. */
  isLive(member: string): boolean {
    return this.live.has(member);
  }

  /** Leases of members expired for at least `graceMs` more (to delete). */
  expiredFor(graceMs: number): string[] {
    const now = this.clock.now();
    const names: string[] = [];
    for (const [name, o] of this.leases) if (o.observedAt + o.validForMs + graceMs <= now) names.push(name);
    return names;
  }

  /** Records a Lease as read or watched (its expiry restarts when its record changed). */
  observe(lease: Lease): void {
    const name = lease.metadata?.name;
    if (name === undefined) return;
    const spec = lease.spec ?? {};
    const record = leaseRecord(lease);
    const known = this.leases.get(name);
    if (known === undefined || known.record !== record) {
      this.leases.set(name, {
        holder: spec.holderIdentity ?? "",
        record,
        observedAt: this.clock.now(),
        validForMs: (spec.leaseDurationSeconds ?? 0) * 1000,
      });
    }
    this.recompute();
  }

  /** Forgets a deleted Lease. */
  forget(name: string): void {
    if (this.leases.delete(name)) this.recompute();
  }

  /** Recomputes who is live, calls `onChange` if that changed, and arms the next expiry. */
  recompute(): void {
    if (this.stopped) return;
    const now = this.clock.now();
    const live = new Set<string>();
    let nextExpiry = Number.POSITIVE_INFINITY;
    for (const o of this.leases.values()) {
      if (o.holder === "") continue;
      const expiresAt = o.observedAt + o.validForMs;
      if (expiresAt > now) {
        live.add(o.holder);
        nextExpiry = Math.min(nextExpiry, expiresAt);
      }
    }
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    if (nextExpiry !== Number.POSITIVE_INFINITY) {
      this.cancelTimer = this.clock.setTimer(nextExpiry - now, () => {
        this.cancelTimer = undefined;
        this.recompute();
      });
    }
    if (live.size === this.live.size && [...live].every((m) => this.live.has(m))) return;
    this.live = live;
    this.onChange(live);
  }

  /** Cancels the expiry timer; no more callbacks. */
  stop(): void {
    this.stopped = true;
    this.cancelTimer?.();
    this.cancelTimer = undefined;
  }
}

/**
 * An informer of a ring's member Leases that keeps `live` current: the coordinator's and the
 * admission view's way of knowing the members. Run it with `run(signal)`.
 */
export function ringLeaseInformer(
  options: {
    client: KubeClient;
    ring: string;
    namespace: string;
    name: string;
    logger: RuntimeLogger;
    informerDefaults?: Partial<Omit<InformerOptions<KubeObject>, "listerWatcher">> | undefined;
  },
  live: LiveMembers,
): Informer<Lease> {
  const leases = new Informer<Lease>({
    ...(options.informerDefaults as Partial<InformerOptions<Lease>>),
    name: options.name,
    logger: options.logger,
    listerWatcher: options.client.resource(LEASE_KIND, options.namespace),
    labelSelector: `${RING_LEASE_LABEL}=${options.ring}`,
  });
  leases.addEventHandler({
    onAdd: (l) => live.observe(l),
    onUpdate: (_o, l) => live.observe(l),
    onDelete: (d) => {
      const name = (d instanceof DeletedFinalStateUnknown ? d.obj : d).metadata?.name;
      if (name !== undefined) live.forget(name);
    },
  });
  return leases;
}
