/**
 * An informer: keeps a {@link Store} in step with the API server through list + watch, and tells
 * event handlers what changed.
 *
 * ## Expected flow
 * `new Informer({ listerWatcher })`, `addEventHandler(...)`, `run(signal)` (resolves when the
 * signal aborts), `await waitForSync(signal)` before trusting `store`.
 *
 * ## States (see {@link InformerPhase})
 * - `initialListing`: list every page (`limit` = pageSize, following `continue`); the list's
 *   resourceVersion is where the watch starts. Success: the store is filled, `hasSynced()`.
 * - `watching`: watch from the last seen resourceVersion with `allowWatchBookmarks`; each event
 *   and each BOOKMARK advances that version. A watch the server closes normally is re-opened at
 *   once from the last seen version (the server ends watches after `timeoutSeconds`); so is a
 *   watch still open `watchGracePeriod` after that, presumed to be a dead connection.
 * - `backingOff`: after an error (list failed, watch failed to start or broke) wait per
 *   {@link ExponentialBackoff} (800 ms doubling to a 2 s cap, jittered: {@link RECONNECT_BACKOFF}),
 *   then list again if no list has succeeded yet or the version expired, else re-watch. A watch
 *   closed within 1 s without any event pauses [1 s, 2 s) before the re-watch (no hot loop, no
 *   growing delay). Progress (a successful list, or a watch that delivered events) resets the
 *   backoff, as kube-rs does. `reconnect()` ends a wait or an attempt in flight and tries again at
 *   once (the manager calls it when its API server probe fails or recovers).
 * - `relisting`: the watch's version expired (410 Gone, at watch start or as an ERROR event):
 *   list again at once (after a backoff only if the last list is less than 1 s old, so a server
 *   that cannot serve its own versions gets no list loop) and compare with the store, emitting the adds, updates (resourceVersion changed)
 *   and deletions (as {@link DeletedFinalStateUnknown}) that the watch missed.
 * - `stopped`: the signal aborted; the list/watch in flight was cancelled and no timer is left.
 *
 * ## Guarantees
 * - Handlers are called synchronously, in event order, after the store already reflects the
 *   event; a handler that throws is logged and does not affect the informer or other handlers.
 * - Every object in the store was delivered to every handler as an add (handlers added late get
 *   the current contents replayed as adds), and every removal as a delete.
 * - After a 410 nothing is lost: the relist brings the store to the server's state.
 * - `run()` returns only after everything it started (watch, resync timer, backoff timer) ended.
 * - `connection` tells whether a watch is open and when the informer last had contact with the
 *   server (a list answered, a watch opened, delivered an event or was closed by the server):
 *   readiness and liveness checks are built on it (watch-health.ts).
 *
 * ## Assumptions
 * - The ListerWatcher honours `signal` (the client does: its iterator ends on abort).
 * - resourceVersions are opaque; the informer only compares them for equality.
 *
 * ## Caveats
 * - Unlike client-go, a relist does not re-deliver unchanged objects as updates; use `resyncPeriod`
 *   for a periodic level-triggered pass.
 * - A deletion that happened while the watch was down is only seen at the next relist, i.e. after
 *   a 410; a re-watch from a still-valid version replays it as a DELETED event instead.
 * - Metadata-only mode is not a flag here: give a ListerWatcher whose list/watch return
 *   `PartialObjectMetadata` (the client's metadata view); the store then holds only metadata.
 *   To keep less still, `store.transform` (see {@link StoreOptions}) cuts every object down
 *   before it is stored or given to a handler, deletions included.
 */

import { isGone } from "../client/errors.ts";
import type { KubeObject, ListerWatcher, ObjectList, WatchEvent } from "../client/types.ts";
import { type BackoffOptions, ExponentialBackoff } from "./backoff.ts";
import { type CacheReader, type IndexFunc, objectKey, Store, type StoreOptions } from "./cache.ts";
import { type Clock, sleep, systemClock } from "./clock.ts";
import { type Duration, toMilliseconds } from "./duration.ts";
import { type RuntimeLogger, silentLogger } from "./log.ts";

/**
 * The final state of an object deleted while the informer was not watching: the relist no longer
 * returned it, and `obj` is the last version the cache held (it may be stale).
 */
export class DeletedFinalStateUnknown<T extends KubeObject = KubeObject> {
  constructor(
    readonly key: string,
    readonly obj: T,
  ) {}
}

/** What an informer tells its handlers. Every method is optional. */
export interface InformerEventHandler<T extends KubeObject = KubeObject> {
  onAdd?(obj: T): void;
  /** Also called with `oldObj === newObj` on resync. */
  onUpdate?(oldObj: T, newObj: T): void;
  onDelete?(obj: T | DeletedFinalStateUnknown<T>): void;
}

/** The informer's state; `phase` names the state machine's node. */
export type InformerPhase =
  | { phase: "idle" }
  | { phase: "initialListing" }
  | { phase: "watching"; resourceVersion: string }
  | { phase: "backingOff"; delayMs: number; next: "list" | "watch"; error: unknown }
  | { phase: "relisting" }
  | { phase: "stopped" };

/** Options of an {@link Informer}. */
export interface InformerOptions<T extends KubeObject> {
  /** Where objects come from: a resource client (bound to a namespace, or cluster-wide) or a fake. */
  listerWatcher: ListerWatcher<T>;
  /** For logs. */
  name?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /**
   * Items per list page (default 500, client-go's pager size: big enough that most lists are one
   * request, small enough that one response stays a few MB).
   */
  pageSize?: number;
  /** Re-deliver every cached object as an update this often (off by default). */
  resyncPeriod?: Duration;
  /** Backoff after errors; default {@link RECONNECT_BACKOFF} (800 ms .. 2 s, jitter 1.0). */
  backoff?: BackoffOptions;
  /**
   * The watch `timeoutSeconds`. Default: random in [300, 600) like client-go, so the server ends
   * each watch after 5-10 minutes (no watch hangs forever unnoticed) and the re-watches of many
   * informers started together are spread out.
   */
  watchTimeoutSeconds?: number;
  /**
   * How long past `timeoutSeconds` a watch may stay open before the informer presumes the
   * connection dead (a half-open TCP connection never ends on its own) and re-watches from the
   * last seen version (default 30 s: generous against a slow server, small against the 5-10 min
   * the watch is meant to last).
   */
  watchGracePeriod?: Duration;
  /** Store options: extra indexes, a transform, managedFields stripping, freezing. */
  store?: StoreOptions<T>;
  logger?: RuntimeLogger;
  /**
   * Real time of the connection's bookkeeping (contact times, short watches, the reconnect
   * backoff): these measure the network, so a test clock does not belong here (default the system's).
   */
  clock?: Pick<Clock, "now">;
  /** The clock `resyncPeriod` follows: the operator's (default {@link systemClock}). */
  resyncClock?: Clock;
  random?: () => number;
}

// A watch the server closes this quickly with no event (client-go's "very short watch") is
// re-opened only after a pause of [1 s, 2 s): a server that closes every watch at once costs at
// most one watch request per second instead of a hot loop. The pause does not grow like the error
// backoff (client-go's does): a proxy that drops idle watches every second must not leave the
// informer blind for up to a minute when the next change comes.
const SHORT_WATCH_MS = 1000;

/**
 * The informer's reconnect backoff: client-go's reflector starts at 800 ms and doubles with 100%
 * jitter too, but caps at 30 s, so an informer that failed for a minute while the API server was
 * restarting stays blind for up to a minute after it is back (a probe measured 24.6 s). Capped at
 * 2 s, a retry comes every [2 s, 4 s) at worst: recovery within ~4 s plus one list, and an
 * unreachable server gets at most one request per 2 s per informer (a refused connection costs it
 * nothing; the jitter still spreads replicas restarted together). Two quiet minutes reset it.
 */
export const RECONNECT_BACKOFF: Readonly<BackoffOptions> = Object.freeze({
  initial: 800,
  max: "2s",
  factor: 2,
  jitter: 1,
  resetAfter: "2m",
});

/** What an informer knows of its connection to the server (see {@link Informer.connection}). */
export interface InformerConnection {
  /** Whether a watch is open: the server answered the watch request and the stream has not ended. */
  watchOpen: boolean;
  /**
   * Clock time of the last contact: a list answered, a watch opened, a watch event (BOOKMARKs
   * included), or a watch the server ended. Errors are no contact, nor is a watch the informer
   * abandoned itself. Before any contact: when `run()` started.
   */
  lastContactAt: number;
}

type WatchOutcome =
  | { kind: "interrupted" }
  | { kind: "closed" }
  | { kind: "short" }
  | { kind: "gone"; error: unknown }
  | { kind: "error"; error: unknown };

/** List + watch into a store, with handlers; see the module documentation for the contract. */
export class Informer<T extends KubeObject = KubeObject> {
  readonly name: string;
  private readonly options: InformerOptions<T>;
  private readonly storeImpl: Store<T>;
  private readonly storeReader: CacheReader<T>;
  private readonly handlers = new Set<InformerEventHandler<T>>();
  private readonly backoff: ExponentialBackoff;
  private readonly logger: RuntimeLogger;
  private readonly clock: Pick<Clock, "now">;
  private readonly resyncClock: Clock;
  private readonly random: () => number;
  private readonly pageSize: number;
  private readonly resyncMs: number;
  private readonly watchGraceMs: number;
  private state: InformerPhase = { phase: "idle" };
  private resourceVersion = "";
  private synced = false;
  private syncWaiters: (() => void)[] = [];
  private running = false;
  private lastListAt = Number.NEGATIVE_INFINITY;
  private watchOpen = false;
  private lastContactAt = 0;
  /** Aborts the list, watch or backoff wait in flight, for `reconnect()`. */
  private attempt: AbortController | undefined;

  constructor(options: InformerOptions<T>) {
    this.options = options;
    this.name = options.name ?? "informer";
    this.storeImpl = new Store<T>(options.store);
    this.storeReader = this.storeImpl.reader();
    this.logger = options.logger ?? silentLogger;
    this.clock = options.clock ?? systemClock;
    this.resyncClock = options.resyncClock ?? systemClock;
    this.random = options.random ?? Math.random;
    this.backoff = new ExponentialBackoff({
      clock: this.clock,
      random: this.random,
      ...RECONNECT_BACKOFF,
      ...options.backoff,
    });
    this.pageSize = options.pageSize ?? 500;
    this.resyncMs = options.resyncPeriod === undefined ? 0 : toMilliseconds(options.resyncPeriod);
    this.watchGraceMs = toMilliseconds(options.watchGracePeriod ?? "30s");
    if (!Number.isInteger(this.pageSize) || this.pageSize < 0) throw new Error("pageSize must be an integer >= 0");
  }

  /** The cache, read-only: a view without write methods (always the same object). */
  get store(): CacheReader<T> {
    return this.storeReader;
  }

  /** Where the state machine is. */
  get phase(): InformerPhase {
    return this.state;
  }

  /** Whether a watch is open and when the informer last had contact with the server. */
  get connection(): InformerConnection {
    return { watchOpen: this.watchOpen, lastContactAt: this.lastContactAt };
  }

  /**
   * Ends the list, watch or backoff wait in flight and tries again at once, from the last seen
   * version. For a connection that is presumed dead (an API server that stopped answering keeps
   * its TCP connections open: the watch would wait for its timeout, 5-10 min) and for a server
   * that is back (no need to sit out the backoff). Does nothing when the informer is not running.
   */
  reconnect(reason: string): void {
    if (this.attempt === undefined || this.attempt.signal.aborted) return;
    this.logger.info({ informer: this.name, reason, phase: this.state.phase }, "reconnecting");
    this.attempt.abort();
  }

  /** The resourceVersion the next watch would start from (the last one seen). */
  get lastSyncResourceVersion(): string {
    return this.resourceVersion;
  }

  /** Adds an index to the cache (existing objects are indexed at once). */
  addIndexer(name: string, fn: IndexFunc<T>): void {
    this.storeImpl.addIndexer(name, fn);
  }

  /**
   * Registers handlers; returns a function that removes them. If the informer has synced, the
   * current contents are replayed to the new handler as adds first.
   */
  addEventHandler(handler: InformerEventHandler<T>): () => void {
    this.handlers.add(handler);
    if (this.synced && handler.onAdd !== undefined) {
      for (const obj of this.storeImpl.list()) {
        try {
          handler.onAdd(obj);
        } catch (err) {
          this.handlerThrew("onAdd", err);
        }
      }
    }
    return () => {
      this.handlers.delete(handler);
    };
  }

  /** Whether the initial list has been stored and delivered to the handlers. */
  hasSynced(): boolean {
    return this.synced;
  }

  /** Resolves `true` once synced, or `false` if `signal` aborts first. */
  waitForSync(signal?: AbortSignal): Promise<boolean> {
    if (this.synced) return Promise.resolve(true);
    if (signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const onAbort = () => {
        this.syncWaiters = this.syncWaiters.filter((w) => w !== done);
        resolve(false);
      };
      const done = () => {
        signal?.removeEventListener("abort", onAbort);
        resolve(true);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.syncWaiters.push(done);
    });
  }

  /** Runs the state machine until `signal` aborts; resolves when everything it started has ended. */
  async run(signal: AbortSignal): Promise<void> {
    if (this.running) throw new Error(`informer ${this.name} is already running`);
    this.running = true;
    this.lastContactAt = this.clock.now();
    const resync = this.resyncMs > 0 ? this.resyncLoop(signal) : Promise.resolve();
    try {
      let next: "list" | "watch" = "list";
      while (!signal.aborted) {
        if (next === "list") {
          this.state = this.synced ? { phase: "relisting" } : { phase: "initialListing" };
          const attempt = this.startAttempt(signal);
          try {
            await this.listAndSync(attempt);
            next = "watch";
          } catch (error) {
            if (signal.aborted) break;
            // reconnect() asked for a new attempt now: no backoff.
            if (!attempt.aborted) await this.backOff(error, "list", signal);
          }
          continue;
        }
        this.state = { phase: "watching", resourceVersion: this.resourceVersion };
        const outcome = await this.watchOnce(signal);
        if (signal.aborted) break;
        if (outcome.kind === "interrupted") continue;
        if (outcome.kind === "gone") {
          this.logger.info({ informer: this.name, err: outcome.error }, "watch version expired (410), relisting");
          next = "list";
          // History compacted under a watch that has been running: relist at once. A 410 right
          // after a list (a server that cannot serve its own versions) backs off instead.
          if (this.clock.now() - this.lastListAt < SHORT_WATCH_MS) await this.backOff(outcome.error, "list", signal);
        } else if (outcome.kind === "error") {
          await this.backOff(outcome.error, "watch", signal);
        } else if (outcome.kind === "short") {
          const delayMs = SHORT_WATCH_MS * (1 + this.random());
          const error = new Error("very short watch: closed by the server within 1 s without any event");
          this.state = { phase: "backingOff", delayMs, next: "watch", error };
          this.logger.debug({ informer: this.name, delayMs }, error.message);
          await sleep(delayMs, this.startAttempt(signal));
        }
      }
    } finally {
      this.attempt?.abort();
      this.attempt = undefined;
      await resync;
      this.state = { phase: "stopped" };
      this.running = false;
    }
  }

  private async backOff(error: unknown, next: "list" | "watch", signal: AbortSignal): Promise<void> {
    const delayMs = this.backoff.next();
    this.state = { phase: "backingOff", delayMs, next, error };
    if (!isGone(error)) this.logger.warn({ informer: this.name, err: error, delayMs, next }, "list/watch failed");
    await sleep(delayMs, this.startAttempt(signal));
  }

  /** A signal for the next step (list, watch, wait): aborts with `signal`, or on `reconnect()`. */
  private startAttempt(signal: AbortSignal): AbortSignal {
    this.attempt?.abort();
    const attempt = new AbortController();
    this.attempt = attempt;
    if (signal.aborted) attempt.abort();
    else signal.addEventListener("abort", () => attempt.abort(), { once: true, signal: attempt.signal });
    return attempt.signal;
  }

  private async listAndSync(signal: AbortSignal): Promise<void> {
    const { labelSelector, fieldSelector, listerWatcher } = this.options;
    const listed = new Map<string, T>();
    let resourceVersion = "";
    let token: string | undefined;
    let limit: number | undefined = this.pageSize > 0 ? this.pageSize : undefined;
    while (!signal.aborted) {
      let page: ObjectList<T>;
      try {
        page = await listerWatcher.list({ labelSelector, fieldSelector, limit, continue: token, signal });
      } catch (error) {
        // An expired continue token: like client-go's pager, fall back to one unpaginated list.
        if (token !== undefined && isGone(error)) {
          listed.clear();
          token = undefined;
          limit = undefined;
          continue;
        }
        throw error;
      }
      const itemKind = page.kind?.endsWith("List") ? page.kind.slice(0, -4) : undefined;
      for (const item of page.items) {
        // List items come without apiVersion/kind; restore them so consumers can build owner refs.
        if (item.apiVersion === undefined && page.apiVersion !== undefined) item.apiVersion = page.apiVersion;
        if (item.kind === undefined && itemKind !== undefined) item.kind = itemKind;
        listed.set(objectKey(item), this.storeImpl.prepare(item));
      }
      // Every page of one list carries the snapshot's resourceVersion.
      resourceVersion = page.metadata.resourceVersion ?? resourceVersion;
      token = page.metadata.continue || undefined;
      if (token === undefined) break;
    }
    if (signal.aborted) throw new Error("list abandoned");
    // Progress: the server is serving again, so the next failure backs off from the start.
    this.backoff.reset();
    this.lastListAt = this.clock.now();
    this.lastContactAt = this.lastListAt;
    this.replace(listed);
    this.resourceVersion = resourceVersion;
    if (!this.synced) {
      this.synced = true;
      const waiters = this.syncWaiters;
      this.syncWaiters = [];
      for (const w of waiters) w();
    }
  }

  /** Brings the store to `listed`, emitting the differences. */
  private replace(listed: Map<string, T>): void {
    const store = this.storeImpl;
    for (const key of store.keys()) {
      if (listed.has(key)) continue;
      const last = store.delete(key) as T;
      this.emitDelete(new DeletedFinalStateUnknown(key, last));
    }
    for (const [key, obj] of listed) {
      const current = store.get(key);
      if (current === undefined) {
        this.emitAdd(store.upsert(obj).stored);
      } else if (current.metadata?.resourceVersion !== obj.metadata?.resourceVersion) {
        this.emitUpdate(current, store.upsert(obj).stored);
      }
    }
  }

  private async watchOnce(signal: AbortSignal): Promise<WatchOutcome> {
    const { labelSelector, fieldSelector, listerWatcher } = this.options;
    const timeoutSeconds = this.options.watchTimeoutSeconds ?? Math.floor(300 * (1 + this.random()));
    const startedAt = this.clock.now();
    let events = 0;
    // The server ends the watch after timeoutSeconds; one that outlives it by the grace period is
    // presumed dead. One timer per watch, not per event. `reconnect()` aborts `attempt`.
    const attempt = this.startAttempt(signal);
    const watchdog = new AbortController();
    const stopWatch = () => watchdog.abort();
    attempt.addEventListener("abort", stopWatch, { once: true });
    const deadline = setTimeout(stopWatch, timeoutSeconds * 1000 + this.watchGraceMs);
    try {
      const stream = await listerWatcher.watch({
        labelSelector,
        fieldSelector,
        resourceVersion: this.resourceVersion,
        allowWatchBookmarks: true,
        timeoutSeconds,
        signal: watchdog.signal,
      });
      this.watchOpen = true;
      this.lastContactAt = this.clock.now();
      for await (const event of stream) {
        if (watchdog.signal.aborted) break;
        events++;
        this.lastContactAt = this.clock.now();
        this.apply(event);
      }
    } catch (error) {
      if (!watchdog.signal.aborted) {
        // The server or the network ended it: contact until now.
        if (this.watchOpen) this.lastContactAt = this.clock.now();
        return isGone(error) ? { kind: "gone", error } : { kind: "error", error };
      }
    } finally {
      this.watchOpen = false;
      // A watch that delivered events made progress, however it ended: back off from the start.
      if (events > 0) this.backoff.reset();
      clearTimeout(deadline);
      attempt.removeEventListener("abort", stopWatch);
    }
    if (attempt.aborted && !signal.aborted) return { kind: "interrupted" };
    if (watchdog.signal.aborted && !signal.aborted) {
      this.logger.warn(
        { informer: this.name, timeoutSeconds },
        "watch outlived its timeout; presumed dead, re-watching",
      );
      return { kind: "closed" };
    }
    // Closed by the server: contact until now.
    if (!signal.aborted) this.lastContactAt = this.clock.now();
    if (!signal.aborted && events === 0 && this.clock.now() - startedAt < SHORT_WATCH_MS) return { kind: "short" };
    return { kind: "closed" };
  }

  private apply(event: WatchEvent<T>): void {
    const rv = event.object.metadata?.resourceVersion;
    switch (event.type) {
      case "BOOKMARK":
        break;
      case "ADDED":
      case "MODIFIED": {
        const { stored, previous } = this.storeImpl.upsert(event.object);
        if (previous === undefined) this.emitAdd(stored);
        else this.emitUpdate(previous, stored);
        break;
      }
      case "DELETED": {
        // The event carries the object's final state; prefer it over the cached version (as the
        // store's transform would have kept it, like every object the handlers are given).
        this.storeImpl.delete(objectKey(event.object));
        this.emitDelete(this.storeImpl.transformed(event.object));
        break;
      }
      default:
        this.logger.warn({ informer: this.name, type: (event as { type: unknown }).type }, "unknown watch event");
        return;
    }
    if (rv !== undefined && rv !== "") this.resourceVersion = rv;
  }

  private async resyncLoop(signal: AbortSignal): Promise<void> {
    while (await sleep(this.resyncMs, signal, this.resyncClock)) {
      if (!this.synced) continue;
      for (const obj of this.storeImpl.list()) this.emitUpdate(obj, obj);
    }
  }

  // The emit methods call each handler in its own try/catch, without a closure per call: they run
  // for every event of every watched object.
  private emitAdd(obj: T): void {
    for (const h of this.handlers) {
      if (h.onAdd === undefined) continue;
      try {
        h.onAdd(obj);
      } catch (err) {
        this.handlerThrew("onAdd", err);
      }
    }
  }

  private emitUpdate(oldObj: T, newObj: T): void {
    for (const h of this.handlers) {
      if (h.onUpdate === undefined) continue;
      try {
        h.onUpdate(oldObj, newObj);
      } catch (err) {
        this.handlerThrew("onUpdate", err);
      }
    }
  }

  private emitDelete(obj: T | DeletedFinalStateUnknown<T>): void {
    for (const h of this.handlers) {
      if (h.onDelete === undefined) continue;
      try {
        h.onDelete(obj);
      } catch (err) {
        this.handlerThrew("onDelete", err);
      }
    }
  }

  private handlerThrew(handler: string, err: unknown): void {
    this.logger.error({ informer: this.name, err, handler }, "event handler threw");
  }
}
