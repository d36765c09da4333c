/**
 * Exponential backoff with jitter for long-lived loops (informer re-list/re-watch, retries).
 */
import { type Clock, systemClock } from "./clock.ts";
import { type Duration, toMilliseconds } from "./duration.ts";

/** Options of an {@link ExponentialBackoff}. Defaults are client-go's reflector backoff. */
export interface BackoffOptions {
  /** First delay (default 800 ms). */
  initial?: Duration;
  /** Cap on the un-jittered delay (default 30 s). */
  max?: Duration;
  /** Growth per failure (default 2). */
  factor?: number;
  /** Each delay is `d * (1 + jitter * random())`, so in `[d, 2d)` with the default 1.0. */
  jitter?: number;
  /** A failure this long after the previous one starts again from `initial` (default 2 min). */
  resetAfter?: Duration;
  clock?: Pick<Clock, "now">;
  /** Source of randomness in [0, 1), replaceable in tests. */
  random?: () => number;
}

/**
 * Delays that double per failure from 800 ms to a 30 s cap, with up to 100% jitter, reset when no
 * failure happened for 2 minutes. These are client-go's reflector numbers: compared with retrying
 * every second, an unhealthy API server gets ~98% less traffic (the delay settles in [30 s, 60 s)),
 * the jitter spreads the retries of many clients restarted together, and two quiet minutes are
 * taken as "healthy again" so the next failure is retried quickly. kube-rs's default watcher
 * backoff uses the same numbers.
 */
export class ExponentialBackoff {
  private readonly initial: number;
  private readonly max: number;
  private readonly factor: number;
  private readonly jitter: number;
  private readonly resetAfter: number;
  private readonly clock: Pick<Clock, "now">;
  private readonly random: () => number;
  private step: number;
  private lastFailureAt = Number.NEGATIVE_INFINITY;

  constructor(options: BackoffOptions = {}) {
    this.initial = toMilliseconds(options.initial ?? 800);
    this.max = toMilliseconds(options.max ?? "30s");
    this.factor = options.factor ?? 2;
    this.jitter = options.jitter ?? 1;
    this.resetAfter = toMilliseconds(options.resetAfter ?? "2m");
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    if (this.factor < 1) throw new Error("backoff factor must be >= 1");
    if (this.jitter < 0) throw new Error("backoff jitter must be >= 0");
    this.step = this.initial;
  }

  /** The delay before the next attempt, in milliseconds; records one more failure. */
  next(): number {
    const now = this.clock.now();
    if (now - this.lastFailureAt > this.resetAfter) this.step = this.initial;
    this.lastFailureAt = now;
    const base = this.step;
    this.step = Math.min(this.step * this.factor, this.max);
    return base * (1 + this.jitter * this.random());
  }

  /** Forgets past failures: the next delay is `initial` again. */
  reset(): void {
    this.step = this.initial;
    this.lastFailureAt = Number.NEGATIVE_INFINITY;
  }
}
