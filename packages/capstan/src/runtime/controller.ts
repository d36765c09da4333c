/**
 * A controller: informer events -> keys in a work queue -> workers calling the reconcile function
 * (the contract is in reconcile.ts). This is the primitive the builder (controller-builder.ts)
 * assembles; build one directly to wire your own sources, or use `controller.queue` to enqueue
 * keys from anywhere (a timer, an external webhook).
 *
 * ## Expected flow
 * `new Controller({ name, primary, sources, reconcile, ... })`, then `start(signal)` once the
 * informers run (the manager starts it after the caches synced, and only while leading). Stop it
 * with `stop(drainTimeout)` (graceful) or by aborting the start signal (at once).
 *
 * ## States
 * `idle` -> `running` -> `draining` (graceful stop: no new keys taken, in-flight reconciles
 * finishing) -> `stopped`. Aborting the start signal goes straight to `stopped`.
 *
 * ## Guarantees
 * - A key is never reconciled by two workers at once (the work queue's guarantee), and at most
 *   `maxConcurrentReconciles` reconciles run at any time.
 * - Event handlers only enqueue keys (never call reconcile), so an informer is never slowed
 *   down by a reconcile.
 * - After `stop()` resolves, no handler is registered, the queue holds no timer, and no worker
 *   takes another key. Reconciles still running after the drain timeout have had their signal
 *   aborted; one that ignores its signal finishes in the background, unawaited.
 *
 * ## Assumptions
 * - The primary informer's store keys objects as `namespace/name` (the cache's key), which is
 *   also the work-queue key; sources map their objects to such keys.
 */
import { randomUUID } from "node:crypto";
import { setMaxListeners } from "node:events";
import pino, { type Logger } from "pino";
import type { KubeClient } from "../client/kube-client.ts";
import type { ResourceClient } from "../client/typed-resource-client.ts";
import type { KubeObject, ResourceKind } from "../client/types.ts";
import { apiVersionOf } from "../client/types.ts";
import { type CacheReader, objectKey, splitObjectKey } from "./cache.ts";
import { type Clock, sleep, systemClock } from "./clock.ts";
import { type Duration, toMilliseconds } from "./duration.ts";
import type { EventRecorder, EventType } from "./event-recorder.ts";
import { DeletedFinalStateUnknown, type InformerEventHandler } from "./informer.ts";
import type { ControllerObserver, RuntimeMetrics } from "./metrics.ts";
import { AppliedChildren, WriteExpectations } from "./own-writes.ts";
import { allowsCreate, allowsDelete, allowsUpdate, type Predicate } from "./predicates.ts";
import type { RateLimiter } from "./rate-limiter.ts";
import {
  type DeletedObject,
  type ObjectRef,
  type ReconcileOutcome,
  type ReconcileResult,
  type ReconcileTarget,
  TerminalError,
} from "./reconcile.ts";
import { type RunObject, type RunOutcome, RunTrace, runErrorMessage } from "./run-trace.ts";
import { reconcileClient, requeueWhenThrottled, type ThrottlePolicy } from "./throttling.ts";
import { WorkQueue } from "./workqueue.ts";

/** What a controller needs of an informer: its events and its cache. */
export interface EventSource<T extends KubeObject> {
  addEventHandler(handler: InformerEventHandler<T>): () => void;
  readonly store: CacheReader<T>;
}

/** Where a watched kind's events go: maps an object to the keys of the primary objects to reconcile. */
export interface WatchSource<T extends KubeObject = KubeObject> {
  source: EventSource<T>;
  /** Keys (`namespace/name`) of primary objects to reconcile for `obj`; may be empty. */
  map(obj: T): readonly string[];
  predicates?: readonly Predicate<T>[];
  /** The kind, so reconcile can read this cache with `ctx.cache(kind)`. */
  kind?: ResourceKind<T>;
}

/**
 * What a reconcile function gets besides the object. Every member works destructured
 * (`async (obj, { client, cache, logger }) => ...`): none relies on `this`.
 */
export interface ReconcileContext<T extends KubeObject = KubeObject> {
  /** The reconciled object's namespace (`""` for cluster scope) and name. */
  readonly key: ObjectRef;
  /** The controller's name. */
  readonly controller: string;
  /** Aborts when this process must stop acting: leadership lost, or the shutdown drain timed out. */
  readonly signal: AbortSignal;
  /** A logger bound to controller, namespace, name and a reconcile id. */
  readonly logger: Logger;
  /**
   * The operator's current time (its clock's: the system's, or a test's that moves it). Read
   * the time here rather than with `new Date()`, so a test that moves the clock moves it for you.
   */
  now(): Date;
  /** The API client. */
  readonly client: KubeClient;
  /** The read-only cache of a kind this controller watches (`for`, `owns` or `watches`). */
  cache<K extends KubeObject>(kind: ResourceKind<K>): CacheReader<K>;
  /** Records an event about the reconciled object (no-op when it is gone). */
  event(type: EventType, reason: string, message: string): void;
  /** Records events about any object. */
  readonly recorder: EventRecorder;
  /**
   * A copy of `child` with this object as its controller owner (`controller: true`,
   * `blockOwnerDeletion: true`) and, for a namespaced owner, its namespace. Throws when the object
   * is gone or when `child` already has another controller owner.
   */
  adopt<C extends KubeObject>(child: C): C;
  /**
   * Server-side apply of `obj` (its namespace defaults to the reconciled object's), with the
   * controller's name as field manager and `force: true`: a controller owns the fields it applies.
   * When this controller applied the same configuration to the same child before and the child's
   * cached copy is still the version that apply produced (a kind it `owns` or `watches`), nothing
   * would change: no request is sent and a copy of the cached child is returned.
   */
  apply<K extends KubeObject>(kind: ResourceKind<K>, obj: K): Promise<K>;
  /**
   * Merge-patches the reconciled object's `status` subresource: `ctx.patchStatus({ ready: true })`.
   * The next reconcile of the object waits (up to 5 s) until the cache shows this write, so it never
   * judges a copy older than its own status.
   */
  patchStatus(status: Record<string, unknown>): Promise<T>;
}

/** The user's reconcile function (see reconcile.ts for the contract). */
export type ReconcileFunction<T extends KubeObject> = (
  target: ReconcileTarget<T>,
  ctx: ReconcileContext<T>,
) => ReconcileResult | Promise<ReconcileResult> | void | Promise<void>;

/**
 * What a controller of a sharded manager needs to know of sharding (sharding.ts builds it): which
 * objects are being handed over, and the label its children carry.
 */
export interface ControllerShard {
  /** Whether `obj` carries the drain label: its key must not be reconciled here any more. */
  isDraining(obj: KubeObject): boolean;
  /** Labels `ctx.apply` stamps on every child, so the child is in this replica's share too. */
  readonly childLabels: Readonly<Record<string, string>>;
}

/** Options of a {@link Controller}. */
export interface ControllerOptions<T extends KubeObject> {
  /** Unique per manager: names the queue, the metrics series and the logs. */
  name: string;
  /** The reconciled kind (for owner references, status patches and `ctx.cache`). */
  kind: ResourceKind<T>;
  /** Events of the reconciled kind; every event enqueues the object's own key. */
  primary: EventSource<T>;
  primaryPredicates?: readonly Predicate<T>[];
  /** Other watched kinds (`owns`, `watches`). */
  sources?: readonly WatchSource<KubeObject>[];
  reconcile: ReconcileFunction<T>;
  /** Reconciles in flight at most (default {@link DEFAULT_MAX_CONCURRENT_RECONCILES}). */
  maxConcurrentReconciles?: number;
  /** Per-key retry delays; client-go's default controller limiter (on `clock`) otherwise. */
  rateLimiter?: RateLimiter<string>;
  /** The clock of `requeueAfter`, retry delays and `ctx.now()` (default {@link systemClock}). */
  clock?: Clock;
  /** Called whenever the controller may have become idle (a reconcile ended), for Manager.whenIdle. */
  onSettled?: () => void;
  /**
   * A reconcile's request answered 429 with Retry-After: `"requeue"` (default) fails it at once and
   * reconciles the key again after Retry-After, freeing the worker; `"wait"` sleeps it out inside the
   * request, as client-go does (throttling.ts).
   */
  throttled?: ThrottlePolicy;
  client?: KubeClient;
  recorder?: EventRecorder;
  logger?: Logger;
  metrics?: RuntimeMetrics;
  /**
   * Set on a sharded manager: objects carrying the drain label are not reconciled, keys let go of
   * with {@link Controller.release} are forgotten, and events of other watched kinds reach only
   * objects this replica holds (a child's event must not reconcile a parent that moved away).
   */
  shard?: ControllerShard;
}

/**
 * Reconciles a controller runs at once unless told otherwise. controller-runtime's default is 1: a
 * goroutine per worker costs little, but one key at a time leaves a Node process idle while each
 * reconcile waits on its round trips (issue 14 measured the four-worker handler engine ~98%
 * blocked, keys waiting ~2.9 s in the queue). On bench/throughput.ts (3,000 objects, separate
 * server, operator and load processes on 2 cores) throughput rose from 1 to 16 workers (352 ->
 * 560 objects/s) and stayed flat to 64 and 256 (the API server saturated) while peak RSS grew by
 * ~20 and ~50 MB; so 16. Different keys only: one key is never reconciled twice at once.
 */
export const DEFAULT_MAX_CONCURRENT_RECONCILES = 16;

/** Where a controller is. */
export type ControllerState = "idle" | "running" | "draining" | "stopped";

const noRecorder: EventRecorder = { event() {} };

/** Identity of a kind for cache lookups (version-independent, as owner references are). */
function kindId(kind: Pick<ResourceKind, "group" | "kind">): string {
  return `${kind.kind}.${kind.group}`;
}

/** A controller; see the module documentation. */
export class Controller<T extends KubeObject = KubeObject> {
  readonly name: string;
  readonly kind: ResourceKind<T>;
  /** The work queue (escape hatch: `controller.queue.add("ns/name")` reconciles that object). */
  readonly queue: WorkQueue<string>;
  private readonly options: ControllerOptions<T>;
  private readonly workers: number;
  private readonly logger: Logger;
  private readonly recorder: EventRecorder;
  private readonly observer: ControllerObserver | undefined;
  private readonly clock: Clock;
  private readonly caches = new Map<string, CacheReader<KubeObject>>();
  /** Resource clients by kind (object identity) and namespace (`""` for none); see `resourceClient`. */
  private readonly clients = new WeakMap<ResourceKind, Map<string, ResourceClient<KubeObject>>>();
  private readonly removers: (() => void)[] = [];
  /** Our own status writes the cache has not shown yet (own-writes.ts). */
  private readonly expectations = new WriteExpectations();
  /** What `ctx.apply` last applied to each child (own-writes.ts). */
  private readonly appliedChildren = new AppliedChildren();
  private readonly running = new Set<Promise<void>>();
  /** Keys waiting, out of the queue, for the cache to show our own last write of them ({@link park}). */
  private readonly parked = new Set<string>();
  /** The reconcile of each key in flight (sharding waits for one before handing its key over). */
  private readonly inflight = new Map<string, Promise<void>>();
  /** Keys let go of for a hand-over, until their object leaves the cache (sharding only). */
  private readonly released = new Set<string>();
  private readonly intake = new AbortController();
  private readonly reconcileAbort = new AbortController();
  private workerLoops: Promise<void>[] = [];
  private current: ControllerState = "idle";
  private detachStartSignal: (() => void) | undefined;

  constructor(options: ControllerOptions<T>) {
    if (!options.name) throw new Error("a controller needs a name");
    // Shared by design: every idle worker and every API call of every running reconcile listens
    // to these two signals, so Node's default warning threshold of 10 listeners does not apply.
    setMaxListeners(0, this.intake.signal, this.reconcileAbort.signal);
    const throttled = options.throttled ?? "requeue";
    this.options =
      options.client === undefined || throttled === "wait"
        ? options
        : {
            ...options,
            client: reconcileClient(options.client, throttled),
            reconcile: requeueWhenThrottled(options.reconcile),
          };
    this.name = options.name;
    this.kind = options.kind;
    this.workers = options.maxConcurrentReconciles ?? DEFAULT_MAX_CONCURRENT_RECONCILES;
    if (!Number.isInteger(this.workers) || this.workers < 1) {
      throw new Error(`controller ${options.name}: maxConcurrentReconciles must be an integer >= 1`);
    }
    this.logger = (options.logger ?? pino({ level: "silent" })).child({ controller: options.name });
    this.recorder = options.recorder ?? noRecorder;
    this.observer = options.metrics?.controller(options.name, this.workers);
    this.clock = options.clock ?? systemClock;
    this.queue = new WorkQueue<string>({
      name: options.name,
      rateLimiter: options.rateLimiter,
      clock: this.clock,
      onDone: options.onSettled,
      metrics: options.metrics?.workQueue(options.name, () => this.queue.inFlight()),
    });
    this.caches.set(kindId(options.kind), options.primary.store as CacheReader<KubeObject>);
    for (const s of options.sources ?? []) {
      if (s.kind !== undefined && !this.caches.has(kindId(s.kind))) this.caches.set(kindId(s.kind), s.source.store);
    }
  }

  /** Where the controller is. */
  get state(): ControllerState {
    return this.current;
  }

  /**
   * Registers the event handlers and starts the workers. Aborting `signal` stops at once
   * (intake stopped, running reconciles' signals aborted): what lost leadership does.
   */
  start(signal?: AbortSignal): void {
    if (this.current !== "idle") throw new Error(`controller ${this.name} was already started`);
    this.current = "running";
    if (signal !== undefined) {
      const onAbort = () => this.stopNow();
      signal.addEventListener("abort", onAbort, { once: true });
      this.detachStartSignal = () => signal.removeEventListener("abort", onAbort);
      if (signal.aborted) {
        this.stopNow();
        return;
      }
    }
    this.removers.push(this.options.primary.addEventHandler(this.primaryHandler()));
    for (const s of this.options.sources ?? []) this.removers.push(s.source.addEventHandler(this.mappedHandler(s)));
    for (let i = 0; i < this.workers; i++) this.workerLoops.push(this.workerLoop());
    this.logger.info({ workers: this.workers }, "Starting workers");
  }

  /**
   * Graceful stop: takes no new keys, lets running reconciles finish for up to `drainTimeout`,
   * then aborts their signal. Resolves when the workers ended or the timeout passed.
   */
  async stop(drainTimeout: Duration = "30s"): Promise<void> {
    if (this.current === "stopped" || this.current === "idle") {
      this.current = "stopped";
      this.teardown();
      return;
    }
    this.current = "draining";
    this.teardown();
    const timeout = new AbortController();
    const drained = Promise.all(this.workerLoops).then(() => timeout.abort());
    await Promise.race([drained, sleep(toMilliseconds(drainTimeout), timeout.signal)]);
    timeout.abort();
    if (this.running.size > 0) {
      this.logger.warn(
        { running: this.running.size },
        "reconciles still running after the drain timeout; aborting them",
      );
    }
    this.reconcileAbort.abort();
    this.current = "stopped";
  }

  /** Stops at once: no new keys, running reconciles' signals aborted. */
  stopNow(): void {
    if (this.current === "stopped") return;
    this.current = "stopped";
    this.teardown();
    this.reconcileAbort.abort();
  }

  /**
   * Why the controller is busy (keys queued or being reconciled), or `undefined` when it is idle.
   * Keys waiting for a delay (`requeueAfter`, a retry) are not work yet: they are the clock's.
   */
  busy(): string | undefined {
    const queued = this.queue.len();
    const processing = this.queue.processingCount();
    const parked = this.parked.size;
    if (queued === 0 && processing === 0 && parked === 0) return undefined;
    return `${queued} key(s) queued, ${processing} being reconciled, ${parked} waiting to see our own write`;
  }

  /**
   * Lets go of `key` for a hand-over to another replica (sharding): no reconcile of it starts any
   * more, the one in flight (if any) finishes, then every queued, delayed or rate-limited trace of
   * the key is dropped. Resolves then. The key is taken again when its object comes back to this
   * replica's cache without the drain label.
   */
  async release(key: string): Promise<void> {
    this.released.add(key);
    const running = this.inflight.get(key);
    if (running !== undefined) await running;
    this.queue.discard(key);
  }

  /** Resolves once every worker loop has returned (each after its current reconcile). */
  async stopped(): Promise<void> {
    await Promise.all(this.workerLoops);
  }

  private teardown(): void {
    this.detachStartSignal?.();
    this.detachStartSignal = undefined;
    for (const remove of this.removers.splice(0)) remove();
    this.intake.abort();
    this.queue.shutDown();
    this.options.metrics?.forgetWorkQueue(this.name);
  }

  private primaryHandler(): InformerEventHandler<T> {
    const predicates = this.options.primaryPredicates ?? [];
    const shard = this.options.shard;
    // Sharded: an object being handed over is not ours to reconcile; one that came back is.
    const held = (key: string, obj: KubeObject): boolean => {
      if (shard === undefined) return true;
      if (shard.isDraining(obj)) return false;
      this.released.delete(key);
      return true;
    };
    return {
      onAdd: (obj) => {
        const key = objectKey(obj);
        const woken = this.expectations.saw(key, obj);
        if (held(key, obj) && (woken || allowsCreate(predicates, obj))) this.queue.add(key);
      },
      onUpdate: (oldObj, newObj) => {
        const key = objectKey(newObj);
        const woken = this.expectations.saw(key, newObj);
        if (held(key, newObj) && (woken || allowsUpdate(predicates, oldObj, newObj))) this.queue.add(key);
      },
      onDelete: (deleted) => {
        const obj = deleted instanceof DeletedFinalStateUnknown ? deleted.obj : deleted;
        const key = objectKey(obj);
        const woken = this.expectations.saw(key, undefined);
        // Handed over: it left this replica's selection, it was not deleted.
        if (this.released.delete(key)) return;
        if (woken || allowsDelete(predicates, obj)) this.queue.add(key);
      },
    };
  }

  /** Sharded: whether this replica holds `key` (its object is cached here, not being handed over). */
  private holds(key: string): boolean {
    if (this.released.has(key)) return false;
    const obj = this.options.primary.store.get(key);
    return obj !== undefined && !this.options.shard?.isDraining(obj);
  }

  private mappedHandler(s: WatchSource<KubeObject>): InformerEventHandler<KubeObject> {
    const predicates = s.predicates ?? [];
    const sharded = this.options.shard !== undefined;
    const enqueue = (obj: KubeObject) => {
      for (const key of s.map(obj)) if (!sharded || this.holds(key)) this.queue.add(key);
    };
    return {
      onAdd: (obj) => {
        if (allowsCreate(predicates, obj)) enqueue(obj);
      },
      onUpdate: (oldObj, newObj) => {
        if (!allowsUpdate(predicates, oldObj, newObj)) return;
        // Both: a child that changed owner (or a mapped field) must reach the old target too.
        enqueue(newObj);
        if (oldObj !== newObj) enqueue(oldObj);
      },
      onDelete: (deleted) => {
        const obj = deleted instanceof DeletedFinalStateUnknown ? deleted.obj : deleted;
        if (allowsDelete(predicates, obj)) enqueue(obj);
      },
    };
  }

  private async workerLoop(): Promise<void> {
    for (;;) {
      const key = await this.queue.get(this.intake.signal);
      if (key === undefined) return;
      if (this.released.has(key)) {
        this.queue.done(key); // let go of for a hand-over: another replica reconciles it
        continue;
      }
      if (this.park(key)) continue;
      const run = this.reconcileKey(key);
      this.running.add(run);
      if (this.options.shard !== undefined) this.inflight.set(key, run);
      try {
        await run;
      } finally {
        this.running.delete(run);
        this.inflight.delete(key);
        this.queue.done(key);
      }
    }
  }

  /**
   * When the cache has not yet shown our last write of `key`, parks the key instead of the worker:
   * the key leaves the queue and comes back once the informer delivers that write (or the
   * consistency timeout passes), and the worker serves other keys meanwhile. A worker that waited
   * instead would sit idle for a watch event's latency on every object whose child's event comes
   * before its own status event, which under a burst is most of them. Returns whether it parked.
   */
  private park(key: string): boolean {
    if (this.parked.has(key)) {
      this.queue.done(key); // its wake adds it again
      return true;
    }
    const store = this.options.primary.store;
    // Woken by the informer's delivery of our write, the event handler queues the key (saw()
    // returned true): queued once, not queued and then marked to run again. Woken by the timeout,
    // the key is queued here.
    const parked = this.expectations.whenCaughtUp(
      key,
      () => store.get(key),
      this.reconcileAbort.signal,
      (seen) => {
        this.parked.delete(key);
        if (!seen && !this.reconcileAbort.signal.aborted) this.queue.add(key);
        this.options.onSettled?.();
      },
    );
    if (!parked) return false;
    this.parked.add(key);
    this.queue.done(key);
    return true;
  }

  private async reconcileKey(key: string): Promise<void> {
    const store = this.options.primary.store;
    const started = performance.now();
    const ref = splitObjectKey(key);
    const cached = store.get(key);
    const target: ReconcileTarget<T> = cached ?? ({ deleted: true, ...ref } satisfies DeletedObject);
    const ctx = this.context(ref, cached);
    let outcome: ReconcileOutcome = "success";
    const trace = RunTrace.begin(() => ({
      type: "reconcile",
      controller: this.name,
      object: this.runObject(ref, cached),
    }));
    let traced: RunOutcome = { result: "ok" };
    this.observer?.activeWorkers(1);
    try {
      const result =
        (await (trace === undefined
          ? this.options.reconcile(target, ctx)
          : trace.run(() => this.options.reconcile(target, ctx)))) ?? undefined;
      const requeueAfter = result?.requeueAfter === undefined ? 0 : toMilliseconds(result.requeueAfter);
      if (requeueAfter > 0) {
        this.queue.forget(key);
        this.queue.addAfter(key, requeueAfter);
        outcome = "requeue_after";
        traced = { result: "requeue", afterMs: requeueAfter };
      } else if (result?.requeue === true) {
        const delay = this.queue.addRateLimited(key);
        outcome = "requeue";
        if (delay !== undefined) traced = { result: "requeue", afterMs: delay };
      } else {
        this.queue.forget(key);
      }
    } catch (err) {
      outcome = "error";
      const terminal = err instanceof TerminalError;
      const retryInMs = terminal ? undefined : this.queue.addRateLimited(key);
      traced = { result: "error", message: runErrorMessage(err), ...(retryInMs === undefined ? {} : { retryInMs }) };
      this.observer?.failed(terminal);
      ctx.logger.error({ err, terminal }, "Reconciler error");
    } finally {
      this.observer?.activeWorkers(-1);
      this.observer?.reconciled(outcome, (performance.now() - started) / 1000);
      trace?.end(traced);
    }
  }

  /** The object of a run trace (run-trace.ts): the cached object, or the key of a deleted one. */
  private runObject(ref: ObjectRef, cached: T | undefined): RunObject {
    const uid = cached?.metadata?.uid;
    return {
      group: this.kind.group,
      version: this.kind.version,
      kind: this.kind.kind,
      namespace: ref.namespace,
      name: ref.name,
      ...(uid === undefined ? {} : { uid }),
    };
  }

  private requireClient(): KubeClient {
    if (this.options.client === undefined) throw new Error(`controller ${this.name} has no client`);
    return this.options.client;
  }

  /**
   * The resource client for `kind` in `namespace`, built once and reused: a reconcile's writes
   * should cost the API call, not a client object and its URL prefix each time.
   */
  private resourceClient<K extends KubeObject>(
    kind: ResourceKind<K>,
    namespace: string | undefined,
  ): ResourceClient<K> {
    const client = this.requireClient();
    let byNamespace = this.clients.get(kind);
    if (byNamespace === undefined) {
      byNamespace = new Map();
      this.clients.set(kind, byNamespace);
    }
    const ns = namespace ?? "";
    let resource = byNamespace.get(ns);
    if (resource === undefined) {
      resource = client.resource(kind as ResourceKind<KubeObject>, namespace);
      byNamespace.set(ns, resource);
    }
    return resource as unknown as ResourceClient<K>;
  }

  /**
   * One reconcile's context. Members are object-literal methods closing over `controller`, not
   * arrow-function properties: they work destructured all the same, and a context is built per
   * reconcile, so it should cost one object and no per-member function naming or bookkeeping.
   */
  private context(ref: ObjectRef, obj: T | undefined): ReconcileContext<T> {
    const controller = this;
    let logger: Logger | undefined;
    return {
      key: ref,
      controller: this.name,
      signal: this.reconcileAbort.signal,
      now() {
        return new Date(controller.clock.now());
      },
      // Built on first use: most reconciles never log, and a pino child costs an allocation.
      get logger(): Logger {
        logger ??= controller.logger.child({
          ...(ref.namespace ? { namespace: ref.namespace } : {}),
          name: ref.name,
          reconcileID: randomUUID(),
        });
        return logger;
      },
      get client(): KubeClient {
        return controller.requireClient();
      },
      cache<K extends KubeObject>(kind: ResourceKind<K>): CacheReader<K> {
        return controller.cacheOf(kind);
      },
      event(type, reason, message) {
        if (obj !== undefined) controller.recorder.event(obj, type, reason, message);
      },
      recorder: this.recorder,
      adopt<C extends KubeObject>(child: C): C {
        return adopt(controller.kind, obj, child, controller.name);
      },
      apply<K extends KubeObject>(kind: ResourceKind<K>, desired: K): Promise<K> {
        try {
          const namespace = kind.namespaced ? (desired.metadata?.namespace ?? (ref.namespace || undefined)) : undefined;
          return controller.applyChild(kind, namespace, desired);
        } catch (err) {
          return Promise.reject(err);
        }
      },
      patchStatus(status) {
        try {
          const key = objectKey({ metadata: { namespace: ref.namespace || undefined, name: ref.name } });
          return controller
            .resourceClient(controller.kind, ref.namespace || undefined)
            .patchStatus(ref.name, { status }, { signal: controller.reconcileAbort.signal })
            .then((written) => {
              controller.expectations.wrote(key, written);
              return written;
            });
        } catch (err) {
          return Promise.reject(err);
        }
      },
    };
  }

  /** `ctx.apply`: skipped when it would change nothing (own-writes.ts), else sent and remembered. */
  private async applyChild<K extends KubeObject>(
    kind: ResourceKind<K>,
    namespace: string | undefined,
    desired: K,
  ): Promise<K> {
    const name = desired.metadata?.name;
    const cache = this.caches.get(kindId(kind));
    const remembered =
      name !== undefined && cache !== undefined
        ? { key: AppliedChildren.key(kindId(kind), namespace, name), digest: AppliedChildren.digest(desired) }
        : undefined;
    if (remembered !== undefined && cache !== undefined) {
      const cached = cache.get(objectKey({ metadata: { namespace, name } }));
      if (this.appliedChildren.unchanged(remembered.key, remembered.digest, cached)) {
        return structuredClone(cached) as K;
      }
    }
    const childLabels = this.options.shard?.childLabels;
    const stamped =
      childLabels === undefined
        ? desired
        : { ...desired, metadata: { ...desired.metadata, labels: { ...desired.metadata?.labels, ...childLabels } } };
    const written = await this.resourceClient(kind, namespace).apply(stamped, {
      fieldManager: this.name,
      force: true,
      signal: this.reconcileAbort.signal,
    });
    if (remembered !== undefined) this.appliedChildren.applied(remembered.key, remembered.digest, written);
    return written;
  }

  private cacheOf<K extends KubeObject>(kind: ResourceKind<K>): CacheReader<K> {
    const reader = this.caches.get(kindId(kind));
    if (reader === undefined) {
      throw new Error(
        `controller ${this.name} does not watch ${kind.kind}.${kind.group || "core"}; add it with owns() or watches()`,
      );
    }
    return reader as unknown as CacheReader<K>;
  }
}

function adopt<T extends KubeObject, C extends KubeObject>(
  kind: ResourceKind<T>,
  owner: T | undefined,
  child: C,
  controller: string,
): C {
  const meta = owner?.metadata;
  if (owner === undefined || meta?.uid === undefined || meta.name === undefined) {
    throw new Error(`controller ${controller}: cannot adopt a child for an object that is gone (or has no uid)`);
  }
  const refs = child.metadata?.ownerReferences ?? [];
  const other = refs.find((r) => r.controller === true && r.uid !== meta.uid);
  if (other !== undefined) {
    throw new Error(
      `controller ${controller}: ${child.metadata?.name ?? "child"} is already controlled by ${other.kind} ${other.name}`,
    );
  }
  const ref = {
    apiVersion: owner.apiVersion ?? apiVersionOf(kind),
    kind: owner.kind ?? kind.kind,
    name: meta.name,
    uid: meta.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
  return {
    ...child,
    metadata: {
      ...child.metadata,
      ...(kind.namespaced && child.metadata?.namespace === undefined ? { namespace: meta.namespace } : {}),
      ownerReferences: [...refs.filter((r) => r.uid !== meta.uid), ref],
    },
  };
}

/**
 * Maps a child to the key of its controller owner when that owner is of `ownerKind` (same API
 * group and kind; the version may differ, as controller-runtime's EnqueueRequestForOwner treats
 * it). A namespaced owner lives in the child's namespace; a cluster-scoped one has no namespace.
 */
export function controllerOwnerKeys(
  ownerKind: Pick<ResourceKind, "group" | "kind" | "namespaced">,
  child: KubeObject,
): string[] {
  const ref = child.metadata?.ownerReferences?.find((r) => r.controller === true);
  if (ref === undefined) return [];
  const slash = ref.apiVersion.indexOf("/");
  const group = slash < 0 ? "" : ref.apiVersion.slice(0, slash);
  if (group !== ownerKind.group || ref.kind !== ownerKind.kind) return [];
  if (!ownerKind.namespaced) return [ref.name];
  const ns = child.metadata?.namespace;
  return ns ? [`${ns}/${ref.name}`] : [];
}
