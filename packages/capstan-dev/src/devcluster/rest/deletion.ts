/**
 * Deletion as the generic store does it (registry/generic/registry/store.go Delete, rest/delete.go
 * BeforeDelete): preconditions, the finalizers a propagation policy asks for, graceful deletion
 * (deletionTimestamp, a shorter grace period), and when an update that removes the last hold deletes.
 */
import type { ObjectMeta, Status } from "kubernetes-types/meta/v1.d.ts";
import { notFound, success } from "../machinery/status.ts";
import { rfc3339 } from "../machinery/timestamps.ts";
import { bucketOf, gr, type JsonObject, keyOf, type ServedResource } from "../registry/served-resource.ts";
import type { Storage } from "../storage/storage.ts";
import { normalize, present, serialize } from "./encoding.ts";
import { checkDeletePreconditions } from "./preconditions.ts";
import type { DeleteOptions, DeleteResult, MutableMeta } from "./types.ts";

/** Finalizers the garbage collector honours (metav1.FinalizerOrphanDependents / FinalizerDeleteDependents). */
export const FINALIZER_ORPHAN = "orphan";
export const FINALIZER_FOREGROUND = "foregroundDeletion";

/**
 * Admission of a delete (rest.ValidateObjectFunc): given the stored object, rejects with the error
 * the delete fails with. It must not keep or change the object.
 */
export type DeleteValidation = (stored: JsonObject) => Promise<void>;

/**
 * One attempt at deleting an object; the store retries it when another writer got in between, and
 * `validate` then runs again on the object read anew (store.go calls deleteValidation inside
 * GuaranteedUpdate and storage Delete, which retry the same way). It runs after the preconditions
 * and before anything is marked or removed; not for a graceful deletion already pending that the
 * request does not shorten, which store.go Delete answers (`pendingGraceful`) without admission.
 */
export async function deleteOnce(
  storage: Storage,
  served: ServedResource,
  namespace: string,
  name: string,
  options: DeleteOptions,
  validate?: DeleteValidation,
): Promise<DeleteResult> {
  const bucket = bucketOf(served);
  const key = keyOf(served, namespace, name);
  const current = storage.get(bucket, key);
  if (!current) throw notFound(gr(served), name);
  const obj = JSON.parse(present(served, current.data)) as JsonObject;
  const meta = obj.metadata as MutableMeta;
  checkDeletePreconditions(served, name, meta, options.preconditions);
  // Awaited to the end before the object is changed below: admission sees it as stored.
  if (validate && !pendingGraceful(served, meta, options.gracePeriodSeconds)) await validate(obj);

  // Finalizers the garbage collector needs for the requested propagation (deletionFinalizersForGarbageCollection).
  const finalizers = new Set(Array.isArray(meta.finalizers) ? (meta.finalizers as string[]) : []);
  const policy =
    options.propagationPolicy ??
    (options.orphanDependents === true ? "Orphan" : options.orphanDependents === false ? "Background" : undefined);
  let finalizersChanged = false;
  if (policy === "Orphan" && !finalizers.has(FINALIZER_ORPHAN)) {
    finalizers.add(FINALIZER_ORPHAN);
    finalizers.delete(FINALIZER_FOREGROUND);
    finalizersChanged = true;
  } else if (policy === "Foreground" && !finalizers.has(FINALIZER_FOREGROUND)) {
    finalizers.add(FINALIZER_FOREGROUND);
    finalizers.delete(FINALIZER_ORPHAN);
    finalizersChanged = true;
  } else if (policy === "Background" && (finalizers.has(FINALIZER_ORPHAN) || finalizers.has(FINALIZER_FOREGROUND))) {
    finalizers.delete(FINALIZER_ORPHAN);
    finalizers.delete(FINALIZER_FOREGROUND);
    finalizersChanged = true;
  }
  if (finalizersChanged) meta.finalizers = [...finalizers];

  const grace = served.gracePeriod ? served.gracePeriod(obj, options.gracePeriodSeconds) : 0;
  const holds = finalizers.size > 0 || (served.deletion?.holds(obj) ?? false);
  if (!holds && grace === 0) {
    if (options.dryRun) return { deleted: true, body: served.returnDeletedObject ? obj : deletedStatus(served, meta) };
    const deleted = await storage.delete(bucket, key, current.rev, (rev) => {
      meta.resourceVersion = String(rev);
      return serialize(obj);
    });
    return {
      deleted: true,
      body: served.returnDeletedObject
        ? (JSON.parse(present(served, deleted.data)) as JsonObject)
        : deletedStatus(served, meta),
    };
  }

  // Graceful or held by finalizers: mark it (BeforeDelete) and keep it.
  let changed = finalizersChanged;
  if (!meta.deletionTimestamp) {
    const now = Date.now();
    meta.deletionTimestamp = rfc3339(new Date(now + grace * 1000));
    meta.deletionGracePeriodSeconds = grace;
    // A first graceful deletion bumps generation, where the kind has one (rest/delete.go).
    if (typeof meta.generation === "number" && meta.generation > 0) meta.generation = meta.generation + 1;
    served.deletion?.markTerminating(obj);
    changed = true;
  } else if (
    grace > 0 &&
    typeof meta.deletionGracePeriodSeconds === "number" &&
    grace < meta.deletionGracePeriodSeconds
  ) {
    // A shorter grace period shortens a pending graceful deletion.
    meta.deletionTimestamp = rfc3339(new Date(Date.now() + grace * 1000));
    meta.deletionGracePeriodSeconds = grace;
    changed = true;
  }
  if (!changed || options.dryRun) return { deleted: false, body: obj };
  const stored = await storage.update(bucket, key, current.rev, (rev) => {
    meta.resourceVersion = String(rev);
    return serialize(normalize(obj));
  });
  return { deleted: false, body: JSON.parse(present(served, stored.data)) as JsonObject };
}

/**
 * rest.BeforeDelete's gracefulPending: a kind with graceful deletion whose object is already being
 * deleted with a grace period, and a request that does not shorten it (a negative one counts as 1 s).
 */
function pendingGraceful(served: ServedResource, meta: MutableMeta, requested: number | undefined): boolean {
  if (!served.gracePeriod || !meta.deletionTimestamp) return false;
  const pending = meta.deletionGracePeriodSeconds;
  if (typeof pending !== "number" || pending === 0) return false;
  if (requested === undefined) return true;
  return (requested < 0 ? 1 : requested) >= pending;
}

/** Whether an update deletes the object: it removed the last hold of an object whose deletion grace is over. */
export function shouldDeleteDuringUpdate(served: ServedResource, old: JsonObject, next: JsonObject): boolean {
  if (hasHolds(served, next)) return false;
  const oldMeta = old.metadata as { deletionTimestamp?: string; deletionGracePeriodSeconds?: number | null };
  if (!oldMeta.deletionTimestamp) return false;
  return oldMeta.deletionGracePeriodSeconds == null || oldMeta.deletionGracePeriodSeconds === 0;
}

function hasHolds(served: ServedResource, obj: JsonObject): boolean {
  const finalizers = (obj.metadata as { finalizers?: unknown[] }).finalizers;
  if (Array.isArray(finalizers) && finalizers.length > 0) return true;
  return served.deletion?.holds(obj) ?? false;
}

function deletedStatus(served: ServedResource, meta: ObjectMeta): Status {
  return success({ name: meta.name, group: served.group, kind: served.plural, uid: meta.uid });
}
