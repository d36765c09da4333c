/**
 * The per-object engine behind `op.on.*`, `op.timer` and `op.daemon`: one reconcile function per
 * watched kind (and namespace), run by the runtime's controller, so the work queue guarantees
 * that one object is never processed by two workers at once and retries use per-key delays.
 *
 * ## Expected flow (one reconcile of one object)
 * 1. Raw watch events buffered for the object go to the `on.event` handlers, in order.
 * 2. Gone from the cache: daemons are stopped, the object's memory is dropped. Done.
 * 3. Daemons are started or stopped to match the object (deleting, filters).
 * 4. Finalizer: added when a (non-optional) delete handler matches and the object is not being
 *    deleted; removed when none matches any more.
 * 5. An outcome whose write failed at an earlier visit is written (see Guarantees). Then the
 *    changing cause, as Kopf detects it (causes.ts, {@link detectCause}):
 *    - deletionTimestamp set and our finalizer present: `delete`; the finalizer is removed once
 *      every delete handler has succeeded;
 *    - deletionTimestamp set without our finalizer: nothing (never a second delete);
 *    - no stored essence: `create`;
 *    - stored essence differs from the current one: `update` (with `resume` handlers mixed in
 *      on the first sight in this process);
 *    - same essence, first sight in this process: `resume`; otherwise nothing.
 *    The cause's handlers (plus field handlers whose field changed) run in registration order,
 *    each one's outcome stored before the next starts (progress.ts). A handler that must wait
 *    (retry delay) stops the cause; the reconcile asks to be run again after that delay.
 * 6. Timers that are due run (not while the object is being deleted).
 * 7. The result asks the queue for the next visit: the earliest retry or timer.
 *
 * ## Guarantees
 * - At-least-once per handler and cause: a handler runs until its success (or final failure) is
 *   stored on the object. One that crashed between its effect and the write of its record runs
 *   again, once per such crash; a handler whose success is stored never runs again for the same
 *   cause (see docs/handlers.md, "Guarantees after a crash"). One whose record's write failed
 *   while the process lives (no connection, a 5xx, an answer lost) is not run again: its outcome
 *   is kept in memory and written first at the next visit, before the cause is judged.
 * - The changing cause is judged only on a cache that has caught up with our own last write
 *   (Kopf's consistency wait): until the informer delivers the resourceVersion our last patch
 *   returned (or {@link CONSISTENCY_TIMEOUT_MS} passed), the cause is not evaluated, so a stale
 *   cached copy never makes a handler run twice.
 * - The essence stored when a cause ends is the one the handlers saw, plus the handlers' own
 *   `ctx.patch` changes: a handler's own spec/label change does not trigger an update, a change
 *   by anyone else during the handlers does.
 *
 * ## Assumptions
 * - Objects come from the controller's informer cache (read-only, frozen); nothing here mutates them.
 *
 * ## Time
 * Timers, retry delays, daemons' sleeps and `ctx.now()` follow the operator's clock (`clock`); the
 * consistency wait for our own writes is real time (it waits for the network, not the schedule).
 *
 * ## Caveats
 * - An outcome whose write failed is held in memory too: a restart or a hand-over to another
 *   replica before it is written runs the handler again, as a crash does.
 * - Timers and daemon restarts are held in memory: after a restart, a timer first runs after its
 *   `initialDelay` again, and every daemon starts again.
 * - A delete handler that fails for good leaves the finalizer in place (the object stays
 *   Terminating): a human must fix the cause and remove the finalizer, or retry by editing the
 *   record. Kopf would release the object; we would rather not lose the cleanup silently.
 */
import type { Logger } from "pino";
import type { KubeClient } from "../client/kube-client.ts";
import type { KubeObject, ResourceKind } from "../client/types.ts";
import { outsideRuns } from "../client/write-trace.ts";
import type { CacheReader } from "../runtime/cache.ts";
import { type Clock, systemClock } from "../runtime/clock.ts";
import type { ReconcileContext } from "../runtime/controller.ts";
import { type Duration, toMilliseconds } from "../runtime/duration.ts";
import type { EventRecorder } from "../runtime/event-recorder.ts";
import { DeletedFinalStateUnknown, type InformerEventHandler } from "../runtime/informer.ts";
import { isDeleted, type ReconcileResult, type ReconcileTarget } from "../runtime/reconcile.ts";
import { RunTrace, runErrorMessage } from "../runtime/run-trace.ts";
import { detectCause } from "./causes.ts";
import { type ContextSources, newObjectPatch, objectContext, objectLogger, splitObjectPatch } from "./context.ts";
import { DaemonRun } from "./daemons.ts";
import { type Diff, jsonEqual } from "./diff.ts";
import { errorMessage, TemporaryError } from "./errors.ts";
import { type Essence, essenceOf } from "./essence.ts";
import {
  type CauseOutcome,
  type CauseRunner,
  executeCause,
  type OperatorTestHooks,
  runObject,
  type UnwrittenOutcome,
  writeUnwritten,
} from "./execution.ts";
import { matchesFilters } from "./filters.ts";
import type {
  ChangeHandlerSpec,
  DaemonContext,
  DaemonSpec,
  EventHandlerSpec,
  ObjectPatch,
  TimerContext,
  TimerSpec,
} from "./handlers.ts";
import type { OperatorNames } from "./naming.ts";
import { type Purpose, readEssence } from "./progress.ts";
import { type StateStorage, stateStorageFor } from "./state-storage.ts";
import { recordTimerRun, timerDueAt } from "./timers.ts";

export type { BookkeepingPoint, OperatorTestHooks } from "./execution.ts";

/**
 * Kopf's default `consistency_timeout` (5 s): how long to wait for the informer to deliver our own
 * last write before judging the cause on what the cache holds anyway (a relist may skip it).
 */
export const CONSISTENCY_TIMEOUT_MS = 5_000;
/**
 * Raw events kept per object until its next reconcile (also on a standby replica, whose
 * controllers do not run: the buffer is bounded by this, the newest events win); older ones are
 * dropped and logged.
 */
const MAX_BUFFERED_EVENTS = 100;

/** What a processor needs. */
export interface ProcessorOptions {
  kind: ResourceKind;
  /** The name of the controller that runs this processor: names its runs in run traces (run-trace.ts). */
  controller?: string;
  names: OperatorNames;
  changeHandlers: readonly ChangeHandlerSpec[];
  timers: readonly TimerSpec[];
  daemons: readonly DaemonSpec[];
  events: readonly EventHandlerSpec[];
  client: KubeClient;
  logger: Logger;
  recorder: EventRecorder;
  /** Aborts when the operator stops: daemons end at once. */
  stopSignal: AbortSignal;
  /**
   * Whether the kind has a status subresource: status writes (`ctx.patch.status`, handler
   * results) go there; for kinds without a status (ConfigMap, a CRD without a status schema)
   * they are dropped with a warning, since the API server would drop or prune them anyway.
   */
  statusSubresource: boolean;
  hooks?: OperatorTestHooks;
  /** The operator's clock (default {@link systemClock}). */
  clock?: Clock;
  /** Called whenever a daemon may have become idle (the manager's `idleness.changed`). */
  onSettled?: () => void;
  /**
   * Sharded operators: whether an object carries the drain label (it is being handed over to
   * another replica: its raw events are not buffered here any more).
   */
  isDraining?: (obj: KubeObject) => boolean;
}

/** What the processor remembers about one object, in memory (lost on restart by design). */
interface ObjectMemory {
  uid: string | undefined;
  handledOnce: boolean;
  expectedRv: string | undefined;
  expectedSince: number;
  firstSeen: number;
  lastEssence: Essence | undefined;
  lastChange: number;
  timers: Map<string, number>;
  daemons: Map<string, DaemonRun>;
  events: { type: "ADDED" | "MODIFIED" | "DELETED"; obj: KubeObject }[];
  latest: KubeObject | undefined;
  /** A handler's outcome whose write failed, written before anything else at the next visit. */
  unwritten: UnwrittenOutcome | undefined;
}

/** The reconcile engine of one kind in one watch scope; see the module documentation. */
export class KindProcessor {
  private readonly memory = new Map<string, ObjectMemory>();
  private readonly detach: (() => void)[] = [];
  /** Daemons told to stop (object gone or unmatched) that may still be returning. */
  private readonly retiring = new Set<DaemonRun>();
  private store: CacheReader | undefined;
  /** Keys handed over to another replica, until their object leaves this replica's cache. */
  private readonly released = new Set<string>();
  /** Where handler state goes (state-storage.ts); annotations once the cluster pruned it from status. */
  private storage: StateStorage;

  /** Names this processor's runs in run traces. */
  private readonly controllerName: string;
  private readonly clock: Clock;
  /** The part of every {@link CauseRunner} that does not depend on the object. */
  private readonly runnerBase: Omit<CauseRunner, "wrote" | "unwritten">;

  constructor(private readonly options: ProcessorOptions) {
    this.clock = options.clock ?? systemClock;
    this.controllerName = options.controller ?? `${options.kind.kind.toLowerCase()}-handlers`;
    this.storage = options.statusSubresource ? stateStorageFor(options.kind) : "annotations";
    this.runnerBase = this.sharedRunner();
  }

  /** Listens to the informer: buffers raw events, notices our own writes arriving. */
  attach(informer: {
    addEventHandler(h: InformerEventHandler<KubeObject>): () => void;
    readonly store: CacheReader;
  }): void {
    this.store = informer.store;
    const isDraining = this.options.isDraining;
    const seen = (type: "ADDED" | "MODIFIED" | "DELETED", obj: KubeObject) => {
      const key = keyOf(obj);
      if (isDraining !== undefined) {
        // Sharded: a handed-over object's events belong to its next replica.
        if (type === "DELETED" ? this.released.delete(key) : isDraining(obj)) return;
        this.released.delete(key);
      }
      const mem = this.memory.get(key);
      if (mem !== undefined && mem.expectedRv !== undefined && obj.metadata?.resourceVersion === mem.expectedRv) {
        mem.expectedRv = undefined;
      }
      if (this.options.events.length === 0) return;
      const target = mem ?? this.remember(key);
      target.events.push({ type, obj });
      if (target.events.length > MAX_BUFFERED_EVENTS) {
        target.events.shift();
        this.options.logger.warn({ key }, "raw event buffer full: dropped the oldest event");
      }
    };
    this.detach.push(
      informer.addEventHandler({
        onAdd: (obj) => seen("ADDED", obj),
        onUpdate: (oldObj, newObj) => {
          if (oldObj !== newObj) seen("MODIFIED", newObj);
        },
        onDelete: (d) => seen("DELETED", d instanceof DeletedFinalStateUnknown ? d.obj : d),
      }),
    );
  }

  /**
   * Lets go of `key` for a hand-over to another replica (sharding): its daemons are stopped and
   * awaited (their signal aborts; up to the daemon stop timeout), and what this replica remembered
   * of the object (timers' last runs, buffered raw events) is forgotten. Progress annotations,
   * finalizers and handler state are on the object and move with it. The controller's own
   * `release` has already let the in-flight handlers finish.
   */
  async release(key: string): Promise<void> {
    this.released.add(key);
    const mem = this.memory.get(key);
    if (mem === undefined) return;
    this.memory.delete(key);
    await Promise.all([...mem.daemons.values()].map((run) => run.stop()));
    this.options.onSettled?.();
  }

  /** Stops every daemon (waiting up to `timeoutMs` for each) and detaches from the informer. */
  async stop(timeoutMs: number): Promise<void> {
    for (const d of this.detach.splice(0)) d();
    const runs = [...this.memory.values()].flatMap((m) => [...m.daemons.values()]);
    await Promise.all([...runs, ...this.retiring].map((r) => r.stop(timeoutMs)));
  }

  private warnedNoStatus = false;

  /** Logged once per kind: handler results and status patches of a kind without status are dropped. */
  private warnNoStatus(logger: Logger): void {
    if (this.warnedNoStatus) return;
    this.warnedNoStatus = true;
    logger.warn(
      { kind: this.options.kind.kind },
      "this kind has no status subresource: handler results and ctx.patch.status are not stored (use storeResult: false)",
    );
  }

  /** Logged once per kind: the CRD in the cluster prunes `status.capstan`, so state moves to annotations. */
  private stateNotKept(logger: Logger): void {
    if (this.storage === "annotations") return;
    this.storage = "annotations";
    logger.warn(
      { kind: this.options.kind.kind },
      "the CRD in the cluster drops status.capstan (installed from an older manifest?): handler state is kept in annotations instead; apply the CRD generated now to keep it in status",
    );
  }

  /** Stops a daemon in the background; `stop()` still waits for it. */
  private retire(run: DaemonRun): void {
    this.retiring.add(run);
    void run.stop().then(() => this.retiring.delete(run));
  }

  /** Why this processor is busy: daemons at work (not sleeping on the clock); `undefined` when none is. */
  busy(): string | undefined {
    const working: string[] = [];
    for (const [key, m] of this.memory) {
      for (const [id, run] of m.daemons) if (run.busy) working.push(`${id} of ${key}`);
    }
    if (working.length === 0) return undefined;
    return `daemons at work (not in ctx.sleep): ${working.join(", ")}`;
  }

  /** Daemons currently alive (for tests and diagnostics). */
  runningDaemons(): number {
    let n = 0;
    for (const m of this.memory.values())
      for (const r of m.daemons.values()) if (!r.ended && r.state !== "stopped") n++;
    return n;
  }

  /** The reconcile function the controller calls. */
  async reconcile(target: ReconcileTarget<KubeObject>, ctx: ReconcileContext<KubeObject>): Promise<ReconcileResult> {
    const key = ctx.key.namespace ? `${ctx.key.namespace}/${ctx.key.name}` : ctx.key.name;
    const mem = this.memory.get(key);
    if (mem !== undefined) await this.drainEvents(mem);
    if (isDeleted(target)) {
      if (mem !== undefined) {
        for (const run of mem.daemons.values()) this.retire(run);
        this.memory.delete(key);
      }
      return undefined;
    }
    let m = mem ?? this.remember(key);
    if (m.uid !== undefined && m.uid !== target.metadata?.uid) {
      // Deleted and re-created under the same name between two visits: a new object, new memory.
      for (const run of m.daemons.values()) this.retire(run);
      m = this.remember(key);
    }
    m.uid = target.metadata?.uid;
    let obj: KubeObject = target;
    m.latest = obj;
    if (this.options.timers.length > 0) {
      // Only timers read when the essence last changed (their `idle`): without one, no essence here.
      const essence = essenceOf(obj);
      if (m.lastEssence === undefined || !jsonEqual(m.lastEssence, essence)) {
        m.lastEssence = essence;
        m.lastChange = this.clock.now();
      }
    }
    const deleting = obj.metadata?.deletionTimestamp !== undefined;
    this.syncDaemons(obj, m, deleting, ctx.signal);

    const delays: number[] = [];
    if (this.options.changeHandlers.length > 0) {
      const consistent = this.consistent(obj, m, Date.now());
      if (consistent === true) {
        const outcome = await this.processChanges(obj, m, deleting, ctx.signal);
        if (outcome.abandoned) return undefined;
        obj = outcome.obj;
        if (outcome.delayMs !== undefined) delays.push(outcome.delayMs);
      } else {
        delays.push(consistent);
      }
    }
    if (!deleting && this.options.timers.length > 0) {
      const next = await this.runTimers(obj, m, ctx.signal);
      if (next !== undefined) delays.push(next);
    }
    if (delays.length === 0) return undefined;
    // At least 1 ms: a zero delay means "no requeue" to the controller.
    return { requeueAfter: Math.max(1, Math.min(...delays)) };
  }

  private remember(key: string): ObjectMemory {
    const now = this.clock.now();
    const mem: ObjectMemory = {
      uid: undefined,
      handledOnce: false,
      expectedRv: undefined,
      expectedSince: 0,
      firstSeen: now,
      lastEssence: undefined,
      lastChange: now,
      timers: new Map(),
      daemons: new Map(),
      events: [],
      latest: undefined,
      unwritten: undefined,
    };
    this.memory.set(key, mem);
    return mem;
  }

  /**
   * `true` when the cache reflects our last write (or waiting timed out); else ms left to wait.
   * `now` and `expectedSince` are real time: the wait is for the network.
   */
  private consistent(obj: KubeObject, mem: ObjectMemory, now: number): true | number {
    if (mem.expectedRv === undefined) return true;
    if (obj.metadata?.resourceVersion === mem.expectedRv) {
      mem.expectedRv = undefined;
      return true;
    }
    const left = mem.expectedSince + CONSISTENCY_TIMEOUT_MS - now;
    if (left > 0) return left;
    this.options.logger.debug({ key: keyOf(obj) }, "own write not seen within the consistency timeout; going on");
    mem.expectedRv = undefined;
    return true;
  }

  private async drainEvents(mem: ObjectMemory): Promise<void> {
    for (const event of mem.events.splice(0)) {
      for (const h of this.options.events) {
        if (!matchesFilters(event.obj, h.options)) continue;
        const logger = objectLogger(this.options.logger, event.obj, { handler: h.id });
        try {
          await h.fn({
            type: event.type,
            obj: event.obj,
            name: event.obj.metadata?.name ?? "",
            namespace: event.obj.metadata?.namespace || undefined,
            logger,
            api: this.options.client,
          });
        } catch (err) {
          // Kopf's on.event errors are logged and ignored: a raw event is never retried.
          logger.error({ err }, "event handler failed; the event is not retried");
        }
      }
    }
  }

  // ---- daemons ----

  private syncDaemons(obj: KubeObject, mem: ObjectMemory, deleting: boolean, controllerSignal: AbortSignal): void {
    for (const spec of this.options.daemons) {
      const run = mem.daemons.get(spec.id);
      const wanted = !deleting && matchesFilters(obj, spec.options);
      if (wanted && run === undefined) {
        mem.daemons.set(spec.id, this.startDaemon(spec, mem, controllerSignal));
      } else if (!wanted && run !== undefined) {
        mem.daemons.delete(spec.id);
        this.retire(run);
      }
    }
  }

  private startDaemon(spec: DaemonSpec, mem: ObjectMemory, controllerSignal: AbortSignal): DaemonRun {
    const first = mem.latest as KubeObject;
    const logger = objectLogger(this.options.logger, first, { daemon: spec.id });
    const current = () => {
      const cached = this.store?.get(keyOf(first));
      return cached ?? mem.latest ?? first;
    };
    // Daemons are visible to the test clock's idleness (busy while at work, not while sleeping).
    // Outside the reconcile's run trace: a daemon outlives the run that started it, and its writes
    // are no run's (run-trace.ts), so its async work must not carry (and keep alive) that trace.
    return outsideRuns(() => this.newDaemonRun(spec, logger, current, controllerSignal));
  }

  private newDaemonRun(
    spec: DaemonSpec,
    logger: Logger,
    current: () => KubeObject,
    controllerSignal: AbortSignal,
  ): DaemonRun {
    const run: DaemonRun = new DaemonRun({
      id: spec.id,
      initialDelayMs: spec.initialDelayMs,
      backoffMs: spec.backoffMs,
      parentSignal: AbortSignal.any([controllerSignal, this.options.stopSignal]),
      logger,
      recorder: this.options.recorder,
      current,
      clock: this.clock,
      ...(this.options.onSettled === undefined ? {} : { onSettled: this.options.onSettled }),
      invoke: async (signal, retry) => {
        const base = objectContext(this.sources(logger, signal), current);
        const ctx: DaemonContext<KubeObject> = Object.defineProperties(base, {
          handlerId: { value: spec.id, enumerable: true },
          retry: { value: retry, enumerable: true },
          sleep: { value: (duration: Duration) => run.sleep(toMilliseconds(duration)), enumerable: true },
        }) as DaemonContext<KubeObject>;
        await spec.fn(ctx);
      },
    });
    return run;
  }

  private sources(logger: Logger, signal: AbortSignal): ContextSources {
    const { kind, client, recorder } = this.options;
    return { kind, client, logger, recorder, signal, clock: this.clock };
  }

  // ---- changing causes ----

  private async processChanges(
    obj: KubeObject,
    mem: ObjectMemory,
    deleting: boolean,
    signal: AbortSignal,
  ): Promise<CauseOutcome> {
    const { names, changeHandlers } = this.options;
    if (mem.unwritten !== undefined) {
      // A handler ran but its outcome's write failed: write it now (kept for the next visit if
      // this fails too), so the handler is judged done, not run a second time.
      const pending = mem.unwritten;
      obj = await writeUnwritten(this.causeRunner(mem), obj, pending, signal);
      mem.unwritten = undefined;
      if (pending.endsCause) mem.handledOnce = true;
    }
    const relevant = changeHandlers.filter((h) => matchesFilters(obj, h.options));
    // Kopf's "prematch": an object no handler is interested in gets no state written at all.
    const finalizers = obj.metadata?.finalizers ?? [];
    const hasFinalizer = finalizers.includes(names.finalizer);
    if (relevant.length === 0 && !hasFinalizer) return { obj };
    const needsFinalizer = relevant.some((h) => h.cause === "delete" && h.options.optional !== true);

    if (!deleting) {
      if (needsFinalizer && !hasFinalizer)
        obj = await this.setFinalizers(obj, [...finalizers, names.finalizer], signal, mem);
      if (!needsFinalizer && hasFinalizer) {
        obj = await this.setFinalizers(
          obj,
          finalizers.filter((f) => f !== names.finalizer),
          signal,
          mem,
        );
      }
      const cause = detectCause(obj, relevant, names, mem.handledOnce);
      if (cause === undefined) return { obj };
      const { purpose, handlers, stored, current, changes } = cause;
      const outcome = await this.runCause(obj, purpose, handlers, stored, current, changes, mem, signal);
      if (outcome.delayMs === undefined && !outcome.abandoned) mem.handledOnce = true;
      return outcome;
    }

    if (!hasFinalizer) {
      // Being deleted without our finalizer: either we never held it, or we released it already.
      // Only optional delete handlers may run, best effort, once per process.
      const optional = relevant.filter((h) => h.cause === "delete" && h.options.optional === true);
      if (optional.length === 0 || mem.handledOnce) return { obj };
      const outcome = await this.runCause(
        obj,
        "delete",
        optional,
        readEssence(obj, names),
        essenceOf(obj),
        [],
        mem,
        signal,
      );
      if (outcome.delayMs === undefined) mem.handledOnce = true;
      return outcome;
    }
    const handlers = relevant.filter((h) => h.cause === "delete");
    const stored = readEssence(obj, names);
    const outcome = await this.runCause(obj, "delete", handlers, stored, essenceOf(obj), [], mem, signal);
    if (outcome.abandoned || outcome.delayMs !== undefined) return outcome;
    if (outcome.failed) {
      this.options.logger.warn(
        objectRefFields(outcome.obj),
        "a delete handler failed permanently: the finalizer stays until someone intervenes",
      );
      return outcome;
    }
    const remaining = (outcome.obj.metadata?.finalizers ?? []).filter((f) => f !== names.finalizer);
    return { obj: await this.setFinalizers(outcome.obj, remaining, signal, mem) };
  }

  /**
   * Sets `metadata.finalizers` with the object's resourceVersion as a precondition: a finalizer
   * list written over a concurrent change would drop someone else's finalizer. A 409 is thrown
   * and the controller retries on the fresher cached object.
   */
  private async setFinalizers(
    obj: KubeObject,
    finalizers: string[],
    signal: AbortSignal,
    mem: ObjectMemory,
  ): Promise<KubeObject> {
    const updated = await this.patchObject(
      obj,
      // An empty list is removed (null), as the API server would not keep `finalizers: []` anyway.
      {
        metadata: {
          resourceVersion: obj.metadata?.resourceVersion,
          finalizers: finalizers.length > 0 ? finalizers : null,
        },
      },
      signal,
    );
    this.expect(mem, updated);
    return updated;
  }

  private expect(mem: ObjectMemory, obj: KubeObject): void {
    mem.expectedRv = obj.metadata?.resourceVersion;
    mem.expectedSince = Date.now();
    mem.latest = obj;
  }

  private patchObject(obj: KubeObject, body: unknown, signal: AbortSignal): Promise<KubeObject> {
    const ns = obj.metadata?.namespace || undefined;
    return this.options.client
      .resource(this.options.kind, ns)
      .patch(obj.metadata?.name ?? "", body, { type: "merge", signal });
  }

  private patchStatus(obj: KubeObject, status: Record<string, unknown>, signal: AbortSignal): Promise<KubeObject> {
    const ns = obj.metadata?.namespace || undefined;
    return this.options.client
      .resource(this.options.kind, ns)
      .patchStatus(obj.metadata?.name ?? "", { status }, { signal });
  }

  /** Runs `handlers` of one cause in order (execution.ts), tracking its writes in `mem`. */
  private runCause(
    obj: KubeObject,
    purpose: Purpose,
    handlers: readonly ChangeHandlerSpec[],
    oldEssence: Essence | undefined,
    newEssence: Essence,
    changes: Diff,
    mem: ObjectMemory,
    signal: AbortSignal,
  ): Promise<CauseOutcome> {
    return executeCause(this.causeRunner(mem), obj, purpose, handlers, oldEssence, newEssence, changes, signal);
  }

  /**
   * What executing a cause of the object remembered in `mem` needs (execution.ts): the processor's
   * part is built with the processor, so a visit adds one object and two functions.
   */
  private causeRunner(mem: ObjectMemory): CauseRunner {
    const processor = this;
    return {
      ...this.runnerBase,
      wrote(o) {
        processor.expect(mem, o);
      },
      unwritten(pending) {
        mem.unwritten = pending;
      },
    };
  }

  private sharedRunner(): Omit<CauseRunner, "wrote" | "unwritten"> {
    const processor = this;
    const { names, logger, recorder, statusSubresource, hooks } = this.options;
    return {
      names,
      controller: this.controllerName,
      kind: this.options.kind,
      logger,
      recorder,
      statusSubresource,
      hooks,
      clock: this.clock,
      stateStorage() {
        return processor.storage;
      },
      stateNotKept(l) {
        processor.stateNotKept(l);
      },
      sources(l, s) {
        return processor.sources(l, s);
      },
      patchObject(o, body, s) {
        return processor.patchObject(o, body, s);
      },
      patchStatus(o, status, s) {
        return processor.patchStatus(o, status, s);
      },
      warnNoStatus(l) {
        processor.warnNoStatus(l);
      },
    };
  }

  // ---- timers ----

  private async runTimers(obj: KubeObject, mem: ObjectMemory, signal: AbortSignal): Promise<number | undefined> {
    let earliest = Number.POSITIVE_INFINITY;
    const schedule = { nextAt: mem.timers, firstSeen: mem.firstSeen, lastChange: mem.lastChange };
    for (const t of this.options.timers) {
      if (!matchesFilters(obj, t.options)) {
        mem.timers.delete(t.id);
        continue;
      }
      const wait = timerDueAt(t, schedule) - this.clock.now();
      if (wait > 0) {
        earliest = Math.min(earliest, wait);
        continue;
      }
      const logger = objectLogger(this.options.logger, obj, { timer: t.id });
      const patch = newObjectPatch<KubeObject>();
      const snapshot = obj;
      const base = objectContext(this.sources(logger, signal), () => snapshot);
      const ctx = Object.defineProperties(base, {
        handlerId: { value: t.id, enumerable: true },
        patch: { value: patch, enumerable: true },
      }) as TimerContext<KubeObject>;
      const trace = RunTrace.begin(() => ({
        type: "timer",
        controller: this.controllerName,
        handler: t.id,
        object: runObject(this.options.kind, obj),
      }));
      let retryDelay: number | undefined;
      let result: unknown;
      let ok = false;
      let failure: string | undefined;
      try {
        result = await (trace === undefined ? t.fn(ctx) : trace.run(() => t.fn(ctx)));
        ok = true;
      } catch (err) {
        if (signal.aborted) {
          trace?.end({ result: "error", message: `abandoned, the operator is stopping: ${runErrorMessage(err)}` });
          return undefined;
        }
        if (err instanceof TemporaryError) retryDelay = err.delayMs;
        failure = runErrorMessage(err);
        logger.error({ err }, "timer failed");
        this.options.recorder.event(obj, "Warning", "TimerFailed", `Timer '${t.id}' failed: ${errorMessage(err)}`);
      }
      const write = () =>
        this.writeTimerPatch(
          obj,
          patch,
          ok && t.options.storeResult !== false ? { [t.id]: result } : {},
          result,
          signal,
          mem,
        );
      try {
        obj = await (trace === undefined ? write() : trace.run(write));
      } catch (err) {
        trace?.end({ result: "error", message: `writing the timer's outcome failed: ${runErrorMessage(err)}` });
        throw err;
      }
      const nextIn = recordTimerRun(t, schedule, this.clock.now(), retryDelay);
      trace?.end(
        failure === undefined
          ? { result: "requeue", afterMs: nextIn }
          : { result: "error", message: failure, retryInMs: nextIn },
      );
      earliest = Math.min(earliest, nextIn);
    }
    return Number.isFinite(earliest) ? earliest : undefined;
  }

  private async writeTimerPatch(
    obj: KubeObject,
    patch: ObjectPatch<KubeObject>,
    resultStatus: Record<string, unknown>,
    result: unknown,
    signal: AbortSignal,
    mem: ObjectMemory,
  ): Promise<KubeObject> {
    const parts = splitObjectPatch(patch);
    const status = { ...(parts.status ?? {}), ...(result === undefined ? {} : resultStatus) };
    if (Object.keys(status).length > 0 && this.options.statusSubresource) {
      obj = await this.patchStatus(obj, status, signal);
      this.expect(mem, obj);
    }
    const body: Record<string, unknown> = {};
    if (parts.metadata.labels !== undefined || parts.metadata.annotations !== undefined) body.metadata = parts.metadata;
    if (parts.spec !== undefined) body.spec = parts.spec;
    if (Object.keys(status).length > 0 && !this.options.statusSubresource) this.warnNoStatus(this.options.logger);
    if (Object.keys(body).length > 0) {
      obj = await this.patchObject(obj, body, signal);
      this.expect(mem, obj);
    }
    return obj;
  }
}

function keyOf(obj: KubeObject): string {
  const ns = obj.metadata?.namespace;
  return ns ? `${ns}/${obj.metadata?.name}` : (obj.metadata?.name ?? "");
}

function objectRefFields(obj: KubeObject): Record<string, unknown> {
  return { namespace: obj.metadata?.namespace, name: obj.metadata?.name };
}
