/**
 * The errors a handler throws to steer its retries, with Kopf's meaning:
 *
 * - {@link TemporaryError}: "not yet": retried after `delay` (default 60 s, Kopf's default for
 *   temporary errors), counted against the handler's `retries` and `timeout`.
 * - {@link PermanentError}: "never": not retried; the failure is recorded on the object and
 *   posted as a Warning Event. It is the runtime's `TerminalError` under Kopf's name, so a
 *   handler may throw either, and a reconcile function that throws a PermanentError is not
 *   requeued either. The cause's other handlers still run (a create or update is then
 *   complete), but a permanently failed delete handler keeps the finalizer (see processing.ts).
 * - Any other error: retried with exponential backoff (the handler's `backoff`, doubling per
 *   attempt up to 60 s) until `retries` or `timeout` runs out, which counts as permanent.
 */
import { type Duration, toMilliseconds } from "../runtime/duration.ts";
import { TerminalError } from "../runtime/reconcile.ts";

/** Kopf's default delay of a temporary error (`kopf.TemporaryError(delay=60)`). */
export const DEFAULT_TEMPORARY_DELAY_MS = 60_000;

/** A failure that is expected to go away: retried after `delay`. */
export class TemporaryError extends Error {
  /** Milliseconds to wait before the next attempt. */
  readonly delayMs: number;

  constructor(message: string, options: { delay?: Duration; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = "TemporaryError";
    this.delayMs = options.delay === undefined ? DEFAULT_TEMPORARY_DELAY_MS : toMilliseconds(options.delay);
  }
}

/**
 * A failure that retrying cannot fix: recorded, never retried. A {@link TerminalError}, so the
 * runtime's controllers do not retry it either; handlers check for `TerminalError`, so one thrown
 * under the runtime's name counts the same.
 */
export class PermanentError extends TerminalError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = "PermanentError";
  }
}

/** Message of any thrown value, for progress records, events and logs. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}
