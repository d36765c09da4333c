import { describe, expect, it } from "vitest";
import { MemoryStorage } from "../../packages/capstan-dev/src/devcluster/storage/memory-storage.ts";
import { type Change, StorageError } from "../../packages/capstan-dev/src/devcluster/storage/storage.ts";

const put = (s: MemoryStorage, key: string, value: string) => s.create("b", key, (rev) => `${value}@${rev}`);

describe("MemoryStorage", () => {
  it("gives each write the next global revision across buckets", async () => {
    const s = new MemoryStorage();
    const a = await put(s, "a", "x");
    const b = await s.create("other", "b", (rev) => `y@${rev}`);
    const a2 = await s.update("b", "a", a.rev, (rev) => `x2@${rev}`);
    expect([a.rev, b.rev, a2.rev]).toEqual([1, 2, 3]);
    expect(a2.data).toBe("x2@3");
    expect(s.currentRevision()).toBe(3);
  });

  it("rejects a compare-and-swap on a stale revision and a create of an existing key", async () => {
    const s = new MemoryStorage();
    const a = await put(s, "a", "x");
    await s.update("b", "a", a.rev, () => "x2");
    await expect(s.update("b", "a", a.rev, () => "x3")).rejects.toMatchObject({ code: "Conflict" });
    await expect(put(s, "a", "again")).rejects.toBeInstanceOf(StorageError);
  });

  it("lists keys in order from a prefix and a start key", async () => {
    const s = new MemoryStorage();
    for (const k of ["ns2/b", "ns1/c", "ns1/a", "ns10/a"]) await put(s, k, k);
    expect(s.list("b", "ns1/").map((o) => o.key)).toEqual(["ns1/a", "ns1/c"]);
    expect(s.list("b", "", "ns1/a\u0000").map((o) => o.key)).toEqual(["ns1/c", "ns10/a", "ns2/b"]);
  });

  it("rebuilds the bucket as it was at an older revision from the history", async () => {
    const s = new MemoryStorage();
    const a = await put(s, "a", "a1");
    await put(s, "b", "b1");
    const snapshot = s.currentRevision();
    await s.update("b", "a", a.rev, () => "a2");
    await s.delete("b", "b", undefined, () => "b-gone");
    await put(s, "c", "c1");
    expect(s.listAt("b", "", snapshot).map((o) => [o.key, o.data])).toEqual([
      ["a", "a1@1"],
      ["b", "b1@2"],
    ]);
    expect(s.list("b", "").map((o) => o.key)).toEqual(["a", "c"]);
  });

  it("replays history then streams live changes to a watcher, without gap or duplicate", async () => {
    const s = new MemoryStorage();
    await put(s, "a", "1");
    await put(s, "b", "2");
    const seen: Change[] = [];
    const stop = s.watch(1, (c) => seen.push(c));
    await put(s, "c", "3");
    stop();
    await put(s, "d", "4");
    expect(seen.map((c) => [c.type, c.key, c.rev])).toEqual([
      ["ADDED", "b", 2],
      ["ADDED", "c", 3],
    ]);
  });

  it("drops the oldest changes past its size and refuses watches and snapshots older than that", async () => {
    const s = new MemoryStorage(2);
    for (const k of ["a", "b", "c", "d"]) await put(s, k, k);
    expect(s.oldestRevision()).toBe(2);
    expect(() => s.watch(1, () => {})).toThrow(/too old resource version: 1 \(2\)/);
    expect(() => s.listAt("b", "", 1)).toThrow(StorageError);
    const seen: number[] = [];
    s.watch(2, (c) => seen.push(c.rev))();
    expect(seen).toEqual([3, 4]);
  });

  it("compacts on demand so that older revisions become too old", async () => {
    const s = new MemoryStorage();
    for (const k of ["a", "b", "c"]) await put(s, k, k);
    s.compact(2);
    expect(() => s.watch(1, () => {})).toThrow(/too old/);
    expect(() => s.watch(2, () => {})).not.toThrow();
  });
});
