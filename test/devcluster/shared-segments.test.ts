import { describe, expect, it } from "vitest";
import { MemoryStorage } from "../../packages/capstan-dev/src/devcluster/storage/memory-storage.ts";
import { joined, SharedSegments } from "../../packages/capstan-dev/src/devcluster/storage/shared-segments.ts";

const fields = (time: string) =>
  `[{"manager":"kube-controller-manager","operation":"Update","apiVersion":"v1","time":"${time}","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:payload":{}}}}]`;
const object = (name: string, time = "2026-11-22T13:56:22Z", payload = "x") =>
  `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${name}","managedFields":${fields(time)}},"data":{"payload":"${payload}"}}`;

describe("SharedSegments", () => {
  it("splits around managedFields so that the parts join to exactly the input", () => {
    const segments = new SharedSegments();
    const inputs = [
      object("a"),
      object("b", "2026-11-22T13:56:22Z", 'quote \\" bracket ] brace } and \\\\'),
      // The marker inside a string value: still exact, whatever the split.
      `{"metadata":{"annotations":{"note":"\\"managedFields\\":[ ] looks like it"},"managedFields":${fields("t")}}}`,
      `{"metadata":{"managedFields":[{"unbalanced":"${"y".repeat(120)}"}`,
      `{"metadata":{"managedFields":[]}}`,
      `{"plain":"${"é".repeat(50)}"}`,
    ];
    for (const input of inputs) {
      const split = segments.split(input);
      expect(split ? joined(split) : input).toBe(input);
    }
  });

  it("shares one copy between objects with the same managedFields and frees it with the last holder", () => {
    const segments = new SharedSegments();
    const a = segments.split(object("a"))!;
    const b = segments.split(object("b"))!;
    const c = segments.split(object("c", "2026-11-22T13:56:23Z"))!;
    expect(a.segment).toBe(b.segment);
    expect(segments.size()).toBe(2);
    segments.release(a);
    expect(segments.size()).toBe(2);
    segments.release(b);
    segments.release(c);
    expect(segments.size()).toBe(0);
  });

  it("leaves small or absent managedFields alone", () => {
    const segments = new SharedSegments();
    expect(segments.split('{"metadata":{"managedFields":[{}]}}')).toBeUndefined();
    expect(segments.split('{"metadata":{"name":"x"}}')).toBeUndefined();
  });
});

describe("MemoryStorage with shared managedFields", () => {
  it("reads, lists, watches and rewrites split objects exactly, and lets segments go with the objects", async () => {
    const s = new MemoryStorage(100);
    const seen: [string, string, string | undefined][] = [];
    s.watch(0, (c) => seen.push([c.type, c.data, c.prev]));
    const a1 = await s.create("/b", "ns/a", () => object("a"));
    await s.create("/b", "ns/b", () => object("b"));
    expect(s.sharedSegmentCount()).toBe(1);
    expect(s.get("/b", "ns/a")).toEqual(a1);
    expect(s.list("/b", "ns/").map((o) => o.data)).toEqual([object("a"), object("b")]);
    const a2 = await s.update("/b", "ns/a", a1.rev, () => object("a", "2026-11-22T13:56:30Z", "y"));
    expect(s.get("/b", "ns/a")).toEqual(a2);
    expect(s.sharedSegmentCount()).toBe(2);
    expect(s.listAt("/b", "ns/", a1.rev + 1).map((o) => o.data)).toEqual([object("a"), object("b")]);
    await s.delete("/b", "ns/b", undefined, () => object("b"));
    expect(s.sharedSegmentCount()).toBe(1);
    s.dropBucket("/b");
    expect(s.sharedSegmentCount()).toBe(0);
    expect(seen.map(([type]) => type)).toEqual(["ADDED", "ADDED", "MODIFIED", "DELETED"]);
    expect(seen[2]).toEqual(["MODIFIED", object("a", "2026-11-22T13:56:30Z", "y"), object("a")]);
    expect(seen[3]).toEqual(["DELETED", object("b"), object("b")]);
  });
});
