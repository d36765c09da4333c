/**
 * The reconcile contract: what a controller calls, with what, and what it does with the answer.
 * Read this file before writing a reconcile function; everything else in the runtime exists to
 * honour it.
 *
 * ## Level-triggered
 * A reconcile function is told *which* object to look at, never *what happened* to it. It reads
 * the current state (the cached object, and whatever else it needs from the caches or the API),
 * compares it with the desired state, and acts to close the gap. Several changes to one object
 * that arrive while it waits in the queue are coalesced into one call; a change that arrives while
 * it is being reconciled causes exactly one more call afterwards. So a reconcile function must be
 * idempotent and must not depend on seeing every intermediate version.
 *
 * ## What it receives
 * - The object as the informer cache holds it right now ({@link ReconcileTarget}), or, when the
 *   object is no longer in the cache (deleted, or out of the watched namespace/selector), a
 *   {@link DeletedObject} carrying only its `namespace` and `name`. Children owned through
 *   `ownerReferences` are garbage-collected by the API server; use a finalizer when deletion needs
 *   work outside the cluster.
 * - A {@link ReconcileContext}-like context (see controller.ts): the client, cache readers of every
 *   watched kind, a logger bound to the object's namespace/name, an event recorder, and an
 *   AbortSignal that aborts when this process must stop acting (leadership lost, shutdown timeout).
 *
 * ## The cached object is shared and read-only
 * The object is the cache's own copy, shared with every other controller and handler (no copy
 * is made, for speed). It is deep-frozen: assigning to any field throws a TypeError. Build
 * changes as patches, or `structuredClone(obj)` first. Never keep it across calls expecting it
 * to change: the next version is a different object.
 *
 * ## What its outcome means
 * - Returns normally (`undefined` or `{}`): success. The key's failure history (backoff) is
 *   forgotten; it is reconciled again only when something it watches changes.
 * - Returns `{ requeueAfter }` (`"30s"`, ms): success, backoff forgotten, and reconciled again after
 *   that delay (or sooner, if a change arrives). The way to poll external state; never sleep in a
 *   reconcile.
 * - Returns `{ requeue: true }`: reconciled again after the key's rate-limited backoff, which keeps
 *   growing (5 ms, 10 ms, ... 1000 s) until a call returns normally.
 * - Throws: an error. It is logged with the object's namespace/name and counted
 *   (`controller_runtime_reconcile_errors_total`), and the key is requeued with per-key
 *   exponential backoff (5 ms doubling to 1000 s, with an overall 10 qps / 100 burst bucket). A
 *   result returned together with an error does not exist in JavaScript; the error wins.
 * - Throws a {@link TerminalError} (or the Kopf-style `PermanentError`, which is one): logged and
 *   counted, but not retried (only a new change of a watched object brings the key back).
 *
 * ## Guarantees
 * - One key is never reconciled by two workers at the same time, whatever `maxConcurrentReconciles`
 *   is; different keys run in parallel up to that number.
 * - Every change that passes the watch predicates leads to at least one reconcile that starts
 *   after the change was in the cache.
 *
 * ## Caveats
 * - The cache may lag behind the API server: a write made by the previous reconcile may not be
 *   visible yet. Writes with a stale resourceVersion fail with 409 Conflict; let it throw (the
 *   retry comes 5 ms later) rather than retrying inline.
 * - A reconcile whose signal aborts should return promptly; work it leaves half-done is picked up
 *   by the next leader, because the function is level-triggered.
 */
import type { KubeObject } from "../client/types.ts";
import type { Duration } from "./duration.ts";

/** Identifies an object: `namespace` is `""` for cluster-scoped kinds. */
export interface ObjectRef {
  readonly namespace: string;
  readonly name: string;
}

/** What reconcile receives when the object is no longer in the cache. */
export interface DeletedObject extends ObjectRef {
  readonly deleted: true;
}

/** The cached object (read-only, see the module documentation), or its key once it is gone. */
export type ReconcileTarget<T extends KubeObject> = T | DeletedObject;

/** Narrows a {@link ReconcileTarget} to the deleted case. */
export function isDeleted<T extends KubeObject>(target: ReconcileTarget<T>): target is DeletedObject {
  return (target as Partial<DeletedObject>).deleted === true && (target as KubeObject).metadata === undefined;
}

/** What a reconcile function returns; see the module documentation for each case. */
export type ReconcileResult = undefined | { requeueAfter?: Duration; requeue?: boolean };

/**
 * An error that retrying will not fix (bad user input the object's author must change): counted and
 * logged like any error, never requeued. The one "do not retry" error of both styles: the Kopf-style
 * `PermanentError` (operator/errors.ts) extends it, and a handler, daemon or reconcile that throws
 * either is not retried.
 */
export class TerminalError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "TerminalError";
  }
}

/** How a reconcile ended; also the `result` label of `controller_runtime_reconcile_total`. */
export type ReconcileOutcome = "success" | "error" | "requeue" | "requeue_after";
