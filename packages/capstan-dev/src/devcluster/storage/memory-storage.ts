/**
 * In-memory implementation of {@link Storage}: one Map per bucket, a ring buffer of recent changes,
 * and synchronous fan-out to watchers. See storage.ts for the contract it keeps.
 *
 * An object whose managedFields text other objects share is kept in three parts around one shared copy
 * of it (shared-segments.ts): `get` and `list` then hand out a new {@link StoredObject} per call, so
 * callers compare `rev`, not identity.
 */
import { checkRequestSize } from "./request-size.ts";
import { joined, SharedSegments, type SplitObject } from "./shared-segments.ts";
import {
  type Build,
  type Change,
  type ChangeListener,
  type Storage,
  StorageError,
  type StoredObject,
} from "./storage.ts";

/**
 * How many changes the history keeps for watch resume and snapshot reads, across all buckets.
 *
 * Why 10,000: kube-apiserver's watch cache keeps roughly the last 75 s of events per resource
 * (capacity adapting up to 100k). A controller that lost its watch reconnects within seconds (client-go
 * backs off at most ~30 s), and 10k changes covers a few seconds at benchmark write rates and many
 * minutes of an operator's usual traffic. Memory is bounded too: entries share their strings with the
 * store until the object is overwritten, so the worst case is 10k superseded versions (~10 MiB at 1 KiB).
 */
export const DEFAULT_HISTORY_SIZE = 10_000;

/** A stored object kept as head + shared managedFields + tail. */
interface SplitRecord extends SplitObject {
  readonly key: string;
  readonly rev: number;
}

type Held = StoredObject | SplitRecord;

interface Bucket {
  readonly items: Map<string, Held>;
  /** Keys in sorted order, rebuilt lazily after a create or delete (updates keep the key set). */
  sorted: string[] | null;
}

interface Watcher {
  readonly listener: ChangeListener;
  readonly bucket: string | undefined;
}

export class MemoryStorage implements Storage {
  private readonly buckets = new Map<string, Bucket>();
  private readonly history: (Change | undefined)[];
  private historyStart = 0; // index of the oldest kept change
  private historyLength = 0;
  private revision = 0;
  /** Revision of the newest change no longer kept (0 while nothing was dropped). */
  private compacted = 0;
  private readonly watchers = new Set<Watcher>();
  private readonly segments = new SharedSegments();

  constructor(private readonly historySize = DEFAULT_HISTORY_SIZE) {
    this.history = new Array(historySize);
  }

  currentRevision(): number {
    return this.revision;
  }

  oldestRevision(): number {
    return this.compacted;
  }

  get(bucket: string, key: string): StoredObject | undefined {
    const held = this.buckets.get(bucket)?.items.get(key);
    return held ? view(held) : undefined;
  }

  count(bucket: string): number {
    return this.buckets.get(bucket)?.items.size ?? 0;
  }

  list(bucketName: string, prefix: string, startKey?: string): StoredObject[] {
    const bucket = this.buckets.get(bucketName);
    if (!bucket) return [];
    const keys = sortedKeys(bucket);
    const from = startKey !== undefined && startKey > prefix ? startKey : prefix;
    const out: StoredObject[] = [];
    for (let i = lowerBound(keys, from); i < keys.length; i++) {
      const key = keys[i]!;
      if (!key.startsWith(prefix)) break;
      out.push(view(bucket.items.get(key)!));
    }
    return out;
  }

  listAt(bucketName: string, prefix: string, rev: number, startKey?: string): StoredObject[] {
    if (rev >= this.revision) return this.list(bucketName, prefix, startKey);
    if (rev < this.compacted) {
      throw new StorageError("TooOld", `too old resource version: ${rev} (${this.compacted})`, this.compacted);
    }
    // Undo, newest first, every change of this bucket made after `rev`.
    const state = new Map<string, StoredObject | undefined>();
    for (const item of this.list(bucketName, prefix, startKey)) state.set(item.key, item);
    for (let i = this.historyLength - 1; i >= 0; i--) {
      const change = this.history[(this.historyStart + i) % this.historySize]!;
      if (change.rev <= rev) break;
      if (change.bucket !== bucketName || !change.key.startsWith(prefix)) continue;
      if (startKey !== undefined && change.key < startKey) continue;
      if (change.type === "ADDED") state.delete(change.key);
      else state.set(change.key, { key: change.key, rev: change.prevRev!, data: change.prev! });
    }
    return [...state.values()]
      .filter((o): o is StoredObject => o !== undefined)
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async create(bucketName: string, givenKey: string, build: Build): Promise<StoredObject> {
    const bucket = this.bucket(bucketName);
    if (bucket.items.has(givenKey)) throw new StorageError("KeyExists", `key exists: ${givenKey}`);
    const key = flatKey(givenKey);
    const rev = this.revision + 1;
    const data = build(rev);
    checkRequestSize(key, data);
    this.revision = rev;
    const held = this.hold(key, rev, data);
    bucket.items.set(key, held);
    bucket.sorted = null;
    this.commit({ type: "ADDED", bucket: bucketName, key, rev, data: dataOf(held) });
    return { key, rev, data };
  }

  async update(bucketName: string, key: string, expectedRev: number | undefined, build: Build): Promise<StoredObject> {
    const bucket = this.bucket(bucketName);
    const current = bucket.items.get(key);
    if (!current) throw new StorageError("KeyNotFound", `key not found: ${key}`);
    if (expectedRev !== undefined && current.rev !== expectedRev) {
      throw new StorageError("Conflict", `revision ${expectedRev} is not the current ${current.rev}`, current.rev);
    }
    const rev = this.revision + 1;
    const data = build(rev);
    checkRequestSize(key, data);
    const prev = dataOf(current);
    this.revision = rev;
    // The stored key (flat, see flatKey) rather than the caller's copy.
    const held = this.hold(current.key, rev, data);
    bucket.items.set(key, held);
    this.release(current);
    this.commit({
      type: "MODIFIED",
      bucket: bucketName,
      key: current.key,
      rev,
      data: dataOf(held),
      prev,
      prevRev: current.rev,
    });
    return { key: current.key, rev, data };
  }

  async delete(bucketName: string, key: string, expectedRev: number | undefined, build: Build): Promise<StoredObject> {
    const bucket = this.bucket(bucketName);
    const current = bucket.items.get(key);
    if (!current) throw new StorageError("KeyNotFound", `key not found: ${key}`);
    if (expectedRev !== undefined && current.rev !== expectedRev) {
      throw new StorageError("Conflict", `revision ${expectedRev} is not the current ${current.rev}`, current.rev);
    }
    const rev = this.revision + 1;
    const data = build(rev);
    checkRequestSize(key, data);
    const prev = dataOf(current);
    this.revision = rev;
    bucket.items.delete(key);
    bucket.sorted = null;
    this.release(current);
    this.commit({ type: "DELETED", bucket: bucketName, key, rev, data, prev, prevRev: current.rev });
    return { key, rev, data };
  }

  watch(fromRev: number, listener: ChangeListener, bucket?: string): () => void {
    if (fromRev < this.compacted) {
      throw new StorageError("TooOld", `too old resource version: ${fromRev} (${this.compacted})`, this.compacted);
    }
    // Replay synchronously, then register: no write can interleave, so nothing is lost or doubled.
    for (let i = this.firstIndexAfter(fromRev); i < this.historyLength; i++) {
      const change = this.history[(this.historyStart + i) % this.historySize]!;
      if (bucket === undefined || change.bucket === bucket) listener(change);
    }
    const watcher: Watcher = { listener, bucket };
    this.watchers.add(watcher);
    return () => {
      this.watchers.delete(watcher);
    };
  }

  /** Number of live watchers (tests use it to prove that closed watches release their subscription). */
  watcherCount(): number {
    return this.watchers.size;
  }

  compact(rev: number): void {
    while (this.historyLength > 0) {
      const oldest = this.history[this.historyStart]!;
      if (oldest.rev > rev) break;
      this.dropOldest();
    }
    this.compacted = Math.max(this.compacted, Math.min(rev, this.revision));
  }

  dropBucket(bucket: string): void {
    const dropped = this.buckets.get(bucket);
    if (!dropped) return;
    this.buckets.delete(bucket);
    for (const held of dropped.items.values()) this.release(held);
  }

  close(): void {
    this.watchers.clear();
  }

  /**
   * Loads saved objects into an empty store (a persistent backend restoring its snapshot at start-up):
   * objects keep their revisions, the store continues from `revision`, and nothing before `revision` is
   * in the history (watches and snapshot reads from older revisions get TooOld).
   */
  restore(revision: number, objects: Iterable<{ bucket: string; object: StoredObject }>): void {
    if (this.revision !== 0 || this.historyLength !== 0) throw new Error("restore needs an empty store");
    for (const { bucket, object } of objects) {
      const target = this.bucket(bucket);
      const replaced = target.items.get(object.key);
      if (replaced) this.release(replaced);
      target.items.set(object.key, this.hold(object.key, object.rev, object.data));
      target.sorted = null;
    }
    this.revision = revision;
    this.compacted = revision;
  }

  /** Distinct shared managedFields texts held (tests and diagnostics). */
  sharedSegmentCount(): number {
    return this.segments.size();
  }

  /** What the store keeps for one object: split around a shared managedFields text when worth it. */
  private hold(key: string, rev: number, data: string): Held {
    const split = this.segments.split(data);
    return split ? { key, rev, head: split.head, segment: split.segment, tail: split.tail } : { key, rev, data };
  }

  private release(held: Held): void {
    if (!("data" in held)) this.segments.release(held);
  }

  private bucket(name: string): Bucket {
    let bucket = this.buckets.get(name);
    if (!bucket) {
      bucket = { items: new Map(), sorted: null };
      this.buckets.set(name, bucket);
    }
    return bucket;
  }

  private commit(change: Change): void {
    if (this.historyLength === this.historySize) this.dropOldest();
    this.history[(this.historyStart + this.historyLength) % this.historySize] = change;
    this.historyLength++;
    for (const watcher of this.watchers) {
      if (watcher.bucket !== undefined && watcher.bucket !== change.bucket) continue;
      try {
        watcher.listener(change);
      } catch {
        this.watchers.delete(watcher);
      }
    }
  }

  private dropOldest(): void {
    const oldest = this.history[this.historyStart]!;
    this.compacted = oldest.rev;
    this.history[this.historyStart] = undefined;
    this.historyStart = (this.historyStart + 1) % this.historySize;
    this.historyLength--;
  }

  /** Index (0 = oldest kept) of the first change with a revision greater than `rev`. */
  private firstIndexAfter(rev: number): number {
    let lo = 0;
    let hi = this.historyLength;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.history[(this.historyStart + mid) % this.historySize]!.rev > rev) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}

/**
 * The key as one flat string. A key built as `${namespace}/${name}` is a V8 cons string that keeps both
 * parts alive; the store holds every key for the object's lifetime, and a flat copy saves ~24 B per
 * stored object (measured on 200k keys: 61 -> 37 B per key with its Map entry). `trim` returns a flat
 * string; a key it would change (surrounding whitespace, never an object's key) is kept as given.
 */
function flatKey(key: string): string {
  const flat = key.trim();
  return flat.length === key.length ? flat : key;
}

/**
 * The object as a StoredObject. A split object's string is a concatenation of its parts (V8 joins them
 * lazily): the history holds that rather than the written string, so a change nobody reads costs no
 * second copy of the object.
 */
function view(held: Held): StoredObject {
  return "data" in held ? held : { key: held.key, rev: held.rev, data: joined(held) };
}

function dataOf(held: Held): string {
  return "data" in held ? held.data : joined(held);
}

function sortedKeys(bucket: Bucket): string[] {
  if (!bucket.sorted) bucket.sorted = [...bucket.items.keys()].sort();
  return bucket.sorted;
}

function lowerBound(keys: string[], target: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! < target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
