/**
 * The in-process API for server-side controllers (garbage collector, namespace lifecycle, CRD
 * lifecycle): read, list, watch and write objects with exactly the semantics of HTTP requests
 * (finalizers, preconditions, resourceVersions, validation), without HTTP. See README-internals.md.
 */
import { resourceNotServed } from "./machinery/status.ts";
import type { ResourceRegistry } from "./registry/registry.ts";
import { bucketOf, type JsonObject, type ServedResource } from "./registry/served-resource.ts";
import type { ObjectStore } from "./rest/object-store.ts";
import type { PatchTypes } from "./rest/patchers.ts";
import type { DeleteOptions, DeleteResult, ListQuery, WriteTarget } from "./rest/types.ts";
import type { Change } from "./storage/storage.ts";

/** Which resource a call addresses: group ("" for core), version and plural. */
export interface ResourceRef {
  group: string;
  version: string;
  plural: string;
}

/** One change anywhere in the cluster, as `subscribe` delivers it. */
export interface ClusterChange {
  type: "ADDED" | "MODIFIED" | "DELETED";
  /** The storage bucket (`group/plural`) the object lives in. */
  bucket: string;
  /** The revision of the change (the object's resourceVersion). */
  revision: number;
  /** The object after the change (for DELETED: as deleted). */
  object: JsonObject;
  /** The object before the change (absent for ADDED). */
  old?: JsonObject;
}

export class InProcessApi {
  constructor(
    readonly registry: ResourceRegistry,
    readonly store: ObjectStore,
    private readonly patchTypes: PatchTypes,
  ) {}

  /** The served descriptor of `ref`, or the 404 a client would get. */
  served(ref: ResourceRef): ServedResource {
    const served = this.registry.get(ref.group, ref.version, ref.plural);
    if (!served) throw resourceNotServed();
    return served;
  }

  get(ref: ResourceRef, namespace: string, name: string): JsonObject {
    return this.store.getObject(this.served(ref), namespace, name);
  }

  /** The object, or undefined when it does not exist. */
  tryGet(ref: ResourceRef, namespace: string, name: string): JsonObject | undefined {
    try {
      return this.get(ref, namespace, name);
    } catch (err) {
      if ((err as { code?: number }).code === 404) return undefined;
      throw err;
    }
  }

  /** All matching objects (every page), with the list's resourceVersion. Namespace "" lists all namespaces. */
  list(ref: ResourceRef, namespace = "", query: ListQuery = {}): { items: JsonObject[]; resourceVersion: string } {
    const page = this.store.list(this.served(ref), namespace, { ...query, limit: undefined, continue: undefined });
    return { items: page.items.map((d) => JSON.parse(d) as JsonObject), resourceVersion: page.resourceVersion };
  }

  async create(ref: ResourceRef, namespace: string, obj: JsonObject): Promise<JsonObject> {
    return JSON.parse(await this.store.create(this.served(ref), namespace, obj)) as JsonObject;
  }

  /** PUT semantics: a `metadata.resourceVersion` in `obj` is a precondition (409 when stale). */
  async update(
    ref: ResourceRef,
    namespace: string,
    name: string,
    obj: JsonObject,
    target: WriteTarget = "main",
  ): Promise<JsonObject> {
    return JSON.parse(await this.store.update(this.served(ref), namespace, name, obj, target)) as JsonObject;
  }

  /** PATCH semantics with any registered patch content type (`application/merge-patch+json`...). */
  async patch(
    ref: ResourceRef,
    namespace: string,
    name: string,
    contentType: string,
    patch: string | object,
    target: WriteTarget = "main",
  ): Promise<JsonObject> {
    const served = this.served(ref);
    const patcher = this.patchTypes.resolve(contentType, served);
    const body = typeof patch === "string" ? patch : JSON.stringify(patch);
    const context = { served, query: new URLSearchParams() };
    const data = await this.store.guaranteedUpdate(served, namespace, name, target, (current) =>
      patcher(current, body, context),
    );
    return JSON.parse(data) as JsonObject;
  }

  /**
   * Read-modify-write with retries on conflicts: `mutate` gets the current object and returns the next
   * one (or undefined to leave it). The controller-side equivalent of a GuaranteedUpdate.
   */
  async modify(
    ref: ResourceRef,
    namespace: string,
    name: string,
    mutate: (current: JsonObject) => JsonObject | undefined,
    target: WriteTarget = "main",
  ): Promise<JsonObject | undefined> {
    const served = this.served(ref);
    let skipped = false;
    const data = await this.store.guaranteedUpdate(served, namespace, name, target, (current) => {
      const next = mutate(structuredClone(current));
      if (next === undefined) {
        skipped = true;
        return current;
      }
      return next;
    });
    return skipped ? undefined : (JSON.parse(data) as JsonObject);
  }

  delete(ref: ResourceRef, namespace: string, name: string, options: DeleteOptions = {}): Promise<DeleteResult> {
    return this.store.delete(this.served(ref), namespace, name, options);
  }

  /** Deletes and ignores NotFound. Returns whether the object existed. */
  async deleteIfExists(
    ref: ResourceRef,
    namespace: string,
    name: string,
    options: DeleteOptions = {},
  ): Promise<boolean> {
    try {
      await this.delete(ref, namespace, name, options);
      return true;
    } catch (err) {
      if ((err as { code?: number }).code === 404) return false;
      throw err;
    }
  }

  /** Watches one resource with HTTP watch semantics. Returns the stop function. */
  watch(
    ref: ResourceRef,
    namespace: string,
    query: ListQuery,
    onEvent: (type: "ADDED" | "MODIFIED" | "DELETED", object: JsonObject) => void,
    onError: (status: { code?: number; message?: string }) => void = () => {},
  ): () => void {
    return this.store.watch(this.served(ref), namespace, query, {
      event: (type, data) => onEvent(type, JSON.parse(data) as JsonObject),
      error: onError,
    });
  }

  /**
   * Every change to every object, in revision order, from `fromRevision` (exclusive; default: now).
   * Listeners must not throw; they are called synchronously inside the write, so they should queue work
   * (e.g. with queueMicrotask) rather than write back immediately.
   */
  subscribe(listener: (change: ClusterChange) => void, fromRevision?: number): () => void {
    const from = fromRevision ?? this.store.storage.currentRevision();
    return this.store.storage.watch(from, (change: Change) => {
      listener({
        type: change.type,
        bucket: change.bucket,
        revision: change.rev,
        object: JSON.parse(change.data) as JsonObject,
        old: change.prev === undefined ? undefined : (JSON.parse(change.prev) as JsonObject),
      });
    });
  }

  /** The storage bucket of a resource, to match `ClusterChange.bucket` against. */
  bucketOf(ref: ResourceRef): string {
    return bucketOf(this.served(ref));
  }

  /** The current global revision. */
  currentRevision(): number {
    return this.store.storage.currentRevision();
  }

  /** Drops every stored object of a bucket without events (a removed CRD's storage). */
  dropStorage(bucket: string): void {
    this.store.storage.dropBucket(bucket);
  }
}
