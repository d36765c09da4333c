/**
 * The operator child's side of the reconcile timeline: an observer of capstan's run traces
 * (`observeReconciles`) that writes each run, when it ends, as a {@link RunReport} line on the
 * report pipe (operator-child-protocol.ts, which states the guarantees). Registered by
 * operator-child-main.ts before `capstan run` starts the operator: the production package knows
 * nothing of `capstan dev`, it only has observers.
 */
import { writeSync } from "node:fs";
import type { ReconcileObserver, ReconcileRun } from "capstan";
import { formatReport } from "./operator-child-protocol.ts";

/**
 * Longest error message a report carries: a stack-sized message (a whole HTML error page quoted
 * by a client) is cut here, so that one run stays one modest line on the pipe.
 */
export const MAX_REPORTED_MESSAGE = 2_000;

/** Registers, with `observe` (capstan's `observeReconciles`), an observer writing runs to `fd`. */
export function reportRuns(observe: (observer: ReconcileObserver) => () => void, fd: number): () => void {
  let broken = false;
  return observe({
    onRun(run) {
      if (broken) return;
      try {
        writeSync(fd, formatReport({ kind: "run", run: bounded(run) }));
      } catch {
        // `capstan dev` is gone (EPIPE) or the pipe was never there: nobody listens any more.
        broken = true;
      }
    },
  });
}

/** `run` with its error message cut at {@link MAX_REPORTED_MESSAGE} characters. */
export function bounded(run: ReconcileRun): ReconcileRun {
  const outcome = run.outcome;
  if (outcome.result !== "error" || outcome.message.length <= MAX_REPORTED_MESSAGE) return run;
  return {
    ...run,
    outcome: { ...outcome, message: `${outcome.message.slice(0, MAX_REPORTED_MESSAGE)}… (cut)` },
  };
}
