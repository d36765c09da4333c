/**
 * The dashboard's HTTP routes: the page's three static files, JSON routes the page reads, and
 * Server-Sent Event streams that keep it live. Writes (POST, PUT, DELETE) are object-writes.ts's.
 *
 * Routes (`kind` is a kind id, `core/v1/pods`, `useless.container.training/v1alpha1/machines`):
 * - `GET /`, `/app.js`, `/style.css`: the page.
 * - `GET /api/kinds`: every kind with its columns, object count and error.
 * - `GET /api/objects?kind=`: the rows of one kind.
 * - `GET /api/object?kind=&namespace=&name=`: one object's detail (YAML, conditions, owners,
 *   children, events).
 * - `GET /api/logs?source=&namespace=&name=&limit=`: the newest operator log lines that match.
 * - `GET /api/stream/kinds`, `/api/stream/objects?kind=`, `/api/stream/object?kind=&namespace=&name=`,
 *   `/api/stream/logs?source=&namespace=&name=`: the same, live (text/event-stream).
 * - `GET /api/runs?kind=&namespace=&name=&uid=`, `/api/stream/runs?...`: the object's reconcile
 *   timeline (run-routes.ts), which `/api/stream/object` carries too (`runs`, `run` events).
 * - `GET /api/stream?session=`, `POST /api/stream/<session>/topics`, `DELETE
 *   /api/stream/<session>/topics/<id>`: the kinds, objects, object and logs streams as topics of
 *   one stream per page (stream-sessions.ts), which is what the page uses: a browser allows six
 *   connections per host, shared by all its tabs.
 *
 * Every request must carry the access token (access-token.ts): without it, 401 before any route.
 *
 * Guarantees: every error is an answer, never a crash: a request with a foreign `Host` gets 403,
 * another method outside object-writes.ts's routes 405, an unknown route 404, and an error of the
 * cluster a JSON body `{ "error": { "code", "reason", "message" } }` with the cluster's HTTP code
 * (403, 404, ...) or 502 when the cluster did not answer.
 */
import { readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { KubeClient, KubeObject } from "capstan";
import type { AccessGuard } from "./access-token.ts";
import type { ClusterView, ViewChange, ViewedKind } from "./cluster-view.ts";
import { hostAllowed } from "./host-guard.ts";
import type { CustomResourceDefinition, PrinterColumn } from "./kinds.ts";
import { type LogFeed, type LogFilter, matchesLogFilter } from "./log-feed.ts";
import { type ObjectDetail, objectDetail } from "./object-detail.ts";
import { type FeedError, feedError, type ObjectFeed, objectKey } from "./object-feed.ts";
import { columnError, objectRow } from "./object-row.ts";
import { writeRoutes } from "./object-writes.ts";
import { runRoutes } from "./run-routes.ts";
import type { RunStore } from "./run-store.ts";
import { type EventSink, SseStream } from "./sse.ts";
import { streamSessions, type TopicStarter } from "./stream-sessions.ts";

/**
 * Coalescing delay of the kinds and detail streams: one update per burst of changes (a relist, an
 * operator writing ten children) instead of one per change, still immediate to the eye.
 */
export const COALESCE_MS = 100;
/** How long `/api/kinds` and `/api/objects` wait for a first list before answering with what they have. */
export const FIRST_LIST_WAIT_MS = 5_000;
/** Log lines a page gets when it opens the logs panel. */
export const INITIAL_LOG_LINES = 500;

/** A kind as `/api/kinds` lists it. */
export interface KindInfo {
  id: string;
  group: string;
  version: string;
  kind: string;
  plural: string;
  namespaced: boolean;
  builtin: boolean;
  /** Read as metadata only (Secrets): the page offers no form for it. */
  metadataOnly: boolean;
  columns: (PrinterColumn & { error?: string })[];
  /** Objects in the feed; `null` until the first list succeeded. */
  count: number | null;
  error?: FeedError;
}

/** An error as the page receives it. */
interface ErrorBody {
  error: FeedError;
}

const PAGE_FILES: Record<string, { file: string; type: string }> = {
  "/": { file: "index.html", type: "text/html; charset=utf-8" },
  "/app.js": { file: "app.js", type: "text/javascript; charset=utf-8" },
  "/style.css": { file: "style.css", type: "text/css; charset=utf-8" },
  "/timeline.js": { file: "timeline.js", type: "text/javascript; charset=utf-8" },
  "/schema-form.js": { file: "schema-form.js", type: "text/javascript; charset=utf-8" },
  "/object-editor.js": { file: "object-editor.js", type: "text/javascript; charset=utf-8" },
  "/dom.js": { file: "dom.js", type: "text/javascript; charset=utf-8" },
  "/stream-hub.js": { file: "stream-hub.js", type: "text/javascript; charset=utf-8" },
  "/shard-columns.js": { file: "shard-columns.js", type: "text/javascript; charset=utf-8" },
};

/** What the routes need. */
export interface RoutesOptions {
  view: ClusterView;
  client: KubeClient;
  logs: LogFeed;
  /** The operators' runs for the reconcile timeline (run-routes.ts); none when absent. */
  runs?: RunStore;
  /** `Host` header values to accept (see host-guard.ts). */
  allowedHosts: ReadonlySet<string>;
  /** Admits only requests carrying the access token (see access-token.ts). */
  access: AccessGuard;
  /** Aborted when the dashboard stops: every stream ends. */
  signal: AbortSignal;
  /** The write routes answer 403 (see object-writes.ts). */
  readOnly?: boolean;
}

/** The request handler of the dashboard's HTTP server. */
export function dashboardRoutes(options: RoutesOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const pageDir = new URL("./page/", import.meta.url);
  const streams = new Set<SseStream>();
  options.signal.addEventListener("abort", () => {
    for (const s of streams) s.close();
  });
  const open = (res: ServerResponse): SseStream => {
    const stream = new SseStream(res);
    streams.add(stream);
    stream.onClose(() => streams.delete(stream));
    return stream;
  };
  const runs = runRoutes({ view: options.view, runs: options.runs, sendJson, open });
  const writes = writeRoutes({ ...options, readOnly: options.readOnly ?? false });
  const topics: Record<string, TopicStarter> = {
    kinds: async (_q, open) => {
      streamKinds(open());
      return undefined;
    },
    objects: (q, open) => streamObjects(q.get("kind") ?? "", open),
    object: (q, open) => streamObject(q.get("kind") ?? "", q.get("namespace") ?? "", q.get("name") ?? "", open),
    logs: async (q, open) => {
      streamLogs(open(), logFilter(q));
      return undefined;
    },
  };
  const sessions = streamSessions({ topics, open, sendJson, allowedHosts: options.allowedHosts });

  return (req, res) => {
    handle(req, res).catch((err: unknown) => {
      // A bug here must cost one request, not the server.
      if (!res.headersSent) sendJson(res, 500, { error: { code: 500, reason: "InternalError", message: String(err) } });
      else res.end();
    });
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!hostAllowed(req.headers.host, options.allowedHosts)) {
      sendJson(res, 403, {
        error: {
          code: 403,
          reason: "Forbidden",
          message: `the dashboard answers only its loopback address, not Host "${req.headers.host ?? ""}"`,
        },
      });
      return;
    }
    if (!options.access.admit(req, res)) return;
    if (await writes(req, res)) return;
    const url = new URL(req.url ?? "/", "http://dashboard.invalid");
    if (await sessions.handle(req, res, url)) return;
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.setHeader("allow", "GET, HEAD");
      const message = `${req.method} is not allowed here: this route only reads (GET, HEAD)`;
      sendJson(res, 405, { error: { code: 405, reason: "MethodNotAllowed", message } });
      return;
    }
    const q = url.searchParams;
    const page = PAGE_FILES[url.pathname];
    if (page !== undefined) {
      res.writeHead(200, {
        "content-type": page.type,
        "cache-control": "no-store",
        "x-content-type-options": "nosniff",
        // Nothing but this server's own files: no inline script, no other origin.
        "content-security-policy": "default-src 'self'; style-src 'self'; img-src 'self' data:",
      });
      res.end(readFileSync(new URL(page.file, pageDir)));
      return;
    }
    switch (url.pathname) {
      case "/api/kinds":
        await firstList(options.view.crds);
        return sendJson(res, 200, { kinds: kindInfos(), crdError: options.view.crds.status.error });
      case "/api/objects":
        return objects(res, q.get("kind") ?? "");
      case "/api/object":
        return object(res, q.get("kind") ?? "", q.get("namespace") ?? "", q.get("name") ?? "");
      case "/api/logs": {
        const limit = Number(q.get("limit") ?? INITIAL_LOG_LINES);
        const lines = options.logs.lines(
          logFilter(q),
          Number.isInteger(limit) && limit > 0 ? limit : INITIAL_LOG_LINES,
        );
        return sendJson(res, 200, { sources: options.logs.sources(), lines });
      }
      case "/api/stream/kinds":
        return streamKinds(open(res));
      case "/api/stream/objects":
      case "/api/stream/object": {
        const start = topics[url.pathname.slice("/api/stream/".length)] as TopicStarter;
        const refused = await start(q, () => open(res));
        if (refused !== undefined) sendJson(res, httpCodeOf(refused.error), refused);
        return;
      }
      case "/api/stream/logs":
        return streamLogs(open(res), logFilter(q));
      default:
        if (runs.handle(url.pathname, q, res)) return;
        sendJson(res, 404, { error: { code: 404, reason: "NotFound", message: `no route ${url.pathname}` } });
    }
  }

  /** Waits for `feed`'s first list to succeed or fail, at most {@link FIRST_LIST_WAIT_MS}. */
  async function firstList(feed: ObjectFeed<KubeObject> | ObjectFeed<CustomResourceDefinition>): Promise<void> {
    const wait = new AbortController();
    const timer = setTimeout(() => wait.abort(), FIRST_LIST_WAIT_MS);
    const stop = () => wait.abort();
    options.signal.addEventListener("abort", stop, { once: true });
    try {
      await feed.settled(wait.signal);
    } finally {
      clearTimeout(timer);
      options.signal.removeEventListener("abort", stop);
    }
  }

  function kindInfos(): KindInfo[] {
    return options.view.kinds().map(kindInfo);
  }

  function unknownKindError(id: string): ErrorBody {
    return {
      error: {
        code: 404,
        reason: "NotFound",
        message: `the dashboard does not watch kind "${id}" (is its CRD established?)`,
      },
    };
  }

  function unknownKind(res: ServerResponse, id: string): void {
    sendJson(res, 404, unknownKindError(id));
  }

  async function objects(res: ServerResponse, id: string): Promise<void> {
    const viewed = options.view.kind(id);
    if (viewed === undefined) return unknownKind(res, id);
    await firstList(viewed.feed);
    const { synced, error } = viewed.feed.status;
    if (!synced && error !== undefined) return sendJson(res, httpCodeOf(error), { error } satisfies ErrorBody);
    sendJson(res, 200, { kind: kindInfo(viewed), synced, error, rows: rowsOf(viewed) });
  }

  async function object(res: ServerResponse, id: string, namespace: string, name: string): Promise<void> {
    const viewed = options.view.kind(id);
    if (viewed === undefined) return unknownKind(res, id);
    const result = await fetchObject(viewed, namespace, name);
    if ("error" in result) return sendJson(res, httpCodeOf(result.error), result);
    sendJson(res, 200, objectDetail(options.view, viewed.kind, result.object));
  }

  /** From the feed when it holds the object, else from the cluster (whose 404 or 403 is the answer). */
  async function fetchObject(
    { kind, feed }: ViewedKind,
    namespace: string,
    name: string,
  ): Promise<{ object: KubeObject } | ErrorBody> {
    const cached = feed.get(kind.namespaced ? `${namespace}/${name}` : name);
    if (cached !== undefined) return { object: cached };
    const ns = kind.namespaced ? namespace : undefined;
    if (name === "" || (kind.namespaced && namespace === "")) {
      return {
        error: { code: 400, reason: "BadRequest", message: "name (and namespace, for a namespaced kind) are required" },
      };
    }
    try {
      const api = kind.metadataOnly ? options.client.metadata(kind, ns) : options.client.resource(kind, ns);
      return { object: await api.get(name, { signal: options.signal }) };
    } catch (err) {
      return { error: feedError(err) };
    }
  }

  function streamKinds(stream: EventSink): void {
    const send = () => stream.send("kinds", { kinds: kindInfos(), crdError: options.view.crds.status.error });
    send();
    const coalesced = coalesce(send);
    const unsubscribe = options.view.subscribe((change) => {
      if (change.type === "kinds" || change.change.type !== "modified") coalesced.schedule();
    });
    stream.onClose(() => {
      unsubscribe();
      coalesced.cancel();
    });
  }

  /** Follows one kind's rows on the sink `open` returns, or answers why not (unknown kind). */
  async function streamObjects(id: string, open: () => EventSink): Promise<ErrorBody | undefined> {
    let viewed = options.view.kind(id);
    if (viewed === undefined) return unknownKindError(id);
    const stream = open();
    const snapshot = (v: ViewedKind) =>
      stream.send("snapshot", {
        kind: kindInfo(v),
        synced: v.feed.status.synced,
        error: v.feed.status.error,
        rows: rowsOf(v),
      });
    snapshot(viewed);
    const unsubscribe = options.view.subscribe((change: ViewChange) => {
      if (change.type === "kinds") {
        const now = options.view.kind(id);
        if (now === undefined) {
          stream.send("gone", { message: `kind ${id} is no longer served` });
          stream.close();
        } else if (now.kind !== viewed?.kind) {
          viewed = now;
          snapshot(now); // new columns, or a new feed
        }
        return;
      }
      if (change.kind.id !== id) return;
      const c = change.change;
      switch (c.type) {
        case "added":
        case "modified":
          return stream.send("upsert", objectRow(change.kind, c.object));
        case "deleted":
          return stream.send("remove", { key: objectKey(c.object) });
        case "synced":
          return stream.send("status", { synced: true });
        case "failed":
          return stream.send("status", { synced: viewed?.feed.status.synced ?? false, error: c.error });
      }
    });
    stream.onClose(unsubscribe);
    return undefined;
  }

  /** Follows one object's detail and runs on the sink `open` returns, or answers why not. */
  async function streamObject(
    id: string,
    namespace: string,
    name: string,
    open: () => EventSink,
  ): Promise<ErrorBody | undefined> {
    const viewed = options.view.kind(id);
    if (viewed === undefined) return unknownKindError(id);
    const first = await fetchObject(viewed, namespace, name);
    if ("error" in first) return first;
    const stream = open();
    runs.attach(stream, viewed.kind, namespace, name); // the detail's reconcile timeline
    const key = viewed.kind.namespaced ? `${namespace}/${name}` : name;
    let last = "";
    const send = (detail: ObjectDetail) => {
      const text = JSON.stringify(detail);
      if (text === last) return;
      last = text;
      stream.send("detail", detail);
    };
    send(objectDetail(options.view, viewed.kind, first.object));
    // Recomputed after any change (children and events live in other kinds' feeds) and sent only
    // when it differs: a detail costs a scan of the feeds, cheap at a development cluster's size.
    const coalesced = coalesce(() => {
      const now = options.view.kind(id);
      // A feed that cannot list (403, server down) does not know: keep the last detail shown.
      if (now !== undefined && !now.feed.status.synced) return;
      const obj = now?.feed.get(key);
      if (now === undefined || obj === undefined) {
        stream.send("gone", { message: `${key} no longer exists` });
        stream.close();
        return;
      }
      send(objectDetail(options.view, now.kind, obj));
    });
    const unsubscribe = options.view.subscribe((change) => {
      if (change.type === "objects" && (change.change.type === "synced" || change.change.type === "failed")) return;
      coalesced.schedule();
    });
    stream.onClose(() => {
      unsubscribe();
      coalesced.cancel();
    });
    return undefined;
  }

  function streamLogs(stream: EventSink, filter: LogFilter): void {
    const sources = new Set(options.logs.sources());
    stream.send("lines", { sources: [...sources], lines: options.logs.lines(filter, INITIAL_LOG_LINES) });
    const unsubscribe = options.logs.subscribe((line) => {
      if (!sources.has(line.source)) {
        sources.add(line.source);
        stream.send("sources", { sources: [...sources].sort() });
      }
      if (matchesLogFilter(line, filter)) stream.send("line", line);
    });
    stream.onClose(unsubscribe);
  }
}

function kindInfo({ kind, feed }: ViewedKind): KindInfo {
  const error = feed.status.error;
  return {
    id: kind.id,
    group: kind.group,
    version: kind.version,
    kind: kind.kind,
    plural: kind.plural,
    namespaced: kind.namespaced,
    builtin: kind.builtin,
    metadataOnly: kind.metadataOnly,
    columns: kind.columns.map((c) => {
      const pathError = columnError(c);
      return pathError === undefined ? c : { ...c, error: pathError };
    }),
    count: feed.status.synced ? feed.size : null,
    ...(error ? { error } : {}),
  };
}

function rowsOf({ kind, feed }: ViewedKind) {
  return feed
    .objects()
    .map((o) => objectRow(kind, o))
    .sort((a, b) => a.key.localeCompare(b.key));
}

function logFilter(q: URLSearchParams): LogFilter {
  return {
    ...(q.get("source") ? { source: q.get("source") as string } : {}),
    ...(q.get("namespace") ? { namespace: q.get("namespace") as string } : {}),
    ...(q.get("name") ? { name: q.get("name") as string } : {}),
  };
}

/** The cluster's own code for its errors; 502 (Bad Gateway) when it did not answer at all. */
function httpCodeOf(error: FeedError): number {
  return error.code >= 400 && error.code <= 599 ? error.code : 502;
}

function sendJson(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, {
    "content-type": "application/json; charset=utf-8",
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
  });
  res.end(res.req?.method === "HEAD" ? undefined : text);
}

/** Runs `fn` once, {@link COALESCE_MS} after the first of a burst of `schedule()` calls. */
function coalesce(fn: () => void): { schedule(): void; cancel(): void } {
  let timer: NodeJS.Timeout | undefined;
  return {
    schedule() {
      timer ??= setTimeout(() => {
        timer = undefined;
        fn();
      }, COALESCE_MS);
    },
    cancel() {
      clearTimeout(timer);
      timer = undefined;
    },
  };
}
