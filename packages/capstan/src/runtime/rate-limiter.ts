/**
 * Per-item retry delays for the work queue, in client-go's shape: a three-method interface with
 * small implementations that compose with {@link maxOf}.
 */
import { type Clock, systemClock } from "./clock.ts";
import { type Duration, toMilliseconds } from "./duration.ts";

/** Decides how long an item waits before it is retried. */
export interface RateLimiter<K = string> {
  /** Milliseconds `item` should wait before its next attempt; counts one more failure for it. */
  when(item: K): number;
  /** Stops tracking `item` (it succeeded, or was given up): its next failure starts from scratch. */
  forget(item: K): void;
  /** How many failures of `item` are being tracked. */
  numRequeues(item: K): number;
}

/**
 * Per-item exponential backoff: `base * 2^failures`, capped at `max`.
 *
 * Defaults are client-go's (5 ms .. 1000 s): 5 ms retries a transient conflict almost at once,
 * doubling reaches one second after 8 failures and the 1000 s (~17 min) cap after 18, so a
 * permanently broken object costs a few requests an hour instead of a hot loop.
 */
export function exponentialFailureRateLimiter<K = string>(
  options: { baseDelay?: Duration; maxDelay?: Duration } = {},
): RateLimiter<K> {
  const base = toMilliseconds(options.baseDelay ?? 5);
  const max = toMilliseconds(options.maxDelay ?? "1000s");
  if (base <= 0 || max < base) throw new Error(`exponential rate limiter: need 0 < baseDelay <= maxDelay`);
  const failures = new Map<K, number>();
  return {
    when(item) {
      const exp = failures.get(item) ?? 0;
      failures.set(item, exp + 1);
      // 2^exp overflows to Infinity past ~1023; min() keeps that at the cap.
      return Math.min(base * 2 ** exp, max);
    },
    forget(item) {
      failures.delete(item);
    },
    numRequeues(item) {
      return failures.get(item) ?? 0;
    },
  };
}

/**
 * One token bucket shared by all items: refills at `qps` tokens per second up to `burst`; each
 * `when` takes a token and, when none is left, returns the wait until its turn (reservations
 * queue up, as with Go's `rate.Limiter.Reserve`).
 *
 * Defaults are client-go's 10 qps / 100 burst: it only applies to retries, so it bounds the total
 * retry traffic a controller can generate when many objects fail at once (e.g. the API server is
 * down) while leaving room for a burst of 100 quick retries.
 */
export function tokenBucketRateLimiter<K = string>(
  options: { qps?: number; burst?: number; clock?: Pick<Clock, "now"> } = {},
): RateLimiter<K> {
  const qps = options.qps ?? 10;
  const burst = options.burst ?? 100;
  const clock = options.clock ?? systemClock;
  if (!(qps > 0) || !(burst >= 1)) throw new Error(`token bucket rate limiter: need qps > 0 and burst >= 1`);
  let tokens = burst;
  let last = clock.now();
  return {
    when() {
      const now = clock.now();
      tokens = Math.min(burst, tokens + ((now - last) * qps) / 1000);
      last = now;
      tokens -= 1;
      return tokens >= 0 ? 0 : (-tokens * 1000) / qps;
    },
    forget() {},
    numRequeues() {
      return 0;
    },
  };
}

/** Combines limiters: the longest wait wins, `forget` reaches all, `numRequeues` is the highest. */
export function maxOf<K = string>(...limiters: RateLimiter<K>[]): RateLimiter<K> {
  if (limiters.length === 0) throw new Error("maxOf needs at least one rate limiter");
  return {
    when(item) {
      let wait = 0;
      // Every limiter must see the failure (each counts it), so no early exit.
      for (const limiter of limiters) wait = Math.max(wait, limiter.when(item));
      return wait;
    },
    forget(item) {
      for (const limiter of limiters) limiter.forget(item);
    },
    numRequeues(item) {
      let n = 0;
      for (const limiter of limiters) n = Math.max(n, limiter.numRequeues(item));
      return n;
    },
  };
}

/**
 * client-go's default controller limiter: per-item 5 ms .. 1000 s, overall 10 qps / burst 100, the
 * bucket refilling on `clock` (default the system's; the work queue passes its own).
 */
export function defaultControllerRateLimiter<K = string>(clock?: Pick<Clock, "now">): RateLimiter<K> {
  return maxOf<K>(exponentialFailureRateLimiter<K>(), tokenBucketRateLimiter<K>(clock === undefined ? {} : { clock }));
}
