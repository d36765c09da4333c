/**
 * The dashboard's list+watch loop: it resumes watches from the last seen resourceVersion, relists
 * after a 410 and tells the changes the watch missed, and reports list errors until it recovers.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { ApiError } from "../../packages/capstan/src/client/errors.ts";
import type {
  KubeObject,
  ListerWatcher,
  ListOptions,
  ObjectList,
  WatchEvent,
  WatchOptions,
} from "../../packages/capstan/src/client/types.ts";
import { ConfigMap, Namespace } from "../../packages/capstan/src/resources/builtins.ts";
import {
  type FeedChange,
  ObjectFeed,
  WATCH_GRACE_MS,
  WATCH_TIMEOUT_SECONDS,
} from "../../packages/capstan-dev/src/dashboard/object-feed.ts";
import { startTestCluster, type TestCluster } from "../../packages/capstan-dev/src/testing/index.ts";

const cm = (name: string, rv: string): KubeObject => ({ metadata: { namespace: "ns", name, resourceVersion: rv } });

/** A scripted ListerWatcher: each list and watch call takes the next answer; watches record where they start. */
function scripted(
  lists: (ObjectList | Error)[],
  watches: ((WatchEvent | Error)[] | "hang")[],
): ListerWatcher & { watchedFrom: (string | undefined)[]; lists: number } {
  const watchedFrom: (string | undefined)[] = [];
  const lw = {
    watchedFrom,
    lists: 0,
    async list(_: ListOptions) {
      lw.lists++;
      const next = lists.shift();
      if (next === undefined) throw new Error("no more lists scripted");
      if (next instanceof Error) throw next;
      return next;
    },
    async watch(options: WatchOptions) {
      watchedFrom.push(options.resourceVersion);
      const script = watches.shift() ?? "hang";
      return (async function* () {
        if (script === "hang") {
          await new Promise((resolve) => options.signal?.addEventListener("abort", resolve, { once: true }));
          return;
        }
        for (const step of script) {
          if (step instanceof Error) throw step;
          yield step;
        }
      })();
    },
  };
  return lw;
}

const gone = () =>
  new ApiError({
    kind: "Status",
    status: "Failure",
    code: 410,
    reason: "Expired",
    message: "too old resource version",
  });

/** Runs `feed` until `done(changes)` holds, then stops it; the changes seen, as "type name". */
async function runUntil(feed: ObjectFeed, done: (changes: string[]) => boolean): Promise<string[]> {
  const changes: string[] = [];
  const abort = new AbortController();
  feed.subscribe((c: FeedChange<KubeObject>) => {
    changes.push(c.type === "synced" || c.type === "failed" ? c.type : `${c.type} ${c.object.metadata?.name}`);
    if (done(changes)) abort.abort();
  });
  const timer = setTimeout(() => abort.abort(), 10_000);
  await feed.run(abort.signal);
  clearTimeout(timer);
  return changes;
}

describe("object feed (scripted server)", () => {
  it("re-watches from the last seen resourceVersion when a watch ends", async () => {
    const lw = scripted(
      [{ metadata: { resourceVersion: "10" }, items: [cm("a", "5")] }],
      [
        [{ type: "MODIFIED", object: cm("a", "11") }],
        [{ type: "BOOKMARK", object: { metadata: { resourceVersion: "15" } } }],
        [{ type: "ADDED", object: cm("b", "16") }],
      ],
    );
    const feed = new ObjectFeed(lw);
    const changes = await runUntil(feed, (c) => c.includes("added b"));
    expect(changes).toEqual(["added a", "synced", "modified a", "added b"]);
    expect(lw.watchedFrom).toEqual(["10", "11", "15"]);
    expect(lw.lists).toBe(1);
  });

  it("re-watches from the same version when a watch outlives its timeout by the grace period (a dead connection)", async () => {
    vi.useFakeTimers();
    try {
      const lw = scripted([{ metadata: { resourceVersion: "10" }, items: [] }], ["hang", "hang"]);
      const feed = new ObjectFeed(lw);
      const abort = new AbortController();
      const running = feed.run(abort.signal);
      await vi.advanceTimersByTimeAsync(0);
      expect(lw.watchedFrom).toEqual(["10"]);
      await vi.advanceTimersByTimeAsync(WATCH_TIMEOUT_SECONDS * 1000 + WATCH_GRACE_MS - 1);
      expect(lw.watchedFrom).toEqual(["10"]);
      await vi.advanceTimersByTimeAsync(1);
      expect(lw.watchedFrom).toEqual(["10", "10"]);
      expect(feed.status).toEqual({ synced: true });
      abort.abort();
      await running;
      expect(feed.phase).toEqual({ phase: "stopped" });
    } finally {
      vi.useRealTimers();
    }
  });

  it("re-lists after a 410 and tells the additions, changes and deletions the watch missed", async () => {
    const lw = scripted(
      [
        { metadata: { resourceVersion: "10" }, items: [cm("a", "5"), cm("b", "6"), cm("c", "7")] },
        { metadata: { resourceVersion: "20" }, items: [cm("a", "5"), cm("b", "18"), cm("d", "19")] },
      ],
      [[gone()]],
    );
    const feed = new ObjectFeed(lw);
    const changes = await runUntil(feed, (c) => c.filter((x) => x === "synced").length === 2);
    expect(changes).toEqual([
      "added a",
      "added b",
      "added c",
      "synced",
      "deleted c",
      "modified b",
      "added d",
      "synced",
    ]);
    expect(
      feed
        .objects()
        .map((o) => o.metadata?.name)
        .sort(),
    ).toEqual(["a", "b", "d"]);
    expect(lw.watchedFrom).toEqual(["10"]);
  });

  it("reports a failed list (code, reason, message) until a list succeeds", async () => {
    const forbidden = new ApiError({
      kind: "Status",
      status: "Failure",
      code: 403,
      reason: "Forbidden",
      message: "configmaps is forbidden",
    });
    const lw = scripted([forbidden, { metadata: { resourceVersion: "1" }, items: [] }], []);
    const feed = new ObjectFeed(lw);
    let failedStatus: unknown;
    feed.subscribe((c) => {
      if (c.type === "failed") failedStatus = feed.status;
    });
    const changes = await runUntil(feed, (c) => c.includes("synced"));
    expect(changes).toEqual(["failed", "synced"]);
    expect(failedStatus).toEqual({
      synced: false,
      error: { code: 403, reason: "Forbidden", message: "configmaps is forbidden" },
    });
    expect(feed.status).toEqual({ synced: true });
  });
});

describe("object feed (embedded API server)", () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await startTestCluster();
    await cluster.client.resource(Namespace).create(Namespace.make({ metadata: { name: "feed" } }));
  });
  afterEach(() => cluster.faults.reset());
  afterAll(() => cluster?.stop());

  it("sees a deletion made while its watch was down and the history compacted, through the relist", async () => {
    const api = cluster.client.resource(ConfigMap, "feed");
    await api.create(ConfigMap.make({ metadata: { name: "doomed", namespace: "feed" } }));
    let lists = 0;
    const source = cluster.client.resource(ConfigMap, "feed");
    const counted: ListerWatcher = {
      list: (o) => {
        lists++;
        return source.list(o);
      },
      watch: (o) => source.watch(o),
    };
    const feed = new ObjectFeed(counted);
    const abort = new AbortController();
    const changes: string[] = [];
    const synced = feed.settled();
    feed.subscribe((c) => {
      if (c.type === "added" || c.type === "deleted") changes.push(`${c.type} ${c.object.metadata?.name}`);
      if (c.type === "added" && c.object.metadata?.name === "born") abort.abort();
    });
    const running = feed.run(abort.signal);
    await synced;
    // Every watch fails from now on; the open one is cut: the feed is blind and backing off.
    cluster.faults.failFraction(1, { code: 500, verbs: ["watch"] });
    cluster.faults.dropWatches();
    await api.delete("doomed");
    await api.create(ConfigMap.make({ metadata: { name: "born", namespace: "feed" } }));
    cluster.faults.compact(); // the feed's resourceVersion is now too old: its next watch gets 410
    cluster.faults.reset();
    const timer = setTimeout(() => abort.abort(), 15_000);
    await running;
    clearTimeout(timer);
    expect(changes).toEqual(["added doomed", "deleted doomed", "added born"]);
    expect(lists).toBe(2);
  });
});
