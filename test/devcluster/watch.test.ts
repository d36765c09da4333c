import { afterEach, describe, expect, it } from "vitest";
import type { MemoryStorage } from "../../packages/capstan-dev/src/devcluster/storage/memory-storage.ts";
import { configMap, type RawHttpCluster, startRawHttpCluster, type WatchEventLine } from "./support/http.ts";

let t: RawHttpCluster | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

const CMS = "/api/v1/namespaces/default/configmaps";

async function take(
  stream: { next(ms?: number): Promise<WatchEventLine | undefined> },
  n: number,
): Promise<WatchEventLine[]> {
  const out: WatchEventLine[] = [];
  for (let i = 0; i < n; i++) {
    const e = await stream.next();
    if (!e) break;
    out.push(e);
  }
  return out;
}

describe("watch", () => {
  it("starts with synthetic ADDED events for current objects when no resourceVersion is given, then streams changes", async () => {
    t = await startRawHttpCluster();
    await t.request("POST", CMS, { body: configMap("existing") });
    const w = await t.watch(`${CMS}?watch=true`);
    expect(w.status).toBe(200);
    const first = await w.next();
    expect(first).toMatchObject({ type: "ADDED", object: { metadata: { name: "existing" } } });
    const created = await t.request("POST", CMS, { body: configMap("new", { a: "1" }) });
    created.body.data = { a: "2" };
    await t.request("PUT", `${CMS}/new`, { body: created.body });
    await t.request("DELETE", `${CMS}/new`);
    const events = await take(w, 3);
    expect(events.map((e) => e.type)).toEqual(["ADDED", "MODIFIED", "DELETED"]);
    expect(events[1]!.object.data).toEqual({ a: "2" });
    // DELETED carries the deletion's own resourceVersion, above the last update's.
    expect(Number(events[2]!.object.metadata.resourceVersion)).toBeGreaterThan(
      Number(events[1]!.object.metadata.resourceVersion),
    );
    w.close();
  });

  it("resumes from a resourceVersion with exactly the changes made after it", async () => {
    t = await startRawHttpCluster();
    const a = await t.request("POST", CMS, { body: configMap("a") });
    await t.request("POST", CMS, { body: configMap("b") });
    await t.request("POST", CMS, { body: configMap("c") });
    const w = await t.watch(`${CMS}?watch=true&resourceVersion=${a.body.metadata.resourceVersion}`);
    const events = await take(w, 2);
    expect(events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(["ADDED b", "ADDED c"]);
    await expect(w.next(200)).rejects.toThrow(/no watch event/);
    w.close();
  });

  it("answers a watch from before the kept history with an ERROR event carrying a 410 Expired Status", async () => {
    t = await startRawHttpCluster({ historySize: 3 });
    const first = await t.request("POST", CMS, { body: configMap("first") });
    for (let i = 0; i < 5; i++) await t.request("POST", CMS, { body: configMap(`n${i}`) });
    const rv = Number(first.body.metadata.resourceVersion);
    const w = await t.watch(`${CMS}?watch=true&resourceVersion=${rv}`);
    expect(w.status).toBe(200);
    const e = await w.next();
    expect(e?.type).toBe("ERROR");
    expect(e?.object).toMatchObject({
      kind: "Status",
      apiVersion: "v1",
      status: "Failure",
      reason: "Expired",
      code: 410,
    });
    expect(e?.object.message).toMatch(new RegExp(`^too old resource version: ${rv} \\(\\d+\\)$`));
    await w.ended;
  });

  it("sends periodic BOOKMARK events carrying only a resourceVersion when allowWatchBookmarks is set", async () => {
    t = await startRawHttpCluster({ bookmarkIntervalMs: 50 });
    const created = await t.request("POST", CMS, { body: configMap("x") });
    const w = await t.watch(
      `${CMS}?watch=true&allowWatchBookmarks=true&resourceVersion=${created.body.metadata.resourceVersion}`,
    );
    const e = await w.next();
    expect(e).toEqual({
      type: "BOOKMARK",
      object: {
        kind: "ConfigMap",
        apiVersion: "v1",
        metadata: { resourceVersion: created.body.metadata.resourceVersion },
      },
    });
    w.close();
  });

  it("sends no BOOKMARK events without allowWatchBookmarks", async () => {
    t = await startRawHttpCluster({ bookmarkIntervalMs: 20 });
    const w = await t.watch(`${CMS}?watch=true&resourceVersion=1`);
    await expect(w.next(200)).rejects.toThrow(/no watch event/);
    w.close();
  });

  it("ends the stream after timeoutSeconds", async () => {
    t = await startRawHttpCluster();
    const w = await t.watch(`${CMS}?watch=true&timeoutSeconds=1`);
    await w.ended;
    expect(await w.next()).toBeUndefined();
  });

  it("applies label selectors, turning objects that leave the selection into DELETED and that enter it into ADDED", async () => {
    t = await startRawHttpCluster();
    const w = await t.watch(`${CMS}?watch=true&labelSelector=app%3Dweb&resourceVersion=1`);
    const created = await t.request("POST", CMS, { body: configMap("m", {}, { labels: { app: "db" } }) });
    const obj = created.body;
    obj.metadata.labels = { app: "web" };
    const entered = await t.request("PUT", `${CMS}/m`, { body: obj });
    entered.body.data = { v: "1" };
    const modified = await t.request("PUT", `${CMS}/m`, { body: entered.body });
    modified.body.metadata.labels = { app: "db" };
    const left = await t.request("PUT", `${CMS}/m`, { body: modified.body });
    const events = await take(w, 3);
    expect(events.map((e) => e.type)).toEqual(["ADDED", "MODIFIED", "DELETED"]);
    // The DELETED event shows the last state that matched, at the revision that made it leave.
    expect(events[2]!.object.metadata.labels).toEqual({ app: "web" });
    expect(events[2]!.object.metadata.resourceVersion).toBe(left.body.metadata.resourceVersion);
    w.close();
  });

  it("watches one object through the legacy /watch/ path and through a metadata.name field selector", async () => {
    t = await startRawHttpCluster();
    const w1 = await t.watch("/api/v1/watch/namespaces/default/configmaps/target?resourceVersion=1");
    const w2 = await t.watch(`${CMS}?watch=1&fieldSelector=metadata.name%3Dtarget&resourceVersion=1`);
    await t.request("POST", CMS, { body: configMap("other") });
    await t.request("POST", CMS, { body: configMap("target") });
    expect((await w1.next())?.object.metadata.name).toBe("target");
    expect((await w2.next())?.object.metadata.name).toBe("target");
    w1.close();
    w2.close();
  });

  it("delivers strictly increasing resourceVersions with no event lost under 20 concurrent writers", async () => {
    t = await startRawHttpCluster();
    const w = await t.watch(`${CMS}?watch=true&resourceVersion=1`);
    const writers = 20;
    const perWriter = 10;
    await Promise.all(
      Array.from({ length: writers }, async (_, i) => {
        for (let j = 0; j < perWriter; j++) {
          const res = await t!.request("POST", CMS, { body: configMap(`w${i}-${j}`) });
          expect(res.status).toBe(201);
        }
      }),
    );
    const events = await take(w, writers * perWriter);
    expect(events).toHaveLength(writers * perWriter);
    const rvs = events.map((e) => Number(e.object.metadata.resourceVersion));
    for (let i = 1; i < rvs.length; i++) expect(rvs[i]).toBeGreaterThan(rvs[i - 1]!);
    expect(new Set(events.map((e) => e.object.metadata.name)).size).toBe(writers * perWriter);
    w.close();
  });

  it("streams Table rows when kubectl asks for as=Table", async () => {
    t = await startRawHttpCluster();
    await t.request("POST", CMS, { body: configMap("tabled") });
    const w = await t.watch(`${CMS}?watch=true`, {
      accept: "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
    });
    const e = await w.next();
    expect(e?.type).toBe("ADDED");
    expect(e?.object.kind).toBe("Table");
    expect(e?.object.rows[0].cells[0]).toBe("tabled");
    w.close();
  });

  it("with sendInitialEvents ends the initial state with an initial-events-end bookmark", async () => {
    t = await startRawHttpCluster();
    await t.request("POST", CMS, { body: configMap("s1") });
    const w = await t.watch(
      `${CMS}?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&resourceVersion=`,
    );
    const events = await take(w, 2);
    expect(events[0]).toMatchObject({ type: "ADDED", object: { metadata: { name: "s1" } } });
    expect(events[1]).toMatchObject({
      type: "BOOKMARK",
      object: { metadata: { annotations: { "k8s.io/initial-events-end": "true" } } },
    });
    w.close();
  });
});

describe("watch resources", () => {
  it("releases the storage subscription when the client goes away or the watch times out", async () => {
    t = await startRawHttpCluster({ builtinPlugins: false });
    const storage = t.server.internals.storage as MemoryStorage;
    const base = storage.watcherCount();
    const a = await t.watch(`${CMS}?watch=true`);
    const b = await t.watch(`${CMS}?watch=true&timeoutSeconds=1`);
    await t.request("POST", CMS, { body: configMap("tick") });
    await a.next();
    await b.next();
    expect(storage.watcherCount()).toBe(base + 2);
    a.close();
    await b.ended;
    for (let i = 0; i < 50 && storage.watcherCount() > base; i++) await new Promise((r) => setTimeout(r, 20));
    expect(storage.watcherCount()).toBe(base);
  });
});

describe("dropping watches", () => {
  it("closeAllWatches ends every open watch; a client resumes from its last resourceVersion without a gap", async () => {
    t = await startRawHttpCluster({ builtinPlugins: false });
    const first = await t.request("POST", CMS, { body: configMap("before") });
    const w = await t.watch(`${CMS}?watch=true&resourceVersion=${first.body.metadata.resourceVersion}`);
    const seen = await t.request("POST", CMS, { body: configMap("seen") });
    expect((await w.next())?.object.metadata.name).toBe("seen");
    expect(t.server.internals.closeAllWatches()).toBe(1);
    await w.ended;
    await t.request("POST", CMS, { body: configMap("while-away") });
    const resumed = await t.watch(`${CMS}?watch=true&resourceVersion=${seen.body.metadata.resourceVersion}`);
    expect((await resumed.next())?.object.metadata.name).toBe("while-away");
    resumed.close();
  });
});

describe("watch from a version the server has not reached", () => {
  it("waits for it, then streams from it", async () => {
    t = await startRawHttpCluster({ builtinPlugins: false });
    const current = Number((await t.request("GET", CMS)).body.metadata.resourceVersion);
    const pending = t.watch(`${CMS}?watch=true&resourceVersion=${current + 1}`);
    await t.request("POST", CMS, { body: configMap("first") });
    await t.request("POST", CMS, { body: configMap("second") });
    const w = await pending;
    expect((await w.next())?.object.metadata.name).toBe("second");
    w.close();
  });

  it("answers an ERROR event with the 504 Too large resource version Status when it never comes", async () => {
    t = await startRawHttpCluster({ builtinPlugins: false });
    const w = await t.watch(`${CMS}?watch=true&resourceVersion=999999`);
    const e = await w.next(10_000);
    expect(e?.type).toBe("ERROR");
    expect(e?.object).toMatchObject({ code: 504, reason: "Timeout" });
    expect(e?.object.message).toMatch(/^Too large resource version: 999999, current: \d+$/);
    await w.ended;
  });
});
