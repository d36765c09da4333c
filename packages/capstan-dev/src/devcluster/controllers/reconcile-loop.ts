/**
 * The work loop every devcluster controller runs on: a de-duplicating queue of string keys drained
 * by one worker, like kube-controller-manager's workqueue with a single goroutine per controller.
 *
 * Expected flow: event listeners call {@link ReconcileLoop.add} (cheap, synchronous, never throws);
 * the worker takes keys in FIFO order and awaits the handler for each. A handler returns
 * `{ requeueAfterMs }` to be called again later (waiting for something it cannot watch), or throws
 * to be retried with exponential backoff.
 *
 * Guarantees:
 * - a key is never handled twice at the same time (one worker);
 * - a key added while it is waiting is handled once; added while it is being handled, it is handled
 *   once more afterwards (so no change is missed);
 * - after {@link ReconcileLoop.stop} resolves, no handler runs and no timer is left.
 *
 * Assumptions: handlers are idempotent and read the current state themselves (level-triggered).
 *
 * Caveats: one worker per controller bounds throughput; fine for a development server whose
 * controllers do little work per key.
 */

import { IN_PROCESS_MANAGER, writingAs } from "../apply/write-tracking.ts";

/** What a handler may ask for after handling a key. */
export interface ReconcileResult {
  /** Handle the key again after this many milliseconds. */
  requeueAfterMs?: number;
}

export type ReconcileHandler = (key: string) => Promise<ReconcileResult | undefined>;

/** client-go's default per-item backoff starts at 5 ms... */
const BASE_BACKOFF_MS = 5;
/**
 * ...and we cap it at 1 s instead of client-go's 1000 s: a development server's controllers fail only
 * on races (conflicts) or on objects that are about to change, and tests wait on their outcome.
 */
const MAX_BACKOFF_MS = 1000;

export class ReconcileLoop {
  private readonly pending = new Set<string>();
  private readonly order: string[] = [];
  private readonly failures = new Map<string, number>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private processing: string | undefined;
  private dirtyWhileProcessing = false;
  private running: Promise<void> | undefined;
  private stopped = false;
  /** Called with handler errors (after which the key is retried); tests and logs hook in here. */
  onError: (key: string, err: unknown) => void = () => {};

  constructor(
    readonly name: string,
    private readonly handler: ReconcileHandler,
  ) {}

  /** Queues `key` for handling. Safe to call from storage listeners. */
  add(key: string): void {
    if (this.stopped) return;
    if (this.processing === key) {
      this.dirtyWhileProcessing = true;
      return;
    }
    if (this.pending.has(key)) return;
    this.pending.add(key);
    this.order.push(key);
    this.kick();
  }

  /** Queues `key` after `ms` (replacing an earlier delayed add of the same key). */
  addAfter(key: string, ms: number): void {
    if (this.stopped) return;
    const existing = this.timers.get(key);
    if (existing) clearTimeout(existing);
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, ms);
    timer.unref();
    this.timers.set(key, timer);
  }

  /** True when nothing is queued, delayed or being handled. */
  idle(): boolean {
    return this.pending.size === 0 && this.processing === undefined && this.timers.size === 0;
  }

  /** Stops intake, cancels delayed keys and waits for the handler in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.pending.clear();
    this.order.length = 0;
    await this.running;
  }

  private kick(): void {
    if (this.running) return;
    this.running = this.drain().finally(() => {
      this.running = undefined;
      if (!this.stopped && this.order.length > 0) this.kick();
    });
  }

  private async drain(): Promise<void> {
    // add() is called from storage listeners, inside a write: start handling only after it returns.
    await Promise.resolve();
    while (!this.stopped) {
      const key = this.order.shift();
      if (key === undefined) return;
      this.pending.delete(key);
      this.processing = key;
      this.dirtyWhileProcessing = false;
      try {
        const result = await this.handler(key);
        this.failures.delete(key);
        if (result?.requeueAfterMs !== undefined) this.addAfter(key, result.requeueAfterMs);
      } catch (err) {
        const failures = (this.failures.get(key) ?? 0) + 1;
        this.failures.set(key, failures);
        this.onError(key, err);
        this.addAfter(key, Math.min(MAX_BACKOFF_MS, BASE_BACKOFF_MS * 2 ** (failures - 1)));
      } finally {
        this.processing = undefined;
      }
      if (this.dirtyWhileProcessing) {
        this.dirtyWhileProcessing = false;
        this.add(key);
      }
    }
  }
}

/**
 * What every devcluster controller shares: a {@link ReconcileLoop} that calls {@link handle}, the
 * storage subscription `start()` opens (assigned to `unsubscribe`), and stopping both.
 */
export abstract class LoopController {
  protected readonly loop: ReconcileLoop;
  /** Set by the subclass's `start()`; `stop()` calls it before draining the loop. */
  protected unsubscribe: () => void = () => {};

  /** `fieldManager`: the name this controller's writes carry in managedFields (its real counterpart's). */
  constructor(
    readonly name: string,
    fieldManager: string = IN_PROCESS_MANAGER,
  ) {
    this.loop = new ReconcileLoop(name, (key) => writingAs(fieldManager, () => this.handle(key)));
  }

  /** Handles one key of the loop (level-triggered: read the current state, act, maybe requeue). */
  protected abstract handle(key: string): Promise<ReconcileResult | undefined>;

  /** Stops watching and waits for the work in flight. */
  async stop(): Promise<void> {
    this.unsubscribe();
    await this.loop.stop();
  }

  /** True when nothing is queued or running (tests wait for this). */
  idle(): boolean {
    return this.loop.idle();
  }

  /** Called with handler errors (the key is retried after them). */
  set onError(fn: (key: string, err: unknown) => void) {
    this.loop.onError = fn;
  }
}
