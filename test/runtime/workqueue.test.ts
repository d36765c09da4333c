import { ManualClock } from "capstan-dev/testing";
import { afterEach, describe, expect, it } from "vitest";
import { exponentialFailureRateLimiter } from "../../packages/capstan/src/runtime/rate-limiter.ts";
import { WorkQueue } from "../../packages/capstan/src/runtime/workqueue.ts";
import { trackRuntimeTimers } from "./support/fake-lister-watcher.ts";

const queues: WorkQueue<string>[] = [];
function newQueue(...args: ConstructorParameters<typeof WorkQueue<string>>): WorkQueue<string> {
  const q = new WorkQueue<string>(...args);
  queues.push(q);
  return q;
}
afterEach(() => {
  for (const q of queues.splice(0)) q.shutDown();
});

const aborted = () => AbortSignal.abort();

describe("WorkQueue", () => {
  it("hands out keys in FIFO order and coalesces adds of a key that is still waiting", async () => {
    const q = newQueue();
    q.add("a");
    q.add("b");
    q.add("a");
    expect(q.len()).toBe(2);
    expect(await q.get()).toBe("a");
    expect(await q.get()).toBe("b");
    expect(await q.get(aborted())).toBeUndefined();
  });

  it("never hands a key to two workers at once, even when it is re-added while processing", async () => {
    const q = newQueue();
    const running = new Set<string>();
    let overlaps = 0;
    let processed = 0;
    const stop = new AbortController();
    const worker = async () => {
      for (;;) {
        const key = await q.get(stop.signal);
        if (key === undefined) return;
        if (running.has(key)) overlaps++;
        running.add(key);
        // Re-add the same key while it is being processed, as a watch event would.
        q.add(key);
        await new Promise((r) => setTimeout(r, 1));
        running.delete(key);
        processed++;
        q.done(key);
        if (processed >= 40) stop.abort();
      }
    };
    q.add("x");
    q.add("y");
    await Promise.all([worker(), worker(), worker(), worker()]);
    expect(processed).toBeGreaterThanOrEqual(40);
    expect(overlaps).toBe(0);
  });

  it("runs a key re-added while processing exactly once more after done", async () => {
    const q = newQueue();
    q.add("k");
    expect(await q.get()).toBe("k");
    q.add("k");
    q.add("k");
    expect(q.len()).toBe(0);
    expect(await q.get(aborted())).toBeUndefined();
    q.done("k");
    expect(q.len()).toBe(1);
    expect(await q.get()).toBe("k");
    q.done("k");
    expect(q.len()).toBe(0);
  });

  it("wakes a waiting get() when a key is added", async () => {
    const q = newQueue();
    const pending = q.get();
    q.add("late");
    expect(await pending).toBe("late");
  });

  it("resolves a waiting get() with undefined when its signal aborts, without shutting the queue down", async () => {
    const q = newQueue();
    const ctl = new AbortController();
    const pending = q.get(ctl.signal);
    ctl.abort();
    expect(await pending).toBeUndefined();
    q.add("still-works");
    expect(await q.get()).toBe("still-works");
  });

  it("releases delayed keys in the order they become ready", async () => {
    const q = newQueue();
    q.addAfter("c", 60);
    q.addAfter("a", 10);
    q.addAfter("b", 30);
    expect(q.len()).toBe(0);
    expect(await q.get()).toBe("a");
    expect(await q.get()).toBe("b");
    expect(await q.get()).toBe("c");
  });

  it("keeps the earlier time when a key is delayed twice", async () => {
    const q = newQueue();
    q.addAfter("k", "1h");
    q.addAfter("k", 5);
    expect(await q.get()).toBe("k");
    q.done("k");
    // The 1h entry was replaced, not kept alongside: shutting down must leave no timer either way,
    // and nothing else is pending.
    expect(q.len()).toBe(0);
  });

  it("measures addAfter delays and rate-limited retries on its clock: a key is ready when the clock reaches its time", async () => {
    const clock = new ManualClock("2030-01-01T00:00:00Z");
    const q = newQueue({ clock, rateLimiter: exponentialFailureRateLimiter({ baseDelay: "1m", maxDelay: "1h" }) });
    q.addAfter("poll", "1h");
    q.addRateLimited("failed");
    await clock.advance("59s");
    expect(q.len()).toBe(0);
    await clock.advance("1s");
    expect(await q.get()).toBe("failed");
    await clock.advance("58m");
    expect(q.len()).toBe(0);
    expect(q.delayedCount()).toBe(1);
    await clock.advance("1m");
    expect(await q.get()).toBe("poll");
    expect(clock.pendingTimers).toBe(0);
  });

  it("adds at once when the delay is zero", async () => {
    const q = newQueue();
    q.addAfter("now", 0);
    expect(q.len()).toBe(1);
  });

  it("grows the rate-limited delay per failure and starts over after forget", () => {
    const delays: number[] = [];
    const limiter = exponentialFailureRateLimiter<string>({ baseDelay: 5, maxDelay: "1s" });
    const q = newQueue({
      rateLimiter: {
        when: (k) => {
          const d = limiter.when(k);
          delays.push(d);
          return d;
        },
        forget: (k) => limiter.forget(k),
        numRequeues: (k) => limiter.numRequeues(k),
      },
    });
    q.addRateLimited("k");
    q.addRateLimited("k");
    q.addRateLimited("k");
    expect(q.numRequeues("k")).toBe(3);
    q.forget("k");
    expect(q.numRequeues("k")).toBe(0);
    q.addRateLimited("k");
    expect(delays).toEqual([5, 10, 20, 5]);
  });

  it("after shutDown ignores adds, drops delayed keys, still hands out queued keys, then returns undefined", async () => {
    const timers = trackRuntimeTimers();
    const q = newQueue();
    q.add("queued");
    q.addAfter("delayed", "1h");
    expect(await timers.pending()).toBe(1);
    q.shutDown();
    expect(await timers.pending()).toBe(0);
    timers.stop();
    q.add("ignored");
    expect(await q.get()).toBe("queued");
    expect(await q.get()).toBeUndefined();
    expect(q.shuttingDown).toBe(true);
  });

  it("wakes waiting workers with undefined on shutDown", async () => {
    const q = newQueue();
    const pending = [q.get(), q.get()];
    q.shutDown();
    expect(await Promise.all(pending)).toEqual([undefined, undefined]);
  });

  it("shutDownWithDrain waits until every key handed out is done", async () => {
    const q = newQueue();
    q.add("a");
    q.add("b");
    expect(await q.get()).toBe("a");
    expect(await q.get()).toBe("b");
    let drained = false;
    const drain = q.shutDownWithDrain().then(() => {
      drained = true;
    });
    q.done("a");
    await new Promise((r) => setTimeout(r, 5));
    expect(drained).toBe(false);
    q.done("b");
    await drain;
    expect(drained).toBe(true);
  });

  it("shutDownWithDrain completes when processing ends even if the key was re-added meanwhile", async () => {
    const q = newQueue();
    q.add("k");
    await q.get();
    q.add("k"); // re-added while processing: queued again on done
    const drain = q.shutDownWithDrain();
    q.done("k");
    await drain;
    expect(q.len()).toBe(1);
  });

  it("shutDownWithDrain gives up when its signal aborts (a shutdown timeout)", async () => {
    const q = newQueue();
    q.add("stuck");
    await q.get();
    const ctl = new AbortController();
    const drain = q.shutDownWithDrain(ctl.signal);
    ctl.abort();
    await drain;
    expect(q.inFlight().longestRunningProcessorSeconds).toBeGreaterThanOrEqual(0);
  });

  it("reports depth, adds, queue and work durations, retries and work in flight to its metrics observer", async () => {
    const seen = { depth: [] as number[], added: 0, queue: 0, work: 0, retried: 0 };
    const q = newQueue({
      metrics: {
        depth: (d) => seen.depth.push(d),
        added: () => seen.added++,
        queueDuration: () => seen.queue++,
        workDuration: () => seen.work++,
        retried: () => seen.retried++,
      },
    });
    q.add("a");
    q.add("b");
    q.add("a"); // coalesced: not counted
    expect(seen.depth).toEqual([1, 2]);
    const key = await q.get();
    expect(seen.depth.at(-1)).toBe(1);
    q.add(key!); // re-added while processing: counts in depth, as in client-go
    expect(seen.depth.at(-1)).toBe(2);
    expect(q.inFlight().unfinishedWorkSeconds).toBeGreaterThanOrEqual(0);
    q.done(key!);
    q.addAfter("c", 0);
    expect(seen).toMatchObject({ added: 4, queue: 1, work: 1, retried: 1 });
    expect(seen.depth.at(-1)).toBe(3);
  });
});

describe("WorkQueue.discard", () => {
  it("drops a queued key, a delayed key and a key re-added while processing", async () => {
    const clock = new ManualClock(0);
    const q = newQueue({ clock });
    q.add("queued");
    q.add("other");
    q.addAfter("delayed", 1000);
    q.add("busy");
    // "queued" and "other" come first; take them and "busy" in order.
    expect(await q.get()).toBe("queued");
    q.done("queued");
    q.add("queued");
    q.discard("queued");
    expect(q.len()).toBe(2);
    expect(await q.get()).toBe("other");
    q.done("other");
    expect(await q.get()).toBe("busy");
    q.add("busy"); // re-added while processing
    q.discard("busy");
    q.done("busy");
    q.discard("delayed");
    expect(q.delayedCount()).toBe(0);
    await clock.advance(2000);
    expect(q.len()).toBe(0);
    expect(q.processingCount()).toBe(0);
  });

  it("keeps the delay heap ordered when an entry in its middle is discarded", async () => {
    const clock = new ManualClock(0);
    const q = newQueue({ clock });
    for (let i = 1; i <= 9; i++) q.addAfter(`k${i}`, i * 100);
    q.discard("k3");
    q.discard("k1");
    const order: string[] = [];
    for (let t = 1; t <= 9; t++) {
      await clock.advance(100);
      while (q.len() > 0) {
        const k = (await q.get()) as string;
        order.push(k);
        q.done(k);
      }
    }
    expect(order).toEqual(["k2", "k4", "k5", "k6", "k7", "k8", "k9"]);
  });
});
