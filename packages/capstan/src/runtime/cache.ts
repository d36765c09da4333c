/**
 * The store behind an informer: the latest version of each object, keyed by `namespace/name`
 * (just `name` for cluster-scoped objects), with indexes kept up to date on every write.
 *
 * ## Guarantees
 * - `get`, `list`, `keys` and `byIndex` reflect every write that returned before the call.
 * - Index lookups are exact: an object is found under a value iff its index function returned
 *   that value for the stored version of the object.
 * - With `stripManagedFields` (the default), `metadata.managedFields` is dropped on insert: it is
 *   often the larger half of a small object and controllers almost never read it.
 * - With a `transform`, what is stored, indexed and handed out is its result, never the object
 *   given (client-go's `SetTransform`): a reader that needs only a few fields of many objects
 *   keeps only those (the shard coordinator keeps names, resourceVersions, two labels and the
 *   controller owner of every object of a ring).
 *
 * ## Read-only objects (what we chose)
 * Objects handed out are the stored objects themselves, not copies (copies would cost CPU and
 * memory on every read). To keep a careless `obj.metadata.labels.x = "y"` from silently
 * corrupting every other reader's view, stored objects are deep-frozen on insert by default
 * (`freeze: true`): a mutation throws a TypeError in strict-mode code (all ES modules). Clone
 * first (`structuredClone(obj)`) to build a modified version. `freeze: false` skips the freezing
 * for hot paths that are known not to mutate; the objects are then read-only by convention only.
 *
 * ## Assumptions
 * - The store takes ownership of inserted objects: the caller must not use them for writing
 *   afterwards (they are frozen, and their `metadata` may have been replaced by a copy without
 *   `managedFields`).
 * - Index functions are pure and fast; they run on every insert and delete.
 * - A `transform` is pure and idempotent (it may be given its own output: an informer prepares
 *   list items as they arrive and inserts them afterwards), and keeps `metadata.name`,
 *   `metadata.namespace` and `metadata.resourceVersion` (the key, and what an informer compares
 *   to tell an update).
 *
 * ## Caveats
 * - JavaScript is single-threaded, so "thread safe" here means every operation is synchronous and
 *   atomic with respect to the event loop; there is no locking.
 */
import type { KubeObject } from "../client/types.ts";

/** Computes the index values of an object (an object may appear under several values). */
export type IndexFunc<T extends KubeObject = KubeObject> = (obj: T) => readonly string[];

/** Name of the built-in index by namespace (value: the namespace, `""` for cluster-scoped). */
export const NAMESPACE_INDEX = "namespace";
/** Name of the built-in index by the uid of the controller owner reference. */
export const CONTROLLER_OWNER_INDEX = "owner:controller";
/** Name of the built-in index by the uid of every owner reference. */
export const OWNER_INDEX = "owner";

/** The cache key of an object: `namespace/name`, or `name` when it has no namespace. */
export function objectKey(obj: KubeObject): string {
  const meta = obj.metadata;
  if (meta?.name === undefined || meta.name === "") {
    throw new Error(`object has no metadata.name, so it has no cache key: ${JSON.stringify(obj).slice(0, 200)}`);
  }
  return meta.namespace ? `${meta.namespace}/${meta.name}` : meta.name;
}

/** Splits a cache key into namespace (`""` for cluster-scoped) and name. */
export function splitObjectKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf("/");
  return slash < 0 ? { namespace: "", name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/** What an index function returns for "not indexed": one shared array, not one per object. */
const noValues: readonly string[] = Object.freeze([]);
const byNamespace: IndexFunc = (obj) => [obj.metadata?.namespace ?? ""];
const byControllerOwner: IndexFunc = (obj) => {
  const owner = obj.metadata?.ownerReferences?.find((ref) => ref.controller === true);
  return owner === undefined ? noValues : [owner.uid];
};
const byAnyOwner: IndexFunc = (obj) => {
  const refs = obj.metadata?.ownerReferences;
  return refs === undefined || refs.length === 0 ? noValues : refs.map((ref) => ref.uid);
};

/** The read side of a store: what controllers and handlers are given. */
export interface CacheReader<T extends KubeObject = KubeObject> {
  /** The object stored under `key` (`namespace/name` or `name`). */
  get(key: string): T | undefined;
  /** Every stored object, in no particular order. */
  list(): T[];
  /** Every stored key. */
  keys(): string[];
  /** Objects whose index function `indexName` returned `value`. */
  byIndex(indexName: string, value: string): T[];
  /** Number of stored objects. */
  readonly size: number;
}

/**
 * What a store keeps of an object instead of the object (see {@link StoreOptions.transform}): a
 * slimmer object of the same type.
 */
export type TransformFunc<T extends KubeObject = KubeObject> = (obj: T) => T;

/** Options of a {@link Store}. */
export interface StoreOptions<T extends KubeObject> {
  /** Extra indexes by name, in addition to the built-in namespace and owner indexes. */
  indexers?: Record<string, IndexFunc<T>>;
  /**
   * Keep the built-in indexes ({@link NAMESPACE_INDEX}, {@link CONTROLLER_OWNER_INDEX},
   * {@link OWNER_INDEX}; default true). Each costs memory per object (an owner index ~60 bytes
   * per owned object); a store whose readers never look them up can go without.
   */
  builtInIndexes?: boolean;
  /**
   * Applied to every object before anything else (before `stripManagedFields` and freezing): the
   * store keeps, indexes and hands out its result, and an informer gives it to its handlers, on
   * deletions too (client-go's `SetTransform`, controller-runtime's `DefaultTransform`). For
   * readers of many objects that need few of their fields: returning a new object with only those
   * lets the received one be collected. It must be pure and idempotent (it may be given its own
   * output) and keep `metadata.name`, `namespace` and `resourceVersion`; an object it returns is
   * the store's (frozen unless `freeze: false`).
   */
  transform?: TransformFunc<T>;
  /** Drop `metadata.managedFields` on insert (default true). */
  stripManagedFields?: boolean;
  /** Deep-freeze stored objects (default true); see the module documentation. */
  freeze?: boolean;
}

/** An indexed object store; see the module documentation for its contract. */
export class Store<T extends KubeObject = KubeObject> implements CacheReader<T> {
  private readonly items = new Map<string, T>();
  /** The indexes, each with its function and its entries (index value -> keys). */
  private readonly indexes: { name: string; fn: IndexFunc<T>; entries: Map<string, IndexEntry> }[] = [];
  private readonly strip: boolean;
  private readonly freeze: boolean;
  private readonly transform: TransformFunc<T> | undefined;

  constructor(options: StoreOptions<T> = {}) {
    this.strip = options.stripManagedFields ?? true;
    this.freeze = options.freeze ?? true;
    this.transform = options.transform;
    if (options.builtInIndexes ?? true) {
      this.addIndexer(NAMESPACE_INDEX, byNamespace as IndexFunc<T>);
      this.addIndexer(CONTROLLER_OWNER_INDEX, byControllerOwner as IndexFunc<T>);
      this.addIndexer(OWNER_INDEX, byAnyOwner as IndexFunc<T>);
    }
    for (const [name, fn] of Object.entries(options.indexers ?? {})) this.addIndexer(name, fn);
  }

  get size(): number {
    return this.items.size;
  }

  /** Adds an index; existing objects are indexed at once. Names must be unique. */
  addIndexer(name: string, fn: IndexFunc<T>): void {
    if (this.indexes.some((i) => i.name === name)) throw new Error(`index "${name}" already exists`);
    const entries = new Map<string, IndexEntry>();
    this.indexes.push({ name, fn, entries });
    for (const [key, obj] of this.items) {
      for (const value of fn(obj)) addToIndex(entries, value, key);
    }
  }

  get(key: string): T | undefined {
    return this.items.get(key);
  }

  list(): T[] {
    return [...this.items.values()];
  }

  keys(): string[] {
    return [...this.items.keys()];
  }

  byIndex(indexName: string, value: string): T[] {
    const keys = this.index(indexName).get(value);
    if (keys === undefined) return [];
    if (typeof keys === "string") return [this.items.get(keys) as T];
    const out: T[] = [];
    for (const key of keys) out.push(this.items.get(key) as T);
    return out;
  }

  /** The values under which index `indexName` holds at least one object. */
  indexValues(indexName: string): string[] {
    return [...this.index(indexName).keys()];
  }

  /**
   * Inserts or replaces the object under its key; returns the stored (prepared) object and the
   * previous one, if any.
   */
  upsert(obj: T): { stored: T; previous: T | undefined } {
    const key = objectKey(obj);
    const stored = this.prepare(obj);
    const previous = this.items.get(key);
    this.items.set(key, stored);
    for (const { fn, entries } of this.indexes) {
      const values = fn(stored);
      if (previous === undefined) {
        for (const value of values) addToIndex(entries, value, key);
        continue;
      }
      const before = fn(previous);
      // The common update (same namespace, same owners) leaves every index as it is.
      if (sameValues(before, values)) continue;
      for (const value of before) removeFromIndex(entries, value, key);
      for (const value of values) addToIndex(entries, value, key);
    }
    return { stored, previous };
  }

  /** Removes the object under `key`; returns it, if there was one. */
  delete(key: string): T | undefined {
    const previous = this.items.get(key);
    if (previous === undefined) return undefined;
    this.unindex(key, previous);
    this.items.delete(key);
    return previous;
  }

  /** What a handler is given of an object removed from the store: `obj` transformed (not stripped nor frozen). */
  transformed(obj: T): T {
    return this.transform === undefined ? obj : this.transform(obj);
  }

  /** A view with only the read methods, to hand to consumers. */
  reader(): CacheReader<T> {
    const store = this;
    return {
      get: (key) => store.get(key),
      list: () => store.list(),
      keys: () => store.keys(),
      byIndex: (name, value) => store.byIndex(name, value),
      get size() {
        return store.size;
      },
    };
  }

  /**
   * Transforms, strips and freezes `obj` as `upsert` would (idempotent: `upsert` of a prepared
   * object does nothing more, given an idempotent `transform`). For a caller that holds many
   * objects before inserting them, like an informer collecting list pages: prepared as they
   * arrive, what is dropped becomes garbage while still young instead of after the whole list,
   * which keeps the heap's peak, and the RSS it leaves behind, down.
   */
  prepare(obj: T): T {
    let out = this.transform === undefined ? obj : this.transform(obj);
    if (this.strip && out.metadata?.managedFields !== undefined) {
      const { managedFields: _dropped, ...metadata } = out.metadata;
      // Replace metadata in place rather than spreading the object: in V8 a frozen spread copy
      // costs ~140 bytes more per object than the frozen original, and `delete` would turn
      // metadata into a slow dictionary object (~400 bytes more).
      if (Object.isFrozen(out)) out = { ...out, metadata };
      else (out as { metadata: typeof metadata }).metadata = metadata;
    }
    if (this.freeze && !Object.isFrozen(out)) deepFreeze(out);
    return out;
  }

  private index(indexName: string): Map<string, IndexEntry> {
    for (const index of this.indexes) if (index.name === indexName) return index.entries;
    throw new Error(`no index named "${indexName}"`);
  }

  private unindex(key: string, obj: T): void {
    for (const { fn, entries } of this.indexes) {
      for (const value of fn(obj)) removeFromIndex(entries, value, key);
    }
  }
}

/**
 * The keys under one index value: the key itself while there is one (most values of the owner
 * indexes name exactly one object, and a Set per object would cost ~100 bytes and an allocation),
 * a Set from the second key on.
 */
type IndexEntry = string | Set<string>;

function addToIndex(entries: Map<string, IndexEntry>, value: string, key: string): void {
  const keys = entries.get(value);
  if (keys === undefined) entries.set(value, key);
  else if (typeof keys !== "string") keys.add(key);
  else if (keys !== key) entries.set(value, new Set([keys, key]));
}

function removeFromIndex(entries: Map<string, IndexEntry>, value: string, key: string): void {
  const keys = entries.get(value);
  if (keys === undefined) return;
  if (typeof keys === "string") {
    if (keys === key) entries.delete(value);
    return;
  }
  keys.delete(key);
  if (keys.size === 0) entries.delete(value);
}

function sameValues(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function deepFreeze(value: object): void {
  Object.freeze(value);
  // for-in over plain JSON data (no inherited enumerables) is ~40% faster than Object.values here.
  for (const key in value) {
    const child = (value as Record<string, unknown>)[key];
    if (typeof child === "object" && child !== null && !Object.isFrozen(child)) deepFreeze(child);
  }
}
