import { getEventListeners } from "node:events";
import { waitUntil } from "capstan-dev/testing";
import { afterEach, describe, expect, it } from "vitest";
import {
  DeletedFinalStateUnknown,
  Informer,
  type InformerOptions,
} from "../../packages/capstan/src/runtime/informer.ts";
import type { RuntimeLogger } from "../../packages/capstan/src/runtime/log.ts";
import { apiError, FakeListerWatcher, type TestObject, trackRuntimeTimers } from "./support/fake-lister-watcher.ts";

const stops: AbortController[] = [];
const runs: Promise<void>[] = [];
afterEach(async () => {
  for (const s of stops.splice(0)) s.abort();
  await Promise.all(runs.splice(0));
});

interface Recorded {
  events: string[];
  deletes: (TestObject | DeletedFinalStateUnknown<TestObject>)[];
  updates: [TestObject, TestObject][];
}

function start(api: FakeListerWatcher, options: Partial<InformerOptions<TestObject>> = {}) {
  const informer = new Informer<TestObject>({
    listerWatcher: api,
    // Short backoff with no jitter keeps error tests quick and deterministic.
    backoff: { initial: 2, max: 20, random: () => 0 },
    ...options,
  });
  const rec: Recorded = { events: [], deletes: [], updates: [] };
  informer.addEventHandler({
    onAdd: (o) => rec.events.push(`add ${o.metadata?.name}`),
    onUpdate: (a, b) => {
      rec.updates.push([a, b]);
      rec.events.push(`update ${b.metadata?.name}`);
    },
    onDelete: (o) => {
      rec.deletes.push(o);
      const name = o instanceof DeletedFinalStateUnknown ? `${o.key} (final state unknown)` : o.metadata?.name;
      rec.events.push(`delete ${name}`);
    },
  });
  const stop = new AbortController();
  stops.push(stop);
  const run = informer.run(stop.signal);
  runs.push(run);
  return { informer, rec, stop, run };
}

describe("Informer", () => {
  it("lists every page, then watches from the list's resourceVersion with bookmarks and the selectors", async () => {
    const api = new FakeListerWatcher();
    for (const n of ["a", "b", "c", "d", "e"]) api.upsert(n);
    const listVersion = api.resourceVersion;
    const { informer, rec } = start(api, { pageSize: 2, labelSelector: "app=x", fieldSelector: "metadata.name!=z" });
    expect(await informer.waitForSync()).toBe(true);
    expect(api.listCalls.map((c) => [c.limit, c.continue])).toEqual([
      [2, undefined],
      [2, "2"],
      [2, "4"],
    ]);
    expect(api.listCalls[0]).toMatchObject({ labelSelector: "app=x", fieldSelector: "metadata.name!=z" });
    expect(rec.events).toEqual(["add a", "add b", "add c", "add d", "add e"]);
    // List items lack apiVersion/kind; the informer restores them from the list.
    expect(informer.store.get("default/a")).toMatchObject({ apiVersion: "v1", kind: "ConfigMap" });
    await waitUntil(() => api.watchCalls.length === 1, { what: "the watch", timeout: 2000 });
    expect(api.watchCalls[0]).toMatchObject({
      resourceVersion: listVersion,
      allowWatchBookmarks: true,
      labelSelector: "app=x",
      fieldSelector: "metadata.name!=z",
    });
    expect(informer.phase).toEqual({ phase: "watching", resourceVersion: listVersion });
  });

  it("applies watch events to the store before calling the handlers", async () => {
    const api = new FakeListerWatcher();
    api.upsert("a", { v: "1" });
    const seenInStore: (string | undefined)[] = [];
    const { informer, rec } = start(api);
    informer.addEventHandler({
      onUpdate: (_old, next) => seenInStore.push(informer.store.get("default/a")?.data?.v ?? next.data?.v),
    });
    await informer.waitForSync();
    await waitUntil(() => api.openWatches === 1);
    api.upsert("a", { v: "2" });
    api.upsert("b");
    api.remove("a");
    await waitUntil(() => rec.events.length === 4);
    expect(rec.events).toEqual(["add a", "update a", "add b", "delete a"]);
    expect(rec.updates[0]?.[0].data?.v).toBe("1");
    expect(rec.updates[0]?.[1].data?.v).toBe("2");
    expect(seenInStore).toEqual(["2"]);
    expect(informer.store.keys()).toEqual(["default/b"]);
    // Consumers get a view without write methods.
    expect("upsert" in informer.store).toBe(false);
    expect(informer.store).toBe(informer.store);
  });

  it("gives its handlers the transformed objects on add, update and delete, a relist's deletions included", async () => {
    const api = new FakeListerWatcher();
    for (const n of ["a", "b", "c"]) api.upsert(n, { v: "1" });
    const transform = (o: TestObject): TestObject => {
      const { name, namespace, resourceVersion } = o.metadata ?? {};
      return { metadata: { name, namespace, resourceVersion } } as TestObject;
    };
    const { informer, rec } = start(api, { pageSize: 2, store: { transform } });
    const added: TestObject[] = [];
    informer.addEventHandler({ onAdd: (o) => added.push(o) });
    await informer.waitForSync();
    await waitUntil(() => api.openWatches === 1);
    api.upsert("a", { v: "2" });
    api.remove("b");
    await waitUntil(() => rec.events.length === 5, { what: "the update and the deletion", timeout: 2000 });
    // A relist after a 410 that no longer finds c: deleted, final state unknown.
    api.muted = true;
    api.remove("c");
    api.compact();
    api.expireWatches();
    await waitUntil(() => rec.events.length === 6, { what: "the relist's deletion", timeout: 2000 });
    expect(rec.events).toEqual([
      "add a",
      "add b",
      "add c",
      "update a",
      "delete b",
      "delete default/c (final state unknown)",
    ]);
    const seen = [
      ...added,
      ...rec.updates.flat(),
      ...rec.deletes.map((d) => (d instanceof DeletedFinalStateUnknown ? d.obj : d)),
      ...informer.store.list(),
    ];
    expect(seen).toHaveLength(8);
    for (const o of seen) {
      expect(o).not.toHaveProperty("data");
      expect(Object.keys(o.metadata ?? {}).sort()).toEqual(["name", "namespace", "resourceVersion"]);
    }
    // The update still compares resourceVersions: the transform kept them.
    expect(rec.updates[0]?.map((o) => o.metadata?.resourceVersion)).toEqual([
      expect.any(String),
      api.current().get("default/a"),
    ]);
  });

  it("advances the resume version on a bookmark and re-watches from it", async () => {
    const api = new FakeListerWatcher();
    api.upsert("a");
    const { informer } = start(api);
    await informer.waitForSync();
    await waitUntil(() => api.openWatches === 1);
    api.bookmark();
    const bookmarkVersion = api.resourceVersion;
    await waitUntil(() => informer.lastSyncResourceVersion === bookmarkVersion, {
      what: "bookmark version",
      timeout: 2000,
    });
    api.closeWatches();
    await waitUntil(() => api.watchCalls.length === 2, { what: "the re-watch", timeout: 2000 });
    expect(api.watchCalls[1]?.resourceVersion).toBe(bookmarkVersion);
    expect(api.listCalls).toHaveLength(1);
  });

  it("re-watches from the last seen version, without re-listing, when the server closes the watch", async () => {
    const api = new FakeListerWatcher();
    const { informer, rec } = start(api);
    await informer.waitForSync();
    await waitUntil(() => api.openWatches === 1);
    api.upsert("a");
    await waitUntil(() => rec.events.length === 1);
    const seen = api.resourceVersion;
    api.closeWatches();
    await waitUntil(() => api.watchCalls.length === 2 && api.openWatches === 1, {
      what: "the re-watch",
      timeout: 2000,
    });
    expect(api.watchCalls[1]?.resourceVersion).toBe(seen);
    expect(api.listCalls).toHaveLength(1);
    api.upsert("b");
    await waitUntil(() => rec.events.length === 2);
    expect(rec.events).toEqual(["add a", "add b"]);
  });

  it("re-lists after a 410 ERROR event and emits the deletions and updates it missed", async () => {
    const api = new FakeListerWatcher();
    for (const n of ["keep", "change", "gone"]) api.upsert(n, { v: "1" });
    const { informer, rec } = start(api);
    await informer.waitForSync();
    await waitUntil(() => api.openWatches === 1);
    // The stream stalls while things change, then the history is compacted away.
    api.muted = true;
    api.upsert("change", { v: "2" });
    api.remove("gone");
    api.upsert("new");
    api.compact();
    api.expireWatches();
    await waitUntil(() => api.listCalls.length === 2 && rec.events.length === 6, { what: "the relist", timeout: 2000 });
    expect(rec.events.slice(3).sort()).toEqual([
      "add new",
      "delete default/gone (final state unknown)",
      "update change",
    ]);
    const tombstone = rec.deletes[0] as DeletedFinalStateUnknown<TestObject>;
    expect(tombstone).toBeInstanceOf(DeletedFinalStateUnknown);
    expect(tombstone.obj.metadata?.name).toBe("gone");
    expect(rec.updates[0]?.[1].data?.v).toBe("2");
    expect(informer.store.keys().sort()).toEqual(["default/change", "default/keep", "default/new"]);
    await waitUntil(() => api.watchCalls.length === 2);
    expect(api.watchCalls[1]?.resourceVersion).toBe(api.resourceVersion);
  });

  it("re-lists at once after a 410 on a watch that has been running, and backs off after a 410 right after a list", async () => {
    let now = 1_000_000;
    const clock = { now: () => now };
    const api = new FakeListerWatcher();
    api.upsert("a");
    // Any backoff would stall this test: an hour.
    const { informer } = start(api, { clock, backoff: { initial: "1h", max: "1h", random: () => 0 } });
    await informer.waitForSync();
    await waitUntil(() => api.openWatches === 1);
    now += 60_000; // the watch has been running for a minute
    api.compact();
    api.expireWatches();
    await waitUntil(() => api.listCalls.length === 2 && api.openWatches === 1, {
      what: "the immediate relist",
      timeout: 2000,
    });
    // Right after that list, another 410: this one waits for the backoff.
    api.compact();
    api.expireWatches();
    await waitUntil(() => informer.phase.phase === "backingOff", { what: "the backoff", timeout: 2000 });
    expect(informer.phase).toMatchObject({ phase: "backingOff", next: "list", delayMs: 3_600_000 });
    expect(api.listCalls).toHaveLength(2);
  });

  it("re-lists when the watch itself is refused with 410 because the version expired while disconnected", async () => {
    const api = new FakeListerWatcher();
    api.upsert("a");
    const { informer, rec } = start(api);
    await informer.waitForSync();
    await waitUntil(() => api.openWatches === 1);
    api.muted = true;
    api.remove("a");
    api.compact();
    api.closeWatches();
    await waitUntil(() => api.listCalls.length === 2 && rec.events.length === 2, { what: "the relist", timeout: 2000 });
    expect(rec.events).toEqual(["add a", "delete default/a (final state unknown)"]);
    expect(informer.store.size).toBe(0);
  });

  it("falls back to one unpaginated list when a continue token expires", async () => {
    const api = new FakeListerWatcher();
    for (const n of ["a", "b", "c"]) api.upsert(n);
    const informer = new Informer<TestObject>({
      listerWatcher: {
        list: async (opts) => (opts.continue ? Promise.reject(apiError(410, "continue expired")) : api.list(opts)),
        watch: (opts) => api.watch(opts),
      },
      pageSize: 2,
    });
    const stop = new AbortController();
    stops.push(stop);
    runs.push(informer.run(stop.signal));
    await informer.waitForSync();
    expect(informer.store.size).toBe(3);
    expect(api.listCalls.map((c) => c.limit)).toEqual([2, undefined]);
  });

  it("abandons a watch that outlives its timeoutSeconds (a dead connection) and re-watches from the last version", async () => {
    const api = new FakeListerWatcher();
    api.upsert("a");
    // The fake never ends a watch by itself, like a half-open connection.
    const { informer } = start(api, { watchTimeoutSeconds: 1, watchGracePeriod: 20 });
    await informer.waitForSync();
    await waitUntil(() => api.watchCalls.length === 2, { what: "the re-watch after the deadline", timeout: 5000 });
    expect(api.watchCalls[0]?.timeoutSeconds).toBe(1);
    expect(api.watchCalls[1]?.resourceVersion).toBe(api.watchCalls[0]?.resourceVersion);
    expect(api.listCalls).toHaveLength(1);
    await waitUntil(() => api.openWatches === 1, { what: "one open watch", timeout: 2000 });
  });

  it("backs off exponentially on repeated errors and starts over after progress", async () => {
    const api = new FakeListerWatcher();
    api.upsert("a");
    api.listFailures.push(apiError(500), apiError(503));
    api.watchFailures.push(apiError(500));
    const delays: number[] = [];
    const logger: RuntimeLogger = {
      debug() {},
      info() {},
      error() {},
      warn: (fields) => {
        const d = (fields as { delayMs?: number }).delayMs;
        if (d !== undefined) delays.push(d);
      },
    };
    const { informer } = start(api, { logger, backoff: { initial: 2, max: 100, random: () => 0 } });
    await informer.waitForSync();
    await waitUntil(() => api.openWatches === 1, { what: "the watch after the failed one", timeout: 2000 });
    expect(api.listCalls).toHaveLength(3);
    expect(api.watchCalls).toHaveLength(2);
    // Two failed lists double the delay; the successful list resets it for the failed watch.
    expect(delays).toEqual([2, 4, 2]);
  });

  it("starts the backoff over after a watch that delivered events breaks", async () => {
    const api = new FakeListerWatcher();
    api.upsert("a");
    let watches = 0;
    const delays: number[] = [];
    const logger: RuntimeLogger = {
      debug() {},
      info() {},
      error() {},
      warn: (fields) => {
        const d = (fields as { delayMs?: number }).delayMs;
        if (d !== undefined) delays.push(d);
      },
    };
    const informer = new Informer<TestObject>({
      listerWatcher: {
        list: (o) => api.list(o),
        watch: async (o) => {
          watches++;
          if (watches <= 2) throw apiError(500); // two failed starts: 2 ms, then 4 ms
          const inner = await api.watch(o);
          return (async function* () {
            for await (const event of inner) {
              yield event;
              if (watches === 3) throw apiError(500); // breaks after one event
            }
          })();
        },
      },
      backoff: { initial: 2, max: 100, random: () => 0 },
      logger,
    });
    const stop = new AbortController();
    stops.push(stop);
    runs.push(informer.run(stop.signal));
    await waitUntil(() => watches === 3, { what: "the third watch", timeout: 2000 });
    api.upsert("b");
    await waitUntil(() => watches === 4, { what: "the watch after the break", timeout: 2000 });
    expect(delays).toEqual([2, 4, 2]);
  });

  it("pauses about a second, without growing, before re-opening watches the server closes at once", async () => {
    const api = new FakeListerWatcher();
    let watches = 0;
    const informer = new Informer<TestObject>({
      listerWatcher: {
        list: (o) => api.list(o),
        watch: async () => {
          watches++;
          return (async function* () {})();
        },
      },
      backoff: { initial: 5, max: 5, random: () => 0 },
      random: () => 0,
    });
    const stop = new AbortController();
    stops.push(stop);
    runs.push(informer.run(stop.signal));
    await informer.waitForSync();
    await waitUntil(() => informer.phase.phase === "backingOff", { what: "the pause", timeout: 2000 });
    expect(informer.phase).toMatchObject({ phase: "backingOff", next: "watch", delayMs: 1000 });
    expect(watches).toBe(1);
    await waitUntil(() => watches === 2 && informer.phase.phase === "backingOff", {
      what: "the second pause",
      timeout: 3000,
    });
    // Not an exponential backoff: the second pause is as short as the first.
    expect(informer.phase).toMatchObject({ delayMs: 1000 });
  });

  it("re-delivers every cached object as an update on each resync period", async () => {
    const api = new FakeListerWatcher();
    api.upsert("a");
    api.upsert("b");
    const { informer, rec } = start(api, { resyncPeriod: 10 });
    await informer.waitForSync();
    await waitUntil(() => rec.updates.length >= 4, { what: "two resyncs", timeout: 2000 });
    for (const [oldObj, newObj] of rec.updates) expect(oldObj).toBe(newObj);
    expect(new Set(rec.updates.map(([, o]) => o.metadata?.name))).toEqual(new Set(["a", "b"]));
  });

  it("replays the cache as adds to a handler registered after sync", async () => {
    const api = new FakeListerWatcher();
    api.upsert("a");
    api.upsert("b");
    const { informer } = start(api);
    await informer.waitForSync();
    const late: string[] = [];
    const remove = informer.addEventHandler({ onAdd: (o) => late.push(o.metadata!.name!) });
    expect(late.sort()).toEqual(["a", "b"]);
    remove();
    await waitUntil(() => api.openWatches === 1);
    api.upsert("c");
    await waitUntil(() => informer.store.size === 3);
    expect(late).toHaveLength(2);
  });

  it("keeps going when a handler throws", async () => {
    const api = new FakeListerWatcher();
    const { informer, rec } = start(api);
    informer.addEventHandler({
      onAdd: () => {
        throw new Error("handler bug");
      },
    });
    await informer.waitForSync();
    await waitUntil(() => api.openWatches === 1);
    api.upsert("a");
    api.upsert("b");
    await waitUntil(() => rec.events.length === 2);
    expect(informer.store.size).toBe(2);
  });

  it("waitForSync resolves false when its signal aborts before the first list succeeds", async () => {
    const api = new FakeListerWatcher();
    api.listFailures.push(apiError(500), apiError(500), apiError(500));
    const { informer } = start(api, { backoff: { initial: 1000, random: () => 0 } });
    const ctl = new AbortController();
    const waiting = informer.waitForSync(ctl.signal);
    ctl.abort();
    expect(await waiting).toBe(false);
    expect(informer.hasSynced()).toBe(false);
  });

  it("stops on abort with no timer left behind, from watching, backing off or resyncing", async () => {
    const timers = trackRuntimeTimers();
    const api = new FakeListerWatcher();
    api.upsert("a");
    const watching = start(api, { resyncPeriod: "1h" });
    await watching.informer.waitForSync();
    await waitUntil(() => api.openWatches === 1);

    const failing = new FakeListerWatcher();
    failing.listFailures.push(apiError(500));
    const backingOff = start(failing, { backoff: { initial: "1h", random: () => 0 } });
    await waitUntil(() => backingOff.informer.phase.phase === "backingOff");
    expect(await timers.pending()).toBeGreaterThanOrEqual(2);

    watching.stop.abort();
    backingOff.stop.abort();
    await Promise.all([watching.run, backingOff.run]);
    expect(watching.informer.phase).toEqual({ phase: "stopped" });
    expect(backingOff.informer.phase).toEqual({ phase: "stopped" });
    expect(api.openWatches).toBe(0);
    expect(await timers.pending()).toBe(0);
    timers.stop();
  });

  it("tells whether its watch is open and when it last had contact; a failed attempt is no contact", async () => {
    const api = new FakeListerWatcher();
    const before = Date.now();
    const { informer } = start(api, { backoff: { initial: "1m", random: () => 0 } });
    await waitUntil(() => informer.connection.watchOpen, { what: "the watch open" });
    const opened = informer.connection.lastContactAt;
    expect(opened).toBeGreaterThanOrEqual(before);
    api.upsert("a");
    await waitUntil(() => informer.store.list().length === 1);
    expect(informer.connection.lastContactAt).toBeGreaterThanOrEqual(opened);

    api.watchFailures.push(apiError(503, "unavailable"));
    api.closeWatches(); // closed by the server: contact until now; the re-watch is refused
    await waitUntil(() => informer.phase.phase === "backingOff", { what: "backing off" });
    const closedAt = informer.connection.lastContactAt;
    expect(informer.connection.watchOpen).toBe(false);
    // A minute of backoff ahead; reconnect() cuts it short, and the re-watch is contact again.
    informer.reconnect("the server answers again");
    await waitUntil(() => informer.connection.watchOpen, { what: "re-watched at once", timeout: 2000 });
    expect(informer.connection.lastContactAt).toBeGreaterThanOrEqual(closedAt);
    expect(api.listCalls).toHaveLength(1);
  });

  it("reconnect() abandons an open watch and re-watches from the last seen version without listing", async () => {
    const api = new FakeListerWatcher();
    const { informer } = start(api);
    await waitUntil(() => informer.connection.watchOpen);
    api.upsert("a");
    await waitUntil(() => informer.store.list().length === 1);
    const seen = api.resourceVersion;
    api.muted = true; // a silent stream, as over a frozen server's connection
    informer.reconnect("the API server does not answer");
    await waitUntil(() => api.watchCalls.length === 2 && informer.connection.watchOpen, { what: "the re-watch" });
    expect(api.watchCalls[1]?.resourceVersion).toBe(seen);
    expect(api.listCalls).toHaveLength(1);
  });

  it("keeps the listeners on its run signal bounded across many re-watches", async () => {
    const api = new FakeListerWatcher();
    const { informer, stop } = start(api);
    await waitUntil(() => informer.connection.watchOpen);
    const before = getEventListeners(stop.signal, "abort").length;
    for (let i = 0; i < 10; i++) {
      api.upsert(`o${i}`); // an event first, so the close is not a "very short watch" with a pause
      await waitUntil(() => informer.store.list().length === i + 1);
      api.closeWatches();
      await waitUntil(() => api.watchCalls.length === i + 2 && informer.connection.watchOpen);
    }
    expect(getEventListeners(stop.signal, "abort").length).toBeLessThanOrEqual(before);
  });

  it("refuses to run twice at once", async () => {
    const api = new FakeListerWatcher();
    const { informer } = start(api);
    await expect(informer.run(new AbortController().signal)).rejects.toThrow(/already running/);
  });
});
