/**
 * When timers run: the scheduling decisions of `op.timer`, kept apart from their execution
 * (processing.ts runs due timers inside the object's reconcile, so a timer never runs at the
 * same time as the object's other handlers, and waiting is the work queue's delayed requeue:
 * no timer of our own to leak).
 *
 * ## Rules (Kopf's timers)
 * - First run: `initialDelay` after the first sight of the object in this process.
 * - Next run: `interval` after the previous run ended (not after it started, so slow runs
 *   never overlap or bunch up), or a TemporaryError's delay after a failed run.
 * - With `idle`, a run also waits until the essence has not changed for that long (every
 *   essential change pushes it back).
 *
 * ## Caveats
 * - In memory only: after a restart the schedule starts over from `initialDelay`.
 */
import type { TimerSpec } from "./handlers.ts";

/** What the schedule of one object's timers depends on. */
export interface TimerSchedule {
  /** When each timer is next due by its interval (absent: never run yet). */
  readonly nextAt: Map<string, number>;
  /** First sight of the object in this process (ms since the epoch). */
  readonly firstSeen: number;
  /** Last change of the object's essence (ms since the epoch). */
  readonly lastChange: number;
}

/** When `timer` may run next for this object (ms since the epoch). */
export function timerDueAt(timer: TimerSpec, schedule: TimerSchedule): number {
  const byInterval = schedule.nextAt.get(timer.id) ?? schedule.firstSeen + timer.initialDelayMs;
  const byIdle = timer.idleMs > 0 ? schedule.lastChange + timer.idleMs : 0;
  return Math.max(byInterval, byIdle);
}

/** Records a run that ended at `endedAt`; `retryDelayMs` when it failed with a TemporaryError. */
export function recordTimerRun(
  timer: TimerSpec,
  schedule: TimerSchedule,
  endedAt: number,
  retryDelayMs?: number,
): number {
  const wait = retryDelayMs ?? timer.intervalMs;
  schedule.nextAt.set(timer.id, endedAt + wait);
  return wait;
}
