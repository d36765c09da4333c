/**
 * The typed resource client: one kind, all verbs. Objects are plain Kubernetes JSON.
 */
import type { KubeObject, ListerWatcher, ListOptions, ObjectList, Status, WatchEvent, WatchOptions } from "./types.ts";

/** Options every single-object call accepts. */
export interface CallOptions {
  /** Namespace for this call; wins over the object's and the client's bound namespace. */
  namespace?: string;
  signal?: AbortSignal;
}

/** Options of create/update/updateStatus. */
export interface WriteOptions extends CallOptions {
  /** `dryRun=All`: validated and defaulted by the server, not persisted. */
  dryRun?: boolean;
  fieldManager?: string;
  /** `fieldValidation` query parameter (server-side unknown/duplicate field checks). */
  fieldValidation?: "Ignore" | "Warn" | "Strict";
}

/** Patch flavours and their content types. */
export type PatchType = "json" | "merge" | "strategic" | "apply";

/** Options of patch. */
export interface PatchOptions extends WriteOptions {
  /**
   * `json` = RFC 6902 (application/json-patch+json), `merge` = RFC 7386 (application/merge-patch+json),
   * `strategic` = strategic merge (built-in kinds only), `apply` = server-side apply (needs `fieldManager`).
   */
  type: PatchType;
  subresource?: "status" | "scale";
  /** Server-side apply only: take ownership of conflicting fields. */
  force?: boolean;
}

/** Options of delete (a `DeleteOptions` body). */
export interface DeleteOptions extends CallOptions {
  propagationPolicy?: "Foreground" | "Background" | "Orphan";
  gracePeriodSeconds?: number;
  /** The delete fails with 409 Conflict unless the object still has this uid / resourceVersion. */
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
}

/** Options of server-side apply. */
export interface ApplyOptions extends CallOptions {
  fieldManager: string;
  force?: boolean;
  subresource?: "status";
  dryRun?: boolean;
}

/**
 * Every verb for one kind. Namespaced kinds resolve the namespace of a single-object call from, in order:
 * the call's `namespace` option, the object's `metadata.namespace` (create/update/apply), the namespace
 * bound with `client.resource(kind, ns)`; with none of them the call throws (it never falls back to
 * "default" silently). list/watch/deleteCollection use the bound namespace, else all namespaces.
 */
export interface ResourceClient<T extends KubeObject> extends ListerWatcher<T> {
  get(name: string, opts?: CallOptions): Promise<T>;
  /** One page. */
  list(opts?: ListOptions): Promise<ObjectList<T>>;
  /** Every object, following continue tokens page by page. */
  listAll(opts?: Omit<ListOptions, "continue">): AsyncIterable<T>;
  create(obj: T, opts?: WriteOptions): Promise<T>;
  update(obj: T, opts?: WriteOptions): Promise<T>;
  updateStatus(obj: T, opts?: WriteOptions): Promise<T>;
  patch(name: string, patch: unknown, opts: PatchOptions): Promise<T>;
  /** Patches the status subresource; a merge patch unless `type` says otherwise. */
  patchStatus(
    name: string,
    patch: unknown,
    opts?: Omit<PatchOptions, "subresource" | "type"> & { type?: PatchType },
  ): Promise<T>;
  /** Server-side apply of `obj` (apiVersion/kind/name filled in from the kind and object). */
  apply(obj: T, opts: ApplyOptions): Promise<T>;
  /** The deleted object (or the object with deletionTimestamp set while finalizers run), or a Status. */
  delete(name: string, opts?: DeleteOptions): Promise<T | Status>;
  deleteCollection(opts?: ListOptions & DeleteOptions): Promise<ObjectList<T> | Status>;
  /**
   * Resolves once the server accepted the watch (rejects with `ApiError` otherwise). The iterator yields
   * typed events, throws `ApiError` for an ERROR event (410 -> `isGone`), ends quietly when the server
   * closes the stream or the signal aborts, and frees the socket if the consumer stops early.
   */
  watch(opts: WatchOptions): Promise<AsyncIterable<WatchEvent<T>>>;
}
