/**
 * Whether an operator has work to do right now: what a test asks before and after it moves the
 * operator's clock (`capstan-dev/testing`'s `cluster.advance`), answered by the manager's parts.
 *
 * ## Expected flow
 * Each part registers a check (`add(name, () => reason | undefined)`: why it is busy, or nothing)
 * or marks work in flight (`const end = begin("lease renewal")`, `end()` when it is over), and
 * calls `changed()` whenever it may have become idle (a key done, a write seen by the informers).
 * `whenIdle()` resolves once every check answers nothing and no work is in flight.
 *
 * ## Guarantees
 * - Idleness is judged one event-loop turn (`setImmediate`) after a `changed()` or `whenIdle()`,
 *   never after a guessed delay: what an event started synchronously or in promise continuations
 *   (a key added, a write sent) is visible to the checks by then, and a check that answers busy is
 *   asked again only after the next `changed()`.
 * - Nothing is scheduled while nobody waits: `changed()` without a waiter costs a comparison.
 * - `whenIdle` rejects with {@link NotIdleError} (naming what was busy) after its timeout, or with
 *   the signal's reason when it aborts; either way it leaves no timer or listener behind.
 *
 * ## Caveats
 * - Idle means idle as far as the parts know: work a handler started and did not await (other than
 *   writes through the client, which are tracked), or that the cluster does later on its own
 *   (garbage collection, a kubelet), is not seen.
 * - A check that answers busy must call `changed()` when it stops being busy, or waiters wait for
 *   their timeout.
 */
import { systemClock } from "./clock.ts";
import { type Duration, toMilliseconds } from "./duration.ts";

/** Marks work in flight: `const end = activity.begin("what")`, then `end()` once (more calls do nothing). */
export interface ActivityTracker {
  begin(what: string): () => void;
}

/** Options of {@link Idleness.whenIdle}. */
export interface WhenIdleOptions {
  /** Stops waiting: the promise rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Real time to wait before rejecting with {@link NotIdleError} (default: no limit). */
  timeout?: Duration;
}

/** Thrown by `whenIdle` when its timeout passed while something was still busy. */
export class NotIdleError extends Error {
  override readonly name = "NotIdleError";
  constructor(
    message: string,
    /** What was busy when the time was up. */
    readonly busy: readonly string[],
  ) {
    super(message);
  }
}

interface Waiter {
  resolve(): void;
}

/** Collects what is busy and tells waiters when nothing is; see the module documentation. */
export class Idleness implements ActivityTracker {
  private readonly checks = new Map<string, () => string | undefined>();
  private readonly inFlight = new Map<number, string>();
  private nextId = 0;
  private readonly waiters = new Set<Waiter>();
  private scheduled: ReturnType<typeof setImmediate> | undefined;

  /** Adds a check answering why its part is busy (`undefined`: idle). Returns a function removing it. */
  add(name: string, check: () => string | undefined): () => void {
    if (this.checks.has(name)) throw new Error(`an idleness check named "${name}" exists already`);
    this.checks.set(name, check);
    return () => {
      if (this.checks.get(name) === check) this.checks.delete(name);
      this.changed();
    };
  }

  begin(what: string): () => void {
    const id = this.nextId++;
    this.inFlight.set(id, what);
    return () => {
      if (this.inFlight.delete(id)) this.changed();
    };
  }

  /** Something may have become idle: waiters re-check on the next event-loop turn. */
  changed(): void {
    if (this.waiters.size === 0 || this.scheduled !== undefined) return;
    this.scheduled = setImmediate(() => {
      this.scheduled = undefined;
      if (this.busy().length > 0) return;
      const waiters = [...this.waiters];
      this.waiters.clear();
      for (const w of waiters) w.resolve();
    });
  }

  /** What is busy right now (empty when idle), one line per check or piece of work in flight. */
  busy(): string[] {
    const reasons: string[] = [];
    for (const [name, check] of this.checks) {
      let reason: string | undefined;
      try {
        reason = check();
      } catch (err) {
        reason = `its check threw: ${err instanceof Error ? err.message : String(err)}`;
      }
      if (reason !== undefined) reasons.push(`${name}: ${reason}`);
    }
    for (const what of this.inFlight.values()) reasons.push(what);
    return reasons;
  }

  /** Resolves once nothing is busy; see {@link WhenIdleOptions} for how it gives up. */
  whenIdle(options: WhenIdleOptions = {}): Promise<void> {
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const finish = () => {
        this.waiters.delete(waiter);
        if (this.waiters.size === 0 && this.scheduled !== undefined) {
          clearImmediate(this.scheduled);
          this.scheduled = undefined;
        }
        cancelTimeout();
        signal?.removeEventListener("abort", onAbort);
      };
      const waiter: Waiter = {
        resolve: () => {
          finish();
          resolve();
        },
      };
      const onAbort = () => {
        finish();
        reject(signal?.reason);
      };
      const timeoutMs = options.timeout === undefined ? Number.POSITIVE_INFINITY : toMilliseconds(options.timeout);
      // Real time: the timeout guards a test against an operator that never settles.
      const cancelTimeout = systemClock.setTimer(timeoutMs, () => {
        finish();
        const busy = this.busy();
        reject(new NotIdleError(`not idle after ${timeoutMs} ms; busy: ${busy.join("; ") || "nothing now"}`, busy));
      });
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiters.add(waiter);
      this.changed();
    });
  }
}
