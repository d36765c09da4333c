/**
 * The operator's time: what "now" is and when a delay is over, for everything an operator
 * schedules by the clock (requeueAfter, rate-limited retries, `op.timer`, daemons' sleeps and
 * restarts, handler retry delays, informer resync, leader election). Production uses
 * {@link systemClock}; a test gives the manager another clock (`capstan-dev/testing`'s
 * `ManualClock`) and moves the operator's time itself.
 *
 * ## Guarantees
 * - {@link sleep} never outlives its signal: on abort the timer is cancelled and the promise
 *   resolves `false`, so a stopped loop leaves nothing scheduled.
 * - {@link systemClock} fires delays longer than Node's timer limit (~24.8 days) at the right time
 *   (Node would fire them after 1 ms): a `requeueAfter: "30d"` waits 30 days.
 *
 * ## What stays on real time (and why)
 * Waits that measure the network or the process rather than the operator's schedule never read
 * an injected clock: HTTP request timeouts and retries, the informer's watch reconnect backoff
 * and watch deadline, the API server probe and watch health, the consistency wait for the
 * operator's own writes, leader election's per-request limit, cache-sync and shutdown-drain
 * timeouts, CRD registration, metrics. Under a frozen test clock they must still end: they wait
 * for something real (a socket, a server) that the test's clock does not move.
 */

/**
 * A source of time and of timers. Two methods, so a test clock is small to write; {@link sleep}
 * is built on `setTimer` once for every clock.
 */
export interface Clock {
  /** Milliseconds since the epoch, like `Date.now()`. */
  now(): number;
  /**
   * Calls `fn` once, `ms` milliseconds of this clock's time from now (at once-ish for `ms <= 0`,
   * never for `Infinity`). Returns a function that cancels it (harmless after it fired).
   */
  setTimer(ms: number, fn: () => void): () => void;
}

/**
 * Node's longest timer (2^31 - 1 ms, ~24.8 days): a longer `setTimeout` fires after 1 ms, so
 * {@link systemClock} waits that long and re-arms for the rest.
 */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** The wall clock and Node's timers: what an operator uses unless told otherwise. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(ms, fn) {
    if (ms === Number.POSITIVE_INFINITY) return () => {};
    if (!(ms > MAX_TIMEOUT_MS)) {
      const timer = setTimeout(fn, Math.max(0, ms));
      return () => clearTimeout(timer);
    }
    // Longer than one Node timer: wait in steps of the longest one until the due time.
    const dueAt = Date.now() + ms;
    let timer: ReturnType<typeof setTimeout>;
    const arm = () => {
      const left = dueAt - Date.now();
      if (left > 0) timer = setTimeout(arm, Math.min(left, MAX_TIMEOUT_MS));
      else fn();
    };
    arm();
    return () => clearTimeout(timer);
  },
};

/**
 * Resolves `true` after `ms` of `clock`'s time (default {@link systemClock}), or `false` as soon as
 * `signal` aborts (at once if it already has). The timer is cancelled on abort, so a stopped loop
 * leaves nothing scheduled. `ms = Infinity` arms no timer: it waits for the signal alone.
 */
export function sleep(ms: number, signal?: AbortSignal, clock: Clock = systemClock): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    let slept = false;
    const onAbort = () => {
      cancel();
      resolve(false);
    };
    const cancel = clock.setTimer(ms, () => {
      slept = true;
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    });
    // A clock may fire a due timer synchronously: then there is nothing left to abort.
    if (!slept) signal?.addEventListener("abort", onAbort, { once: true });
  });
}
