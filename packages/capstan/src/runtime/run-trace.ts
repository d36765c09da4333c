/**
 * Run traces: what the runtime tells a {@link ReconcileObserver} about every reconcile, handler and
 * timer run it makes. One {@link ReconcileRun} per run, when it ends: who ran (controller, handler),
 * for which object, when and for how long, how it ended (ok, requeued after N ms, an error with its
 * message and the delay before the retry) and the writes it made through any client (attributed by
 * client/write-trace.ts). `capstan dev` streams them to the dashboard's reconcile timeline; a test
 * or a custom exporter may register its own observer.
 *
 * ## Expected flow
 * ```ts
 * const stop = observeReconciles({ onRun: (run) => console.log(run.controller, run.outcome) });
 * // ... the operator runs ...
 * stop();
 * ```
 *
 * ## Guarantees
 * - Zero cost without an observer: the runtime asks {@link RunTrace.begin}, which returns
 *   `undefined` after one size check, and runs the user's function exactly as before (nothing
 *   allocated, no AsyncLocalStorage entered).
 * - Every run that began while an observer was registered is reported once, after it ended (also
 *   when it threw), to every observer registered at that time; runs that began before the first
 *   observer are not. Nested runs (a handler inside its kind's reconcile) name their `parent`.
 * - A write belongs to the innermost run around it (see client/write-trace.ts): a handler's writes
 *   go to the handler's run, not to the reconcile that called it, nor to a run of another object
 *   in flight at the same time. Writes finished after their run ended are not reported.
 * - An observer that throws is ignored (the run and the other observers go on). Observers are
 *   called synchronously on the run's path: keep them quick (buffer, or write a line).
 * - The registry is process-wide (on `globalThis`), so an observer registered through one copy of
 *   Capstan sees runs of an operator built with another copy in the same process.
 *
 * ## Caveats
 * - A handler run's duration covers the handler and the writing of its outcome (progress and
 *   status); its writes include those bookkeeping patches.
 * - A run abandoned because the operator stops (its signal aborted) is reported as an error with
 *   the abort's message; daemons and `on.event` handlers are not traced.
 */
import { type ClientWrite, currentWriteRecorder, recordWritesOf, type WriteRecorder } from "../client/write-trace.ts";

export type { ClientWrite } from "../client/write-trace.ts";

/** How a run ended. */
export type RunOutcome =
  /** Done: nothing more to do until something changes. */
  | { readonly result: "ok" }
  /** Done for now, to be run again after `afterMs` (a requeue, a handler's or timer's next visit). */
  | { readonly result: "requeue"; readonly afterMs: number }
  /**
   * Failed with `message`; retried after `retryInMs`, or, when it is absent, not retried (a
   * `TerminalError`/`PermanentError`, or retries exhausted).
   */
  | { readonly result: "error"; readonly message: string; readonly retryInMs?: number };

/** The object a run was about. */
export interface RunObject {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  /** `""` for a cluster-scoped kind. */
  readonly namespace: string;
  readonly name: string;
  /** Absent when the object was already gone from the cache (a reconcile of a deletion). */
  readonly uid?: string;
}

/** One run of a reconcile function, a change handler or a timer; see the module documentation. */
export interface ReconcileRun {
  /** Unique in this process, increasing in the order runs began. */
  readonly id: number;
  /** The run this one ran inside (a handler's reconcile). */
  readonly parent?: number;
  /** `reconcile`: a controller's reconcile function; `handler`: a change handler; `timer`: a timer. */
  readonly type: "reconcile" | "handler" | "timer";
  /** The controller's name (for handlers and timers, the one of their kind's engine). */
  readonly controller: string;
  /** The handler's or timer's id. */
  readonly handler?: string;
  /** A change handler's cause: `create`, `update`, `delete` or `resume`. */
  readonly cause?: string;
  readonly object: RunObject;
  /** When it began, in milliseconds since the epoch. */
  readonly start: number;
  readonly durationMs: number;
  readonly outcome: RunOutcome;
  /** The writes it made, in the order they finished, at most {@link MAX_WRITES_PER_RUN}. */
  readonly writes: readonly ClientWrite[];
  /** Writes left out past {@link MAX_WRITES_PER_RUN}. */
  readonly writesDropped?: number;
}

/** Told about every run; see the module documentation. */
export interface ReconcileObserver {
  onRun(run: ReconcileRun): void;
}

/**
 * Writes kept per run: a reconcile that writes hundreds of children is reported with its first
 * hundred and a count of the rest, so that one record stays a few kilobytes.
 */
export const MAX_WRITES_PER_RUN = 100;

/** Where the process-wide registry lives (see the guarantees: shared by copies of Capstan in one process). */
const REGISTRY_KEY = Symbol.for("capstan.reconcileObservers");

interface Registry {
  observers: Set<ReconcileObserver>;
  nextId: number;
}

function sharedRegistry(): Registry {
  const holder = globalThis as { [REGISTRY_KEY]?: Registry };
  let found = holder[REGISTRY_KEY];
  if (found === undefined) {
    found = { observers: new Set(), nextId: 1 };
    holder[REGISTRY_KEY] = found;
  }
  return found;
}

const registry = sharedRegistry();

/** Registers `observer` for every run from now on; returns the function that unregisters it. */
export function observeReconciles(observer: ReconcileObserver): () => void {
  if (typeof observer?.onRun !== "function") throw new TypeError("observeReconciles: expected { onRun(run) }");
  const entry = { onRun: (run: ReconcileRun) => observer.onRun(run) };
  registry.observers.add(entry);
  return () => registry.observers.delete(entry);
}

/** What a run is, given when it begins. */
export interface RunIdentity {
  type: ReconcileRun["type"];
  controller: string;
  handler?: string;
  cause?: string;
  object: RunObject;
}

/** One run in progress: collects its writes, reports it once at {@link RunTrace.end}. */
export class RunTrace implements WriteRecorder {
  readonly id: number;
  private readonly parent: number | undefined;
  private readonly startedAt = Date.now();
  private readonly startedClock = performance.now();
  private readonly writes: ClientWrite[] = [];
  private dropped = 0;
  private ended = false;

  private constructor(private readonly identity: RunIdentity) {
    this.id = registry.nextId++;
    const outer = currentWriteRecorder();
    this.parent = outer instanceof RunTrace ? outer.id : undefined;
  }

  /**
   * A trace of a run beginning now, or `undefined` when nobody observes runs: the fast path, which
   * costs one size check (`identity` is not even built).
   */
  static begin(identity: () => RunIdentity): RunTrace | undefined {
    return registry.observers.size === 0 ? undefined : new RunTrace(identity());
  }

  /** Runs `fn` as (part of) this run: the writes finished inside it are this run's. */
  run<R>(fn: () => R): R {
    return recordWritesOf(this, fn);
  }

  /** Called by the client (client/write-trace.ts). */
  wrote(write: ClientWrite): void {
    if (this.ended) return;
    if (this.writes.length < MAX_WRITES_PER_RUN) this.writes.push(write);
    else this.dropped++;
  }

  /** Ends the run and reports it to every observer; later calls do nothing. */
  end(outcome: RunOutcome): void {
    if (this.ended) return;
    this.ended = true;
    const run: ReconcileRun = {
      id: this.id,
      ...(this.parent === undefined ? {} : { parent: this.parent }),
      ...this.identity,
      start: this.startedAt,
      durationMs: Math.round((performance.now() - this.startedClock) * 1000) / 1000,
      outcome,
      writes: this.writes,
      ...(this.dropped > 0 ? { writesDropped: this.dropped } : {}),
    };
    for (const observer of registry.observers) {
      try {
        observer.onRun(run);
      } catch {
        // An observer's bug must not fail the run nor hide it from the others.
      }
    }
  }
}

/**
 * A run's error as the trace shows it: its message (the outcome already says whether it is
 * retried, so the class of a TerminalError or TemporaryError adds nothing).
 */
export function runErrorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
