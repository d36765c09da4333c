/**
 * Assignment at admission: the member a new object of a ring kind (or a new child of one) is given
 * while the API server creates it, so that it never waits unassigned for the coordinator. Every
 * replica serves the operator's webhooks (a Service spreads the calls over them), so every replica
 * keeps its own view of the ring's live members, from the same Leases the coordinator reads.
 *
 * ## Expected flow
 * `new ShardAdmission({ client, labels, leaseNamespace, kinds })`; `run(signal)` watches the ring's
 * Leases (`capstan.dev/shard-ring: <ring>`) into a {@link LiveMembers} view and a {@link HashRing},
 * as the coordinator does. For each CREATE the operator's mutating webhook asks
 * {@link ShardAdmission.memberFor}:
 *
 * - an object of a ring kind (in a namespace the ring watches): the ring's choice for its key
 *   (group, kind, namespace, name: the key the coordinator uses);
 * - an object of a kind a ring kind owns, whose controller owner is of that ring kind: the ring's
 *   choice for the owner's key, so a child lands where its owner does;
 * - anything else, an object already carrying the shard or drain label, an object with no name
 *   yet (`generateName`: the API server names it after admission), or no live member known:
 *   `undefined`, and the object is left as it is.
 *
 * ## Guarantees
 * - It never fights the coordinator: it only labels an object that nobody holds yet (no shard
 *   label, no drain label), and only with the member the hash ring over live members gives, which
 *   is what the coordinator writes when both see the same members.
 * - It never blocks a write: an answer is computed from memory (no request to the API server), and
 *   the webhook's configuration has `failurePolicy: Ignore` (see shard-admission-webhooks.ts).
 *
 * ## Caveats
 * - Its view of the members may differ from the coordinator's for a moment (a member just joined or
 *   expired on one clock and not yet on the other). The coordinator then treats the object as any
 *   object assigned to another member: a drain when that member is live, an immediate reassignment
 *   when its Lease expired. Nothing is reconciled twice; the object only moves once more.
 * - Until its Lease watch has listed (a replica just started), it knows no member and labels nothing.
 */
import type { KubeClient } from "../client/kube-client.ts";
import type { KubeObject } from "../client/types.ts";
import { type Clock, systemClock } from "./clock.ts";
import type { Duration } from "./duration.ts";
import { HashRing, type ShardKey } from "./hash-ring.ts";
import type { InformerOptions } from "./informer.ts";
import { type RuntimeLogger, silentLogger } from "./log.ts";
import type { RingKind } from "./shard-coordinator.ts";
import { assignedMember, isDraining, type ShardLabels } from "./shard-labels.ts";
import { LiveMembers, ringLeaseInformer } from "./shard-membership.ts";

/** Settings of assignment at admission (`ShardingConfig.admission`). */
export interface ShardAdmissionConfig {
  /**
   * The API server's timeout for the webhook call (`timeoutSeconds`, whole seconds from 1 to 30;
   * default {@link DEFAULT_SHARD_ADMISSION_TIMEOUT}). Past it the create goes on without the label
   * (`failurePolicy: Ignore`) and the coordinator labels the object a moment later.
   */
  timeout?: Duration;
}

/**
 * The answer is computed in memory, so a healthy replica answers in milliseconds; 2 s bounds what
 * a slow or partitioned replica can add to a user's create (kube-apiserver's default is 10 s).
 */
export const DEFAULT_SHARD_ADMISSION_TIMEOUT: Duration = "2s";

/** An object being created, as the admission request names it. */
export interface AdmittedObject {
  /** The kind the request is for (the webhook rule's group and kind). */
  group: string;
  kind: string;
  /** The request's namespace (empty or undefined for a cluster-scoped object). */
  namespace?: string;
  obj: KubeObject;
}

/** Options of a {@link ShardAdmission}. */
export interface ShardAdmissionOptions {
  client: KubeClient;
  labels: ShardLabels;
  /** Namespace of the members' Leases. */
  leaseNamespace: string;
  /** The ring's kinds now (they are registered while controllers are built). */
  kinds: () => Iterable<RingKind>;
  virtualNodes?: number;
  clock?: Clock;
  logger?: RuntimeLogger;
  informerDefaults?: Partial<Omit<InformerOptions<KubeObject>, "listerWatcher">>;
}

/** A replica's view of the ring for its admission webhook; see the module documentation. */
export class ShardAdmission {
  private ring = new HashRing([]);
  private readonly live: LiveMembers;
  private running = false;

  constructor(private readonly options: ShardAdmissionOptions) {
    this.live = new LiveMembers(options.clock ?? systemClock, (live) => {
      this.ring = new HashRing(live, options.virtualNodes);
    });
  }

  /** The live members as this replica sees them, sorted. */
  members(): readonly string[] {
    return this.ring.members;
  }

  /** Watches the ring's Leases until `signal` aborts; resolves once the watch stopped. */
  async run(signal: AbortSignal): Promise<void> {
    if (this.running) throw new Error("a shard admission view runs only once");
    this.running = true;
    const { client, labels, leaseNamespace, informerDefaults } = this.options;
    const leases = ringLeaseInformer(
      {
        client,
        ring: labels.ring,
        namespace: leaseNamespace,
        name: `Lease.coordination.k8s.io/v1 (ring ${labels.ring}, admission)`,
        logger: this.options.logger ?? silentLogger,
        informerDefaults,
      },
      this.live,
    );
    try {
      await leases.run(signal);
    } finally {
      this.live.stop();
      this.ring = new HashRing([]);
    }
  }

  /** The member to label a new object with, or `undefined` to leave it alone (see the module documentation). */
  memberFor(admitted: AdmittedObject): string | undefined {
    const { labels } = this.options;
    const { obj } = admitted;
    if (this.ring.empty) return undefined;
    if (assignedMember(labels, obj) !== undefined || isDraining(labels, obj)) return undefined;
    const key = this.keyOf(admitted);
    return key === undefined ? undefined : this.ring.memberFor(key);
  }

  /** The ring key deciding `admitted`'s member: its own, or its controller owner's. */
  private keyOf({ group, kind, namespace, obj }: AdmittedObject): ShardKey | undefined {
    const ns = namespace || obj.metadata?.namespace || undefined;
    const name = obj.metadata?.name;
    const kinds = [...this.options.kinds()];
    const inScope = (ring: RingKind) => ring.namespace === undefined || ring.namespace === ns;
    const own = kinds.find((r) => r.kind.group === group && r.kind.kind === kind && inScope(r));
    if (own !== undefined) {
      if (name === undefined || name === "") return undefined;
      return { group, kind, namespace: own.kind.namespaced ? ns : undefined, name };
    }
    const ref = obj.metadata?.ownerReferences?.find((r) => r.controller === true);
    if (ref === undefined) return undefined;
    const slash = ref.apiVersion.indexOf("/");
    const ownerGroup = slash < 0 ? "" : ref.apiVersion.slice(0, slash);
    const owner = kinds.find(
      (r) =>
        r.kind.group === ownerGroup &&
        r.kind.kind === ref.kind &&
        inScope(r) &&
        r.owns.some((o) => o.group === group && o.kind === kind),
    );
    if (owner === undefined) return undefined;
    // A namespaced owner is in its child's namespace (owner references do not cross namespaces).
    return { group: ownerGroup, kind: ref.kind, namespace: owner.kind.namespaced ? ns : undefined, name: ref.name };
  }
}
