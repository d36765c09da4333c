/**
 * Where a machine is in its flip cycle, decided from its status alone, so that a reconcile at any
 * moment (after a restart, on another replica, early because a Switch changed) reaches the same
 * decision:
 *
 * - `allDown`: no switch is up. `status.seenAt` is cleared, so the next switch turned up waits a
 *   full delay.
 * - `firstSeen`: a switch is up and `status.seenAt` is not set: write it now and wait a delay.
 * - `waiting`: a delay has not yet passed since `status.seenAt` nor since `status.lastFlipAt`: come
 *   back in `dueInMs`.
 * - `due`: flip one switch now (and record `status.lastFlipAt`).
 *
 * Guarantee: between two `due` answers for one machine lie at least `delayMs`, provided each flip
 * is recorded in `status.lastFlipAt` before the next decision is made from that status.
 */

/** The machine's flip cycle; see the module documentation. */
export type FlipState =
  | { readonly phase: "allDown" }
  | { readonly phase: "firstSeen" }
  | { readonly phase: "waiting"; readonly dueInMs: number }
  | { readonly phase: "due" };

/** The status fields the decision reads (RFC 3339 timestamps). */
export interface FlipStatus {
  readonly seenAt?: string;
  readonly lastFlipAt?: string;
}

/** Decides the machine's {@link FlipState} at `nowMs`. */
export function flipState(anyUp: boolean, status: FlipStatus, nowMs: number, delayMs: number): FlipState {
  if (!anyUp) return { phase: "allDown" };
  if (status.seenAt === undefined) return { phase: "firstSeen" };
  const dueAt = Math.max(timeOf(status.seenAt), timeOf(status.lastFlipAt)) + delayMs;
  return nowMs < dueAt ? { phase: "waiting", dueInMs: dueAt - nowMs } : { phase: "due" };
}

/**
 * Milliseconds of an RFC 3339 timestamp; 0 for none. The API server validates the `date-time`
 * format of both status fields, so one that does not parse was never written by us: 0 as well.
 */
export function timeOf(timestamp: string | undefined): number {
  const ms = timestamp === undefined ? Number.NaN : Date.parse(timestamp);
  return Number.isNaN(ms) ? 0 : ms;
}
