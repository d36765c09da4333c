/**
 * Watch responses: newline-delimited JSON events over a chunked HTTP response, with bookmarks and a
 * server-side timeout, as k8s.io/apiserver/pkg/endpoints/handlers/watch.go serves them.
 *
 * ## Expected flow
 * Headers go out at once (clients treat the 200 as "watch established"), then the ObjectStore's
 * events (initial ADDED events first when no resourceVersion was given), then BOOKMARKs every
 * `bookmarkIntervalMs` and 2 s before the timeout when asked for. The watch ends at timeoutSeconds,
 * when the client goes, when the server stops, after an ERROR event (410 Expired), or when the client
 * stops reading (its socket is destroyed, see MAX_PENDING_BYTES).
 *
 * ## Guarantees
 * - Events reach the client in resourceVersion order; a bookmark's resourceVersion is never ahead of an
 *   event not yet written to this client.
 * - Every timer and subscription is released when the response closes, whatever closed it.
 * - An event is written by the end of the event-loop turn that produced it: the events of one turn go
 *   out together as one chunk (see `write`), lines that are queued when the watch closes are written
 *   before the response ends.
 */
import type { ServerResponse } from "node:http";
import type { Status } from "kubernetes-types/meta/v1.d.ts";
import { ApiError, badRequest } from "../machinery/status.ts";
import { type IncludeObject, toTable } from "../printers/table.ts";
import { groupVersion, type JsonObject, type ServedResource } from "../registry/served-resource.ts";
import type { RequestContext } from "../request/pipeline.ts";
import { queryBool } from "../request/query-params.ts";
import type { ObjectStore } from "../rest/object-store.ts";
import type { ListQuery, StopWatch } from "../rest/types.ts";
import { fieldErrorMessage, invalid } from "../validation/field-errors.ts";
import { goQuote } from "../validation/go-format.ts";
import type { ResponseShape } from "./negotiation.ts";
import { partialObjectMetadata } from "./partial-metadata.ts";

/**
 * A watch's resourceVersion as the watch cache parses it (APIObjectVersioner.ParseResourceVersion,
 * strconv.ParseUint): "" and "0" are 0, anything but an unsigned 64-bit decimal is the storage
 * InvalidError, which reaches the client as a bare 500 (no reason) since nothing converts it.
 */
export function parseWatchResourceVersion(text: string | undefined): number {
  if (text === undefined || text === "" || text === "0") return 0;
  const detail = !/^[0-9]+$/.test(text)
    ? `strconv.ParseUint: parsing ${goQuote(text)}: invalid syntax`
    : BigInt(text) > MAX_UINT64
      ? `strconv.ParseUint: parsing ${goQuote(text)}: value out of range`
      : undefined;
  if (detail === undefined) return Number(text);
  const message = fieldErrorMessage(invalid("resourceVersion", text, detail));
  throw new ApiError({ kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, code: 500 });
}

const MAX_UINT64 = 2n ** 64n - 1n;

export interface WatchTimers {
  /** How often a watch with allowWatchBookmarks gets a BOOKMARK. */
  bookmarkIntervalMs: number;
  /** The timeout of a watch that sent no timeoutSeconds. */
  defaultTimeoutMs(): number;
}

/**
 * Why a minute: kube-apiserver's cacher sends each bookmark-enabled watcher a bookmark about once a
 * minute (and shortly before its timeout) — often enough that a reconnecting informer resumes from a
 * recent version, rarely enough to cost nothing.
 */
export const DEFAULT_BOOKMARK_INTERVAL_MS = 60_000;

/** Why 30-60 minutes: kube-apiserver's --min-request-timeout (1800 s) times a random factor in [1, 2), spreading reconnects. */
export function defaultWatchTimeoutMs(): number {
  return 1_800_000 * (1 + Math.random());
}

/**
 * Slow watchers. kube-apiserver's cacher gives each watcher a small bounded channel; when it is full and
 * stays full past a short timeout the watcher is terminated, so a client that stops reading costs the
 * server a few kilobytes, not a growing backlog. Here the backlog is what Node holds for the response
 * beyond the kernel's socket buffer: past MAX_PENDING_BYTES the client must make progress within each
 * STALL_WINDOW_MS (a slow reader of a big burst stays), and past MAX_BUFFERED_BYTES it is dropped at
 * once. A dropped watcher's socket is destroyed, not ended: ending would queue the end behind data the
 * client will never read and keep all of it.
 *
 * Why 1 MiB: hundreds of ordinary events, far more than a reading client ever has in flight.
 * Why 1 s: ten times the cacher's dispatch budget (100 ms), for loaded machines where a reading client
 * may not get scheduled for a while.
 * Why 16 MiB: what one event-loop turn of writes may queue before the window elapses.
 */
const MAX_PENDING_BYTES = 1024 * 1024;
const STALL_WINDOW_MS = 1000;
const MAX_BUFFERED_BYTES = 16 * 1024 * 1024;

/** How long before a watch's deadline the cacher sends its last bookmark (cacheWatcher.nextBookmarkTime). */
const PRE_TIMEOUT_BOOKMARK_MS = 2000;

/**
 * Why 64 Ki characters: a batch of one event-loop turn is flushed early once it is this big, so a burst
 * of thousands of events is written in pieces of a few dozen objects (each a handful of TLS records)
 * rather than joined into one huge string, and the buffer limit above is checked as it goes.
 */
const MAX_BATCH_CHARS = 64 * 1024;

/**
 * The last event line built. A change fans out to every watcher of the resource in turn, each with the
 * same stored string (or the same PartialObjectMetadata string): they share one line, so it is built
 * and flattened once per event rather than once per watcher. Tables differ per watcher (headers) and
 * are not shared.
 */
let lastLine: { type: string; object: string; line: string } | undefined;

function eventLine(type: string, object: string): string {
  if (lastLine !== undefined && lastLine.object === object && lastLine.type === type) return lastLine.line;
  const line = `{"type":"${type}","object":${object}}\n`;
  lastLine = { type, object, line };
  return line;
}

interface WatchDeps {
  store: ObjectStore;
  watchTimers: WatchTimers;
  openWatches: Set<ServerResponse>;
}

export function serveWatch(
  ctx: RequestContext,
  served: ServedResource,
  namespace: string,
  query: ListQuery,
  shape: ResponseShape,
  includeObject: IncludeObject,
  deps: WatchDeps,
): Promise<void> {
  const params = ctx.url.searchParams;
  const timeoutText = params.get("timeoutSeconds");
  let timeoutMs = deps.watchTimers.defaultTimeoutMs();
  if (timeoutText !== null && timeoutText !== "") {
    if (!/^\d+$/.test(timeoutText)) throw badRequest(`strconv.ParseInt: parsing "${timeoutText}": invalid syntax`);
    timeoutMs = Number(timeoutText) * 1000;
  }
  const bookmarks = queryBool(params, "allowWatchBookmarks") === true;
  const sendInitialEvents = queryBool(params, "sendInitialEvents");

  const res = ctx.res;
  res.writeHead(200, {
    "Content-Type": "application/json",
    "Cache-Control": "no-cache, private",
    "Transfer-Encoding": "chunked",
  });
  res.flushHeaders();
  deps.openWatches.add(res);

  let tableHeadersSent = false;
  const encode = (object: string): string => {
    if (shape.as === "Metadata") return partialObjectMetadata(object, shape.apiVersion);
    if (shape.as !== "Table") return object;
    const obj = JSON.parse(object) as JsonObject;
    const table = toTable(
      served,
      [obj],
      {},
      { includeObject, apiVersion: shape.apiVersion, noHeaders: tableHeadersSent },
    );
    tableHeadersSent = true;
    return JSON.stringify(table);
  };

  return new Promise<void>((resolve) => {
    let closed = false;
    let stopWatch: StopWatch = () => {};
    const timers: NodeJS.Timeout[] = [];
    // Lines written in this event-loop turn, sent together when it ends (see `write`).
    let batch: string[] = [];
    let flushing: NodeJS.Immediate | undefined;
    let batchChars = 0;
    // What left Node's buffer is what was queued minus what is still pending (see `checkBacklog`).
    let queued = 0;
    let stall: { timer: NodeJS.Timeout; flushed: number } | undefined;
    const flush = () => {
      if (batch.length === 0 || res.writableEnded || res.destroyed) return;
      const text = batch.length === 1 ? (batch[0] as string) : batch.join("");
      batch = [];
      batchChars = 0;
      const before = res.writableLength;
      res.write(text);
      queued += res.writableLength - before;
    };
    const close = () => {
      if (closed) return;
      closed = true;
      stopWatch();
      for (const t of timers) clearTimeout(t);
      if (stall) clearInterval(stall.timer);
      if (flushing !== undefined) clearImmediate(flushing);
      flush();
      deps.openWatches.delete(res);
      if (!res.writableEnded && !res.destroyed) res.end();
      resolve();
    };
    /** Drops a watcher that does not read: its socket goes, and with it everything buffered for it. */
    const terminate = () => {
      batch = [];
      res.destroy();
      close();
    };
    const checkBacklog = () => {
      const pending = res.writableLength;
      if (pending > MAX_BUFFERED_BYTES) return terminate();
      if (pending <= MAX_PENDING_BYTES || stall) return;
      stall = {
        flushed: queued - pending,
        timer: setInterval(() => {
          const now = res.writableLength;
          const flushed = queued - now;
          if (now <= MAX_PENDING_BYTES) {
            clearInterval(stall!.timer);
            stall = undefined;
          } else if (flushed <= stall!.flushed) {
            terminate();
          } else {
            stall!.flushed = flushed;
          }
        }, STALL_WINDOW_MS),
      };
    };
    /**
     * Queues a line for the end of this event-loop turn: every event committed while the loop serves
     * one batch of ready sockets (often several writes from concurrent requests) goes out as one
     * chunk, one TLS record and one syscall instead of one each, and the client decodes one chunk.
     * Order is kept (one queue per watcher), and nothing waits longer than the current turn.
     */
    const write = (line: string) => {
      if (closed) return;
      batch.push(line);
      batchChars += line.length;
      if (batchChars >= MAX_BATCH_CHARS) {
        // A burst (the initial ADDED events of a big collection) goes out in pieces as it is produced.
        flush();
        checkBacklog();
        return;
      }
      flushing ??= setImmediate(() => {
        flushing = undefined;
        flush();
        checkBacklog();
      });
    };
    res.on("close", close);
    ctx.signal.addEventListener("abort", close, { once: true });

    const bookmark = (annotations?: Record<string, string>) => {
      // Events still being converted go first: a bookmark's resourceVersion must not overtake them.
      if (stopWatch.afterPending) stopWatch.afterPending(() => writeBookmark(annotations));
      else writeBookmark(annotations);
    };
    const writeBookmark = (annotations?: Record<string, string>) => {
      const metadata: Record<string, unknown> = { resourceVersion: String(deps.store.storage.currentRevision()) };
      if (annotations) metadata["annotations"] = annotations;
      const object = JSON.stringify({ kind: served.kind, apiVersion: groupVersion(served), metadata });
      write(`{"type":"BOOKMARK","object":${shape.as === "Metadata" ? encode(object) : object}}\n`);
    };

    stopWatch = deps.store.watch(
      served,
      namespace,
      query,
      {
        event: (type, object) =>
          write(
            shape.as === "Table" ? `{"type":"${type}","object":${encode(object)}}\n` : eventLine(type, encode(object)),
          ),
        error: (status: Status) => {
          write(`{"type":"ERROR","object":${JSON.stringify(status)}}\n`);
          close();
        },
        end: () => close(),
      },
      sendInitialEvents,
    );
    if (closed) return;
    // WatchList (sendInitialEvents=true): a bookmark marks the end of the initial state.
    if (sendInitialEvents && bookmarks) bookmark({ "k8s.io/initial-events-end": "true" });
    const deadline = Date.now() + timeoutMs;
    /**
     * cacheWatcher.nextBookmarkTime: the next bookmark goes out after the bookmark interval, or 2 s
     * before the deadline when that is sooner (the client then resumes from a recent version), and none
     * once that moment has passed.
     */
    const scheduleBookmark = () => {
      const now = Date.now();
      const at = Math.min(now + deps.watchTimers.bookmarkIntervalMs, deadline - PRE_TIMEOUT_BOOKMARK_MS);
      if (at <= now) return;
      const timer = setTimeout(() => {
        timers.splice(timers.indexOf(timer), 1);
        bookmark();
        scheduleBookmark();
      }, at - now);
      timers.push(timer);
    };
    if (bookmarks) scheduleBookmark();
    timers.push(setTimeout(close, timeoutMs));
  });
}
