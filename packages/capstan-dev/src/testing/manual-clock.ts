/**
 * `ManualClock`: an operator's clock that moves only when the test moves it. Give it to the
 * operator (`startTestCluster({ clock: "manual" })` does, or `op.start({ clock })`,
 * `new Manager({ clock })`) and every delay the operator schedules by its clock — requeueAfter,
 * rate-limited retries, `op.timer`, daemons' sleeps and restarts, handler retry delays, informer
 * resync, leader election — waits for `advance`. A test of an hourly job then runs in milliseconds.
 *
 * ## Expected flow
 * ```ts
 * const clock = new ManualClock("2030-01-01T00:00:00Z");
 * await op.start({ client, signal, clock });          // in a test cluster: cluster.run(op)
 * await clock.advance("1h");                          // in a test cluster: cluster.advance("1h")
 * ```
 * `cluster.advance` is `clock.advance` with the cluster's operators as the `settle` step: it also
 * waits, before and after each timer, until every operator is idle again.
 *
 * ## Guarantees
 * - `now()` changes only in `advance` and `set`.
 * - `advance(d)` fires every timer due within `d`, in due order (timers due at the same time in the
 *   order they were set), each at its own due time: `now()` inside a callback is that timer's due
 *   time. Before the first timer, after each due time and at the end it awaits `settle` (default:
 *   one event-loop turn), so the work a timer started — and the timers that work sets, a requeue,
 *   the next sleep — is done before time moves on; those that fall within `d` fire too. It resolves
 *   with `now()` at the start plus `d`.
 * - A timer set for a time already reached (`ms <= 0`) fires on the next event-loop turn, as
 *   `setTimeout(fn, 0)` would, also when no advance runs: the clock never holds back a due timer.
 * - Advances (and sets) run one at a time, in the order they were asked for.
 * - `set(time)` later than `now()` is an advance to it; earlier moves `now()` back and leaves each
 *   timer its remaining delay (as Node's timers do when the wall clock steps back).
 * - The clock holds no real timer (only that one-turn immediate): one nobody advances keeps
 *   nothing alive and leaks nothing.
 *
 * ## Caveats
 * - A callback that throws rejects the `advance` that fired it (after the other callbacks due at
 *   that time ran).
 * - Work that sets a due timer every time it runs (a daemon sleeping 0 ms in a loop) never lets an
 *   advance end: after {@link MAX_FIRINGS_AT_ONE_TIME} rounds at one instant it rejects.
 */
import { type Clock, type Duration, toMilliseconds } from "capstan/runtime";

/**
 * Rounds of due timers at one instant after which `advance` gives up: far more than any operator
 * needs (a requeue chain of a few keys takes a handful), few enough to fail in well under a second.
 */
export const MAX_FIRINGS_AT_ONE_TIME = 1000;

/** Options of {@link ManualClock.advance}. */
export interface AdvanceOptions {
  /**
   * Awaited before the first timer, after each due time and at the end: whatever must settle before
   * time moves on (default: one event-loop turn). `cluster.advance` waits for its operators here.
   */
  settle?: () => Promise<void>;
}

interface Timer {
  due: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/** A {@link Clock} that moves only when told to; see the module documentation. */
export class ManualClock implements Clock {
  private current: number;
  /** Pending timers, sorted by due time, then by the order they were set. */
  private timers: Timer[] = [];
  private seq = 0;
  private advancing = false;
  private flush: ReturnType<typeof setImmediate> | undefined;
  private queue: Promise<void> = Promise.resolve();

  /** Starts at `start` (a Date, epoch milliseconds or an ISO string; default: the real time now). */
  constructor(start: Date | number | string = Date.now()) {
    this.current = typeof start === "number" ? start : new Date(start).getTime();
    if (!Number.isFinite(this.current)) throw new RangeError(`ManualClock: not a time: ${String(start)}`);
  }

  now(): number {
    return this.current;
  }

  setTimer(ms: number, fn: () => void): () => void {
    if (ms === Number.POSITIVE_INFINITY) return () => {};
    const timer: Timer = { due: this.current + (ms > 0 ? ms : 0), seq: this.seq++, fn, cancelled: false };
    this.insert(timer);
    if (timer.due <= this.current) this.flushSoon();
    return () => {
      if (timer.cancelled) return;
      timer.cancelled = true;
      const i = this.timers.indexOf(timer);
      if (i >= 0) this.timers.splice(i, 1);
    };
  }

  /** Timers waiting to fire. */
  get pendingTimers(): number {
    return this.timers.length;
  }

  /** When the next timer is due (`undefined`: none is pending). */
  nextTimerAt(): Date | undefined {
    const next = this.timers[0];
    return next === undefined ? undefined : new Date(next.due);
  }

  /** Moves time forward by `duration` (`"1h"`, ms), firing what falls due; see the module documentation. */
  advance(duration: Duration, options: AdvanceOptions = {}): Promise<void> {
    let ms: number;
    try {
      ms = toMilliseconds(duration);
    } catch (err) {
      return Promise.reject(
        new RangeError(`ManualClock.advance: need a finite duration >= 0, got ${String(duration)}`, { cause: err }),
      );
    }
    return this.enqueue(() => this.run(ms, options.settle ?? nextTurn));
  }

  /**
   * Sets the time: later than `now()`, an advance to it (timers fire, `settle` runs); earlier,
   * `now()` moves back and every timer keeps its remaining delay.
   */
  set(time: Date | number | string, options: AdvanceOptions = {}): Promise<void> {
    const to = typeof time === "number" ? time : new Date(time).getTime();
    if (!Number.isFinite(to)) return Promise.reject(new RangeError(`ManualClock.set: not a time: ${String(time)}`));
    return this.enqueue(async () => {
      if (to >= this.current) return this.run(to - this.current, options.settle ?? nextTurn);
      const back = this.current - to;
      this.current = to;
      for (const t of this.timers) t.due -= back;
    });
  }

  private enqueue(step: () => Promise<void>): Promise<void> {
    const run = this.queue.then(step);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async run(ms: number, settle: () => Promise<void>): Promise<void> {
    this.advancing = true;
    try {
      const target = this.current + ms;
      let rounds = 0;
      let at = this.current;
      await settle();
      for (;;) {
        const next = this.timers[0];
        if (next !== undefined && next.due <= target) {
          if (next.due > this.current) this.current = next.due;
          if (this.current !== at) {
            at = this.current;
            rounds = 0;
          }
          if (++rounds > MAX_FIRINGS_AT_ONE_TIME) {
            throw new Error(
              `ManualClock: timers kept falling due at ${new Date(at).toISOString()} for ${MAX_FIRINGS_AT_ONE_TIME} rounds (something sets a 0 ms timer each time it runs)`,
            );
          }
          this.fireDue();
          await settle();
          continue;
        }
        if (this.current < target) {
          this.current = target;
          await settle();
          continue;
        }
        return;
      }
    } finally {
      this.advancing = false;
      if (this.timers[0] !== undefined && this.timers[0].due <= this.current) this.flushSoon();
    }
  }

  /** Fires the timers due by now, in order; new ones they set wait for the next round. */
  private fireDue(): void {
    let count = 0;
    while (count < this.timers.length && (this.timers[count] as Timer).due <= this.current) count++;
    const batch = this.timers.splice(0, count);
    let failure: { error: unknown } | undefined;
    for (const t of batch) {
      if (t.cancelled) continue;
      t.cancelled = true;
      try {
        t.fn();
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure !== undefined) throw failure.error;
  }

  /** Fires due timers on the next event-loop turn, unless an advance will. */
  private flushSoon(): void {
    if (this.advancing || this.flush !== undefined) return;
    this.flush = setImmediate(() => {
      this.flush = undefined;
      if (!this.advancing) this.fireDue();
    });
  }

  private insert(timer: Timer): void {
    // Binary search for the first timer due later (ties keep the order they were set in).
    let lo = 0;
    let hi = this.timers.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((this.timers[mid] as Timer).due <= timer.due) lo = mid + 1;
      else hi = mid;
    }
    this.timers.splice(lo, 0, timer);
  }
}

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
