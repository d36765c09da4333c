/**
 * Persistent {@link Storage} for `--data-dir`: a write-ahead log with group commit, periodic snapshots
 * that let old log segments go, and a {@link MemoryStorage} holding exactly what is durable.
 *
 * ## Expected flow
 * A write checks its precondition against the newest state (durable objects overlaid with writes still
 * waiting for their fsync), takes the next revision, builds its object and queues a log record — all
 * synchronously, so writes are serialized as in the in-memory store. A flush loop writes every queued
 * record with one `write` and one `fdatasync` (group commit: writers arriving during an fsync share the
 * next one), then applies the batch to the in-memory store in revision order (which is when reads and
 * watchers see it) and only then settles the writers' promises. When the log has grown past
 * {@link DEFAULT_SNAPSHOT_THRESHOLD_BYTES}, the loop starts a new segment and writes a snapshot of the
 * durable state in the background; once the snapshot is durable, the segments before it are deleted.
 * `FileStorage.open` recovers: newest complete snapshot, then every later segment, dropping a torn tail.
 *
 * ## Guarantees
 * - A write's promise resolves only after its record is on disk (fdatasync); a crash at any moment
 *   (kill -9) loses no acknowledged write, and a restart continues the revision counter.
 * - Reads (`get`, `list`, `listAt`) and watchers see a write only once it is durable: nobody observes a
 *   revision that a crash could take back, so a client's resourceVersion never names a lost write.
 * - A precondition failure caused by a write still in flight is reported only after that write is
 *   durable, so a caller that re-reads and retries (the object store's conflict loops) sees it.
 * - The history for watch resume and snapshot reads holds the changes replayed from the log since the
 *   last snapshot (bounded by `historySize`); a watch from before that answers TooOld (410), never a gap.
 * - A torn or corrupt record at the end of the last segment (a write cut short) is dropped with a
 *   warning and the file truncated there; corruption anywhere else refuses to start rather than guess.
 * - One process at a time per directory (a `LOCK` file naming the owner's pid).
 *
 * ## Assumptions
 * - The file system honours fdatasync and atomic rename (ext4, xfs, apfs; not every network share).
 *
 * ## Caveats
 * - `compact()` (fault injection) is logged without waiting for its fsync: a crash right after it may
 *   leave an old revision watchable again after the restart (no event is missed either way).
 * - A write-path I/O error (disk full) fails that batch and every later write: the store stops
 *   accepting writes rather than continue with a log it cannot trust. Restart once the disk is fixed.
 * - `dropBucket` is logged like a write and becomes visible to reads once durable, a few ms later.
 */
import {
  type FileHandle,
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  rm,
  truncate,
  unlink,
  writeFile,
} from "node:fs/promises";
import { join, resolve } from "node:path";
import { DEFAULT_HISTORY_SIZE, MemoryStorage } from "./memory-storage.ts";
import { checkRequestSize } from "./request-size.ts";
import { type Build, type ChangeListener, type Storage, StorageError, type StoredObject } from "./storage.ts";
import { decodeRecords, encodeRecord } from "./wal-record.ts";

/**
 * Log bytes after which a snapshot is written and older segments deleted.
 *
 * Why 64 MiB: replaying the log at start-up parses every record (about 200 MB/s of JSON-framed records
 * on a laptop core), so 64 MiB bounds the replay part of a restart to a few hundred ms, while a snapshot
 * (the whole state written once) happens only every ~50k writes of 1 KiB objects.
 */
export const DEFAULT_SNAPSHOT_THRESHOLD_BYTES = 64 * 1024 * 1024;

/** Snapshot files are written in chunks of about this size: bounded memory, few syscalls. */
const SNAPSHOT_CHUNK_BYTES = 1024 * 1024;

export interface FileStorageOptions {
  /** Changes kept for watch resume (see memory-storage.ts). */
  historySize?: number;
  /** Log size that triggers a snapshot; tests lower it to exercise compaction. */
  snapshotThresholdBytes?: number;
  /** Where recovery warnings go (a dropped torn record); stderr when absent. */
  onWarning?: (message: string) => void;
}

type WriteKind = "c" | "u" | "d";

/** One queued log record and what to do once it is durable. */
interface PendingOp {
  /** A write; "x" a bucket drop; "k" a compaction of the history up to `rev`. */
  readonly kind: WriteKind | "x" | "k";
  readonly bucket: string;
  readonly key: string;
  /** The write's revision; for a drop ("x"), the revision it follows. */
  readonly rev: number;
  readonly data: string;
  readonly record: Buffer;
  resolve(stored: StoredObject): void;
  reject(err: unknown): void;
}

/** The newest not-yet-durable state of one key, seen by preconditions only. */
interface OverlayEntry {
  readonly rev: number;
  /** Undefined when the pending write is a delete. */
  readonly object: StoredObject | undefined;
  readonly durable: Promise<unknown>;
}

const SEGMENT = /^wal-(\d{16})\.log$/;
const SNAPSHOT = /^snapshot-(\d{16})\.snap$/;
/** True for the files the store writes in its directory: log segments, snapshots, their temporary files. */
export function isStorageFile(name: string): boolean {
  const base = name.endsWith(".tmp") ? name.slice(0, -".tmp".length) : name;
  return SEGMENT.test(base) || SNAPSHOT.test(base);
}
const segmentName = (seq: number) => `wal-${String(seq).padStart(16, "0")}.log`;
const snapshotName = (seq: number) => `snapshot-${String(seq).padStart(16, "0")}.snap`;

/** Directories opened by this process: the pid lock cannot tell two opens in one process apart. */
const openDirs = new Set<string>();

const noop = () => {};

export class FileStorage implements Storage {
  private readonly memory: MemoryStorage;
  /** `bucket \0 key` -> newest pending write. */
  private readonly overlay = new Map<string, OverlayEntry>();
  /** bucket -> its newest pending drop (keys of the bucket without an overlay entry are absent). */
  private readonly pendingDrops = new Map<string, { op: PendingOp; durable: Promise<unknown> }>();
  /** Buckets holding objects, for snapshots (MemoryStorage does not enumerate its buckets). */
  private readonly buckets = new Set<string>();
  private queue: PendingOp[] = [];
  private nextRev: number;
  private flushing = false;
  private scheduled: NodeJS.Immediate | undefined;
  private flushRun: Promise<void> | undefined;
  private snapshotRun: Promise<void> | undefined;
  private syncs = 0;
  private failure: Error | undefined;
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly dir: string,
    private segment: FileHandle,
    private segmentSeq: number,
    private logBytes: number,
    memory: MemoryStorage,
    buckets: Iterable<string>,
    private readonly snapshotThreshold: number,
    private readonly warn: (message: string) => void,
  ) {
    this.memory = memory;
    this.nextRev = memory.currentRevision();
    for (const bucket of buckets) this.buckets.add(bucket);
  }

  /** Opens (creating if needed) the store in `dir` and recovers its state. */
  static async open(dir: string, options: FileStorageOptions = {}): Promise<FileStorage> {
    const root = resolve(dir);
    const warn = options.onWarning ?? ((message: string) => process.stderr.write(`capstan storage: ${message}\n`));
    if (openDirs.has(root)) throw new Error(`data dir ${root} is already open in this process`);
    try {
      await mkdir(root, { recursive: true, mode: 0o700 });
    } catch (err) {
      throw new Error(`data dir ${root} cannot be used: ${(err as Error).message}`);
    }
    await takeLock(root);
    openDirs.add(root);
    try {
      return await FileStorage.recover(root, options, warn);
    } catch (err) {
      openDirs.delete(root);
      await rm(join(root, "LOCK"), { force: true });
      throw err;
    }
  }

  private static async recover(
    root: string,
    options: FileStorageOptions,
    warn: (message: string) => void,
  ): Promise<FileStorage> {
    const names = await readdir(root);
    for (const name of names) if (name.endsWith(".tmp")) await rm(join(root, name), { force: true });
    const snapshots = seqs(names, SNAPSHOT).reverse();
    const memory = new MemoryStorage(options.historySize ?? DEFAULT_HISTORY_SIZE);
    const buckets = new Set<string>();
    let fromSeq = 0;
    for (const seq of snapshots) {
      const loaded = await readSnapshot(join(root, snapshotName(seq)));
      if (!loaded) {
        warn(`ignoring incomplete snapshot ${snapshotName(seq)}`);
        continue;
      }
      memory.restore(loaded.rev, loaded.objects);
      for (const { bucket } of loaded.objects) buckets.add(bucket);
      fromSeq = seq;
      break;
    }
    const segments = seqs(names, SEGMENT);
    let logBytes = 0;
    const live = segments.filter((seq) => seq >= fromSeq);
    for (const [i, seq] of live.entries()) {
      const path = join(root, segmentName(seq));
      const decoded = decodeRecords(await readFile(path));
      if (decoded.torn) {
        if (i !== live.length - 1) {
          throw new Error(`${path}: corrupt record at byte ${decoded.validLength} in a segment that is not the last`);
        }
        warn(`${segmentName(seq)}: dropping a torn record at byte ${decoded.validLength} (a write cut short)`);
        await truncate(path, decoded.validLength);
      }
      for (const payload of decoded.payloads) replay(memory, buckets, payload, path);
      logBytes += decoded.validLength;
    }
    // Segments before the snapshot are left from a crash between writing it and deleting them.
    for (const seq of segments) if (seq < fromSeq) await rm(join(root, segmentName(seq)), { force: true });
    for (const seq of snapshots) if (seq < fromSeq) await rm(join(root, snapshotName(seq)), { force: true });
    const seq = live.at(-1) ?? fromSeq;
    const segment = await open(join(root, segmentName(seq)), "a", 0o600);
    await syncDir(root);
    const storage = new FileStorage(
      root,
      segment,
      seq,
      logBytes,
      memory,
      buckets,
      options.snapshotThresholdBytes ?? DEFAULT_SNAPSHOT_THRESHOLD_BYTES,
      warn,
    );
    // A log already past the threshold (a long run, or a lowered threshold) is compacted at once.
    if (logBytes >= storage.snapshotThreshold) {
      try {
        await storage.startSnapshot();
      } catch (err) {
        await storage.segment.close();
        throw err;
      }
    }
    return storage;
  }

  currentRevision(): number {
    return this.memory.currentRevision();
  }

  oldestRevision(): number {
    return this.memory.oldestRevision();
  }

  get(bucket: string, key: string): StoredObject | undefined {
    return this.memory.get(bucket, key);
  }

  list(bucket: string, prefix: string, startKey?: string): StoredObject[] {
    return this.memory.list(bucket, prefix, startKey);
  }

  listAt(bucket: string, prefix: string, rev: number, startKey?: string): StoredObject[] {
    return this.memory.listAt(bucket, prefix, rev, startKey);
  }

  count(bucket: string): number {
    return this.memory.count(bucket);
  }

  async create(bucket: string, key: string, build: Build): Promise<StoredObject> {
    this.checkWritable();
    const { current, pending } = this.effective(bucket, key);
    if (current) {
      if (pending) await pending.then(noop, noop);
      throw new StorageError("KeyExists", `key exists: ${key}`);
    }
    return this.write("c", bucket, key, build);
  }

  async update(bucket: string, key: string, expectedRev: number | undefined, build: Build): Promise<StoredObject> {
    this.checkWritable();
    // Checked and written with no await in between: that is what makes the compare-and-swap atomic.
    const failed = this.precondition(bucket, key, expectedRev);
    if (failed) return failed;
    return this.write("u", bucket, key, build);
  }

  async delete(bucket: string, key: string, expectedRev: number | undefined, build: Build): Promise<StoredObject> {
    this.checkWritable();
    const failed = this.precondition(bucket, key, expectedRev);
    if (failed) return failed;
    return this.write("d", bucket, key, build);
  }

  watch(fromRev: number, listener: ChangeListener, bucket?: string): () => void {
    return this.memory.watch(fromRev, listener, bucket);
  }

  /** Number of live watchers (as MemoryStorage reports it; tests prove closed watches let go). */
  watcherCount(): number {
    return this.memory.watcherCount();
  }

  /** Trims the history now and logs the compaction, so that it holds after a restart too. */
  compact(rev: number): void {
    this.memory.compact(rev);
    if (this.failure || this.closing) return;
    // Nobody awaits it: losing it in a crash only leaves an old revision watchable, never an event missed.
    this.enqueue("k", "", "", this.memory.oldestRevision(), "").durable.catch(noop);
  }

  dropBucket(bucket: string): void {
    this.checkWritable();
    for (const id of this.overlay.keys()) if (id.startsWith(`${bucket}\u0000`)) this.overlay.delete(id);
    const { op, durable } = this.enqueue("x", bucket, "", this.nextRev, "");
    durable.catch(noop); // nobody awaits a drop; a failed log already fails every later write
    this.pendingDrops.set(bucket, { op, durable });
  }

  /** Stops watchers and writes; `closed()` resolves once pending writes are durable and files are closed. */
  close(): void {
    this.memory.close();
    this.closing ??= this.shutdown();
  }

  /** Resolves when `close()` has finished (pending writes flushed, files closed, lock released). */
  closed(): Promise<void> {
    this.close();
    return this.closing!;
  }

  /** How many fsyncs the log has done (tests prove group commit with it; benchmarks report it). */
  syncCount(): number {
    return this.syncs;
  }

  /**
   * Checks a precondition synchronously. Undefined when it holds; otherwise the rejection to return,
   * settled only after a racing in-flight write is durable (so the caller's re-read sees it).
   */
  private precondition(bucket: string, key: string, expectedRev: number | undefined): Promise<never> | undefined {
    const { current, pending } = this.effective(bucket, key);
    const failure = !current
      ? pending && expectedRev !== undefined
        ? // Deleted by a write in flight: a conflict, so that callers re-read (and then answer NotFound).
          new StorageError("Conflict", `revision ${expectedRev} is not the current (deleted)`, 0)
        : new StorageError("KeyNotFound", `key not found: ${key}`)
      : expectedRev !== undefined && current.rev !== expectedRev
        ? new StorageError("Conflict", `revision ${expectedRev} is not the current ${current.rev}`, current.rev)
        : undefined;
    if (!failure) return undefined;
    return (pending ?? Promise.resolve()).then(
      () => Promise.reject(failure),
      () => Promise.reject(failure),
    );
  }

  private effective(bucket: string, key: string): { current: StoredObject | undefined; pending?: Promise<unknown> } {
    const entry = this.overlay.get(`${bucket}\u0000${key}`);
    if (entry) return { current: entry.object, pending: entry.durable };
    const drop = this.pendingDrops.get(bucket);
    if (drop) return { current: undefined, pending: drop.durable };
    return { current: this.memory.get(bucket, key) };
  }

  private write(kind: WriteKind, bucket: string, key: string, build: Build): Promise<StoredObject> {
    const rev = this.nextRev + 1;
    const data = build(rev);
    if (kind !== "d") checkRequestSize(key, data);
    this.nextRev = rev;
    const { durable } = this.enqueue(kind, bucket, key, rev, data);
    const stored: StoredObject = { key, rev, data };
    this.overlay.set(`${bucket}\u0000${key}`, { rev, object: kind === "d" ? undefined : stored, durable });
    return durable;
  }

  private enqueue(
    kind: WriteKind | "x" | "k",
    bucket: string,
    key: string,
    rev: number,
    data: string,
  ): { op: PendingOp; durable: Promise<StoredObject> } {
    let settle!: Pick<PendingOp, "resolve" | "reject">;
    const durable = new Promise<StoredObject>((resolve, reject) => {
      settle = { resolve, reject };
    });
    const record = encodeRecord(`${JSON.stringify([kind, rev, bucket, key])}\n${data}`);
    const op: PendingOp = { kind, bucket, key, rev, data, record, ...settle };
    this.queue.push(op);
    // Invariant: a non-empty queue has a flush running or scheduled.
    if (!this.flushing && !this.scheduled) {
      // setImmediate, not a microtask: every request parsed in this event-loop turn joins the batch.
      this.scheduled = setImmediate(() => {
        this.scheduled = undefined;
        this.flushRun = this.flushLoop();
      });
    }
    return { op, durable };
  }

  private async flushLoop(): Promise<void> {
    this.flushing = true;
    while (this.queue.length > 0 && !this.failure) {
      const batch = this.queue;
      this.queue = [];
      const bytes = batch.length === 1 ? batch[0]!.record : Buffer.concat(batch.map((op) => op.record));
      try {
        let written = 0;
        while (written < bytes.length) {
          written += (await this.segment.write(bytes, written, bytes.length - written)).bytesWritten;
        }
        await this.segment.datasync();
        this.syncs++;
      } catch (err) {
        this.fail(err, batch);
        break;
      }
      this.logBytes += bytes.length;
      try {
        for (const op of batch) this.apply(op);
      } catch (err) {
        // A durable record the in-memory store refuses is a bug: stop rather than serve a diverged state.
        this.fail(err, batch);
        break;
      }
      if (this.logBytes >= this.snapshotThreshold && !this.snapshotRun) {
        try {
          await this.startSnapshot();
        } catch (err) {
          this.fail(err, []);
          break;
        }
      }
    }
    this.flushing = false;
  }

  /** Makes one durable op visible: applies it to the in-memory store, then settles its writer. */
  private apply(op: PendingOp): void {
    if (op.kind === "k") {
      // Already applied when it was asked for.
    } else if (op.kind === "x") {
      this.memory.dropBucket(op.bucket);
      this.buckets.delete(op.bucket);
      // Only the newest drop of a bucket is pending; an older one finishing must not clear it.
      if (this.pendingDrops.get(op.bucket)?.op === op) this.pendingDrops.delete(op.bucket);
    } else {
      applyWrite(this.memory, op.kind, op.bucket, op.key, op.rev, op.data);
      this.buckets.add(op.bucket);
      const id = `${op.bucket}\u0000${op.key}`;
      if (this.overlay.get(id)?.rev === op.rev) this.overlay.delete(id);
    }
    op.resolve({ key: op.key, rev: op.rev, data: op.data });
  }

  private fail(err: unknown, batch: PendingOp[]): void {
    this.failure = new Error(`storage write failed, no further writes accepted: ${(err as Error).message}`);
    this.warn(this.failure.message);
    for (const op of [...batch, ...this.queue]) op.reject(this.failure);
    this.queue = [];
  }

  private checkWritable(): void {
    if (this.failure) throw this.failure;
    if (this.closing) throw new Error("storage is closed");
  }

  /**
   * Starts a new segment and writes a snapshot of the durable state in the background. Runs inside the
   * flush loop between batches, when the in-memory store holds exactly the records of the old segments.
   */
  private async startSnapshot(): Promise<void> {
    const seq = this.segmentSeq + 1;
    const next = await open(join(this.dir, segmentName(seq)), "a", 0o600);
    try {
      await syncDir(this.dir);
    } catch (err) {
      await next.close();
      throw err;
    }
    const old = this.segment;
    this.segment = next;
    this.segmentSeq = seq;
    this.logBytes = 0;
    await old.close();
    const rev = this.memory.currentRevision();
    const objects: { bucket: string; object: StoredObject }[] = [];
    for (const bucket of this.buckets) {
      for (const object of this.memory.list(bucket, "")) objects.push({ bucket, object });
    }
    this.snapshotRun = writeSnapshot(this.dir, seq, rev, objects)
      .catch((err: unknown) => this.warn(`snapshot ${snapshotName(seq)} failed (the log still has everything): ${err}`))
      .finally(() => {
        this.snapshotRun = undefined;
      });
  }

  private async shutdown(): Promise<void> {
    if (this.scheduled) {
      clearImmediate(this.scheduled);
      this.scheduled = undefined;
      if (!this.flushing) this.flushRun = this.flushLoop();
    }
    await this.flushRun;
    await this.snapshotRun;
    await this.segment.close();
    await rm(join(this.dir, "LOCK"), { force: true });
    openDirs.delete(this.dir);
  }
}

/** Applies one logged write to the in-memory store, which must give it exactly revision `rev`. */
function applyWrite(
  memory: MemoryStorage,
  kind: WriteKind,
  bucket: string,
  key: string,
  rev: number,
  data: string,
): void {
  const build = () => data;
  const done =
    kind === "c"
      ? memory.create(bucket, key, build)
      : kind === "u"
        ? memory.update(bucket, key, undefined, build)
        : memory.delete(bucket, key, undefined, build);
  // MemoryStorage commits synchronously; the promise only reports errors, which the revision check catches.
  done.catch(noop);
  if (memory.currentRevision() !== rev) {
    throw new Error(
      `log record ${kind} ${bucket} ${key} at revision ${rev} does not apply (store at ${memory.currentRevision()})`,
    );
  }
}

/** Replays one log record at recovery. */
function replay(memory: MemoryStorage, buckets: Set<string>, payload: string, path: string): void {
  const nl = payload.indexOf("\n");
  let header: unknown;
  try {
    header = JSON.parse(payload.slice(0, nl));
  } catch {
    header = undefined;
  }
  if (!Array.isArray(header) || header.length !== 4) throw new Error(`${path}: unreadable log record`);
  const [kind, rev, bucket, key] = header as [string, number, string, string];
  if (kind === "x") {
    memory.dropBucket(bucket);
    buckets.delete(bucket);
    return;
  }
  if (kind === "k") {
    memory.compact(rev);
    return;
  }
  if (kind !== "c" && kind !== "u" && kind !== "d") throw new Error(`${path}: unknown log record kind ${kind}`);
  if (rev !== memory.currentRevision() + 1) {
    throw new Error(`${path}: revision ${rev} follows ${memory.currentRevision()} (a gap in the log)`);
  }
  applyWrite(memory, kind, bucket, key, rev, payload.slice(nl + 1));
  buckets.add(bucket);
}

/** Sequence numbers of the files matching `pattern`, ascending. */
function seqs(names: string[], pattern: RegExp): number[] {
  return names
    .map((name) => pattern.exec(name)?.[1])
    .filter((m): m is string => m !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
}

/**
 * Writes `snapshot-<seq>.snap`: the state after every segment before `seq`. Records: a header
 * `["snapshot", rev, count]`, one `["o", rev, bucket, key]\n<data>` per object, a trailer `["end", count]`;
 * written to a temporary file, fsynced, renamed, then older segments and snapshots are deleted.
 */
async function writeSnapshot(
  dir: string,
  seq: number,
  rev: number,
  objects: { bucket: string; object: StoredObject }[],
): Promise<void> {
  const tmp = join(dir, `${snapshotName(seq)}.tmp`);
  const file = await open(tmp, "w", 0o600);
  try {
    let chunk: Buffer[] = [encodeRecord(JSON.stringify(["snapshot", rev, objects.length]))];
    let size = 0;
    for (const { bucket, object } of objects) {
      const record = encodeRecord(`${JSON.stringify(["o", object.rev, bucket, object.key])}\n${object.data}`);
      chunk.push(record);
      size += record.length;
      if (size >= SNAPSHOT_CHUNK_BYTES) {
        await file.write(Buffer.concat(chunk));
        chunk = [];
        size = 0;
      }
    }
    chunk.push(encodeRecord(JSON.stringify(["end", objects.length])));
    await file.write(Buffer.concat(chunk));
    await file.datasync();
  } finally {
    await file.close();
  }
  await rename(tmp, join(dir, snapshotName(seq)));
  await syncDir(dir);
  for (const name of await readdir(dir)) {
    const old = SEGMENT.exec(name) ?? SNAPSHOT.exec(name);
    if (old && Number(old[1]) < seq) await unlink(join(dir, name));
  }
}

/** Reads a snapshot; undefined when it is incomplete or corrupt. */
async function readSnapshot(
  path: string,
): Promise<{ rev: number; objects: { bucket: string; object: StoredObject }[] } | undefined> {
  const { payloads, torn } = decodeRecords(await readFile(path));
  if (torn || payloads.length < 2) return undefined;
  const head = JSON.parse(payloads[0]!) as [string, number, number];
  const tail = JSON.parse(payloads.at(-1)!) as [string, number];
  if (head[0] !== "snapshot" || tail[0] !== "end" || tail[1] !== head[2] || payloads.length !== head[2] + 2) {
    return undefined;
  }
  const objects: { bucket: string; object: StoredObject }[] = [];
  for (const payload of payloads.slice(1, -1)) {
    const nl = payload.indexOf("\n");
    const [, rev, bucket, key] = JSON.parse(payload.slice(0, nl)) as [string, number, string, string];
    objects.push({ bucket, object: { key, rev, data: payload.slice(nl + 1) } });
  }
  return { rev: head[1], objects };
}

/** Makes a directory's entries (new or renamed files) durable. */
async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** A data directory's LOCK is held by another live process. */
export class DataDirInUseError extends Error {
  constructor(
    readonly dir: string,
    /** The process holding it. */
    readonly pid: number,
  ) {
    super(`data dir ${dir} is in use by process ${pid}`);
    this.name = "DataDirInUseError";
  }
}

/** Takes the directory's LOCK, refusing when a live process holds it (a dead holder's lock is stale). */
export async function takeLock(dir: string): Promise<void> {
  const path = join(dir, "LOCK");
  try {
    await writeFile(path, String(process.pid), { flag: "wx", mode: 0o600 });
    return;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  const holder = Number((await readFile(path, "utf8")).trim());
  if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder)) {
    throw new DataDirInUseError(dir, holder);
  }
  await writeFile(path, String(process.pid), { mode: 0o600 });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
