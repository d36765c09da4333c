// One event stream per page, shared by all its live panels (src/dashboard/stream-sessions.ts): a
// browser opens at most six connections per host over HTTP/1.1, shared by every tab, so a stream
// per panel would stall the second tab. Each panel gets an EventSource-like topic: the same named
// events, close(), readyState, and `open` / `error` events as the one stream comes and goes.

const CONNECTING = 0;
const OPEN = 1;
const CLOSED = 2;

/** A random session id: 128 bits, base64url. */
function randomId() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");
}

/** The events of one topic of the page's stream, as an EventSource gives them. */
class Topic extends EventTarget {
  readyState = CONNECTING;

  constructor(hub, id, topic, query) {
    super();
    this.hub = hub;
    this.id = id;
    this.topic = topic;
    this.query = query;
  }

  /** Stops the topic's events (the server forgets it too). */
  close() {
    if (this.readyState === CLOSED) return;
    this.readyState = CLOSED;
    this.hub.unsubscribe(this);
  }
}

/** The page's stream and its topics; see the module comment. */
class StreamHub {
  #session = randomId();
  #topics = new Map();
  #next = 0;
  #open = false;

  constructor() {
    const source = new EventSource(`/api/stream?session=${this.#session}`);
    source.addEventListener("open", () => {
      this.#open = true;
      // A new stream is a new session: the server forgot the old one's topics.
      for (const topic of this.#topics.values()) void this.#subscribe(topic);
    });
    source.addEventListener("error", () => {
      this.#open = false;
      // The browser reconnects by itself unless the server refused the stream outright.
      const state = source.readyState === EventSource.CLOSED ? CLOSED : CONNECTING;
      for (const topic of [...this.#topics.values()]) {
        topic.readyState = state;
        if (state === CLOSED) this.#topics.delete(topic.id);
        topic.dispatchEvent(new Event("error"));
      }
    });
    source.addEventListener("message", (e) => {
      // Two lines: { topic, event }, then the event's own JSON, passed on untouched.
      const newline = e.data.indexOf("\n");
      const head = JSON.parse(e.data.slice(0, newline));
      const topic = this.#topics.get(head.topic);
      if (topic) topic.dispatchEvent(new MessageEvent(head.event, { data: e.data.slice(newline + 1) }));
    });
  }

  /** Follows `topic` (kinds, objects, object, logs) with `query` (its route's parameters). */
  subscribe(topic, query = {}) {
    const t = new Topic(this, `t${++this.#next}`, topic, query);
    this.#topics.set(t.id, t);
    if (this.#open) void this.#subscribe(t);
    return t;
  }

  unsubscribe(topic) {
    if (this.#topics.get(topic.id) !== topic) return;
    this.#topics.delete(topic.id);
    if (this.#open) void this.#send("DELETE", `/topics/${topic.id}`);
  }

  async #subscribe(topic) {
    const res = await this.#send("POST", "/topics", { id: topic.id, topic: topic.topic, query: topic.query });
    if (topic.readyState === CLOSED) {
      // Closed while its subscription was on its way.
      if (res?.ok) void this.#send("DELETE", `/topics/${topic.id}`);
      return;
    }
    // No answer, or the session ended meanwhile (410): the stream's reconnection subscribes it again.
    if (res === undefined || res.status === 410) return;
    if (res.ok) {
      topic.readyState = OPEN;
      topic.dispatchEvent(new Event("open"));
      return;
    }
    // Refused (an unknown kind, a missing object): like an EventSource the server turned away.
    const body = await res.json().catch(() => ({}));
    topic.readyState = CLOSED;
    this.#topics.delete(topic.id);
    const event = new Event("error");
    event.error = body.error ?? { message: `HTTP ${res.status}` };
    topic.dispatchEvent(event);
  }

  async #send(method, path, body) {
    try {
      return await fetch(`/api/stream/${this.#session}${path}`, {
        method,
        ...(body ? { headers: { "content-type": "application/json" }, body: JSON.stringify(body) } : {}),
      });
    } catch {
      return undefined;
    }
  }
}

/** readyState values, as EventSource's. */
export const TopicState = { CONNECTING, OPEN, CLOSED };

let hub;

/** A topic of the page's one stream (opened on first use): an EventSource-like object. */
export function subscribe(topic, query) {
  hub ??= new StreamHub();
  return hub.subscribe(topic, query);
}
