/**
 * Executing the handlers of one changing cause, as Kopf's `execution.py` does: each handler in
 * registration order, with its typed context; its outcome judged from what it returned or threw
 * (success; a `TemporaryError` or any other error: a retry after a delay, counted against its
 * `retries` and `timeout`; a `TerminalError`/`PermanentError` or exhausted retries: a permanent
 * failure) and stored on the object (progress.ts) before the next one starts. A handler that must
 * wait ends the execution; the processor (processing.ts, step 5) asks for a visit after the delay.
 */
import type { Logger } from "pino";
import type { KubeObject, ResourceKind } from "../client/types.ts";
import type { Clock } from "../runtime/clock.ts";
import { type Duration, toMilliseconds } from "../runtime/duration.ts";
import type { EventRecorder } from "../runtime/event-recorder.ts";
import { TerminalError } from "../runtime/reconcile.ts";
import { type RunOutcome, RunTrace, runErrorMessage } from "../runtime/run-trace.ts";
import {
  applyMergePatch,
  type ContextSources,
  newObjectPatch,
  objectContext,
  objectLogger,
  splitObjectPatch,
} from "./context.ts";
import { DEFAULT_BACKOFF_MS, MAX_BACKOFF_MS } from "./daemons.ts";
import { type Diff, diff, valueAt } from "./diff.ts";
import { errorMessage, TemporaryError } from "./errors.ts";
import { type Essence, essenceOf, isCapstanAnnotation } from "./essence.ts";
import type { ChangeContext, ChangeHandlerSpec } from "./handlers.ts";
import { ESSENCE_KEY, type OperatorNames } from "./naming.ts";
import {
  finishEntries,
  type ProgressRecord,
  type Purpose,
  progressEntries,
  readProgress,
  readState,
  type StateEntries,
  staleProgressKeys,
} from "./progress.ts";
import { leftoverAnnotations, type StateStorage, stateAnnotations, stateStatus, statusHolds } from "./state-storage.ts";

/** Information the test hook gets between a handler's return and the write of its record. */
export interface BookkeepingPoint {
  handlerId: string;
  cause: Purpose;
  obj: KubeObject;
  error: unknown;
}

/** Hooks for tests that simulate crashes; never needed in production. */
export interface OperatorTestHooks {
  /**
   * Called after a change handler returned or threw and before its outcome is written. Return
   * `"abandon"` to drop the bookkeeping, as if the process had died at that point.
   */
  beforeBookkeeping?(point: BookkeepingPoint): "abandon" | undefined | Promise<"abandon" | undefined>;
}

/**
 * How a cause's execution ended: the object as last written; `delayMs` when a handler waits for a
 * retry; `abandoned` when the operator is stopping (no record written); `failed` when a handler
 * failed for good.
 */
export type CauseOutcome = { obj: KubeObject; delayMs?: number; abandoned?: boolean; failed?: boolean };

/**
 * A handler's outcome whose write failed (no connection, a 5xx, an answer lost on the way): the
 * handler has run, so the processor writes this again at the object's next visit, before judging
 * its cause, instead of running the handler again. Only a crash (the process gone) loses it.
 */
export interface UnwrittenOutcome {
  readonly handlerId: string;
  readonly purpose: Purpose;
  readonly outcome: Outcome;
  /** The write ends the cause (stores the essence): the object then counts as handled once. */
  readonly endsCause: boolean;
}

/** What executing a cause needs of the processor: its settings, and its writes, which it tracks. */
export interface CauseRunner {
  readonly names: OperatorNames;
  /** Names the runs in run traces (run-trace.ts): the kind's controller. */
  readonly controller: string;
  /** The handled kind, for run traces. */
  readonly kind: ResourceKind;
  readonly logger: Logger;
  readonly recorder: EventRecorder;
  /** Whether the kind has a status subresource (see `ProcessorOptions.statusSubresource`). */
  readonly statusSubresource: boolean;
  /** Where handler state is kept on objects of the kind now (state-storage.ts); may change to annotations. */
  stateStorage(): StateStorage;
  /** The cluster's schema pruned the state from a status write: keep it in annotations from now on. */
  stateNotKept(logger: Logger): void;
  readonly hooks: OperatorTestHooks | undefined;
  /** The operator's clock: retry delays, `started`, timeouts. */
  readonly clock: Clock;
  /** What a handler's context is built from. */
  sources(logger: Logger, signal: AbortSignal): ContextSources;
  /** A merge patch of the object; resolves with the object written. */
  patchObject(obj: KubeObject, body: unknown, signal: AbortSignal): Promise<KubeObject>;
  /** A merge patch of the object's status subresource. */
  patchStatus(obj: KubeObject, status: Record<string, unknown>, signal: AbortSignal): Promise<KubeObject>;
  /** Records a write of ours, whose resourceVersion the consistency wait then expects. */
  wrote(obj: KubeObject): void;
  /** Keeps a handler's outcome whose write failed, to be written at the next visit ({@link writeUnwritten}). */
  unwritten(pending: UnwrittenOutcome): void;
  /** Warns (once) that status writes are dropped for a kind without a status subresource. */
  warnNoStatus(logger: Logger): void;
}

/** Runs `handlers` of one cause in order; see the module documentation. */
export async function executeCause(
  runner: CauseRunner,
  obj: KubeObject,
  purpose: Purpose,
  handlers: readonly ChangeHandlerSpec[],
  oldEssence: Essence | undefined,
  newEssence: Essence,
  changes: Diff,
  signal: AbortSignal,
): Promise<CauseOutcome> {
  const { names } = runner;
  let purge: Record<string, null> = {};
  for (const key of staleProgressKeys(obj, names, purpose)) purge[key] = null;
  let handled: Essence = newEssence;
  let failed = false;
  const finished = (h: ChangeHandlerSpec, o: KubeObject) => {
    const r = readProgress(o, names, h.id, purpose);
    return r?.success === true || r?.failure === true;
  };

  for (let i = 0; i < handlers.length; i++) {
    const h = handlers[i] as ChangeHandlerSpec;
    const record = readProgress(obj, names, h.id, purpose);
    if (record?.success === true) continue;
    if (record?.failure === true) {
      failed = true;
      continue;
    }
    const now = runner.clock.now();
    if (record?.delayed !== undefined) {
      const at = Date.parse(record.delayed);
      if (at > now) return { obj, delayMs: at - now };
    }
    const started = record === undefined ? new Date(now) : new Date(record.started);
    const retry = record?.retries ?? 0;
    const logger = objectLogger(runner.logger, obj, { handler: h.id, cause: purpose });
    const patch = newObjectPatch<KubeObject>();
    const snapshot = obj;
    const base = objectContext(runner.sources(logger, signal), () => snapshot);
    const fieldPath = h.field;
    const ctx: ChangeContext<KubeObject, unknown> = Object.defineProperties(base, {
      cause: { value: purpose, enumerable: true },
      handlerId: { value: h.id, enumerable: true },
      diff: {
        value:
          fieldPath === undefined
            ? changes
            : diff(valueAt(oldEssence, fieldPath), valueAt(newEssence, fieldPath), fieldPath),
        enumerable: true,
      },
      old: { value: fieldPath === undefined ? oldEssence : valueAt(oldEssence, fieldPath), enumerable: true },
      new: { value: fieldPath === undefined ? newEssence : valueAt(newEssence, fieldPath), enumerable: true },
      retry: { value: retry, enumerable: true },
      started: { value: started, enumerable: true },
      patch: { value: patch, enumerable: true },
    }) as ChangeContext<KubeObject, unknown>;

    const trace = RunTrace.begin(() => ({
      type: "handler",
      controller: runner.controller,
      handler: h.id,
      cause: purpose,
      object: runObject(runner.kind, obj),
    }));
    let result: unknown;
    let error: unknown;
    let threw = false;
    try {
      result = await (trace === undefined ? h.fn(ctx) : trace.run(() => h.fn(ctx)));
    } catch (err) {
      error = err;
      threw = true;
    }
    // Stopping (leadership lost, drain timed out): leave no record; the next leader re-runs it.
    if (threw && signal.aborted) {
      trace?.end({ result: "error", message: `abandoned, the operator is stopping: ${runErrorMessage(error)}` });
      return { obj, abandoned: true };
    }
    const hook = await runner.hooks?.beforeBookkeeping?.({ handlerId: h.id, cause: purpose, obj, error });
    if (hook === "abandon") {
      trace?.end({ result: "error", message: "abandoned before its outcome was written" });
      return { obj, abandoned: true };
    }

    const stoppedAt = new Date(runner.clock.now()).toISOString();
    let next: ProgressRecord;
    let delayMs: number | undefined;
    let traced: RunOutcome = { result: "ok" };
    if (!threw) {
      next = { purpose, started: started.toISOString(), retries: retry, success: true, stopped: stoppedAt };
      logger.info("handler succeeded");
    } else {
      const retries = retry + 1;
      const message = errorMessage(error);
      const timeoutMs = h.options.timeout === undefined ? undefined : toMs(h.options.timeout);
      const retryDelay =
        error instanceof TemporaryError
          ? error.delayMs
          : Math.min(toMs(h.options.backoff ?? DEFAULT_BACKOFF_MS) * 2 ** retry, MAX_BACKOFF_MS);
      // Kopf's look-ahead: fail now rather than retry into a certain timeout or retry limit.
      const outOfRetries = h.options.retries !== undefined && retries >= h.options.retries;
      const outOfTime = timeoutMs !== undefined && runner.clock.now() + retryDelay - started.getTime() >= timeoutMs;
      const exhausted = outOfRetries || outOfTime;
      if (error instanceof TerminalError || exhausted) {
        failed = true;
        next = { purpose, started: started.toISOString(), retries, failure: true, stopped: stoppedAt, message };
        const why =
          error instanceof TerminalError
            ? "failed permanently"
            : outOfRetries
              ? "has exhausted its retries"
              : `would exceed its timeout of ${timeoutMs} ms`;
        logger.error({ err: error, retries }, `handler ${why}`);
        traced = { result: "error", message: runErrorMessage(error) };
        runner.recorder.event(obj, "Warning", "HandlerFailed", `Handler '${h.id}' ${why}: ${message}`);
      } else {
        delayMs = retryDelay;
        next = {
          purpose,
          started: started.toISOString(),
          retries,
          delayed: new Date(runner.clock.now() + delayMs).toISOString(),
          message,
        };
        logger.error({ err: error, retries, retryInMs: delayMs }, "handler failed; will retry");
        traced = { result: "error", message: runErrorMessage(error), retryInMs: delayMs };
        runner.recorder.event(
          obj,
          "Warning",
          "HandlerRetrying",
          `Handler '${h.id}' failed ${error instanceof TemporaryError ? "temporarily" : "with an exception"}, will retry: ${message}`,
        );
      }
    }

    const parts = splitObjectPatch(patch);
    let status = parts.status ?? {};
    if (!threw && result !== undefined && h.options.storeResult !== false) status = { ...status, [h.id]: result };
    handled = absorbOwnChanges(handled, parts);
    const done = delayMs === undefined;
    const laterPending = handlers.slice(i + 1).some((later) => !finished(later, obj));
    const endsCause = done && !laterPending && purpose !== "delete";
    const state = { ...purge, ...(endsCause ? finishEntries(obj, names, handled) : progressEntries(h.id, next)) };
    purge = {};
    const outcome: Outcome = { state, status, parts };
    const write = () => writeOutcome(runner, obj, outcome, signal, logger);
    try {
      obj = await (trace === undefined ? write() : trace.run(write));
    } catch (err) {
      traced = { result: "error", message: `writing the handler's outcome failed: ${runErrorMessage(err)}` };
      // The handler ran: what it did is written again at the next visit; it is not run again.
      runner.unwritten({ handlerId: h.id, purpose, outcome, endsCause });
      throw err;
    } finally {
      trace?.end(traced);
    }
    if (!done) return { obj, delayMs };
    if (endsCause) return { obj, failed };
  }
  // Every handler had finished already (or none matched): end the cause, store the essence.
  let state: StateEntries = purge;
  if (purpose !== "delete") {
    state = { ...purge, ...finishEntries(obj, names, handled) };
    const stored = readState(obj, names)[ESSENCE_KEY];
    if (Object.keys(state).length === 1 && stored !== undefined && stored === state[ESSENCE_KEY]) state = {};
  }
  if (Object.keys(state).length > 0)
    obj = await writeOutcome(runner, obj, { state, status: {} }, signal, runner.logger);
  return { obj, failed };
}

/**
 * Writes an outcome kept by {@link CauseRunner.unwritten} (the same merge patches again: writing
 * one twice gives the same object). Resolves with the object written; a failure leaves it to the
 * caller to keep it for the next visit.
 */
export function writeUnwritten(
  runner: CauseRunner,
  obj: KubeObject,
  pending: UnwrittenOutcome,
  signal: AbortSignal,
): Promise<KubeObject> {
  const logger = objectLogger(runner.logger, obj, { handler: pending.handlerId, cause: pending.purpose });
  logger.info("writing the outcome of a handler whose earlier write failed (the handler is not run again)");
  return writeOutcome(runner, obj, pending.outcome, signal, logger);
}

/** What one handler's bookkeeping writes: state entries, its status, and its own `ctx.patch`. */
export interface Outcome {
  state: StateEntries;
  status: Record<string, unknown>;
  parts?: ReturnType<typeof splitObjectPatch>;
}

/**
 * Writes a handler's outcome in as few requests as the kind allows: with state in status, the
 * status result and the state in one status write (after the object write, if the handler
 * patched spec or metadata); with state in annotations, the status write (if any) and then the
 * object write carrying the state. Either way the state goes in the last write, so a crash
 * between the two leaves the handler unrecorded (it runs again), never recorded with part of its
 * outcome lost.
 */
async function writeOutcome(
  runner: CauseRunner,
  obj: KubeObject,
  outcome: Outcome,
  signal: AbortSignal,
  logger: Logger,
): Promise<KubeObject> {
  const { names } = runner;
  const { state, status, parts } = outcome;
  const hasStatus = Object.keys(status).length > 0;
  if (hasStatus && !runner.statusSubresource) runner.warnNoStatus(logger);
  const inStatus = runner.statusSubresource && runner.stateStorage() === "status";
  const annotations: Record<string, string | null> = {
    ...parts?.metadata.annotations,
    ...(inStatus ? leftoverAnnotations(obj, names, state) : stateAnnotations(names, state)),
  };
  const metadata: Record<string, unknown> = {};
  if (parts?.metadata.labels !== undefined) metadata.labels = parts.metadata.labels;
  if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
  const body: Record<string, unknown> = {};
  if (Object.keys(metadata).length > 0) body.metadata = metadata;
  if (parts?.spec !== undefined) body.spec = parts.spec;
  const write = async (request: Promise<KubeObject>) => {
    const written = await request;
    runner.wrote(written);
    return written;
  };

  if (!inStatus) {
    if (hasStatus && runner.statusSubresource) obj = await write(runner.patchStatus(obj, status, signal));
    if (Object.keys(body).length > 0) obj = await write(runner.patchObject(obj, body, signal));
    return obj;
  }
  if (Object.keys(body).length > 0) obj = await write(runner.patchObject(obj, body, signal));
  obj = await write(runner.patchStatus(obj, { ...status, ...stateStatus(names, state) }, signal));
  if (!statusHolds(obj, names, state)) {
    runner.stateNotKept(logger);
    obj = await write(runner.patchObject(obj, { metadata: { annotations: stateAnnotations(names, state) } }, signal));
  }
  return obj;
}

/** The essence after a handler's own patch: its spec, label and (non-Capstan) annotation changes. */
function absorbOwnChanges(essence: Essence, parts: ReturnType<typeof splitObjectPatch>): Essence {
  // Most handlers patch only status: the essence is the one given, normalised already.
  if (parts.spec === undefined && parts.metadata.labels === undefined && parts.metadata.annotations === undefined) {
    return essence;
  }
  let out: Essence = essence;
  if (parts.spec !== undefined) out = applyMergePatch(out, { spec: parts.spec }) as Essence;
  const meta: Record<string, unknown> = {};
  if (parts.metadata.labels !== undefined) meta.labels = parts.metadata.labels;
  if (parts.metadata.annotations !== undefined) {
    const own = Object.entries(parts.metadata.annotations).filter(([k]) => !isCapstanAnnotation(k));
    if (own.length > 0) meta.annotations = Object.fromEntries(own);
  }
  if (Object.keys(meta).length > 0) out = applyMergePatch(out, { metadata: meta }) as Essence;
  // Re-normalise (empty maps dropped) exactly as essenceOf would.
  return essenceOf({ ...(out as KubeObject), metadata: (out.metadata ?? {}) as KubeObject["metadata"] });
}

function toMs(d: Duration): number {
  return toMilliseconds(d);
}

/** The object of a run trace (run-trace.ts). */
export function runObject(kind: ResourceKind, obj: KubeObject) {
  const uid = obj.metadata?.uid;
  return {
    group: kind.group,
    version: kind.version,
    kind: kind.kind,
    namespace: obj.metadata?.namespace ?? "",
    name: obj.metadata?.name ?? "",
    ...(uid === undefined ? {} : { uid }),
  };
}
