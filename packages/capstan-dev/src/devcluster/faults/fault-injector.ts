/**
 * Fault injection for the embedded API server: the hostile world an operator must survive, on demand.
 * `server.faults` is a {@link FaultInjector}; `capstan apiserver` exposes the same operations at
 * `/capstan/faults` (faults/admin-endpoint.ts, docs/faults.md).
 *
 * ## Expected flow
 * The server inserts {@link FaultInjector.stage} into its pipeline right before the handler (after
 * authentication). With no fault armed the stage only tracks open watches and connections and
 * passes the request on. Arming a fault (`failNext`, `failFraction`, `addLatency`,
 * `dropWatchesEvery`) changes what the stage does to the following resource requests; `dropWatches`,
 * `compact` and `restart` act at once; `reset()` disarms everything.
 *
 * ## Guarantees
 * - Only resource requests (`/api/...`, `/apis/...` naming a resource) are failed or delayed:
 *   discovery, `/healthz`, `/openapi` and the admin endpoint itself stay reliable, so a test can
 *   always reach the server to disarm its faults.
 * - Failures are answered with the Status a real kube-apiserver sends: 500 `InternalError`
 *   (`Internal error occurred: ...`, the cause in `details.causes`) or 429 `TooManyRequests`
 *   (`Too many requests, please try again later.`, the apiserver's throttling message) with a
 *   `Retry-After` header and `details.retryAfterSeconds`.
 * - Which requests a fraction fails depends only on the seed and the sequence of matching requests:
 *   the same seed and the same requests fail the same ones (`seed()`, default {@link DEFAULT_SEED}).
 * - `dropWatches()` destroys the connections of open watches mid-stream (no terminating chunk), as
 *   a network failure or a crashing server does; clients must resume from their last resourceVersion.
 * - `compact(rv)` is storage-level compaction: a watch or a `resourceVersion` list from before `rv`,
 *   and a continue token issued before it, get kube-apiserver's 410 `Expired` answers.
 * - No timer outlives the server: the periodic watch drop and pending latencies end when the server
 *   stops (the signal given to the constructor) or at `reset()`.
 *
 * ## Assumptions
 * - The stage runs after authentication: connections that never authenticated are not tracked and
 *   survive `restart()` (they cannot have done anything).
 * - One JavaScript thread: the rules are plain state, changed between requests.
 *
 * ## Caveats
 * - `restart()` does not restart the process. It drops every connection and every HTTP watch and
 *   discards the watch history (a new kube-apiserver starts with an empty watch cache, so watches
 *   from older versions get 410). The data stays: with in-memory storage nothing is lost because the
 *   process lives on; with persistent storage it would survive a real restart too. Server-side
 *   controllers keep their in-process subscriptions, as kube-controller-manager would re-establish
 *   its watches. Unlike a real restart, continue tokens from before it get 410 (etcd would still
 *   serve them until its own compaction).
 * - Compaction cannot be undone by `reset()`.
 */
import type { ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { ApiError, failure, internalError } from "../machinery/status.ts";
import type { RequestContext, Stage } from "../request/pipeline.ts";
import type { RequestInfo } from "../request/request-info.ts";
import type { Storage } from "../storage/storage.ts";
import { seededRandom } from "./seeded-random.ts";

/** The seed used until `seed()` is called: any fixed value makes runs reproducible by default. */
export const DEFAULT_SEED = 1;

/**
 * kube-apiserver's max-in-flight and priority-and-fairness filters answer 429 with `Retry-After: 1`:
 * one second is what real clients (client-go) are used to honouring.
 */
export const DEFAULT_RETRY_AFTER_SECONDS = 1;

/** The message of kube-apiserver's throttling 429 (server/filters/maxinflight.go). */
export const TOO_MANY_REQUESTS_MESSAGE = "Too many requests, please try again later.";

/** The default cause of an injected 500, so logs show where the failure came from. */
export const DEFAULT_INTERNAL_ERROR_CAUSE = "fault injected by capstan";

/** Which resource requests a fault applies to; an absent field matches everything. */
export interface FaultFilter {
  /** Request verbs: get, list, watch, create, update, patch, delete, deletecollection. */
  verbs?: string[];
  /** Resources as `plural` (any group) or `plural.group` (e.g. `deployments.apps`). */
  resources?: string[];
  namespaces?: string[];
}

/** How an injected failure is answered. */
export interface FailureOptions extends FaultFilter {
  /** 500 InternalError (default) or 429 TooManyRequests. */
  code?: 500 | 429;
  /** For 429: the `Retry-After` header and `details.retryAfterSeconds` (default 1). */
  retryAfterSeconds?: number;
  /** For 500: the error inside `Internal error occurred: <message>`. */
  message?: string;
}

/** Added latency: fixed milliseconds, uniform in [minMs, maxMs] (seeded), or computed per request. */
export type LatencySpec = number | { minMs: number; maxMs: number } | ((info: RequestInfo) => number);

/** What the injector has done so far (since the last `reset()`). */
export interface FaultCounts {
  failed500: number;
  failed429: number;
  delayed: number;
  watchesDropped: number;
  connectionsDropped: number;
}

/** A JSON-able description of what is armed, for the admin endpoint and for debugging tests. */
export interface FaultState {
  seed: number;
  failures: (
    | ({ remaining: number } & Omit<FailureOptions, "code"> & { code: 500 | 429 })
    | ({ fraction: number } & Omit<FailureOptions, "code"> & { code: 500 | 429 })
  )[];
  latency: { fixedMs: number } | { minMs: number; maxMs: number } | { perRequest: true } | null;
  latencyFilter?: FaultFilter;
  dropWatchesEveryMs: number | null;
  /** The oldest resourceVersion a watch or list can still start from. */
  oldestResourceVersion: string;
  counts: FaultCounts;
}

/** What `restart()` did. */
export interface RestartResult {
  connectionsDropped: number;
  watchesDropped: number;
  /** Watches and lists from before this resourceVersion now get 410. */
  compactedTo: string;
}

export interface FaultInjectorDeps {
  storage: Storage;
  /** The server's stop signal: ends the periodic watch drop and pending delays. */
  signal: AbortSignal;
}

type FailureRule = { filter: FaultFilter; answer: Required<Pick<FailureOptions, "code">> & FailureOptions } & (
  | { kind: "count"; remaining: number }
  | { kind: "fraction"; fraction: number }
);

const zeroCounts = (): FaultCounts => ({
  failed500: 0,
  failed429: 0,
  delayed: 0,
  watchesDropped: 0,
  connectionsDropped: 0,
});

/** The fault-injection handle of a server; see the module documentation for its contract. */
export class FaultInjector {
  /** The pipeline stage; the server inserts it right before the handler. */
  readonly stage: Stage;
  private readonly storage: Storage;
  private readonly signal: AbortSignal;
  private seedValue = DEFAULT_SEED;
  private random = seededRandom(DEFAULT_SEED);
  private failures: FailureRule[] = [];
  private latency: LatencySpec | undefined;
  private latencyFilter: FaultFilter = {};
  private dropTimer: ReturnType<typeof setInterval> | undefined;
  private dropEveryMs: number | undefined;
  private readonly watches = new Set<ServerResponse>();
  private readonly sockets = new Set<Socket>();
  private countsValue = zeroCounts();

  constructor(deps: FaultInjectorDeps) {
    this.storage = deps.storage;
    this.signal = deps.signal;
    this.signal.addEventListener("abort", () => this.stopTimer(), { once: true });
    this.stage = (ctx, next) => this.run(ctx, next);
  }

  /** Restarts the random sequence from `seed`: the same seed and requests fail the same requests. */
  seed(seed: number): void {
    if (!Number.isInteger(seed)) throw new TypeError(`faults: seed must be an integer, got ${seed}`);
    this.seedValue = seed;
    this.random = seededRandom(seed);
  }

  /** Fails the next `count` matching resource requests. Rules are checked in the order they were added. */
  failNext(count: number, options: FailureOptions = {}): void {
    if (!Number.isInteger(count) || count < 1) {
      throw new TypeError(`faults: count must be a positive integer, got ${count}`);
    }
    this.failures.push({ kind: "count", remaining: count, ...this.rule(options) });
  }

  /** Fails each matching resource request with probability `fraction` (0..1), drawn from the seeded sequence. */
  failFraction(fraction: number, options: FailureOptions = {}): void {
    if (typeof fraction !== "number" || !(fraction >= 0 && fraction <= 1)) {
      throw new TypeError(`faults: fraction must be a number from 0 to 1, got ${fraction}`);
    }
    this.failures.push({ kind: "fraction", fraction, ...this.rule(options) });
  }

  /** Delays every matching resource request (replaces an earlier latency). */
  addLatency(latency: LatencySpec, filter: FaultFilter = {}): void {
    if (typeof latency === "number") checkMs("latency", latency);
    else if (typeof latency === "object") {
      checkMs("minMs", latency.minMs);
      checkMs("maxMs", latency.maxMs);
      if (latency.maxMs < latency.minMs) {
        throw new TypeError(`faults: maxMs (${latency.maxMs}) must not be less than minMs (${latency.minMs})`);
      }
    } else if (typeof latency !== "function")
      throw new TypeError("faults: latency must be ms, {minMs,maxMs} or a function");
    this.latency = latency;
    this.latencyFilter = checkFilter(filter);
  }

  /** Destroys the connection of every open watch now (mid-stream). Returns how many. */
  dropWatches(): number {
    let dropped = 0;
    for (const res of [...this.watches]) {
      this.watches.delete(res);
      res.destroy();
      dropped++;
    }
    this.countsValue.watchesDropped += dropped;
    return dropped;
  }

  /** Drops every open watch each `intervalMs` until `reset()` or server stop; 0 stops it. */
  dropWatchesEvery(intervalMs: number): void {
    checkMs("intervalMs", intervalMs);
    this.stopTimer();
    if (intervalMs === 0 || this.signal.aborted) return;
    this.dropEveryMs = intervalMs;
    this.dropTimer = setInterval(() => this.dropWatches(), intervalMs);
  }

  /**
   * Compacts the storage history up to `resourceVersion` (default: the current one), so watches,
   * lists at a resourceVersion and continue tokens from before it get 410 Expired. Returns the
   * oldest resourceVersion still served.
   */
  compact(resourceVersion?: number): string {
    const current = this.storage.currentRevision();
    const rev = resourceVersion ?? current;
    if (!Number.isInteger(rev) || rev < 0) {
      throw new TypeError(`faults: resourceVersion must be a non-negative integer, got ${resourceVersion}`);
    }
    if (rev > current) {
      throw new TypeError(`faults: cannot compact to resourceVersion ${rev}, the current one is ${current}`);
    }
    this.storage.compact(rev);
    return String(this.storage.oldestRevision());
  }

  /**
   * A simulated restart: every connection and every HTTP watch is dropped and the watch history is
   * discarded; the data stays (see the module's Caveats). `except` keeps one connection (the admin
   * endpoint's own, so it can answer).
   */
  restart(options: { except?: Socket } = {}): RestartResult {
    const watchesDropped = this.dropWatches();
    let connectionsDropped = 0;
    for (const socket of [...this.sockets]) {
      if (socket === options.except) continue;
      this.sockets.delete(socket);
      socket.destroy();
      connectionsDropped++;
    }
    this.countsValue.connectionsDropped += connectionsDropped;
    return { watchesDropped, connectionsDropped, compactedTo: this.compact() };
  }

  /** Disarms every fault, stops the periodic watch drop, clears the counts and restarts the seeded sequence. */
  reset(): void {
    this.failures = [];
    this.latency = undefined;
    this.latencyFilter = {};
    this.stopTimer();
    this.countsValue = zeroCounts();
    this.random = seededRandom(this.seedValue);
  }

  /** What the injector has done since the last reset. */
  get counts(): Readonly<FaultCounts> {
    return { ...this.countsValue };
  }

  /** What is armed now. */
  state(): FaultState {
    const latency = this.latency;
    return {
      seed: this.seedValue,
      failures: this.failures.map((rule) => ({
        ...(rule.kind === "count" ? { remaining: rule.remaining } : { fraction: rule.fraction }),
        ...rule.filter,
        ...rule.answer,
      })),
      latency:
        latency === undefined
          ? null
          : typeof latency === "number"
            ? { fixedMs: latency }
            : typeof latency === "function"
              ? { perRequest: true }
              : { minMs: latency.minMs, maxMs: latency.maxMs },
      ...(latency !== undefined && Object.keys(this.latencyFilter).length > 0
        ? { latencyFilter: this.latencyFilter }
        : {}),
      dropWatchesEveryMs: this.dropEveryMs ?? null,
      oldestResourceVersion: String(this.storage.oldestRevision()),
      counts: this.counts,
    };
  }

  /**
   * Not async on the way through (no fault armed: every request of a benchmark): it returns the next
   * stage's promise, and runFrom turns its throws into rejections. Only a delayed request awaits.
   */
  private run(ctx: RequestContext, next: () => Promise<void>): Promise<void> {
    const socket = ctx.req.socket;
    if (!this.sockets.has(socket)) {
      this.sockets.add(socket);
      socket.once("close", () => this.sockets.delete(socket));
    }
    const info = ctx.info;
    if (!info.isResourceRequest) return next();
    if (this.latency !== undefined && matches(this.latencyFilter, info)) {
      const ms = this.delayFor(this.latency, info);
      if (ms > 0) return this.delayed(ms, ctx, next);
    }
    return this.pass(ctx, next);
  }

  private async delayed(ms: number, ctx: RequestContext, next: () => Promise<void>): Promise<void> {
    this.countsValue.delayed++;
    if (!(await delay(ms, ctx.signal))) return; // the client left or the server stopped
    return this.pass(ctx, next);
  }

  /** The failure rules and watch tracking, once any latency has passed. */
  private pass(ctx: RequestContext, next: () => Promise<void>): Promise<void> {
    const info = ctx.info;
    const answer = this.failureFor(info);
    if (answer) throw this.failureError(ctx, answer);
    if (info.verb === "watch") {
      const res = ctx.res;
      this.watches.add(res);
      res.once("close", () => this.watches.delete(res));
    }
    return next();
  }

  private failureFor(info: RequestInfo): FailureRule["answer"] | undefined {
    for (let i = 0; i < this.failures.length; i++) {
      const rule = this.failures[i]!;
      if (!matches(rule.filter, info)) continue;
      if (rule.kind === "count") {
        rule.remaining--;
        if (rule.remaining === 0) this.failures.splice(i, 1);
        return rule.answer;
      }
      if (this.random() < rule.fraction) return rule.answer;
    }
    return undefined;
  }

  private failureError(ctx: RequestContext, answer: FailureRule["answer"]): ApiError {
    if (answer.code === 429) {
      this.countsValue.failed429++;
      const retryAfter = answer.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS;
      ctx.res.setHeader("Retry-After", String(retryAfter));
      return new ApiError(
        failure(429, "TooManyRequests", TOO_MANY_REQUESTS_MESSAGE, { retryAfterSeconds: retryAfter }),
      );
    }
    this.countsValue.failed500++;
    return internalError(new Error(answer.message ?? DEFAULT_INTERNAL_ERROR_CAUSE));
  }

  private delayFor(latency: LatencySpec, info: RequestInfo): number {
    if (typeof latency === "number") return latency;
    if (typeof latency === "function") {
      const ms = latency(info);
      return Number.isFinite(ms) && ms > 0 ? ms : 0;
    }
    return latency.minMs + this.random() * (latency.maxMs - latency.minMs);
  }

  private rule(options: FailureOptions): Pick<FailureRule, "filter" | "answer"> {
    const { code = 500, retryAfterSeconds, message, ...filter } = options;
    if (code !== 500 && code !== 429) throw new TypeError(`faults: code must be 500 or 429, got ${code}`);
    if (retryAfterSeconds !== undefined && (!Number.isInteger(retryAfterSeconds) || retryAfterSeconds < 0)) {
      throw new TypeError(`faults: retryAfterSeconds must be a non-negative integer, got ${retryAfterSeconds}`);
    }
    if (message !== undefined && typeof message !== "string") throw new TypeError("faults: message must be a string");
    return {
      filter: checkFilter(filter),
      answer: {
        code,
        ...(code === 429 ? { retryAfterSeconds: retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS } : {}),
        ...(code === 500 && message !== undefined ? { message } : {}),
      },
    };
  }

  private stopTimer(): void {
    if (this.dropTimer !== undefined) clearInterval(this.dropTimer);
    this.dropTimer = undefined;
    this.dropEveryMs = undefined;
  }
}

function checkMs(name: string, value: unknown): void {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    throw new TypeError(`faults: ${name} must be a non-negative number of milliseconds, got ${String(value)}`);
  }
}

function checkFilter(filter: FaultFilter): FaultFilter {
  const out: FaultFilter = {};
  for (const field of ["verbs", "resources", "namespaces"] as const) {
    const value = filter[field];
    if (value === undefined) continue;
    if (!Array.isArray(value) || value.some((v) => typeof v !== "string")) {
      throw new TypeError(`faults: ${field} must be an array of strings`);
    }
    out[field] = [...value];
  }
  const unknown = Object.keys(filter).filter((k) => !["verbs", "resources", "namespaces"].includes(k));
  if (unknown.length > 0) throw new TypeError(`faults: unknown option ${unknown.map((k) => `"${k}"`).join(", ")}`);
  return out;
}

function matches(filter: FaultFilter, info: RequestInfo): boolean {
  if (filter.verbs && !filter.verbs.includes(info.verb)) return false;
  if (filter.namespaces && !filter.namespaces.includes(info.namespace)) return false;
  if (filter.resources) {
    const qualified = info.apiGroup === "" ? info.resource : `${info.resource}.${info.apiGroup}`;
    if (!filter.resources.includes(info.resource) && !filter.resources.includes(qualified)) return false;
  }
  return true;
}

/** Resolves true after `ms`, or false as soon as `signal` aborts (no timer left either way). */
function delay(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
