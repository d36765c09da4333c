/**
 * The coordinator of a shard ring: assigns every object of the ring's kinds to a live member by
 * labelling it, and moves objects when membership changes. One replica runs it at a time, chosen
 * by the manager's leader election; it needs no Deployment of its own.
 *
 * ## Expected flow
 * `new ShardCoordinator({ client, labels, leaseNamespace, kinds, ... }).run(signal)`: it starts
 * its own informers (the ring's Leases; metadata only, every object of each ring kind and of the
 * kinds they own), and once they have synced keeps, for each object, the label
 * `shard.capstan.dev/<ring>` equal to the member the hash ring gives it:
 *
 * - unassigned (new, or given back by its member after a drain): its children are labelled with
 *   the member first, then the object itself (and a stale drain label is cleared);
 * - assigned to a member whose Lease expired (confirmed by reading the Lease again) or was
 *   released: reassigned at once, without a drain — that member is not acting;
 * - assigned to a live member that is not the ring's choice: marked with the drain label, once;
 *   its member lets go of it and removes both labels (shard-handover.ts), which makes it
 *   unassigned, above;
 * - a child (an object of an owned kind whose controller owner is of a ring kind): labelled with
 *   its owner's member, so it is in the same replica's cache as its owner.
 *
 * ## States ({@link CoordinatorState})
 * `idle` -> `syncing` (informers listing) -> `coordinating` -> `stopped` (signal aborted).
 *
 * ## Guarantees
 * - Every write carries the resourceVersion the decision was made on: a decision about a state
 *   that changed meanwhile fails with 409 Conflict and is taken again on the newer state.
 * - An object is never moved between two live members without the drain: the new member is
 *   labelled only once the label is gone (its old member let go), or once the old member's Lease
 *   expired on this process's clock and a fresh read of the Lease confirmed it.
 * - Nothing is left unassigned while a member is live: every object event and every membership
 *   change queues the objects concerned, and failed writes are retried with the work queue's
 *   rate limiter.
 *
 * ## What it keeps
 * Of every object of the ring's kinds and of their children, only what its decisions read
 * ({@link coordinatorView}, the informers' store transform): name, namespace, resourceVersion (every
 * write carries it), the ring's shard and drain labels, and for a child its controller owner
 * reference; no built-in store index, children found through one index by owner per owning ring
 * kind, objects per member and misplaced objects counted with the informer events. About 0.7 KB
 * per ring object with one child (`npm run bench:coordinator-memory`; 2.2 KB with whole metadata and
 * the store's indexes).
 *
 * ## Caveats
 * - The coordinator caches that view of every object of the ring's kinds and of their children,
 *   on one replica (the members cache only their share, in full).
 * - A child whose owner is not (yet) in the coordinator's cache waits for it; a child without a
 *   controller owner of a ring kind is not sharded (no member caches it).
 */
import { setMaxListeners } from "node:events";
import type { Lease } from "kubernetes-types/coordination/v1.d.ts";
import type { OwnerReference } from "kubernetes-types/meta/v1.d.ts";
import { isConflict, isNotFound } from "../client/errors.ts";
import type { KubeClient } from "../client/kube-client.ts";
import type { KubeObject, ResourceKind } from "../client/types.ts";
import { objectKey, type TransformFunc } from "./cache.ts";
import { type Clock, systemClock } from "./clock.ts";
import { controllerOwnerKeys } from "./controller.ts";
import { HashRing } from "./hash-ring.ts";
import { DeletedFinalStateUnknown, Informer, type InformerOptions } from "./informer.ts";
import { LEASE_KIND } from "./leader-election.ts";
import { type RuntimeLogger, silentLogger } from "./log.ts";
import { kindId } from "./shard-handover.ts";
import { assignedMember, isDraining, type ShardLabels } from "./shard-labels.ts";
import { LiveMembers, memberLeaseName, ringLeaseInformer } from "./shard-membership.ts";
import { WorkQueue } from "./workqueue.ts";

/** A kind on the ring: its objects are assigned; objects of `owns` kinds follow their owner. */
export interface RingKind {
  kind: ResourceKind;
  /** Namespace watched (`undefined`: all, or cluster-scoped). */
  namespace?: string;
  owns: readonly ResourceKind[];
}

/** Where a coordinator is. */
export type CoordinatorState = "idle" | "syncing" | "coordinating" | "stopped";

/** What the coordinator reports (metrics). */
export interface CoordinatorObserver {
  /** The live members changed. */
  members?(live: readonly string[]): void;
  /** Objects per labelled member (of ring kinds, children not counted; `""`: unassigned), after each change. */
  assigned?(perMember: ReadonlyMap<string, number>): void;
  /** Every object assigned to the ring's choice `ms` after the membership change that moved them. */
  rebalanced?(ms: number): void;
}

/** Options of a {@link ShardCoordinator}. */
export interface ShardCoordinatorOptions {
  client: KubeClient;
  labels: ShardLabels;
  /** Namespace of the members' Leases. */
  leaseNamespace: string;
  kinds: readonly RingKind[];
  virtualNodes?: number;
  /** Expired Leases are deleted this long after they expired (default: never). */
  leaseGraceMs?: number;
  /** Workers writing labels (default {@link COORDINATOR_WORKERS}). */
  workers?: number;
  clock?: Clock;
  logger?: RuntimeLogger;
  /** Extra informer options (tests use short backoffs). */
  informerDefaults?: Partial<Omit<InformerOptions<KubeObject>, "listerWatcher">>;
  observer?: CoordinatorObserver;
  /** Called when the coordinator may have become idle (the manager's whenIdle). */
  onSettled?: () => void;
}

/**
 * Label writes in flight at once: a membership change of 10,000 objects is that many patches; 8
 * keeps a rebalance to seconds on a shared API server without one coordinator crowding it (the
 * client's own rate limits apply too).
 */
export const COORDINATOR_WORKERS = 8;

interface Tracked {
  ring: RingKind;
  informer: Informer<KubeObject>;
}

/** A child kind's informer, with the ring kinds that own it (each an index of the children by owner). */
interface ChildKind {
  kind: ResourceKind;
  informer: Informer<KubeObject>;
  owners: RingKind[];
}

/** Distinct label sets shared between objects, at most (members x drain values: a handful). */
const SHARED_LABEL_SETS = 256;

/**
 * The coordinator's store transform: of `obj`, only what the coordinator reads (see the module
 * documentation), as a new object so the received one can be collected. Labels objects are shared
 * between objects that carry the same shard and drain values (frozen); with `owner`, the controller
 * owner reference is kept, without its uid (owners are found by kind and name). Idempotent.
 */
export function coordinatorView(labels: ShardLabels, owner: boolean): TransformFunc<KubeObject> {
  const labelSets = new Map<string, Readonly<Record<string, string>>>();
  const slimLabels = (all: Record<string, string> | undefined): Readonly<Record<string, string>> | undefined => {
    const shard = all?.[labels.shard];
    const drain = all?.[labels.drain];
    if (shard === undefined && drain === undefined) return undefined;
    const id = `${shard ?? ""}\n${drain ?? "\n"}`;
    let set = labelSets.get(id);
    if (set === undefined) {
      const kept: Record<string, string> = {};
      if (shard !== undefined) kept[labels.shard] = shard;
      if (drain !== undefined) kept[labels.drain] = drain;
      set = Object.freeze(kept);
      if (labelSets.size < SHARED_LABEL_SETS) labelSets.set(id, set);
    }
    return set;
  };
  return (obj) => {
    const meta = obj.metadata ?? {};
    const { name, namespace, resourceVersion } = meta;
    // One object literal per shape, every field set (undefined when absent): V8 then keeps the
    // fields in the object itself, without a separate properties array per object.
    const kept = slimLabels(meta.labels) as Record<string, string> | undefined;
    if (!owner) return { metadata: { name, namespace, resourceVersion, labels: kept } };
    const ref = meta.ownerReferences?.find((r) => r.controller === true);
    const ownerReferences =
      ref === undefined
        ? undefined
        : [{ apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name, controller: true } as OwnerReference];
    return { metadata: { name, namespace, resourceVersion, labels: kept, ownerReferences } };
  };
}

/** Assigns objects to members; see the module documentation. */
export class ShardCoordinator {
  private current: CoordinatorState = "idle";
  private readonly clock: Clock;
  private readonly logger: RuntimeLogger;
  private readonly primaries: Tracked[] = [];
  /** Informers of owned kinds, by kind identity, with the ring kinds that own them. */
  private readonly children = new Map<string, ChildKind>();
  private readonly queue: WorkQueue<string>;
  private readonly live: LiveMembers;
  private ring = new HashRing([]);
  private leaseInformer: Informer<Lease> | undefined;
  /** When the last membership change happened, until everything is where the ring wants it. */
  private rebalanceSince: number | undefined;
  /** Ring objects per labelled member (`""`: unassigned), kept with every informer event (the objects metric). */
  private readonly perMember = new Map<string, number>();
  /** Ring objects whose label is not the ring's choice, kept with every informer event and membership change. */
  private misplacedCount = 0;

  constructor(private readonly options: ShardCoordinatorOptions) {
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? silentLogger;
    this.queue = new WorkQueue<string>({
      name: `shard-coordinator-${options.labels.ring}`,
      clock: this.clock,
      onDone: options.onSettled,
    });
    this.live = new LiveMembers(this.clock, (live) => this.membersChanged(live));
  }

  /** Where the coordinator is. */
  get state(): CoordinatorState {
    return this.current;
  }

  /** The live members, sorted. */
  members(): readonly string[] {
    return this.ring.members;
  }

  /** Why the coordinator is busy (writes queued or running, objects not where the ring wants them); `undefined` when idle. */
  busy(): string | undefined {
    if (this.current === "syncing") return "shard coordinator: syncing";
    if (this.current !== "coordinating") return undefined;
    const work = this.queue.len() + this.queue.processingCount();
    if (work > 0) return `shard coordinator: ${work} object(s) to assign`;
    const misplaced = this.misplaced();
    return misplaced === 0 ? undefined : `shard coordinator: ${misplaced} object(s) not yet on their member`;
  }

  /** Objects of ring kinds whose label is not the ring's choice (none when balanced, or no member). */
  misplaced(): number {
    return this.ring.empty ? 0 : this.misplacedCount;
  }

  /** Objects of ring kinds per assigned member (`""` for unassigned). */
  assignment(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const { informer } of this.primaries) {
      for (const obj of informer.store.list()) {
        const m = assignedMember(this.options.labels, obj) ?? "";
        counts.set(m, (counts.get(m) ?? 0) + 1);
      }
    }
    return counts;
  }

  /** Coordinates until `signal` aborts; resolves once its informers and workers stopped. */
  async run(outer: AbortSignal): Promise<void> {
    if (this.current !== "idle") throw new Error("a shard coordinator runs only once");
    this.current = "syncing";
    // One signal shared by every informer, worker and request of the coordinator.
    const stop = new AbortController();
    setMaxListeners(0, stop.signal);
    const onAbort = () => stop.abort();
    outer.addEventListener("abort", onAbort, { once: true });
    if (outer.aborted) stop.abort();
    const signal = stop.signal;
    const { client, labels, leaseNamespace, informerDefaults } = this.options;
    const leases = ringLeaseInformer(
      {
        client,
        ring: labels.ring,
        namespace: leaseNamespace,
        name: `Lease.coordination.k8s.io/v1 (ring ${labels.ring})`,
        logger: this.logger,
        informerDefaults,
      },
      this.live,
    );
    this.leaseInformer = leases;
    for (const ring of this.options.kinds) {
      const informer = this.metadataInformer(ring.kind, ring.namespace, false);
      this.primaries.push({ ring, informer });
      const index = this.primaries.length - 1;
      informer.addEventHandler({
        onAdd: (obj) => this.seen(index, undefined, obj),
        onUpdate: (old, obj) => this.seen(index, old, obj),
        onDelete: (d) => this.seen(index, d instanceof DeletedFinalStateUnknown ? d.obj : d, undefined),
      });
      for (const owned of ring.owns) {
        const id = kindId(owned);
        let entry = this.children.get(id);
        if (entry === undefined) {
          entry = { kind: owned, informer: this.metadataInformer(owned, ring.namespace, true), owners: [] };
          this.children.set(id, entry);
          const childKey = (obj: KubeObject) => `c|${id}|${objectKey(obj)}`;
          entry.informer.addEventHandler({
            onAdd: (obj) => this.queue.add(childKey(obj)),
            onUpdate: (_o, obj) => this.queue.add(childKey(obj)),
          });
        }
        if (entry.owners.includes(ring)) continue;
        entry.owners.push(ring);
        // The children of each owner, found as the owner is assigned. By the owner's name alone:
        // the index then holds the reference's own name string, not a new `ns/name` per child
        // (labelChildren checks the namespace).
        entry.informer.addIndexer(ownerIndex(ring), (child) => controllerOwnerNames(ring.kind, child));
      }
    }
    const informers: Informer<KubeObject>[] = [
      leases as unknown as Informer<KubeObject>,
      ...this.primaries.map((p) => p.informer),
      ...[...this.children.values()].map((c) => c.informer),
    ];
    const runs = informers.map((i) => i.run(signal));
    const workers: Promise<void>[] = [];
    try {
      const synced = (await Promise.all(informers.map((i) => i.waitForSync(signal)))).every(Boolean);
      if (!synced) return;
      this.current = "coordinating";
      this.membersChanged(this.live.members());
      const workerCount = this.options.workers ?? COORDINATOR_WORKERS;
      for (let i = 0; i < workerCount; i++) workers.push(this.work(signal));
      await new Promise<void>((resolve) =>
        signal.aborted ? resolve() : signal.addEventListener("abort", () => resolve(), { once: true }),
      );
    } finally {
      outer.removeEventListener("abort", onAbort);
      this.queue.shutDown();
      this.live.stop();
      await Promise.all([...runs, ...workers]);
      this.options.observer?.members?.([]); // another replica coordinates now
      this.options.observer?.assigned?.(new Map());
      this.current = "stopped";
      this.options.onSettled?.();
    }
  }

  private metadataInformer(kind: ResourceKind, namespace: string | undefined, child: boolean): Informer<KubeObject> {
    const defaults = this.options.informerDefaults;
    return new Informer<KubeObject>({
      ...defaults,
      name: `${kind.kind}.${kind.group || "core"}/${kind.version} (shard coordinator, metadata)`,
      logger: this.logger,
      listerWatcher: this.options.client.metadata(kind, kind.namespaced ? namespace : undefined),
      // Only what the coordinator reads, no index it does not look up (see "What it keeps").
      store: {
        ...defaults?.store,
        transform: coordinatorView(this.options.labels, child),
        builtInIndexes: false,
      },
    });
  }

  private membersChanged(live: ReadonlySet<string>): void {
    this.ring = new HashRing(live, this.options.virtualNodes);
    this.recountMisplaced();
    this.options.observer?.members?.(this.ring.members);
    if (this.current !== "coordinating") return;
    this.logger.info({ ring: this.options.labels.ring, members: this.ring.members }, "sharding: members changed");
    this.rebalanceSince = this.clock.now();
    this.primaries.forEach(({ informer }, index) => {
      for (const obj of informer.store.list()) this.queue.add(`p|${index}|${objectKey(obj)}`);
    });
    this.collectLeases();
  }

  /** Recounts the misplaced objects for a new ring: the one walk a membership change costs. */
  private recountMisplaced(): void {
    let n = 0;
    for (const { ring, informer } of this.primaries) {
      for (const obj of informer.store.list()) if (this.isMisplaced(ring, obj)) n++;
    }
    this.misplacedCount = n;
  }

  private isMisplaced(ring: RingKind, obj: KubeObject): boolean {
    return assignedMember(this.options.labels, obj) !== this.desired(ring, obj);
  }

  /**
   * A ring object added (`old` undefined), changed, or deleted (`obj` undefined): moves its count
   * between members and in and out of the misplaced, reports the counts when they changed (the
   * objects metric follows each assignment, hand-over and deletion as it happens), and queues it.
   * The informer gives the stored version as `old` and a deletion's last state, so the counts
   * need no copy of the labels.
   */
  private seen(index: number, old: KubeObject | undefined, obj: KubeObject | undefined): void {
    const { labels } = this.options;
    const ring = (this.primaries[index] as Tracked).ring;
    if (old !== undefined && this.isMisplaced(ring, old)) this.misplacedCount--;
    if (obj !== undefined && this.isMisplaced(ring, obj)) this.misplacedCount++;
    const before = old === undefined ? undefined : (assignedMember(labels, old) ?? "");
    const after = obj === undefined ? undefined : (assignedMember(labels, obj) ?? "");
    if (before !== after) {
      if (before !== undefined) {
        const n = (this.perMember.get(before) ?? 1) - 1;
        if (n > 0) this.perMember.set(before, n);
        else this.perMember.delete(before);
      }
      if (after !== undefined) this.perMember.set(after, (this.perMember.get(after) ?? 0) + 1);
      this.options.observer?.assigned?.(this.perMember);
    }
    if (obj !== undefined) this.queue.add(`p|${index}|${objectKey(obj)}`);
  }

  /** Deletes Leases expired for longer than the grace (crashed members' leftovers). */
  private collectLeases(): void {
    const grace = this.options.leaseGraceMs;
    if (grace === undefined) return;
    for (const name of this.live.expiredFor(grace)) {
      const lease = this.leaseInformer?.store.get(`${this.options.leaseNamespace}/${name}`);
      const rv = lease?.metadata?.resourceVersion;
      void this.options.client
        .resource(LEASE_KIND, this.options.leaseNamespace)
        .delete(name, rv === undefined ? {} : { preconditions: { resourceVersion: rv } })
        .catch((err: unknown) => this.logger.debug({ err, lease: name }, "sharding: cannot delete an expired lease"));
    }
  }

  private desired(ring: RingKind, obj: KubeObject): string | undefined {
    return this.ring.memberFor({
      group: ring.kind.group,
      kind: ring.kind.kind,
      namespace: obj.metadata?.namespace,
      name: obj.metadata?.name ?? "",
    });
  }

  private async work(signal: AbortSignal): Promise<void> {
    for (;;) {
      const key = await this.queue.get(signal);
      if (key === undefined) return;
      try {
        const again = key.startsWith("p|") ? await this.assignPrimary(key) : await this.assignChild(key);
        if (again) this.queue.addRateLimited(key);
        else this.queue.forget(key);
      } catch (err) {
        if (!signal.aborted) {
          if (!isConflict(err)) this.logger.warn({ err, key }, "sharding: cannot label an object; retrying");
          this.queue.addRateLimited(key);
        }
      } finally {
        this.queue.done(key);
        if (this.rebalanceSince !== undefined && this.queue.len() === 0 && this.queue.processingCount() === 0) {
          this.balancedCheck();
        }
      }
    }
  }

  /** Reports the rebalance time once every object is where the ring wants it. */
  private balancedCheck(): void {
    if (this.rebalanceSince === undefined || this.misplaced() > 0) return;
    this.options.observer?.rebalanced?.(this.clock.now() - this.rebalanceSince);
    this.rebalanceSince = undefined;
  }

  /** One step toward the ring's choice for a ring object; true to try again later. */
  private async assignPrimary(key: string): Promise<boolean> {
    const [, index, objKey] = key.split("|") as [string, string, string];
    const tracked = this.primaries[Number(index)];
    const obj = tracked?.informer.store.get(objKey);
    if (tracked === undefined || obj === undefined) return false;
    const { labels } = this.options;
    const desired = this.desired(tracked.ring, obj);
    if (desired === undefined) return false; // no live member: nothing to assign to
    const current = assignedMember(labels, obj);
    const draining = isDraining(labels, obj);
    if (current === desired && !draining) return this.labelChildren(tracked.ring, obj, desired);
    if (current === undefined) return this.assign(tracked.ring, obj, desired);
    if (!this.live.isLive(current)) {
      if (!(await this.confirmGone(current))) return true;
      this.logger.info({ key: objKey, from: current, to: desired }, "sharding: member gone, reassigning");
      return this.assign(tracked.ring, obj, desired);
    }
    // A live member holds it: ask it to let go (once); it removes the labels when it has.
    if (!draining) await this.patch(tracked.ring.kind, obj, { [labels.drain]: "true" });
    return false;
  }

  /** Labels the children, then the object, with `member` (clearing a drain label). */
  private async assign(ring: RingKind, obj: KubeObject, member: string): Promise<boolean> {
    await this.labelChildren(ring, obj, member);
    const { labels } = this.options;
    await this.patch(ring.kind, obj, { [labels.shard]: member, [labels.drain]: null });
    return false;
  }

  private async labelChildren(ring: RingKind, owner: KubeObject, member: string): Promise<boolean> {
    const { name, namespace } = owner.metadata ?? {};
    const writes: Promise<void>[] = [];
    for (const entry of this.children.values()) {
      if (name === undefined || !entry.owners.includes(ring)) continue;
      for (const child of entry.informer.store.byIndex(ownerIndex(ring), name)) {
        // Owner references name an owner in the child's own namespace.
        if (ring.kind.namespaced && child.metadata?.namespace !== namespace) continue;
        writes.push(this.labelChild(entry, child, member));
      }
    }
    await Promise.all(writes);
    return false;
  }

  private async labelChild(entry: ChildKind, child: KubeObject, member: string): Promise<void> {
    if (assignedMember(this.options.labels, child) === member) return;
    await this.patch(entry.kind, child, { [this.options.labels.shard]: member });
  }

  /** A child seen: give it its owner's member (when the owner is assigned and not moving). */
  private async assignChild(key: string): Promise<boolean> {
    const childKey = key.slice(2);
    const bar = childKey.indexOf("|");
    const entry = this.children.get(childKey.slice(0, bar));
    const child = entry?.informer.store.get(childKey.slice(bar + 1));
    if (entry === undefined || child === undefined) return false;
    for (const owner of entry.owners) {
      const tracked = this.primaries.find((p) => p.ring === owner);
      for (const parentKey of controllerOwnerKeys(owner.kind, child)) {
        const parent = tracked?.informer.store.get(parentKey);
        if (parent === undefined || isDraining(this.options.labels, parent)) continue;
        const member = assignedMember(this.options.labels, parent);
        if (member !== undefined) await this.labelChild(entry, child, member);
      }
    }
    return false;
  }

  /** Reads `member`'s Lease again: true when it is still not live (gone, released or expired). */
  private async confirmGone(member: string): Promise<boolean> {
    const name = memberLeaseName(this.options.labels.ring, member);
    try {
      const lease = await this.options.client.resource(LEASE_KIND, this.options.leaseNamespace).get(name);
      this.live.observe(lease);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    return !this.live.isLive(member);
  }

  private async patch(kind: ResourceKind, obj: KubeObject, labelChanges: Record<string, string | null>): Promise<void> {
    const name = obj.metadata?.name as string;
    const namespace = kind.namespaced ? obj.metadata?.namespace : undefined;
    const resourceVersion = obj.metadata?.resourceVersion;
    try {
      await this.options.client
        .resource(kind, namespace)
        .patch(name, { metadata: { resourceVersion, labels: labelChanges } }, { type: "merge" });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}

/** The index of an owned kind's children by their controller owner of `ring`'s kind (`ns/name`). */
function ownerIndex(ring: RingKind): string {
  return `owner:${kindId(ring.kind)}`;
}

/** The name of `child`'s controller owner when it is of `ownerKind` (see controllerOwnerKeys). */
function controllerOwnerNames(ownerKind: RingKind["kind"], child: KubeObject): readonly string[] {
  const ref = child.metadata?.ownerReferences?.find((r) => r.controller === true);
  if (ref === undefined || ref.kind !== ownerKind.kind) return [];
  const slash = ref.apiVersion.indexOf("/");
  const group = slash < 0 ? "" : ref.apiVersion.slice(0, slash);
  return group === ownerKind.group ? [ref.name] : [];
}
