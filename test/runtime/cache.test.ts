import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../packages/capstan/src/client/types.ts";
import {
  CONTROLLER_OWNER_INDEX,
  NAMESPACE_INDEX,
  OWNER_INDEX,
  objectKey,
  Store,
  splitObjectKey,
} from "../../packages/capstan/src/runtime/cache.ts";

type Obj = KubeObject & { data?: Record<string, string> };

function obj(name: string, namespace: string | undefined, extra: Partial<NonNullable<Obj["metadata"]>> = {}): Obj {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace, ...extra }, data: { k: "v" } };
}

const owner = (uid: string, controller = false) => ({ apiVersion: "v1", kind: "X", name: uid, uid, controller });

describe("Store", () => {
  it("keys objects by namespace/name, or name when cluster-scoped", () => {
    expect(objectKey(obj("a", "ns"))).toBe("ns/a");
    expect(objectKey(obj("node-1", undefined))).toBe("node-1");
    expect(splitObjectKey("ns/a")).toEqual({ namespace: "ns", name: "a" });
    expect(splitObjectKey("node-1")).toEqual({ namespace: "", name: "node-1" });
    expect(() => objectKey({ metadata: {} })).toThrow(/metadata.name/);
  });

  it("finds objects by namespace, by controller owner and by any owner", () => {
    const store = new Store<Obj>();
    store.upsert(obj("a", "ns1", { ownerReferences: [owner("p1", true), owner("p2")] }));
    store.upsert(obj("b", "ns1", { ownerReferences: [owner("p2", true)] }));
    store.upsert(obj("c", "ns2"));
    const names = (xs: Obj[]) => xs.map((o) => o.metadata?.name).sort();
    expect(names(store.byIndex(NAMESPACE_INDEX, "ns1"))).toEqual(["a", "b"]);
    expect(names(store.byIndex(CONTROLLER_OWNER_INDEX, "p1"))).toEqual(["a"]);
    expect(names(store.byIndex(CONTROLLER_OWNER_INDEX, "p2"))).toEqual(["b"]);
    expect(names(store.byIndex(OWNER_INDEX, "p2"))).toEqual(["a", "b"]);
    expect(store.byIndex(NAMESPACE_INDEX, "nowhere")).toEqual([]);
  });

  it("keeps index lookups exact as objects join, share, leave and rejoin one index value", () => {
    const store = new Store<Obj>();
    const names = (xs: Obj[]) => xs.map((o) => o.metadata?.name).sort();
    store.upsert(obj("a", "ns", { ownerReferences: [owner("p", true)] }));
    expect(names(store.byIndex(CONTROLLER_OWNER_INDEX, "p"))).toEqual(["a"]);
    store.upsert(obj("b", "ns", { ownerReferences: [owner("p", true)] }));
    store.upsert(obj("c", "ns", { ownerReferences: [owner("p", true)] }));
    expect(names(store.byIndex(CONTROLLER_OWNER_INDEX, "p"))).toEqual(["a", "b", "c"]);
    // An update that keeps the owner leaves the entry as it is; one that drops it moves the object out.
    store.upsert(obj("a", "ns", { ownerReferences: [owner("p", true)], labels: { x: "1" } }));
    store.upsert(obj("b", "ns"));
    store.delete("ns/c");
    expect(names(store.byIndex(CONTROLLER_OWNER_INDEX, "p"))).toEqual(["a"]);
    store.delete("ns/a");
    expect(store.byIndex(CONTROLLER_OWNER_INDEX, "p")).toEqual([]);
    expect(store.indexValues(CONTROLLER_OWNER_INDEX)).toEqual([]);
    store.upsert(obj("b", "ns", { ownerReferences: [owner("p", true)] }));
    expect(names(store.byIndex(OWNER_INDEX, "p"))).toEqual(["b"]);
  });

  it("prepares objects ahead of insertion exactly as upsert would, and stores a prepared object as it is", () => {
    const store = new Store<Obj>();
    const prepared = store.prepare(obj("a", "ns", { managedFields: [{ manager: "kubectl", operation: "Apply" }] }));
    expect(prepared.metadata?.managedFields).toBeUndefined();
    expect(Object.isFrozen(prepared.metadata)).toBe(true);
    expect(store.upsert(prepared).stored).toBe(prepared);
  });

  it("stores, indexes and hands out what its transform returns, never the object given", () => {
    let calls = 0;
    // Keeps the key, the version and one label; drops data, uid and the owner references.
    const transform = (o: Obj): Obj => {
      calls++;
      const { name, namespace, resourceVersion, labels } = o.metadata ?? {};
      return { metadata: { name, namespace, resourceVersion, labels: { app: labels?.app ?? "" } } };
    };
    const store = new Store<Obj>({ transform, indexers: { app: (o) => [o.metadata?.labels?.app ?? ""] } });
    const given = obj("a", "ns", {
      uid: "u1",
      resourceVersion: "7",
      labels: { app: "x", other: "y" },
      ownerReferences: [owner("p", true)],
      managedFields: [{ manager: "kubectl", operation: "Apply" }],
    });
    const { stored } = store.upsert(given);
    expect(stored).not.toBe(given);
    expect(stored).toEqual({ metadata: { name: "a", namespace: "ns", resourceVersion: "7", labels: { app: "x" } } });
    expect(store.get("ns/a")).toBe(stored);
    expect(Object.isFrozen(stored.metadata)).toBe(true);
    // Indexes see the transformed object: its owner reference was dropped, its label kept.
    expect(store.byIndex(CONTROLLER_OWNER_INDEX, "p")).toEqual([]);
    expect(store.byIndex("app", "x")).toEqual([stored]);
    // Prepared first (as an informer does with list pages), then inserted: the same result.
    const prepared = store.prepare(obj("b", "ns", { resourceVersion: "8", labels: { app: "z" }, uid: "u2" }));
    expect(store.upsert(prepared).stored).toEqual({
      metadata: { name: "b", namespace: "ns", resourceVersion: "8", labels: { app: "z" } },
    });
    expect(calls).toBe(3);
    // What a deletion's handler gets: transformed, as every object handed out.
    expect(store.transformed(given)).toEqual(stored);
    expect(new Store<Obj>().transformed(given)).toBe(given);
  });

  it("goes without the built-in indexes when asked, keeping its own", () => {
    const store = new Store<Obj>({ builtInIndexes: false, indexers: { app: (o) => [o.metadata?.labels?.app ?? ""] } });
    store.upsert(obj("a", "ns", { labels: { app: "x" }, ownerReferences: [owner("p", true)] }));
    expect(() => store.byIndex(NAMESPACE_INDEX, "ns")).toThrow(/no index named "namespace"/);
    expect(() => store.byIndex(OWNER_INDEX, "p")).toThrow(/no index named "owner"/);
    expect(store.byIndex("app", "x").map((o) => o.metadata?.name)).toEqual(["a"]);
    expect(new Store<Obj>().byIndex(NAMESPACE_INDEX, "ns")).toEqual([]);
  });

  it("moves an object between index values when it changes and drops it on delete", () => {
    const store = new Store<Obj>({ indexers: { byLabel: (o) => [o.metadata?.labels?.app ?? ""] } });
    store.upsert(obj("a", "ns", { labels: { app: "one" } }));
    store.upsert(obj("a", "ns", { labels: { app: "two" } }));
    expect(store.byIndex("byLabel", "one")).toEqual([]);
    expect(store.byIndex("byLabel", "two").map((o) => o.metadata?.name)).toEqual(["a"]);
    expect(store.delete("ns/a")?.metadata?.labels?.app).toBe("two");
    expect(store.byIndex("byLabel", "two")).toEqual([]);
    expect(store.indexValues("byLabel")).toEqual([]);
    expect(store.size).toBe(0);
  });

  it("indexes existing objects when an index is added later", () => {
    const store = new Store<Obj>();
    store.upsert(obj("a", "ns", { labels: { tier: "web" } }));
    store.addIndexer("tier", (o) => (o.metadata?.labels?.tier ? [o.metadata.labels.tier] : []));
    expect(store.byIndex("tier", "web")).toHaveLength(1);
    expect(() => store.addIndexer("tier", () => [])).toThrow(/already exists/);
    expect(() => store.byIndex("missing", "x")).toThrow(/no index named "missing"/);
  });

  it("strips managedFields on insert by default, and keeps them when asked", () => {
    const managedFields = [{ manager: "kubectl", operation: "Apply" }];
    const stripped = new Store<Obj>().upsert(obj("a", "ns", { managedFields })).stored;
    expect(stripped.metadata?.managedFields).toBeUndefined();
    expect(stripped.metadata?.name).toBe("a");
    const kept = new Store<Obj>({ stripManagedFields: false }).upsert(obj("a", "ns", { managedFields })).stored;
    expect(kept.metadata?.managedFields).toEqual(managedFields);
  });

  it("hands out deep-frozen objects, so a consumer's mutation throws instead of corrupting the cache", () => {
    const store = new Store<Obj>();
    store.upsert(obj("a", "ns", { labels: { app: "one" } }));
    const cached = store.get("ns/a")!;
    expect(() => {
      cached.metadata!.labels!.app = "changed";
    }).toThrow(TypeError);
    expect(() => {
      cached.data!.k = "changed";
    }).toThrow(TypeError);
    expect(store.get("ns/a")?.metadata?.labels?.app).toBe("one");
    const copy = structuredClone(cached);
    copy.data!.k = "fine";
    expect(copy.data!.k).toBe("fine");
  });

  it("skips freezing when freeze is false", () => {
    const store = new Store<Obj>({ freeze: false });
    const stored = store.upsert(obj("a", "ns")).stored;
    expect(Object.isFrozen(stored)).toBe(false);
  });

  it("gives consumers a reader without write methods", () => {
    const store = new Store<Obj>();
    store.upsert(obj("a", "ns"));
    const reader = store.reader();
    expect(reader.get("ns/a")?.metadata?.name).toBe("a");
    expect(reader.keys()).toEqual(["ns/a"]);
    expect(reader.list()).toHaveLength(1);
    expect(reader.size).toBe(1);
    expect("upsert" in reader).toBe(false);
    expect("delete" in reader).toBe(false);
  });
});
