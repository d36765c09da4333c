/**
 * The live list of one kind's objects: list, then watch from the list's resourceVersion, resuming
 * after each watch ends and listing again after a 410, with subscribers told of every change. The
 * runtime's informer does the same for operators; the dashboard layer may only use the client, so
 * this is the small loop a read-only page needs (no indexes, no resync, no handlers' contract).
 *
 * ## Expected flow
 * `const feed = new ObjectFeed(listerWatcher)`, `feed.subscribe(listener)`, `void feed.run(signal)`;
 * read `feed.objects()` and `feed.status`; abort the signal to stop (`run` resolves once the list or
 * watch in flight and any backoff timer are gone).
 *
 * ## States ({@link FeedPhase})
 * - `listing`: list every page; on success the store is replaced by the list (the differences are
 *   told to subscribers as added / modified / deleted) and the feed is `synced`.
 * - `watching`: watch from the last seen resourceVersion with bookmarks. A watch the server ends,
 *   or one still open {@link WATCH_GRACE_MS} after its `timeoutSeconds` (a dead connection), is
 *   re-opened from that version; one that ended within {@link SHORT_WATCH_MS} with no event first
 *   waits that long (no hot loop against a server that closes every watch at once).
 * - `backingOff`: after an error, wait ({@link BACKOFF_INITIAL_MS} doubling up to
 *   {@link BACKOFF_MAX_MS}), then list (no list succeeded yet, or the version expired) or watch.
 *   The error is reported (`status.error`, a `failed` change) until the next list or watch
 *   succeeds (`synced` again); a 410 is not an error but a relist, at once unless the last list is under
 *   {@link SHORT_WATCH_MS} old.
 * - `stopped`: the signal aborted.
 *
 * ## Guarantees
 * - Listeners are called synchronously after the store reflects the change, in the order of the
 *   server's events; a listener that throws does not affect the feed or other listeners.
 * - After a 410 Gone the relist brings the store to the server's state, and the objects the watch
 *   missed (created, changed, deleted) are told as such.
 *
 * ## Caveats
 * - Everything of the kind is held in memory: fine for a development cluster, not meant for a
 *   production cluster with 100,000 pods.
 */

import type { KubeObject } from "capstan";
import { ApiError, isGone } from "capstan";
import type { ListerWatcher } from "capstan/client";
import { sleep } from "capstan/internal";

/**
 * First wait after an error. Short: on a development machine the usual error is an API server
 * being restarted, and the page should be live again within a second of it coming back.
 */
export const BACKOFF_INITIAL_MS = 500;
/**
 * Longest wait between attempts: a page left open against a stopped server retries every 10 s,
 * which costs nothing and recovers within 10 s of the server's return.
 */
export const BACKOFF_MAX_MS = 10_000;
/** A watch ending this quickly without any event is "short" (see the module documentation). */
export const SHORT_WATCH_MS = 1_000;
/** The watch's `timeoutSeconds`: the server ends each watch after 5 minutes. */
export const WATCH_TIMEOUT_SECONDS = 300;
/**
 * How long past {@link WATCH_TIMEOUT_SECONDS} a watch may stay open before the feed presumes the
 * connection dead (a half-open connection never ends on its own) and re-watches: generous against
 * a slow server, small against the 5 minutes the watch is meant to last.
 */
export const WATCH_GRACE_MS = 30_000;
/** Items per list page: client-go's pager default, one request for any development cluster. */
export const LIST_PAGE_SIZE = 500;

/** The state machine's node; see the module documentation. */
export type FeedPhase =
  | { phase: "idle" }
  | { phase: "listing" }
  | { phase: "watching"; resourceVersion: string }
  | { phase: "backingOff"; delayMs: number; next: "list" | "watch" }
  | { phase: "stopped" };

/** An error from the cluster, as the page shows it. */
export interface FeedError {
  /** HTTP status code from the API server, or 0 when no answer came (connection refused). */
  code: number;
  /** The Status reason (`Forbidden`, `NotFound`) or the network error's code (`ECONNREFUSED`). */
  reason: string;
  message: string;
}

/** What a feed tells its listeners. `synced` follows every successful list. */
export type FeedChange<T extends KubeObject> =
  | { type: "added" | "modified" | "deleted"; object: T }
  | { type: "synced" }
  | { type: "failed"; error: FeedError };

/** A feed's state as the page shows it. */
export interface FeedStatus {
  /** A list has succeeded: `objects()` is the cluster's state (as of the last event). */
  synced: boolean;
  /** The last list or watch error, cleared by the next successful list or watch event. */
  error?: FeedError;
}

/** The key of an object in a feed: `namespace/name`, or `name` for cluster-scoped objects. */
export function objectKey(obj: KubeObject): string {
  const ns = obj.metadata?.namespace;
  return ns ? `${ns}/${obj.metadata?.name ?? ""}` : (obj.metadata?.name ?? "");
}

/** The cluster's error (an `ApiError`, or a network error) in the page's terms. */
export function feedError(err: unknown): FeedError {
  if (err instanceof ApiError) return { code: err.code, reason: err.reason || "Error", message: err.message };
  const e = err as { code?: unknown; message?: unknown; cause?: { code?: unknown } } | null;
  const code = typeof e?.code === "string" ? e.code : typeof e?.cause?.code === "string" ? e.cause.code : "Error";
  return { code: 0, reason: code, message: typeof e?.message === "string" ? e.message : String(err) };
}

type Listener<T extends KubeObject> = (change: FeedChange<T>) => void;

/** The live list of one kind; see the module documentation. */
export class ObjectFeed<T extends KubeObject = KubeObject> {
  #phase: FeedPhase = { phase: "idle" };
  readonly #store = new Map<string, T>();
  readonly #listeners = new Set<Listener<T>>();
  #status: FeedStatus = { synced: false };

  constructor(private readonly source: ListerWatcher<T>) {}

  get phase(): FeedPhase {
    return this.#phase;
  }

  get status(): FeedStatus {
    return this.#status;
  }

  /** The objects as of the last change, in no particular order. */
  objects(): T[] {
    return [...this.#store.values()];
  }

  /** The object with key `namespace/name` (or `name`), if the feed holds it. */
  get(key: string): T | undefined {
    return this.#store.get(key);
  }

  get size(): number {
    return this.#store.size;
  }

  /** Calls `listener` on every change until the returned function is called. */
  subscribe(listener: Listener<T>): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Resolves once a list has succeeded or failed (whichever comes first), or `signal` aborts. */
  settled(signal?: AbortSignal): Promise<void> {
    if (this.#status.synced || this.#status.error !== undefined || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        unsubscribe();
        signal?.removeEventListener("abort", done);
        resolve();
      };
      const unsubscribe = this.subscribe((change) => {
        if (change.type === "synced" || change.type === "failed") done();
      });
      signal?.addEventListener("abort", done, { once: true });
    });
  }

  /** Lists and watches until `signal` aborts; see the states in the module documentation. */
  async run(signal: AbortSignal): Promise<void> {
    let resourceVersion: string | undefined;
    let delayMs = BACKOFF_INITIAL_MS;
    let next: "list" | "watch" = "list";
    let listedAt = 0;
    while (!signal.aborted) {
      try {
        if (next === "list") {
          this.#phase = { phase: "listing" };
          resourceVersion = await this.#list(signal);
          listedAt = Date.now();
          delayMs = BACKOFF_INITIAL_MS;
          next = "watch";
          continue;
        }
        this.#phase = { phase: "watching", resourceVersion: resourceVersion as string };
        const outcome = await this.#watch(resourceVersion as string, signal);
        resourceVersion = outcome.resourceVersion;
        if (outcome.delivered) delayMs = BACKOFF_INITIAL_MS;
        if (outcome.short) await sleep(SHORT_WATCH_MS, signal);
      } catch (err) {
        if (signal.aborted) break;
        if (isGone(err)) {
          // The version expired: list again, at once unless the last list is very recent (a server
          // that cannot serve its own versions must not get a list loop).
          next = "list";
          if (Date.now() - listedAt >= SHORT_WATCH_MS) continue;
        } else {
          this.#fail(feedError(err));
        }
        this.#phase = { phase: "backingOff", delayMs, next };
        // Rejects only when the signal aborts, which ends the loop.
        await sleep(delayMs, signal).catch(() => undefined);
        delayMs = Math.min(delayMs * 2, BACKOFF_MAX_MS);
      }
    }
    this.#phase = { phase: "stopped" };
  }

  async #list(signal: AbortSignal): Promise<string> {
    const seen = new Map<string, T>();
    let token: string | undefined;
    let resourceVersion = "";
    do {
      const page = await this.source.list({ limit: LIST_PAGE_SIZE, continue: token, signal });
      for (const obj of page.items) seen.set(objectKey(obj), obj);
      token = page.metadata.continue || undefined;
      resourceVersion = page.metadata.resourceVersion ?? "";
    } while (token !== undefined);
    for (const [key, old] of this.#store) {
      if (!seen.has(key)) {
        this.#store.delete(key);
        this.#emit({ type: "deleted", object: old });
      }
    }
    for (const [key, obj] of seen) {
      const old = this.#store.get(key);
      this.#store.set(key, obj);
      if (old === undefined) this.#emit({ type: "added", object: obj });
      else if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion) {
        this.#emit({ type: "modified", object: obj });
      }
    }
    this.#status = { synced: true };
    this.#emit({ type: "synced" });
    return resourceVersion;
  }

  async #watch(
    from: string,
    signal: AbortSignal,
  ): Promise<{ resourceVersion: string; delivered: boolean; short: boolean }> {
    const started = Date.now();
    let resourceVersion = from;
    let delivered = false;
    // The server ends the watch after timeoutSeconds; one that outlives it by the grace period is
    // presumed dead and ends here (the stream ends quietly when its signal aborts).
    const watchdog = new AbortController();
    const stopWatch = () => watchdog.abort();
    signal.addEventListener("abort", stopWatch, { once: true });
    const deadline = setTimeout(stopWatch, WATCH_TIMEOUT_SECONDS * 1000 + WATCH_GRACE_MS);
    try {
      const events = await this.source.watch({
        resourceVersion: from,
        allowWatchBookmarks: true,
        timeoutSeconds: WATCH_TIMEOUT_SECONDS,
        signal: watchdog.signal,
      });
      if (this.#status.error !== undefined) {
        // The server is back: the store is current again from here on.
        this.#status = { synced: true };
        this.#emit({ type: "synced" });
      }
      for await (const event of events) {
        resourceVersion = event.object.metadata?.resourceVersion ?? resourceVersion;
        if (event.type === "BOOKMARK") continue;
        delivered = true;
        const key = objectKey(event.object);
        if (event.type === "DELETED") this.#store.delete(key);
        else this.#store.set(key, event.object);
        this.#emit({
          type: event.type === "ADDED" ? "added" : event.type === "MODIFIED" ? "modified" : "deleted",
          object: event.object,
        });
      }
    } finally {
      clearTimeout(deadline);
      signal.removeEventListener("abort", stopWatch);
    }
    return { resourceVersion, delivered, short: !delivered && Date.now() - started < SHORT_WATCH_MS };
  }

  #fail(error: FeedError): void {
    this.#status = { synced: this.#status.synced, error };
    this.#emit({ type: "failed", error });
  }

  #emit(change: FeedChange<T>): void {
    for (const listener of this.#listeners) {
      try {
        listener(change);
      } catch {
        // A broken listener (a page's stream that went away mid-write) must not stop the feed.
      }
    }
  }
}
