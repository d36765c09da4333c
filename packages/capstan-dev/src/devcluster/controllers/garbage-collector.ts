/**
 * The garbage collector: ownerReferences-driven deletion, as kube-controller-manager's
 * pkg/controller/garbagecollector does it.
 *
 * Expected flow: the collector keeps an index owner uid -> dependents from the change stream of
 * every bucket, and queues three kinds of work:
 * - `dep:<bucket>:<key>` (attemptToDelete): a dependent whose owners may be gone. Its owners are
 *   looked up by kind, namespace and name; an owner that is absent or has another uid is
 *   *dangling*; one being deleted in the foreground is *waiting*; any other is *solid*. With a solid
 *   owner the dependent stays (dangling and waiting references are removed from it); with none it is
 *   deleted (foreground when an owner waits for it and it has dependents of its own, otherwise with
 *   the propagation its own finalizers ask for), with a uid precondition.
 * - `fg:<bucket>:<key>` (foreground owner): an object deleted with propagationPolicy=Foreground
 *   (finalizer `foregroundDeletion`). Its dependents are collected; once no dependent with
 *   `blockOwnerDeletion: true` exists, the finalizer is removed and the owner goes.
 * - `orphan:<bucket>:<key>`: an object deleted with propagationPolicy=Orphan (finalizer `orphan`).
 *   Its dependents' references to it are removed, then the finalizer.
 * Background deletion needs no finalizer: the owner goes at once and its DELETED event queues its
 * dependents.
 *
 * Guarantees:
 * - a dependent with at least one solid owner is never deleted;
 * - deletes carry the dependent's uid as precondition, so a re-created object of the same name is safe;
 * - dangling references (owner uid mismatch, owner never existed) get the dependent collected,
 *   including ones present when the collector starts.
 *
 * Assumptions: owners are found by `apiVersion`'s group and `kind` in the registry; a namespaced
 * dependent's owner is in the same namespace (cross-namespace owner references are invalid, as on a
 * real cluster).
 *
 * Caveats: owner kinds the registry does not serve are treated as solid (never collected), where the
 * real collector would retry until discovery knows them. The real collector's virtual-node graph and
 * its cycle detection for foreground deletion are not reproduced.
 */
import { bucketOf, type JsonObject, type ServedResource } from "../registry/served-resource.ts";
import { FINALIZER_FOREGROUND, FINALIZER_ORPHAN } from "../rest/deletion.ts";
import type { Change } from "../storage/storage.ts";
import {
  type Controller,
  type ControllerContext,
  groupOf,
  ignoreGoneOrChanged,
  metaOf,
  type OwnerReference,
  readObject,
  servedForBucket,
  splitKey,
  watchAll,
} from "./cluster-view.ts";
import { LoopController } from "./reconcile-loop.ts";

/**
 * Either field name as a JSON key, in one scan of the change's text: two `includes` calls cost ~5x more
 * on a ~1.5 KiB object (each stops at every `"` of the text; the regexp engine skips ahead), and every
 * write of every resource passes here.
 */
const OWNED_OR_DELETING = /"(?:ownerReferences|deletionTimestamp)"/;

/** An object's identity in storage: bucket and key joined by a NUL (neither can contain one). */
type ObjectId = string;

const SEP = "\u0000";
/**
 * Bounds the memory of deleted uids. It only matters for owners whose kind stops being served in the
 * short time between their deletion and their CRD's; clearing it loses nothing else.
 */
const DELETED_UIDS_LIMIT = 10_000;
/** Bounds the owner cache; clearing it only costs re-parsing owners. */
const OWNER_CACHE_LIMIT = 10_000;
const idOf = (bucket: string, key: string): ObjectId => `${bucket}${SEP}${key}`;
function parseId(id: ObjectId): { bucket: string; key: string } {
  const i = id.indexOf(SEP);
  return { bucket: id.slice(0, i), key: id.slice(i + 1) };
}

/** Owner references of an object, tolerating malformed entries. */
function ownerRefs(obj: JsonObject): OwnerReference[] {
  const refs = metaOf(obj).ownerReferences;
  return Array.isArray(refs) ? refs.filter((r) => r && typeof r.uid === "string") : [];
}

function hasFinalizer(obj: JsonObject, finalizer: string): boolean {
  const finalizers = metaOf(obj).finalizers;
  return Array.isArray(finalizers) && finalizers.includes(finalizer);
}

function isDeletingDependents(obj: JsonObject): boolean {
  return Boolean(metaOf(obj).deletionTimestamp) && hasFinalizer(obj, FINALIZER_FOREGROUND);
}

export class GarbageCollector extends LoopController implements Controller {
  /** owner uid -> dependents that reference it. */
  private readonly dependents = new Map<string, Set<ObjectId>>();
  /** dependent -> the owner uids it was indexed under. */
  private readonly ownersOf = new Map<ObjectId, string[]>();
  /** uid -> object, for objects currently deleting their dependents in the foreground. */
  private readonly foregroundOwners = new Map<string, ObjectId>();
  /** Buckets whose stored objects have been indexed (changes keep them current afterwards). */
  private readonly indexedBuckets = new Set<string>();
  /** Uids of objects seen deleted (bounded), for owners whose kind stops being served. */
  private readonly deletedUids = new Set<string>();
  /** Owner classification per stored revision (a revision identifies one version of one object). */
  private readonly ownerCache = new Map<ObjectId, { rev: number; uid: string; waiting: boolean }>();

  constructor(private readonly ctx: ControllerContext) {
    super("garbage-collector");
  }

  /** Indexes every stored object, queues what needs collecting, then follows the change stream. */
  start(): this {
    // Listing and subscribing happen in one synchronous stretch: no write can land in between.
    for (const served of this.ctx.registry.all()) this.indexBucket(bucketOf(served));
    const unwatch = watchAll(this.ctx.store, (change) => this.onChange(change));
    // A resource served later (a CRD established after a restart with stored data) may hold objects
    // written before this collector ran: index them when it appears.
    const unregistry = this.ctx.registry.subscribe(({ type, served }) => {
      if (type === "added") this.indexBucket(bucketOf(served));
    });
    this.unsubscribe = () => {
      unwatch();
      unregistry();
    };
    return this;
  }

  private indexBucket(bucket: string): void {
    if (this.indexedBuckets.has(bucket)) return;
    this.indexedBuckets.add(bucket);
    for (const stored of this.ctx.store.storage.list(bucket, "")) {
      this.observe(bucket, stored.key, JSON.parse(stored.data) as JsonObject, true);
    }
  }

  /** Handler errors, for tests and logs. */
  private onChange(change: Change): void {
    const id = idOf(change.bucket, change.key);
    // Cheap textual pre-check keeps the collector off the hot path of objects without owners or deletion.
    const relevant =
      OWNED_OR_DELETING.test(change.data) ||
      this.ownersOf.has(id) ||
      (change.type === "DELETED" && this.dependents.size > 0);
    if (!relevant) return;
    const obj = JSON.parse(change.data) as JsonObject;
    if (change.type === "DELETED") {
      this.forget(id);
      const uid = metaOf(obj).uid;
      if (uid) {
        this.foregroundOwners.delete(uid);
        if (this.deletedUids.size >= DELETED_UIDS_LIMIT) this.deletedUids.clear();
        this.deletedUids.add(uid);
        for (const dependent of this.dependents.get(uid) ?? []) this.loop.add(`dep:${dependent}`);
      }
      this.notifyForegroundOwners(obj);
      return;
    }
    this.observe(change.bucket, change.key, obj, change.type === "ADDED");
  }

  /** Updates the index for one object and queues the work its state calls for. */
  private observe(bucket: string, key: string, obj: JsonObject, isNew: boolean): void {
    const id = idOf(bucket, key);
    const refs = ownerRefs(obj);
    const uids = refs.map((r) => r.uid);
    const before = this.ownersOf.get(id) ?? [];
    const changed = before.length !== uids.length || before.some((u, i) => u !== uids[i]);
    if (changed) {
      this.forget(id);
      if (uids.length > 0) {
        this.ownersOf.set(id, uids);
        for (const uid of uids) {
          let set = this.dependents.get(uid);
          if (!set) {
            set = new Set();
            this.dependents.set(uid, set);
          }
          set.add(id);
        }
      }
    }
    // A new dependent, or one whose owners changed, may point at owners that do not exist. The common
    // case (every owner present) is settled here with reads only, sparing a queued re-read.
    if (refs.length > 0 && (isNew || changed)) {
      const { namespace } = splitKey(key);
      const settled = refs.every((r) => {
        const owner = this.classifyOwner(namespace, r);
        return owner === "solid" || owner === "unknown";
      });
      if (!settled) this.loop.add(`dep:${id}`);
    }
    const meta = metaOf(obj);
    if (meta.deletionTimestamp) {
      if (hasFinalizer(obj, FINALIZER_ORPHAN)) this.loop.add(`orphan:${id}`);
      if (hasFinalizer(obj, FINALIZER_FOREGROUND)) {
        if (meta.uid) this.foregroundOwners.set(meta.uid, id);
        this.loop.add(`fg:${id}`);
      }
    }
    this.notifyForegroundOwners(obj);
  }

  /** A dependent changed or went: owners waiting for their dependents re-check. */
  private notifyForegroundOwners(obj: JsonObject): void {
    if (this.foregroundOwners.size === 0) return;
    for (const ref of ownerRefs(obj)) {
      const owner = this.foregroundOwners.get(ref.uid);
      if (owner) this.loop.add(`fg:${owner}`);
    }
  }

  private forget(id: ObjectId): void {
    for (const uid of this.ownersOf.get(id) ?? []) {
      const set = this.dependents.get(uid);
      set?.delete(id);
      if (set?.size === 0) this.dependents.delete(uid);
    }
    this.ownersOf.delete(id);
  }

  protected async handle(work: string): Promise<undefined> {
    const colon = work.indexOf(":");
    const kind = work.slice(0, colon);
    const { bucket, key } = parseId(work.slice(colon + 1));
    const served = servedForBucket(this.ctx.registry, bucket);
    if (!served) return undefined;
    const obj = readObject(this.ctx.store, bucket, key);
    if (!obj) return undefined;
    if (kind === "dep") await this.attemptToDelete(served, key, obj);
    else if (kind === "fg") await this.processDeletingDependents(served, key, obj);
    else if (kind === "orphan") await this.orphanDependents(served, key, obj);
    return undefined;
  }

  /**
   * Looks an owner reference up: "solid", "waiting" (deleting its dependents in the foreground),
   * "dangling" (absent, or another object with that name), or "unknown" (a kind not served).
   * The classification of a stored revision is cached: an owner with many dependents is parsed once
   * per change of its own, not once per dependent.
   */
  private classifyOwner(dependentNamespace: string, ref: OwnerReference): "solid" | "waiting" | "dangling" | "unknown" {
    const served = this.ctx.registry.byKind(groupOf(ref.apiVersion ?? ""), ref.kind);
    // An owner whose kind is no longer served (its CRD went after its instances) is gone if we saw it go.
    if (!served) return this.deletedUids.has(ref.uid) ? "dangling" : "unknown";
    const bucket = served.storageBucket ?? `${served.group}/${served.plural}`;
    const key = served.namespaced ? `${dependentNamespace}/${ref.name}` : ref.name;
    const stored = this.ctx.store.storage.get(bucket, key);
    if (!stored) return "dangling";
    const cacheKey = `${bucket}${SEP}${key}`;
    let seen = this.ownerCache.get(cacheKey);
    if (!seen || seen.rev !== stored.rev) {
      const owner = JSON.parse(stored.data) as JsonObject;
      seen = { rev: stored.rev, uid: metaOf(owner).uid ?? "", waiting: isDeletingDependents(owner) };
      if (this.ownerCache.size >= OWNER_CACHE_LIMIT) this.ownerCache.clear();
      this.ownerCache.set(cacheKey, seen);
    }
    if (seen.uid !== ref.uid) return "dangling";
    return seen.waiting ? "waiting" : "solid";
  }

  private async attemptToDelete(served: ServedResource, key: string, obj: JsonObject): Promise<void> {
    const meta = metaOf(obj);
    if (isDeletingDependents(obj)) {
      await this.processDeletingDependents(served, key, obj);
      return;
    }
    if (meta.deletionTimestamp) return; // already going; its own finalizers decide when
    const refs = ownerRefs(obj);
    if (refs.length === 0) return;
    const { namespace } = splitKey(key);
    const solid: OwnerReference[] = [];
    const dangling: OwnerReference[] = [];
    const waiting: OwnerReference[] = [];
    for (const ref of refs) {
      const owner = this.classifyOwner(served.namespaced ? namespace : "", ref);
      if (owner === "dangling") dangling.push(ref);
      else if (owner === "waiting") waiting.push(ref);
      else solid.push(ref);
    }
    const { name } = splitKey(key);
    if (solid.length > 0) {
      if (dangling.length === 0 && waiting.length === 0) return;
      // Keep the object for its solid owners; drop the references that would block or mislead.
      const drop = new Set([...dangling, ...waiting].map((r) => r.uid));
      await ignoreGoneOrChanged(() =>
        this.ctx.store.guaranteedUpdate(served, namespace, name, "main", (current) => {
          const currentMeta = metaOf(current);
          if (currentMeta.uid !== meta.uid) throw new Error("replaced");
          currentMeta.ownerReferences = ownerRefs(current).filter((r) => !drop.has(r.uid));
          if (currentMeta.ownerReferences.length === 0) delete currentMeta.ownerReferences;
          return current;
        }),
      ).catch((err) => {
        if ((err as Error).message !== "replaced") throw err;
      });
      return;
    }
    let policy: "Foreground" | "Background" | "Orphan";
    if (waiting.length > 0 && meta.uid && (this.dependents.get(meta.uid)?.size ?? 0) > 0) policy = "Foreground";
    else if (hasFinalizer(obj, FINALIZER_ORPHAN)) policy = "Orphan";
    else if (hasFinalizer(obj, FINALIZER_FOREGROUND)) policy = "Foreground";
    else policy = "Background";
    await ignoreGoneOrChanged(() =>
      this.ctx.store.delete(served, namespace, name, {
        propagationPolicy: policy,
        preconditions: meta.uid ? { uid: meta.uid } : undefined,
      }),
    );
  }

  /** Dependents of `owner` that still exist with a blocking reference to it. */
  private blockingDependents(ownerUid: string): ObjectId[] {
    const out: ObjectId[] = [];
    for (const id of this.dependents.get(ownerUid) ?? []) {
      const { bucket, key } = parseId(id);
      const dependent = readObject(this.ctx.store, bucket, key);
      if (!dependent) continue;
      if (ownerRefs(dependent).some((r) => r.uid === ownerUid && r.blockOwnerDeletion === true)) out.push(id);
    }
    return out;
  }

  private async processDeletingDependents(served: ServedResource, key: string, owner: JsonObject): Promise<void> {
    if (!isDeletingDependents(owner)) return;
    const uid = metaOf(owner).uid ?? "";
    // Every dependent is collected; only blocking ones hold the owner back.
    for (const id of this.dependents.get(uid) ?? []) this.loop.add(`dep:${id}`);
    const blocking = this.blockingDependents(uid);
    if (blocking.length > 0) return; // their DELETED events bring us back here
    const { namespace, name } = splitKey(key);
    await removeFinalizer(this.ctx, served, namespace, name, uid, FINALIZER_FOREGROUND);
  }

  private async orphanDependents(served: ServedResource, key: string, owner: JsonObject): Promise<void> {
    const meta = metaOf(owner);
    if (!meta.deletionTimestamp || !hasFinalizer(owner, FINALIZER_ORPHAN) || !meta.uid) return;
    const uid = meta.uid;
    for (const id of [...(this.dependents.get(uid) ?? [])]) {
      const { bucket, key: depKey } = parseId(id);
      const depServed = servedForBucket(this.ctx.registry, bucket);
      if (!depServed) continue;
      const { namespace, name } = splitKey(depKey);
      await ignoreGoneOrChanged(() =>
        this.ctx.store.guaranteedUpdate(depServed, namespace, name, "main", (current) => {
          const currentMeta = metaOf(current);
          const kept = ownerRefs(current).filter((r) => r.uid !== uid);
          if (kept.length === 0) delete currentMeta.ownerReferences;
          else currentMeta.ownerReferences = kept;
          return current;
        }),
      );
    }
    const { namespace, name } = splitKey(key);
    await removeFinalizer(this.ctx, served, namespace, name, uid, FINALIZER_ORPHAN);
  }
}

/** Removes one finalizer from the object with `uid` (a no-op if it was replaced or is gone). */
export async function removeFinalizer(
  ctx: ControllerContext,
  served: ServedResource,
  namespace: string,
  name: string,
  uid: string,
  finalizer: string,
): Promise<void> {
  await ignoreGoneOrChanged(() =>
    ctx.store.guaranteedUpdate(served, namespace, name, "main", (current) => {
      const meta = metaOf(current);
      if (meta.uid !== uid) throw Object.assign(new Error("replaced"), { replaced: true });
      meta.finalizers = (meta.finalizers ?? []).filter((f) => f !== finalizer);
      return current;
    }),
  ).catch((err) => {
    if (!(err as { replaced?: boolean }).replaced) throw err;
  });
}
