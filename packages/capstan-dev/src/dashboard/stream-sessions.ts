/**
 * One event stream per page, carrying every live panel of it. Browsers open at most six
 * connections per host over HTTP/1.1, shared by all the tabs of a profile: with one stream per
 * panel (kinds, objects, detail, logs) a second tab stalls. So a page opens one stream, a
 * session, and subscribes its panels to it as topics:
 *
 * - `GET /api/stream?session=<id>`: the session's stream (text/event-stream). `id` is chosen by the
 *   page (8 to 64 of `A-Z a-z 0-9 _ -`); a stream opened with the id of an open session replaces it.
 * - `POST /api/stream/<session>/topics` `{ id, topic, query }` -> 201 `{ id }`: starts topic
 *   `topic` (`kinds`, `objects`, `object`, `logs`; `query` holds the string parameters of its
 *   `/api/stream/<topic>` route) under the page's `id`; a topic of the same id is replaced. Its
 *   first events are sent before the answer. A topic the route would refuse (unknown kind, missing
 *   object) answers that route's error, and a session that is not open 410.
 * - `DELETE /api/stream/<session>/topics/<id>` -> 204: ends the topic (done already or never
 *   started: 204 too).
 *
 * Each event of a topic is an unnamed event (`message`) whose data is two lines: `{"topic":id,
 * "event":name}`, then the event's JSON as the topic's own route sends it. The server forgets a
 * session, and every topic of it, when its stream closes: a page whose stream reconnects
 * subscribes its topics again.
 *
 * Bounds: {@link MAX_SESSIONS} open sessions and {@link MAX_TOPICS} topics per session; past them,
 * 429 with a message saying which.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { originAllowed } from "./host-guard.ts";
import type { FeedError } from "./object-feed.ts";
import type { EventSink, SseStream } from "./sse.ts";

/** Open sessions at most: one per tab, with room for tabs whose closed stream the server has not seen end yet. */
export const MAX_SESSIONS = 32;
/** Topics per session at most: the page uses four. */
export const MAX_TOPICS = 16;
/** A topic request is a few hundred bytes. */
const MAX_TOPIC_BODY_BYTES = 16 * 1024;
const SESSION_ID = /^[A-Za-z0-9_-]{8,64}$/;
const TOPIC_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Starts a topic on `open()`'s sink, or answers why it cannot start (before opening the sink).
 * `q` holds the topic's query, as its own `/api/stream/<topic>` route reads it.
 */
export type TopicStarter = (q: URLSearchParams, open: () => EventSink) => Promise<{ error: FeedError } | undefined>;

/** What the session routes need of the server. */
export interface StreamSessionsOptions {
  topics: Readonly<Record<string, TopicStarter>>;
  /** Opens an event stream on `res`, closed when the dashboard stops. */
  open(res: ServerResponse): SseStream;
  sendJson(res: ServerResponse, code: number, body: unknown): void;
  /** `Host` header values the dashboard answers; the POST and DELETE routes' Origin must name one. */
  allowedHosts: ReadonlySet<string>;
}

interface Session {
  stream: SseStream;
  topics: Map<string, TopicSink>;
}

/** A topic's events, sent on its session's stream; see the module documentation. */
class TopicSink implements EventSink {
  #closed = false;
  readonly #onClose = new Set<() => void>();

  constructor(
    private readonly stream: SseStream,
    private readonly id: string,
  ) {
    stream.onClose(() => this.close());
  }

  get closed(): boolean {
    return this.#closed;
  }

  send(event: string, data: unknown): void {
    if (this.#closed) return;
    this.stream.sendMessage([JSON.stringify({ topic: this.id, event }), JSON.stringify(data)]);
  }

  onClose(callback: () => void): void {
    if (this.#closed) callback();
    else this.#onClose.add(callback);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const callback of this.#onClose) callback();
    this.#onClose.clear();
  }
}

/** The session routes; `handle` answers and resolves true for theirs, false for any other request. */
export function streamSessions(options: StreamSessionsOptions): {
  handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean>;
} {
  const sessions = new Map<string, Session>();
  const refuse = (res: ServerResponse, code: number, reason: string, message: string) =>
    options.sendJson(res, code, { error: { code, reason, message } });

  function openSession(res: ServerResponse, id: string): void {
    if (!SESSION_ID.test(id)) {
      refuse(res, 400, "BadRequest", "session must be 8 to 64 of A-Z a-z 0-9 _ - (the page picks it at random)");
      return;
    }
    sessions.get(id)?.stream.close(); // the same page reconnecting before its old stream was seen to end
    if (sessions.size >= MAX_SESSIONS) {
      const message = `the dashboard serves at most ${MAX_SESSIONS} open pages at once: close some of its tabs`;
      refuse(res, 429, "TooManyRequests", message);
      return;
    }
    const session: Session = { stream: options.open(res), topics: new Map() };
    sessions.set(id, session);
    session.stream.onClose(() => {
      if (sessions.get(id) === session) sessions.delete(id);
    });
  }

  async function startTopic(req: IncomingMessage, res: ServerResponse, session: Session): Promise<void> {
    const body = await readBody(req);
    if (typeof body === "string") {
      refuse(res, 400, "BadRequest", body);
      return;
    }
    const { id, topic, query } = body;
    if (typeof id !== "string" || !TOPIC_ID.test(id)) {
      refuse(res, 400, "BadRequest", "id must be 1 to 64 of A-Z a-z 0-9 _ -");
      return;
    }
    const start = typeof topic === "string" ? options.topics[topic] : undefined;
    if (start === undefined) {
      const known = Object.keys(options.topics).join(", ");
      refuse(res, 400, "BadRequest", `unknown topic ${JSON.stringify(topic)} (known: ${known})`);
      return;
    }
    const q = new URLSearchParams();
    if (query !== undefined && (query === null || typeof query !== "object" || Array.isArray(query))) {
      refuse(res, 400, "BadRequest", "query must be an object of strings");
      return;
    }
    for (const [key, value] of Object.entries(query ?? {})) {
      if (typeof value !== "string") {
        refuse(res, 400, "BadRequest", `query.${key} must be a string`);
        return;
      }
      q.set(key, value);
    }
    session.topics.get(id)?.close();
    if (session.topics.size >= MAX_TOPICS) {
      const message = `a page may follow at most ${MAX_TOPICS} topics on its stream: unsubscribe one first`;
      refuse(res, 429, "TooManyRequests", message);
      return;
    }
    const refused = await start(q, () => {
      const sink = new TopicSink(session.stream, id);
      session.topics.set(id, sink);
      sink.onClose(() => {
        if (session.topics.get(id) === sink) session.topics.delete(id);
      });
      return sink;
    });
    if (refused !== undefined) {
      const code = refused.error.code >= 400 && refused.error.code <= 599 ? refused.error.code : 502;
      options.sendJson(res, code, refused);
      return;
    }
    options.sendJson(res, 201, { id });
  }

  return {
    async handle(req, res, url) {
      if (url.pathname === "/api/stream") {
        if (req.method !== "GET") return false; // the server's 405
        openSession(res, url.searchParams.get("session") ?? "");
        return true;
      }
      const match = /^\/api\/stream\/([^/]+)\/topics(?:\/([^/]+))?$/.exec(url.pathname);
      if (match === null) return false;
      const [, sessionId = "", topicId] = match;
      const method = req.method ?? "GET";
      const allowed = topicId === undefined ? "POST" : "DELETE";
      if (method !== allowed) {
        res.setHeader("allow", allowed);
        refuse(res, 405, "MethodNotAllowed", `${method} is not allowed here (${allowed})`);
        return true;
      }
      // A page of another site can make the browser POST here: its Origin gives it away.
      if (!originAllowed(req.headers.origin, options.allowedHosts)) {
        const message = `the dashboard takes stream subscriptions only from its own page, not from Origin "${req.headers.origin ?? ""}"`;
        refuse(res, 403, "Forbidden", message);
        return true;
      }
      const session = sessions.get(sessionId);
      if (topicId !== undefined) {
        session?.topics.get(topicId)?.close();
        res.writeHead(204).end();
        return true;
      }
      if (session === undefined) {
        const message = `no open stream session "${sessionId}": open GET /api/stream?session=${sessionId} first`;
        refuse(res, 410, "Gone", message);
        return true;
      }
      await startTopic(req, res, session);
      return true;
    },
  };
}

/** The request's JSON object, or a string saying why it is not one. */
async function readBody(req: IncomingMessage): Promise<Record<string, unknown> | string> {
  if (!(req.headers["content-type"] ?? "").toLowerCase().startsWith("application/json")) {
    return "the body must be application/json";
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_TOPIC_BODY_BYTES) return `the body is over ${MAX_TOPIC_BODY_BYTES} bytes`;
    chunks.push(chunk);
  }
  try {
    const body: unknown = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    if (body !== null && typeof body === "object" && !Array.isArray(body)) return body as Record<string, unknown>;
    return "the body must be a JSON object";
  } catch (err) {
    return `the body is not JSON: ${(err as Error).message}`;
  }
}
