/**
 * Sharding of one operator over many active replicas: each object of the ring's kinds is
 * reconciled by exactly one replica, and each replica caches only its share. This module puts the
 * pieces together for the manager (`ManagerOptions.sharding`); docs/runtime.md "Sharding"
 * describes the protocol as a whole.
 *
 * ## Expected flow
 * The manager builds one {@link Sharding} per process. While controllers are built, every watch
 * of a reconciled (`for`) kind and of its `owns` kinds gets this member's label selector
 * (`scope`), and every controller and Kopf-style processor registers its primary informer and how
 * it lets go of a key (`track`). Then `run(stop, work)`:
 *
 * - {@link ShardMembership}: the member's own Lease; `work(signal)` (the controllers) runs while
 *   it is held, with the {@link ShardHandOver} that gives drained objects back;
 * - beside it, a leader election among the members (the manager's `leaderElection` settings,
 *   Lease `<ring>-coordinator`): the winner runs the {@link ShardCoordinator}, which labels
 *   objects; a replica that loses that election campaigns again;
 * - with `admission`, beside both, the {@link ShardAdmission} view of the live members that the
 *   operator's mutating webhook asks which member a new object gets (shard-admission.ts).
 *
 * ## Guarantees
 * - Off (no `sharding` option) nothing of this module runs or is even built: informers have no
 *   extra selector, controllers no gate.
 * - No object is reconciled by two replicas at once (hand-over through the drain label, or Lease
 *   expiry after the renew deadline stopped the old member; see the modules named above).
 * - `run` resolves `"left"` after a graceful stop, `"lost"` when the member's Lease could not be
 *   renewed (its work was stopped at the renew deadline; the process should exit).
 *
 * ## Caveats
 * - `watches(kind, map)` sources are not sharded: every member caches the whole kind, and its
 *   events reach only the objects the member holds.
 */
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { KubeClient } from "../client/kube-client.ts";
import type { KubeObject, ResourceKind } from "../client/types.ts";
import type { Clock } from "./clock.ts";
import type { ControllerShard } from "./controller.ts";
import type { Duration } from "./duration.ts";
import type { ActivityTracker } from "./idleness.ts";
import type { InformerOptions } from "./informer.ts";
import { LEASE_KIND, LeaderElector, leaderElectionTimings } from "./leader-election.ts";
import { type RuntimeLogger, silentLogger } from "./log.ts";
import { ShardAdmission, type ShardAdmissionConfig } from "./shard-admission.ts";
import { type CoordinatorObserver, type RingKind, ShardCoordinator } from "./shard-coordinator.ts";
import { type HandOverSource, type KeyReleaser, kindId, ShardHandOver } from "./shard-handover.ts";
import {
  andSelectors,
  checkShardName,
  memberNameFrom,
  memberSelector,
  type ShardLabels,
  shardLabels,
} from "./shard-labels.ts";
import { type ShardLeaseTimings, type ShardMemberState, ShardMembership } from "./shard-membership.ts";
import type { InformerScope } from "./shared-informers.ts";

/**
 * Sharding settings (`ManagerOptions.sharding`, `operator().start({ sharding })`,
 * `capstan run --sharded`). Lease timings are client-go's leader election defaults (15 s / 10 s /
 * 2 s): a crashed member's objects move 15-24 s after its last renewal.
 */
export interface ShardingConfig extends ShardLeaseTimings {
  /** The ring's name: names the labels and Leases (default: the manager's name). */
  ring?: string;
  /** This replica's member name, unique in the ring (default: the host name and a random suffix). */
  member?: string;
  /** Namespace of the members' Leases (default: the client's namespace). */
  namespace?: string;
  /** Points per member on the hash ring (default 160, hash-ring.ts). */
  virtualNodes?: number;
  /**
   * Also assign new objects at admission (`true` for defaults): every replica's webhook server
   * serves a mutating webhook that labels a new object of a ring kind (or a new child of one)
   * with the member the ring gives it, so it is reconciled without waiting for the coordinator.
   * Needs the operator's webhook server and its MutatingWebhookConfiguration (`capstan generate
   * --sharded --shard-admission`; `cluster.runSharded` registers it). The coordinator still
   * assigns whatever the webhook did not (failure, timeout, `generateName`). Off by default.
   */
  admission?: boolean | ShardAdmissionConfig;
}

/** Options of a {@link Sharding}. */
export interface ShardingOptions {
  config: ShardingConfig;
  /** The manager's name, the default ring name. */
  managerName: string;
  client: KubeClient;
  clock: Clock;
  logger?: RuntimeLogger;
  activity?: ActivityTracker;
  /** The coordinator's election: the manager's leader election settings. */
  election: {
    namespace?: string;
    name?: string;
    leaseDuration?: Duration;
    renewDeadline?: Duration;
    retryPeriod?: Duration;
  };
  informerDefaults?: Partial<Omit<InformerOptions<KubeObject>, "listerWatcher">>;
  observer?: CoordinatorObserver & { handedOver?(kind: ResourceKind): void };
  /** Told when a hand-over or the coordinator may have become idle. */
  onSettled?: () => void;
}

/** Thrown by the manager's `start()` when its member Lease could not be renewed in time. */
export class ShardMembershipLostError extends Error {
  constructor(ring: string, member: string) {
    super(`sharding: member ${member} of ring ${ring} could not renew its lease in time; every controller was stopped`);
    this.name = "ShardMembershipLostError";
  }
}

interface TrackedRingKind extends RingKind {
  owns: ResourceKind[];
}

/** A replica's sharding; see the module documentation. */
export class Sharding {
  readonly labels: ShardLabels;
  /** This replica's member name. */
  readonly member: string;
  /** Namespace of the member Leases. */
  readonly namespace: string;
  /** What controllers of this replica need of sharding. */
  readonly controllerShard: ControllerShard;
  private readonly handOver: ShardHandOver;
  private readonly ringKinds = new Map<string, TrackedRingKind>();
  private membership: ShardMembership | undefined;
  private coordinator: ShardCoordinator | undefined;
  /** Set with `config.admission`: this replica's view of the members for its admission webhook. */
  readonly admission: ShardAdmission | undefined;
  private readonly logger: RuntimeLogger;

  constructor(private readonly options: ShardingOptions) {
    const { config } = options;
    this.labels = shardLabels(config.ring ?? options.managerName);
    this.member = checkShardName("member", config.member ?? memberNameFrom(hostname(), randomBytes(3).toString("hex")));
    this.namespace = config.namespace ?? options.client.defaultNamespace;
    this.logger = options.logger ?? silentLogger;
    const timings = leaderElectionTimings(config);
    this.handOver = new ShardHandOver({
      labels: this.labels,
      client: options.client,
      retryPeriodMs: timings.retryPeriodMs,
      clock: options.clock,
      logger: this.logger,
      onChange: options.onSettled,
      onHandedOver: (kind) => options.observer?.handedOver?.(kind),
    });
    const handOver = this.handOver;
    this.controllerShard = {
      isDraining: (obj) => handOver.isDraining(obj),
      childLabels: { [this.labels.shard]: this.member },
    };
    const admission = config.admission ?? false;
    this.admission =
      admission === false
        ? undefined
        : new ShardAdmission({
            client: options.client,
            labels: this.labels,
            leaseNamespace: this.namespace,
            kinds: () => this.ringKinds.values(),
            virtualNodes: config.virtualNodes,
            clock: options.clock,
            logger: this.logger,
            informerDefaults: options.informerDefaults,
          });
  }

  /** Where this member is (`member` while it works). */
  get state(): ShardMemberState {
    return this.membership?.state ?? "idle";
  }

  /** Whether this replica runs the ring's coordinator now. */
  get coordinating(): boolean {
    return this.coordinator?.state === "coordinating";
  }

  /** The live members as the coordinator sees them (empty on a replica that does not coordinate). */
  members(): readonly string[] {
    return this.coordinating ? (this.coordinator?.members() ?? []) : [];
  }

  /** The scope of a member's informer of a ring kind or owned kind: the member's selector added. */
  scope(scope: InformerScope): InformerScope {
    return { ...scope, labelSelector: andSelectors(scope.labelSelector, memberSelector(this.labels, this.member)) };
  }

  /**
   * Registers a ring kind: `source` is this member's informer of it (from {@link scope}), `owns`
   * the kinds of its children, `release` what lets go of one of its keys before a hand-over.
   */
  track(
    kind: ResourceKind,
    namespace: string | undefined,
    owns: readonly ResourceKind[],
    source: HandOverSource,
    release: KeyReleaser,
  ): void {
    const ns = kind.namespaced ? namespace : undefined;
    const id = `${kindId(kind)}|${ns ?? ""}`;
    let ring = this.ringKinds.get(id);
    if (ring === undefined) {
      ring = { kind, namespace: ns, owns: [] };
      this.ringKinds.set(id, ring);
    }
    for (const o of owns) if (!ring.owns.some((k) => kindId(k) === kindId(o))) ring.owns.push(o);
    this.handOver.watch(kind, source);
    this.handOver.addReleaser(source, release);
  }

  /** Why sharding keeps the replica busy (hand-overs, the coordinator's work); `undefined` when idle. */
  busy(): string | undefined {
    return this.handOver.busy() ?? this.coordinator?.busy();
  }

  /**
   * Joins the ring and runs `work` while a member; campaigns for the coordinator beside it.
   * Resolves `"left"` after `stop` aborted, `"lost"` when the member's Lease was lost.
   */
  async run(stop: AbortSignal, work: (signal: AbortSignal) => Promise<void>): Promise<"left" | "lost"> {
    const campaign = new AbortController();
    const onStop = () => campaign.abort();
    stop.addEventListener("abort", onStop, { once: true });
    if (this.membership !== undefined) throw new Error("sharding runs only once");
    const { config } = this.options;
    // The member's Lease and the coordinator's election each renew on a connection of their own, so
    // that a renewal never waits for a new TLS connection behind the controllers' requests (see the
    // manager's electionClient).
    const memberClient = this.options.client.withOwnConnections();
    const electionClient = this.options.client.withOwnConnections();
    this.membership = new ShardMembership({
      leases: memberClient.resource(LEASE_KIND, this.namespace),
      namespace: this.namespace,
      ring: this.labels.ring,
      member: this.member,
      leaseDuration: config.leaseDuration,
      renewDeadline: config.renewDeadline,
      retryPeriod: config.retryPeriod,
      clock: this.options.clock,
      logger: this.logger,
      activity: this.options.activity,
      onJoined: async (signal) => {
        const handingOver = this.handOver.run(signal);
        await work(signal);
        await handingOver;
      },
    });
    const coordinating = this.campaign(campaign.signal, electionClient);
    const admitting = this.admission?.run(campaign.signal);
    try {
      return await this.membership.run(stop);
    } finally {
      campaign.abort();
      stop.removeEventListener("abort", onStop);
      await Promise.all([coordinating, admitting]);
      await Promise.all([memberClient.close(), electionClient.close()]);
    }
  }

  /** Runs for the coordinator, coordinates while elected, and runs again, until `signal` aborts. */
  private async campaign(signal: AbortSignal, leaseClient: KubeClient): Promise<void> {
    const { election } = this.options;
    const namespace = election.namespace ?? this.namespace;
    const name = election.name ?? `${this.labels.ring}-coordinator`;
    const timings = leaderElectionTimings(election);
    while (!signal.aborted) {
      const elector = new LeaderElector({
        leases: leaseClient.resource(LEASE_KIND, namespace),
        namespace,
        name,
        identity: this.member,
        leaseDuration: election.leaseDuration,
        renewDeadline: election.renewDeadline,
        retryPeriod: election.retryPeriod,
        clock: this.options.clock,
        logger: this.logger,
        activity: this.options.activity,
        onStartedLeading: async (leading) => {
          const coordinator = new ShardCoordinator({
            client: this.options.client,
            labels: this.labels,
            leaseNamespace: this.namespace,
            kinds: [...this.ringKinds.values()],
            virtualNodes: this.options.config.virtualNodes,
            leaseGraceMs: timings.leaseDurationMs,
            clock: this.options.clock,
            logger: this.logger,
            informerDefaults: this.options.informerDefaults,
            observer: this.options.observer,
            onSettled: this.options.onSettled,
          });
          this.coordinator = coordinator;
          this.logger.info({ ring: this.labels.ring, member: this.member }, "sharding: coordinating the ring");
          await coordinator.run(leading);
        },
      });
      await elector.run(signal);
      this.options.onSettled?.();
    }
  }
}
