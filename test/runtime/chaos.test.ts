/**
 * Informer + cache + work queue under a hostile API: 10% of lists and watches fail with 500 or 429,
 * watches are dropped after a few events, history is compacted so resumed watches get 410, and
 * some watches end with a 410 ERROR event — while objects are created, updated and deleted. The
 * cache must converge to the server's state, every object's last version must be processed, and
 * no key may ever be processed by two workers at once.
 */

import { waitUntil } from "capstan-dev/testing";
import { describe, expect, it } from "vitest";
import type { ListerWatcher, WatchEvent } from "../../packages/capstan/src/client/types.ts";
import { objectKey } from "../../packages/capstan/src/runtime/cache.ts";
import { Informer } from "../../packages/capstan/src/runtime/informer.ts";
import { exponentialFailureRateLimiter } from "../../packages/capstan/src/runtime/rate-limiter.ts";
import { WorkQueue } from "../../packages/capstan/src/runtime/workqueue.ts";
import { apiError, FakeListerWatcher, type TestObject } from "./support/fake-lister-watcher.ts";

/** A small seeded PRNG (mulberry32), so a failure can be replayed (CHAOS_SEED=n picks another run). */
function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function chaotic(inner: FakeListerWatcher, random: () => number): ListerWatcher<TestObject> {
  const failure = () => (random() < 0.5 ? apiError(500, "injected") : apiError(429, "injected"));
  return {
    async list(options) {
      if (random() < 0.1) throw failure();
      return inner.list(options);
    },
    async watch(options) {
      if (random() < 0.1) throw failure();
      const stream = await inner.watch(options);
      const budget = 1 + Math.floor(random() * 8);
      const endWithGone = random() < 0.2;
      return {
        async *[Symbol.asyncIterator](): AsyncIterator<WatchEvent<TestObject>> {
          let n = 0;
          for await (const event of stream) {
            yield event;
            if (++n >= budget) {
              if (endWithGone) throw apiError(410, "injected expiry");
              return; // dropped connection
            }
          }
        },
      };
    },
  };
}

describe("informer and work queue under injected faults", () => {
  it("converge to the server's state and process every object's last version, never one key twice at once", async () => {
    const random = prng(Number(process.env.CHAOS_SEED ?? 42));
    const api = new FakeListerWatcher();
    const informer = new Informer<TestObject>({
      listerWatcher: chaotic(api, random),
      pageSize: 7,
      backoff: { initial: 1, max: 5, random },
    });
    const queue = new WorkQueue<string>({ rateLimiter: exponentialFailureRateLimiter({ baseDelay: 1, maxDelay: 10 }) });
    const enqueue = (o: TestObject | { key: string }) => queue.add("key" in o ? o.key : objectKey(o));
    informer.addEventHandler({
      onAdd: enqueue,
      onUpdate: (_old, o) => enqueue(o),
      onDelete: (o) => enqueue(o as TestObject | { key: string }),
    });

    const processed = new Map<string, string>(); // key -> last resourceVersion seen ("" once gone)
    const busy = new Set<string>();
    let overlaps = 0;
    const stop = new AbortController();
    const worker = async () => {
      for (let key = await queue.get(stop.signal); key !== undefined; key = await queue.get(stop.signal)) {
        if (busy.has(key)) overlaps++;
        busy.add(key);
        try {
          await new Promise((r) => setTimeout(r, random() * 2));
          // A reconcile that sometimes fails and is retried with backoff.
          if (random() < 0.1) {
            queue.addRateLimited(key);
            continue;
          }
          queue.forget(key);
          processed.set(key, informer.store.get(key)?.metadata?.resourceVersion ?? "");
        } finally {
          busy.delete(key);
          queue.done(key);
        }
      }
    };
    const running = informer.run(stop.signal);
    const workers = [worker(), worker(), worker(), worker()];

    const names = Array.from({ length: 30 }, (_, i) => `obj-${i}`);
    for (let step = 0; step < 400; step++) {
      const name = names[Math.floor(random() * names.length)] as string;
      if (api.current().has(`default/${name}`) && random() < 0.3) api.remove(name);
      else api.upsert(name, { step: String(step) });
      if (step % 50 === 49) api.compact();
      if (step % 10 === 0) await new Promise((r) => setTimeout(r, 1));
    }

    const expected = api.current();
    const cacheMatches = () => {
      const keys = informer.store.keys();
      return (
        keys.length === expected.size &&
        keys.every((k) => informer.store.get(k)?.metadata?.resourceVersion === expected.get(k))
      );
    };
    await waitUntil(cacheMatches, { what: "the cache to converge", timeout: 20_000 });
    const allProcessed = () =>
      names.every((n) => {
        const key = `default/${n}`;
        return !processed.has(key) ? !expected.has(key) : processed.get(key) === (expected.get(key) ?? "");
      });
    await waitUntil(allProcessed, { what: "every object's last version to be processed", timeout: 20_000 });

    stop.abort();
    queue.shutDown();
    await Promise.all([running, ...workers]);
    expect(overlaps).toBe(0);
    expect(api.listCalls.length).toBeGreaterThan(1); // the faults did force relists
  });
});
