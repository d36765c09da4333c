/**
 * The storage contract of the devcluster: a revisioned key-value store modelled on etcd plus the
 * apiserver's watch cache. The REST layer (src/devcluster/rest/) is its only user; part 2 adds a
 * persistent implementation (`--data-dir`) behind the same interface.
 *
 * ## Expected flow
 * The REST layer reads the current object (`get`), computes the next one, and writes it with a
 * compare-and-swap on the revision it read (`update(bucket, key, expectedRev, build)`). A write
 * takes the next global revision, calls `build(rev)` to serialize the object with that revision as
 * its resourceVersion, commits it, appends a `Change` to the bounded history and hands the change to
 * every watcher — in that order, synchronously, before the returned promise settles.
 *
 * ## Guarantees
 * - One global revision counter; every committed write gets a revision strictly greater than all
 *   before it, and watchers receive changes in revision order with none skipped.
 * - A write's precondition (`expectedRev`) and its commit are atomic: no other write can land in between.
 * - `watch(fromRev)` first replays every change after `fromRev` from the history, then streams live
 *   ones, with no gap and no duplicate. A `fromRev` older than the history throws `TooOldError`.
 * - `listAt(rev)` returns the bucket exactly as it was at `rev` (consistent snapshot reads, as etcd's
 *   MVCC gives continue tokens and `resourceVersionMatch=Exact`), or throws `TooOldError`.
 *
 * ## Assumptions
 * - Values are opaque serialized objects (JSON strings). The store never parses them: keeping them
 *   serialized is what keeps memory at about the size of the JSON (etcd does the same).
 * - Keys inside a bucket are `namespace/name` or `name`; buckets are `group/plural`.
 * - Listeners do not throw and do not block (they queue work); a throwing listener is removed.
 *
 * ## Caveats
 * - The in-memory implementation keeps `history` changes; old versions referenced only by the
 *   history stay in memory until they fall out of it.
 * - A promise returned by a write settles after the change is visible in memory: a persistent
 *   backend settles it after the write is durable, so callers must answer clients only then.
 * - `get` and `list` may hand out a new StoredObject for the same stored version on every call (the
 *   in-memory store rebuilds objects it keeps in parts): compare `rev`, never identity.
 */

/** One stored object: its key, the revision of its last write and its serialized form. */
export interface StoredObject {
  readonly key: string;
  readonly rev: number;
  readonly data: string;
}

export type ChangeType = "ADDED" | "MODIFIED" | "DELETED";

/** One committed write, as watchers and the history see it. */
export interface Change {
  readonly type: ChangeType;
  readonly bucket: string;
  readonly key: string;
  readonly rev: number;
  /** The object after the write; for DELETED, the object as deleted (carrying the deletion revision). */
  readonly data: string;
  /** The object before the write (absent for ADDED). */
  readonly prev?: string;
  /** The revision of `prev`. */
  readonly prevRev?: number;
}

export type ChangeListener = (change: Change) => void;

/** Why a storage operation did not happen. */
export type StorageErrorCode = "KeyExists" | "KeyNotFound" | "Conflict" | "TooOld";

export class StorageError extends Error {
  readonly code: StorageErrorCode;
  /** For `Conflict`: the revision found. For `TooOld`: the oldest revision a read or watch can start from. */
  readonly rev: number;
  constructor(code: StorageErrorCode, message: string, rev = 0) {
    super(message);
    this.code = code;
    this.rev = rev;
  }
}

/** Builds the serialized object for the revision the write is getting. */
export type Build = (rev: number) => string;

/** The revisioned store. See the module documentation for its contract. */
export interface Storage {
  /** The revision of the last committed write (0 for an empty store). */
  currentRevision(): number;
  /** The oldest revision that `watch` and `listAt` can start from. */
  oldestRevision(): number;
  get(bucket: string, key: string): StoredObject | undefined;
  /** Current objects of a bucket whose keys start with `prefix`, sorted by key; from `startKey` (inclusive) if given. */
  list(bucket: string, prefix: string, startKey?: string): StoredObject[];
  /** The same as `list`, but as the bucket was at revision `rev`. */
  listAt(bucket: string, prefix: string, rev: number, startKey?: string): StoredObject[];
  /** Number of objects in a bucket (all namespaces). */
  count(bucket: string): number;
  /** Fails with `KeyExists` if the key is present. */
  create(bucket: string, key: string, build: Build): Promise<StoredObject>;
  /** Fails with `KeyNotFound`, or `Conflict` when `expectedRev` is given and differs from the stored revision. */
  update(bucket: string, key: string, expectedRev: number | undefined, build: Build): Promise<StoredObject>;
  /** Deletes the key; `build` serializes the object as deleted (the DELETED event's object). */
  delete(bucket: string, key: string, expectedRev: number | undefined, build: Build): Promise<StoredObject>;
  /** Replays every change after `fromRev` (of `bucket` only, if given), then streams new ones. Returns the cancel function. */
  watch(fromRev: number, listener: ChangeListener, bucket?: string): () => void;
  /** Drops history up to and including `rev` (fault injection and tests: makes older versions 410). */
  compact(rev: number): void;
  /** Removes every object of a bucket without events (a CRD's storage being dropped). */
  dropBucket(bucket: string): void;
  /** Stops every watcher. */
  close(): void;
}
