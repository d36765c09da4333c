import {
  appendFileSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FileStorage } from "../../../packages/capstan-dev/src/devcluster/storage/file-storage.ts";
import type { Change } from "../../../packages/capstan-dev/src/devcluster/storage/storage.ts";
import { StorageError } from "../../../packages/capstan-dev/src/devcluster/storage/storage.ts";
import { encodeRecord } from "../../../packages/capstan-dev/src/devcluster/storage/wal-record.ts";

const dirs: string[] = [];
const open: FileStorage[] = [];

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "capstan-persist-"));
  dirs.push(dir);
  return dir;
}

async function openStore(dir: string, options: Parameters<typeof FileStorage.open>[1] = {}): Promise<FileStorage> {
  const store = await FileStorage.open(dir, { onWarning: () => {}, ...options });
  open.push(store);
  return store;
}

async function closeStore(store: FileStorage): Promise<void> {
  await store.closed();
  open.splice(open.indexOf(store), 1);
}

afterEach(async () => {
  for (const store of open.splice(0)) await store.closed();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const obj = (name: string, rev: number, extra = "") => JSON.stringify({ name, rv: String(rev), extra });

describe("FileStorage", () => {
  it("keeps every acknowledged write across a restart, with its revision, and continues the revision counter", async () => {
    const dir = tempDir();
    const store = await openStore(dir);
    const a = await store.create("/configmaps", "default/a", (rev) => obj("a", rev));
    const b = await store.create("/configmaps", "default/b", (rev) => obj("b", rev));
    const a2 = await store.update("/configmaps", "default/a", a.rev, (rev) => obj("a", rev, "changed"));
    await store.delete("/configmaps", "default/b", b.rev, (rev) => obj("b", rev));
    await closeStore(store);

    const reopened = await openStore(dir);
    expect(reopened.currentRevision()).toBe(4);
    expect(reopened.get("/configmaps", "default/a")).toEqual(a2);
    expect(reopened.get("/configmaps", "default/b")).toBeUndefined();
    const c = await reopened.create("/configmaps", "default/c", (rev) => obj("c", rev));
    expect(c.rev).toBe(5);
  });

  it("resumes a watch from a revision before the restart with every later change, in order", async () => {
    const dir = tempDir();
    const store = await openStore(dir);
    const first = await store.create("/configmaps", "default/a", (rev) => obj("a", rev));
    await store.create("/configmaps", "default/b", (rev) => obj("b", rev));
    await store.update("/configmaps", "default/a", first.rev, (rev) => obj("a", rev, "x"));
    await closeStore(store);

    const reopened = await openStore(dir);
    const seen: Change[] = [];
    const cancel = reopened.watch(first.rev, (change) => seen.push(change), "/configmaps");
    await reopened.create("/configmaps", "default/c", (rev) => obj("c", rev));
    cancel();
    expect(seen.map((c) => [c.type, c.key, c.rev])).toEqual([
      ["ADDED", "default/b", 2],
      ["MODIFIED", "default/a", 3],
      ["ADDED", "default/c", 4],
    ]);
    expect(seen[1]!.prev).toBe(first.data);
  });

  it("answers TooOld for a watch from before the last snapshot, and still has every object", async () => {
    const dir = tempDir();
    const store = await openStore(dir);
    for (let i = 0; i < 5; i++) await store.create("/configmaps", `default/cm-${i}`, (rev) => obj(`cm-${i}`, rev));
    await closeStore(store);
    // A tiny threshold: the log is compacted into a snapshot at open.
    await closeStore(await openStore(dir, { snapshotThresholdBytes: 1 }));
    expect(readdirSync(dir).filter((n) => n.endsWith(".snap"))).toHaveLength(1);
    expect(readdirSync(dir).filter((n) => n.endsWith(".log"))).toHaveLength(1);

    const reopened = await openStore(dir);
    expect(reopened.currentRevision()).toBe(5);
    expect(reopened.list("/configmaps", "default/").map((o) => [o.key, o.rev])).toEqual(
      Array.from({ length: 5 }, (_, i) => [`default/cm-${i}`, i + 1]),
    );
    expect(reopened.oldestRevision()).toBe(5);
    expect(() => reopened.watch(2, () => {})).toThrow(StorageError);
    const seen: number[] = [];
    reopened.watch(5, (change) => seen.push(change.rev));
    await reopened.create("/configmaps", "default/after", (rev) => obj("after", rev));
    expect(seen).toEqual([6]);
  });

  it("keeps every write made while snapshots are taken between batches", async () => {
    const dir = tempDir();
    const store = await openStore(dir, { snapshotThresholdBytes: 1 });
    for (let round = 0; round < 5; round++) {
      await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          store.create("/configmaps", `default/cm-${round}-${i}`, (rev) => obj(`cm-${round}-${i}`, rev)),
        ),
      );
    }
    await closeStore(store);
    const reopened = await openStore(dir);
    expect(reopened.currentRevision()).toBe(50);
    expect(reopened.count("/configmaps")).toBe(50);
    for (const item of reopened.list("/configmaps", "")) expect(JSON.parse(item.data).rv).toBe(String(item.rev));
  });

  it("drops a torn last record with a warning and keeps everything before it", async () => {
    const dir = tempDir();
    const store = await openStore(dir);
    await store.create("/configmaps", "default/a", (rev) => obj("a", rev));
    await closeStore(store);
    const segment = join(dir, readdirSync(dir).find((n) => n.endsWith(".log"))!);
    const intact = statSync(segment).size;
    // Half of a valid record: a write cut short by a crash.
    const torn = encodeRecord(`${JSON.stringify(["c", 2, "/configmaps", "default/b"])}\n${obj("b", 2)}`);
    appendFileSync(segment, torn.subarray(0, torn.length - 5));

    const warnings: string[] = [];
    const reopened = await openStore(dir, { onWarning: (m) => warnings.push(m) });
    expect(warnings.join("\n")).toMatch(/dropping a torn record/);
    expect(reopened.currentRevision()).toBe(1);
    expect(reopened.get("/configmaps", "default/b")).toBeUndefined();
    expect(statSync(segment).size).toBe(intact);
    const b = await reopened.create("/configmaps", "default/b", (rev) => obj("b", rev));
    expect(b.rev).toBe(2);
  });

  it("drops a record whose checksum does not match at the end of the log", async () => {
    const dir = tempDir();
    const store = await openStore(dir);
    await store.create("/configmaps", "default/a", (rev) => obj("a", rev));
    await store.create("/configmaps", "default/b", (rev) => obj("b", rev));
    await closeStore(store);
    const segment = join(dir, readdirSync(dir).find((n) => n.endsWith(".log"))!);
    const bytes = readFileSync(segment);
    bytes.writeUInt8(bytes.readUInt8(bytes.length - 3) ^ 0xff, bytes.length - 3);
    writeFileSync(segment, bytes);

    const reopened = await openStore(dir);
    expect(reopened.currentRevision()).toBe(1);
    expect(reopened.get("/configmaps", "default/a")).toBeDefined();
  });

  it("refuses to start on corruption in a segment that is not the last, and releases the directory", async () => {
    const dir = tempDir();
    const store = await openStore(dir);
    await store.create("/configmaps", "default/a", (rev) => obj("a", rev));
    await closeStore(store);
    appendFileSync(join(dir, "wal-0000000000000000.log"), Buffer.from("garbage-bytes"));
    writeFileSync(join(dir, "wal-0000000000000001.log"), "");
    await expect(FileStorage.open(dir, { onWarning: () => {} })).rejects.toThrow(/not the last/);
    // The failed open released the directory: the next attempt fails on the data again, not on the lock.
    await expect(FileStorage.open(dir, { onWarning: () => {} })).rejects.toThrow(/not the last/);
  });

  it("makes concurrent writers share one fsync (group commit)", async () => {
    const store = await openStore(tempDir());
    const before = store.syncCount();
    await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        store.create("/configmaps", `default/cm-${i}`, (rev) => obj(`cm-${i}`, rev)),
      ),
    );
    expect(store.currentRevision()).toBe(50);
    expect(store.syncCount() - before).toBe(1);
  });

  it("shows a write to reads and watchers only once it is durable", async () => {
    const store = await openStore(tempDir());
    const seen: number[] = [];
    store.watch(0, (change) => seen.push(change.rev));
    const pending = store.create("/configmaps", "default/a", (rev) => obj("a", rev));
    expect(store.get("/configmaps", "default/a")).toBeUndefined();
    expect(store.currentRevision()).toBe(0);
    expect(seen).toEqual([]);
    const stored = await pending;
    expect(store.get("/configmaps", "default/a")).toEqual(stored);
    expect(seen).toEqual([1]);
  });

  it("fails a racing write's precondition only after the winner is durable, so a re-read sees the winner", async () => {
    const store = await openStore(tempDir());
    const a = await store.create("/configmaps", "default/a", (rev) => obj("a", rev));
    const winner = store.update("/configmaps", "default/a", a.rev, (rev) => obj("a", rev, "winner"));
    const loser = store.update("/configmaps", "default/a", a.rev, (rev) => obj("a", rev, "loser"));
    const duplicate = store.create("/configmaps", "default/b", (rev) => obj("b", rev));
    const duplicate2 = store.create("/configmaps", "default/b", (rev) => obj("b", rev));
    await expect(loser).rejects.toMatchObject({ code: "Conflict", rev: 2 });
    expect(store.get("/configmaps", "default/a")?.rev).toBe(2);
    await expect(duplicate2).rejects.toMatchObject({ code: "KeyExists" });
    expect(store.get("/configmaps", "default/b")).toBeDefined();
    await winner;
    await duplicate;
  });

  it("reports an update racing an in-flight delete as a conflict, so the caller re-reads and finds it gone", async () => {
    const store = await openStore(tempDir());
    const a = await store.create("/configmaps", "default/a", (rev) => obj("a", rev));
    const deleted = store.delete("/configmaps", "default/a", a.rev, (rev) => obj("a", rev));
    const update = store.update("/configmaps", "default/a", a.rev, (rev) => obj("a", rev));
    await expect(update).rejects.toMatchObject({ code: "Conflict" });
    expect(store.get("/configmaps", "default/a")).toBeUndefined();
    await deleted;
  });

  it("keeps a compaction across a restart: older revisions stay TooOld, later ones resume", async () => {
    const dir = tempDir();
    const store = await openStore(dir);
    for (let i = 0; i < 4; i++) await store.create("/configmaps", `default/cm-${i}`, (rev) => obj(`cm-${i}`, rev));
    store.compact(3);
    expect(() => store.watch(2, () => {})).toThrow(StorageError);
    await closeStore(store);
    const reopened = await openStore(dir);
    expect(reopened.oldestRevision()).toBe(3);
    expect(() => reopened.watch(2, () => {})).toThrow(StorageError);
    const seen: number[] = [];
    reopened.watch(3, (change) => seen.push(change.rev));
    expect(seen).toEqual([4]);
  });

  it("explains a data dir that cannot be a directory", async () => {
    const file = join(tempDir(), "a-file");
    writeFileSync(file, "");
    await expect(FileStorage.open(file)).rejects.toThrow(/data dir .*a-file cannot be used/);
  });

  it("fails the batch and every later write when the log cannot be written, and stays readable", async () => {
    const warnings: string[] = [];
    const store = await openStore(tempDir(), { onWarning: (m) => warnings.push(m) });
    const a = await store.create("/configmaps", "default/a", (rev) => obj("a", rev));
    // Pull the log file out from under the store: the next write fails as a full or broken disk would.
    await (store as unknown as { segment: { close(): Promise<void> } }).segment.close();
    await expect(store.create("/configmaps", "default/b", (rev) => obj("b", rev))).rejects.toThrow(
      /storage write failed/,
    );
    await expect(store.update("/configmaps", "default/a", a.rev, (rev) => obj("a", rev))).rejects.toThrow(
      /storage write failed/,
    );
    expect(store.get("/configmaps", "default/a")).toEqual(a);
    expect(store.get("/configmaps", "default/b")).toBeUndefined();
    expect(warnings.join("\n")).toMatch(/no further writes accepted/);
  });

  it("leaves no file open in the data dir once closed, snapshots included", async () => {
    const dir = tempDir();
    const store = await openStore(dir, { snapshotThresholdBytes: 1 });
    for (let i = 0; i < 3; i++) await store.create("/configmaps", `default/cm-${i}`, (rev) => obj(`cm-${i}`, rev));
    const openInDir = () =>
      readdirSync("/proc/self/fd").filter((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`).startsWith(dir);
        } catch {
          return false;
        }
      }).length;
    expect(openInDir()).toBeGreaterThan(0);
    await closeStore(store);
    expect(openInDir()).toBe(0);
    expect(readdirSync(dir)).not.toContain("LOCK");
  });

  it("persists a dropped bucket, and a key of it can be created again at once", async () => {
    const dir = tempDir();
    const store = await openStore(dir);
    await store.create("/example.com/widgets", "default/w", (rev) => obj("w", rev));
    store.dropBucket("/example.com/widgets");
    const again = await store.create("/example.com/widgets", "default/w", (rev) => obj("w2", rev));
    expect(again.rev).toBe(2);
    store.dropBucket("/example.com/widgets");
    await store.create("/configmaps", "default/a", (rev) => obj("a", rev));
    expect(store.count("/example.com/widgets")).toBe(0);
    await closeStore(store);
    const reopened = await openStore(dir);
    expect(reopened.count("/example.com/widgets")).toBe(0);
    expect(reopened.currentRevision()).toBe(3);
  });

  it("refuses a second open of a directory that is in use, and frees it on close", async () => {
    const dir = tempDir();
    const store = await openStore(dir);
    await expect(FileStorage.open(dir)).rejects.toThrow(/already open/);
    await closeStore(store);
    const reopened = await openStore(dir);
    expect(reopened.currentRevision()).toBe(0);
  });

  it("takes over the lock of a dead process", async () => {
    const dir = tempDir();
    // A pid far above Linux's pid_max default: nobody holds it.
    writeFileSync(join(dir, "LOCK"), "4194000");
    const store = await openStore(dir);
    expect(readFileSync(join(dir, "LOCK"), "utf8")).toBe(String(process.pid));
    await closeStore(store);
  });

  it("flushes writes still queued when closed, and refuses writes after", async () => {
    const dir = tempDir();
    const store = await openStore(dir);
    const pending = store.create("/configmaps", "default/a", (rev) => obj("a", rev));
    store.close();
    await expect(store.create("/configmaps", "default/b", (rev) => obj("b", rev))).rejects.toThrow(/closed/);
    await pending;
    await closeStore(store);
    const reopened = await openStore(dir);
    expect(reopened.get("/configmaps", "default/a")?.rev).toBe(1);
  });
});
