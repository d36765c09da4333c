/**
 * `consistently`: asserts that something stays true for a while (Gomega's `Consistently`), the
 * other half of {@link waitUntil}: an operator must *not* do something (create a second Job, remove
 * a finalizer early, flip a Switch back) and the only way to see that is to keep looking.
 *
 * ## Guarantees
 * - The condition runs at once, then every `interval` ms after the previous run settled (never two
 *   at once), until `for` has passed since the start; then it resolves with the last value.
 * - The first run that returns (or resolves to) `undefined`, `null` or `false`, throws or rejects
 *   rejects the call at once with a {@link ConsistentlyError} saying how long it held, and why it
 *   stopped holding.
 * - Time is `performance.now()` (a test that fakes `Date` does not stop it); no timer is left behind.
 *
 * ## Caveats
 * - It proves only what it sampled: a state that broke and healed between two runs is not seen.
 *   Prefer watching (a watch sees every change) where the thing that must not happen is an object write.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { type Duration, toMilliseconds } from "capstan";
import { WAIT_UNTIL_INTERVAL_MS } from "./wait-for.ts";

/** Options of {@link consistently}. */
export interface ConsistentlyOptions {
  /** How long the condition must keep holding (`"2s"`, milliseconds). */
  for: Duration;
  /** Milliseconds between two runs (default {@link WAIT_UNTIL_INTERVAL_MS}). */
  interval?: number;
  /** What must hold, for the error message (`"one Job per schedule"`). */
  what?: string;
  /** Stops checking: the promise rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** The condition stopped holding before its time was up. */
export class ConsistentlyError extends Error {
  override readonly name = "ConsistentlyError";
  constructor(
    message: string,
    /** Milliseconds from the start to the run that failed. */
    readonly heldForMs: number,
  ) {
    super(message);
  }
}

/**
 * Runs `condition` until `options.for` has passed and fails as soon as one run does not hold.
 *
 * ```ts
 * await cluster.client.create(cronJob);
 * await consistently(async () => (await jobs.list()).items.length <= 1, { for: "2s", what: "at most one Job" });
 * ```
 *
 * @returns the condition's last value.
 * @throws ConsistentlyError when a run returns `undefined`, `null` or `false`, or throws.
 */
export async function consistently<R>(condition: () => R | Promise<R>, options: ConsistentlyOptions): Promise<R> {
  const started = performance.now();
  const until = started + toMilliseconds(options.for);
  const what = options.what ?? conditionText(condition);
  for (;;) {
    options.signal?.throwIfAborted();
    let value: R;
    try {
      value = await condition();
    } catch (err) {
      throw failure(what, started, `it threw: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (value === undefined || value === null || value === false) {
      throw failure(what, started, `it returned ${String(value)}`);
    }
    if (performance.now() >= until) return value;
    await sleep(options.interval ?? WAIT_UNTIL_INTERVAL_MS, undefined, { signal: options.signal }).catch(
      () => undefined,
    );
  }
}

function failure(what: string, started: number, why: string): ConsistentlyError {
  const heldForMs = Math.round(performance.now() - started);
  return new ConsistentlyError(`expected ${what} to keep holding, but after ${heldForMs} ms ${why}`, heldForMs);
}

function conditionText(condition: (...args: never[]) => unknown): string {
  const text = String(condition).replace(/\s+/g, " ").trim();
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}
