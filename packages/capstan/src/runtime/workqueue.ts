/**
 * The work queue controllers pull keys from, with client-go's `workqueue` semantics.
 *
 * ## Expected flow
 * Producers (informer event handlers) `add(key)`; workers loop `key = await queue.get(signal)`,
 * reconcile, then `queue.done(key)` — always, in a `finally`. On success the worker calls
 * `forget(key)`; on failure `addRateLimited(key)`; to poll later `addAfter(key, delay)`.
 *
 * ## Guarantees
 * - A key is handed to at most one worker at a time: between `get()` returning it and `done(key)`
 *   it is "processing", and adds of it only mark it dirty.
 * - A key added while processing is handed out exactly once more after `done(key)` (adds while
 *   processing coalesce into one), so the last change is never lost.
 * - A key waiting in the queue is there once: repeated adds before a worker takes it coalesce.
 * - Keys are handed out in the order they became ready (FIFO).
 * - `addAfter` keeps one timer for all delayed keys; a key delayed twice keeps the earlier time.
 *   Delays are measured on the queue's clock (`clock`, default the system's): a test that moves
 *   the operator's time moves them too. Queue and work durations (metrics) are real time.
 * - After `shutDown()`, adds are ignored, delayed keys are dropped, and `get()` keeps handing
 *   out the keys already queued (as client-go does) and then resolves `undefined`.
 *   `shutDownWithDrain()` additionally waits until every key handed out has been `done`.
 * - Nothing is scheduled once the queue is shut down: no timer, no pending promise that keeps
 *   the process alive.
 *
 * ## Assumptions
 * - Keys are compared with `===` (strings such as `namespace/name`; objects compare by identity).
 * - Every key returned by `get()` is eventually passed to `done()`; a worker that forgets it
 *   blocks that key forever (and a drain never completes).
 *
 * ## Caveats
 * - The queue is in-memory: keys are not persisted across restarts (informers re-list instead).
 * - `get(signal)` aborted does not shut the queue down; it only stops that one waiter.
 * - Metrics for unfinished work and the longest running processor are computed on demand with
 *   {@link WorkQueue.inFlight} (read them at scrape time) rather than by a background timer.
 */
import { type Clock, systemClock } from "./clock.ts";
import { type Duration, toMilliseconds } from "./duration.ts";
import type { RateLimiter } from "./rate-limiter.ts";
import { defaultControllerRateLimiter } from "./rate-limiter.ts";

/**
 * Observer of queue activity; the manager binds it to Prometheus with controller-runtime's names
 * (`workqueue_depth`, `workqueue_adds_total`, `workqueue_queue_duration_seconds`,
 * `workqueue_work_duration_seconds`, `workqueue_retries_total`). Every method is optional.
 */
export interface WorkQueueMetrics {
  /**
   * The number of keys waiting to be handed out changed to `depth` (client-go's count: keys queued
   * plus keys re-added while processing).
   */
  depth?(depth: number): void;
  /** A key became dirty through `add` (coalesced adds are not counted, as in client-go). */
  added?(): void;
  /** A key waited `seconds` between the add that made it dirty and being handed to a worker. */
  queueDuration?(seconds: number): void;
  /** A worker held a key for `seconds` between `get` and `done`. */
  workDuration?(seconds: number): void;
  /** A key was re-queued through `addAfter` or `addRateLimited`. */
  retried?(): void;
}

/** Options of a {@link WorkQueue}. */
export interface WorkQueueOptions<K> {
  /** Name for metrics and logs. */
  name?: string;
  /** Delays for `addRateLimited`; defaults to {@link defaultControllerRateLimiter} on `clock`. */
  rateLimiter?: RateLimiter<K>;
  metrics?: WorkQueueMetrics;
  /** The clock `addAfter` delays follow (default {@link systemClock}). */
  clock?: Clock;
  /**
   * Called after every `done(key)` and on shutdown: the moments the queue may have become idle
   * (nothing queued, nothing processing), for a listener that waits for that (Manager.whenIdle).
   */
  onDone?: () => void;
}

interface DelayedEntry<K> {
  key: K;
  readyAt: number;
  index: number;
}

/**
 * A worker waiting in `get()`. It is its own abort listener (`handleEvent`), so waiting costs one
 * object rather than two closures per `get()`: workers wait once per key when keys come slower
 * than they are processed.
 */
class Waiter<K> {
  constructor(
    /** The queue's list of waiting workers, which this one leaves when its signal aborts. */
    private readonly waiters: Waiter<K>[],
    readonly resolve: (key: K | undefined) => void,
    private readonly signal: AbortSignal | undefined,
  ) {}

  /** The signal aborted: stop waiting. */
  handleEvent(): void {
    const i = this.waiters.indexOf(this);
    if (i >= 0) this.waiters.splice(i, 1);
    this.resolve(undefined);
  }

  detach(): void {
    this.signal?.removeEventListener("abort", this);
  }
}

/** A work queue with client-go semantics; see the module documentation for the contract. */
export class WorkQueue<K = string> {
  readonly name: string;
  private readonly rateLimiter: RateLimiter<K>;
  private readonly metrics: WorkQueueMetrics;

  // FIFO of ready keys: an array consumed from `head`, compacted now and then (O(1) shift).
  private ready: K[] = [];
  private head = 0;
  /** Keys that need processing: queued, or re-added while processing. */
  private readonly dirty = new Set<K>();
  /** Keys handed to a worker and not yet `done`, with the time they were handed out. */
  private readonly processing = new Map<K, number>();
  /** When each queued key entered the queue, for the queue-duration metric. */
  private readonly queuedAt = new Map<K, number>();
  /** Workers waiting in `get()`, oldest first; mutated in place (each waiter holds it). */
  private readonly waiters: Waiter<K>[] = [];
  private drainWaiters: (() => void)[] = [];
  private shutting = false;

  // Delayed keys: a binary min-heap on readyAt plus an index by key, with one timer armed
  // for the earliest entry.
  private readonly delayed: DelayedEntry<K>[] = [];
  private readonly delayedByKey = new Map<K, DelayedEntry<K>>();
  private cancelTimer: (() => void) | undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  private readonly clock: Clock;
  private readonly onDone: (() => void) | undefined;

  constructor(options: WorkQueueOptions<K> = {}) {
    this.name = options.name ?? "";
    this.clock = options.clock ?? systemClock;
    this.rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter<K>(this.clock);
    this.metrics = options.metrics ?? {};
    this.onDone = options.onDone;
  }

  /** Number of keys waiting to be handed out (excludes keys being processed and delayed keys). */
  len(): number {
    return this.ready.length - this.head;
  }

  /** Number of keys handed to a worker and not yet `done`. */
  processingCount(): number {
    return this.processing.size;
  }

  /** Number of keys waiting for their `addAfter` delay. */
  delayedCount(): number {
    return this.delayed.length;
  }

  /** Whether `shutDown` or `shutDownWithDrain` was called. */
  get shuttingDown(): boolean {
    return this.shutting;
  }

  /** Marks `key` as needing processing. Ignored after shutdown. */
  add(key: K): void {
    if (this.shutting) return;
    if (this.dirty.has(key)) {
      // Already queued or already marked to run again after the current processing.
      return;
    }
    this.dirty.add(key);
    // As client-go: queue time and depth count from this add, even if the key waits for `done`.
    this.queuedAt.set(key, performance.now());
    this.metrics.added?.();
    this.metrics.depth?.(this.dirty.size);
    if (this.processing.has(key)) return;
    this.enqueue(key);
  }

  /** Adds `key` after `delay` (`"5s"`, ms). A key delayed twice keeps the earlier time. */
  addAfter(key: K, delay: Duration): void {
    if (this.shutting) return;
    const ms = toMilliseconds(delay);
    this.metrics.retried?.();
    if (ms <= 0) {
      this.add(key);
      return;
    }
    const readyAt = this.clock.now() + ms;
    const existing = this.delayedByKey.get(key);
    if (existing !== undefined) {
      if (readyAt < existing.readyAt) {
        existing.readyAt = readyAt;
        this.siftUp(existing.index);
      }
    } else {
      const entry: DelayedEntry<K> = { key, readyAt, index: this.delayed.length };
      this.delayed.push(entry);
      this.delayedByKey.set(key, entry);
      this.siftUp(entry.index);
    }
    this.armTimer();
  }

  /**
   * Adds `key` after the delay the rate limiter gives it (counting one more failure). Returns that
   * delay in ms (`undefined` once shut down: not added).
   */
  addRateLimited(key: K): number | undefined {
    if (this.shutting) return undefined;
    const delay = this.rateLimiter.when(key);
    this.addAfter(key, delay);
    return delay;
  }

  /**
   * Drops every trace of `key`: queued, waiting for a delay, marked to run again after its current
   * processing, and its failure history. The key being processed right now still ends with
   * `done` (sharding uses this when it hands a key over to another replica).
   */
  discard(key: K): void {
    this.rateLimiter.forget(key);
    const delayed = this.delayedByKey.get(key);
    if (delayed !== undefined) {
      this.delayedByKey.delete(key);
      this.removeDelayed(delayed.index);
    }
    if (!this.dirty.delete(key)) return;
    this.queuedAt.delete(key);
    this.metrics.depth?.(this.dirty.size);
    if (this.processing.has(key)) return; // not in `ready`: it would have been re-queued on done
    const at = this.ready.indexOf(key, this.head);
    if (at >= 0) this.ready.splice(at, 1);
  }

  /** Clears the failure history of `key` in the rate limiter (call it on success). */
  forget(key: K): void {
    this.rateLimiter.forget(key);
  }

  /** How many rate-limited requeues of `key` are being tracked. */
  numRequeues(key: K): number {
    return this.rateLimiter.numRequeues(key);
  }

  /**
   * The next key to process, waiting until one is ready. Resolves `undefined` when the queue is
   * shut down and empty, or when `signal` aborts (or already has, even if keys are waiting).
   * The caller must call `done(key)` afterwards.
   */
  get(signal?: AbortSignal): Promise<K | undefined> {
    // An aborted signal means "take no more work", even if keys are waiting.
    if (signal?.aborted) return Promise.resolve(undefined);
    if (this.len() > 0) return Promise.resolve(this.take());
    if (this.shutting) return Promise.resolve(undefined);
    return new Promise<K | undefined>((resolve) => {
      const waiter = new Waiter(this.waiters, resolve, signal);
      signal?.addEventListener("abort", waiter, { once: true });
      this.waiters.push(waiter);
    });
  }

  /** Marks the processing of `key` finished; if it was re-added meanwhile, it is queued again. */
  done(key: K): void {
    const startedAt = this.processing.get(key);
    if (startedAt === undefined) return;
    this.processing.delete(key);
    this.metrics.workDuration?.((performance.now() - startedAt) / 1000);
    if (this.dirty.has(key)) this.enqueue(key);
    // As client-go's drain: done when nothing is being processed, even if keys still wait.
    if (this.processing.size === 0 && this.drainWaiters.length > 0) {
      const waiters = this.drainWaiters;
      this.drainWaiters = [];
      for (const w of waiters) w();
    }
    this.onDone?.();
  }

  /**
   * Stops intake: further adds are ignored, delayed keys are dropped (their timer cleared), and
   * waiting `get()` calls resolve `undefined`. Keys already queued are still handed out.
   */
  shutDown(): void {
    this.shutting = true;
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    this.delayed.length = 0;
    this.delayedByKey.clear();
    for (const w of this.waiters.splice(0)) {
      w.detach();
      w.resolve(undefined);
    }
    this.onDone?.();
  }

  /**
   * {@link shutDown}, then waits until every key handed out has been `done` (or `signal` aborts,
   * for a shutdown timeout).
   */
  shutDownWithDrain(signal?: AbortSignal): Promise<void> {
    this.shutDown();
    if (this.processing.size === 0 || signal?.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const onAbort = () => {
        this.drainWaiters = this.drainWaiters.filter((w) => w !== finish);
        resolve();
      };
      const finish = () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.drainWaiters.push(finish);
    });
  }

  /**
   * Work in progress right now: total seconds of all running processing (controller-runtime's
   * `workqueue_unfinished_work_seconds`) and the longest one
   * (`workqueue_longest_running_processor_seconds`).
   */
  inFlight(): { unfinishedWorkSeconds: number; longestRunningProcessorSeconds: number } {
    const now = performance.now();
    let total = 0;
    let longest = 0;
    for (const startedAt of this.processing.values()) {
      const elapsed = (now - startedAt) / 1000;
      total += elapsed;
      if (elapsed > longest) longest = elapsed;
    }
    return { unfinishedWorkSeconds: total, longestRunningProcessorSeconds: longest };
  }

  private enqueue(key: K): void {
    this.ready.push(key);
    // Hand the key straight to a waiting worker if there is one.
    const waiter = this.waiters.shift();
    if (waiter !== undefined) {
      waiter.detach();
      waiter.resolve(this.take());
    }
  }

  private take(): K {
    const key = this.ready[this.head] as K;
    this.head++;
    // Compact once the consumed prefix dominates, keeping shift amortised O(1).
    if (this.head > 1024 && this.head * 2 > this.ready.length) {
      this.ready = this.ready.slice(this.head);
      this.head = 0;
    }
    const now = performance.now();
    this.processing.set(key, now);
    this.dirty.delete(key);
    const queuedAt = this.queuedAt.get(key);
    this.queuedAt.delete(key);
    this.metrics.depth?.(this.dirty.size);
    if (queuedAt !== undefined) this.metrics.queueDuration?.((now - queuedAt) / 1000);
    return key;
  }

  private armTimer(): void {
    const top = this.delayed[0];
    if (top === undefined) return;
    if (this.cancelTimer !== undefined && this.timerAt <= top.readyAt) return;
    this.cancelTimer?.();
    this.timerAt = top.readyAt;
    this.cancelTimer = this.clock.setTimer(Math.max(0, top.readyAt - this.clock.now()), () => this.fireDelayed());
  }

  private fireDelayed(): void {
    this.cancelTimer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const now = this.clock.now();
    for (let top = this.delayed[0]; top !== undefined && top.readyAt <= now; top = this.delayed[0]) {
      this.popDelayed();
      this.delayedByKey.delete(top.key);
      this.add(top.key);
    }
    this.armTimer();
  }

  /** Removes the heap entry at `index`, keeping the heap ordered. */
  private removeDelayed(index: number): void {
    const last = this.delayed.pop() as DelayedEntry<K>;
    if (index >= this.delayed.length) return;
    last.index = index;
    this.delayed[index] = last;
    this.siftDown(index);
    this.siftUp(last.index);
  }

  private popDelayed(): void {
    const last = this.delayed.pop() as DelayedEntry<K>;
    if (this.delayed.length === 0) return;
    last.index = 0;
    this.delayed[0] = last;
    this.siftDown(0);
  }

  private siftUp(index: number): void {
    const heap = this.delayed;
    const entry = heap[index] as DelayedEntry<K>;
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = heap[parentIndex] as DelayedEntry<K>;
      if (parent.readyAt <= entry.readyAt) break;
      heap[index] = parent;
      parent.index = index;
      index = parentIndex;
    }
    heap[index] = entry;
    entry.index = index;
  }

  private siftDown(index: number): void {
    const heap = this.delayed;
    const entry = heap[index] as DelayedEntry<K>;
    for (;;) {
      const left = index * 2 + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      let child = left;
      if (right < heap.length && (heap[right] as DelayedEntry<K>).readyAt < (heap[left] as DelayedEntry<K>).readyAt) {
        child = right;
      }
      const childEntry = heap[child] as DelayedEntry<K>;
      if (childEntry.readyAt >= entry.readyAt) break;
      heap[index] = childEntry;
      childEntry.index = index;
      index = child;
    }
    heap[index] = entry;
    entry.index = index;
  }
}
