/**
 * Time as the runtime sees it: a `now()` that tests can replace, and an abortable sleep that
 * never outlives its signal (no timer is left behind once the signal aborts).
 */

/** The source of "now" for the runtime's bookkeeping (queue latency, lease expiry). */
export interface Clock {
  /** Milliseconds since the epoch, like `Date.now()`. */
  now(): number;
}

/** The wall clock. */
export const systemClock: Clock = { now: () => Date.now() };

/**
 * Resolves `true` after `ms`, or `false` as soon as `signal` aborts (at once if it already has).
 * The timer is cleared on abort, so a stopped loop leaves nothing scheduled.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
