/**
 * How the devcluster's controllers reach the cluster: the same object store the HTTP handlers use
 * (so every write goes through the same metadata, finalizer and precondition rules an HTTP client
 * gets), the registry of served resources, and a change stream over every bucket.
 */
import { ApiError } from "../machinery/status.ts";
import type { ResourceRegistry } from "../registry/registry.ts";
import { bucketOf, type JsonObject, type ServedResource } from "../registry/served-resource.ts";
import type { ObjectStore } from "../rest/object-store.ts";
import type { Change } from "../storage/storage.ts";

/** What a controller is started with. */
export interface ControllerContext {
  readonly store: ObjectStore;
  readonly registry: ResourceRegistry;
}

/** A started controller. */
export interface Controller {
  readonly name: string;
  /** Stops watching and waits for the work in flight. */
  stop(): Promise<void>;
  /** True when the controller has nothing queued or running (tests wait for this). */
  idle(): boolean;
}

/** An object's metadata as controllers read it. */
export interface Meta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  deletionTimestamp?: string;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  generation?: number;
  creationTimestamp?: string;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export function metaOf(obj: JsonObject): Meta {
  return (obj.metadata ?? {}) as Meta;
}

/** `namespace/name` or `name` (cluster scope): the storage key form. */
export function splitKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf("/");
  return slash < 0 ? { namespace: "", name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/** The served resource behind a storage bucket (any of its versions), if still served. */
export function servedForBucket(registry: ResourceRegistry, bucket: string): ServedResource | undefined {
  return registry.all().find((s) => bucketOf(s) === bucket);
}

/** The current object at `bucket`/`key`, parsed, or undefined when absent. */
export function readObject(store: ObjectStore, bucket: string, key: string): JsonObject | undefined {
  const stored = store.storage.get(bucket, key);
  return stored ? (JSON.parse(stored.data) as JsonObject) : undefined;
}

export function isStatus(err: unknown, code: number): boolean {
  return err instanceof ApiError && err.code === code;
}

/** Runs a write, treating "already gone" (404) and "not the object we meant" (409 precondition) as done. */
export async function ignoreGoneOrChanged(write: () => Promise<unknown>): Promise<void> {
  try {
    await write();
  } catch (err) {
    if (isStatus(err, 404) || isStatus(err, 409)) return;
    throw err;
  }
}

/** Subscribes to every committed change from now on. Returns the unsubscribe function. */
export function watchAll(store: ObjectStore, listener: (change: Change) => void): () => void {
  return store.storage.watch(store.storage.currentRevision(), (change) => {
    try {
      listener(change);
    } catch {
      // A controller's bookkeeping bug must not unsubscribe it (storage drops throwing listeners).
    }
  });
}

/** The group of an `apiVersion` (`apps/v1` -> `apps`, `v1` -> ``). */
export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf("/");
  return slash < 0 ? "" : apiVersion.slice(0, slash);
}
