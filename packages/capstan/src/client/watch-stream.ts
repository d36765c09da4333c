/**
 * Decoding a watch response: newline-delimited JSON events, split incrementally as chunks arrive (an
 * event may span chunks, a chunk may hold many events; multi-byte characters may be cut anywhere).
 *
 * Expected flow: the resource client opens the stream, checks the status is 200, then hands the body here.
 *
 * Guarantees: each complete line is parsed once and yielded as it is (no copy), in order; an ERROR event
 * is thrown as an `ApiError` carrying its Status, after the events before it; a line that is not JSON
 * or not an event as a `DecodeError`; a failure of the body (other than its end) as a `WatchError`;
 * the iterator ends quietly when the server ends the stream, when the connection drops (like
 * client-go's StreamWatcher treats a probable EOF), or when `signal` aborts; in every case, including a consumer that stops early, the body
 * is destroyed and the socket released.
 *
 * Why not an async generator over the body's own async iterator: every event of every informer passes
 * here, and that layering costs several promises per chunk and per event. The reader below takes
 * chunks from the body's `data` events, decodes them at once and hands events out of a queue, so an
 * event costs one promise (the consumer's `next()`). The body is paused while the consumer is
 * `HIGH_WATER_EVENTS` behind, as the async iterator's backpressure would have done.
 *
 * Assumptions: the body is a Node.js Readable (the transport's response body is one).
 */
import { StringDecoder } from "node:string_decoder";
import { DecodeError } from "./decode-error.ts";
import { ApiError, isStatus } from "./errors.ts";
import type { KubeObject, Status, WatchEvent } from "./types.ts";
import { watchError } from "./watch-error.ts";

/** What the decoder needs of a response body (a Node.js Readable has it). */
export interface WatchBody {
  on(event: "data", listener: (chunk: Buffer) => void): unknown;
  on(event: "end" | "close", listener: () => void): unknown;
  on(event: "error", listener: (err: Error) => void): unknown;
  pause(): unknown;
  resume(): unknown;
  destroy(err?: Error): unknown;
}

/**
 * Why 1,000: enough decoded events to ride out a burst (an initial ADDED per object of a big namespace
 * arrives in a few large chunks) without pausing the socket, few enough that a consumer stuck on a slow
 * handler holds a bounded number of objects (a few MB) instead of the whole stream.
 */
const HIGH_WATER_EVENTS = 1_000;

const eventTypes = new Set(["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]);

/** Errors that mean "the connection went away", which ends a watch rather than failing it. */
function isEndOfStream(err: unknown, signal: AbortSignal | undefined): boolean {
  if (signal?.aborted) return true;
  const e = err as { code?: unknown; name?: unknown } | null;
  return (
    e?.name === "AbortError" ||
    e?.code === "ECONNRESET" ||
    e?.code === "ERR_STREAM_PREMATURE_CLOSE" ||
    e?.code === "ERR_CLIENT_CLOSED"
  );
}

function decodeLine<T extends KubeObject>(line: string): WatchEvent<T> {
  let event: { type?: unknown; object?: unknown };
  try {
    event = JSON.parse(line) as { type?: unknown; object?: unknown };
  } catch (err) {
    throw new DecodeError(
      `watch: cannot decode event ${JSON.stringify(line.slice(0, 200))}: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
  if (typeof event.type !== "string" || !eventTypes.has(event.type) || typeof event.object !== "object") {
    throw new DecodeError(`watch: malformed event ${JSON.stringify(line.slice(0, 200))}`);
  }
  if (event.type === "ERROR") {
    const status: Status = isStatus(event.object)
      ? event.object
      : {
          kind: "Status",
          apiVersion: "v1",
          status: "Failure",
          code: 500,
          message: "watch ERROR event without a Status",
        };
    throw new ApiError(status);
  }
  return event as WatchEvent<T>;
}

/** The reader's state: reading, or finished (ended quietly or failed, the failure not yet thrown). */
type ReaderState = { phase: "reading" } | { phase: "ended" } | { phase: "failed"; error: unknown };

const doneResult: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

/** The events of one watch body; see the module comment. */
class WatchEventReader<T extends KubeObject> implements AsyncIterableIterator<WatchEvent<T>> {
  readonly #body: WatchBody;
  readonly #signal: AbortSignal | undefined;
  readonly #decoder = new StringDecoder("utf8");
  /** The tail of the text after the last newline: the start of an event still arriving. */
  #partial = "";
  /** Decoded events not yet handed out, from `#head` on. */
  #events: WatchEvent<T>[] = [];
  #head = 0;
  #state: ReaderState = { phase: "reading" };
  #paused = false;
  /** The consumer's `next()` waiting for an event, if any. */
  #waiting: { resolve(r: IteratorResult<WatchEvent<T>, undefined>): void; reject(err: unknown): void } | undefined;

  constructor(body: WatchBody, signal: AbortSignal | undefined) {
    this.#body = body;
    this.#signal = signal;
    body.on("data", (chunk) => this.#onData(chunk));
    body.on("end", () => this.#onEnd());
    body.on("error", (err) => this.#onError(err));
    // A body destroyed without 'end' or 'error' (the pool closed under it) ends the watch quietly.
    body.on("close", () => this.#finish({ phase: "ended" }));
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<WatchEvent<T>, undefined>> {
    if (this.#head < this.#events.length) return Promise.resolve({ done: false, value: this.#take() });
    const state = this.#state;
    if (state.phase === "failed") {
      // Thrown once; the iterator is done after it.
      this.#state = { phase: "ended" };
      return Promise.reject(state.error);
    }
    if (state.phase === "ended") return Promise.resolve(doneResult);
    return new Promise((resolve, reject) => {
      this.#waiting = { resolve, reject };
    });
  }

  /** The consumer stopped early (`break` in `for await`): release the socket. */
  return(): Promise<IteratorResult<WatchEvent<T>, undefined>> {
    this.#events = [];
    this.#head = 0;
    this.#finish({ phase: "ended" });
    this.#state = { phase: "ended" };
    return Promise.resolve(doneResult);
  }

  #take(): WatchEvent<T> {
    const event = this.#events[this.#head] as WatchEvent<T>;
    this.#head++;
    if (this.#head === this.#events.length) {
      this.#events = [];
      this.#head = 0;
      if (this.#paused && this.#state.phase === "reading") {
        this.#paused = false;
        this.#body.resume();
      }
    }
    return event;
  }

  #onData(chunk: Buffer): void {
    if (this.#state.phase !== "reading") return;
    const text = this.#partial + this.#decoder.write(chunk);
    let start = 0;
    let nl = text.indexOf("\n");
    try {
      while (nl !== -1) {
        if (nl > start) this.#events.push(decodeLine<T>(text.slice(start, nl)));
        start = nl + 1;
        nl = text.indexOf("\n", start);
      }
    } catch (err) {
      this.#finish({ phase: "failed", error: err });
      return;
    }
    this.#partial = start === 0 ? text : text.slice(start);
    if (this.#events.length - this.#head >= HIGH_WATER_EVENTS && !this.#paused) {
      this.#paused = true;
      this.#body.pause();
    }
    this.#wake();
  }

  #onEnd(): void {
    if (this.#state.phase !== "reading") return;
    const rest = this.#partial + this.#decoder.end();
    this.#partial = "";
    if (rest.trim() !== "") {
      try {
        this.#events.push(decodeLine<T>(rest));
      } catch (err) {
        this.#finish({ phase: "failed", error: err });
        return;
      }
    }
    this.#finish({ phase: "ended" });
  }

  #onError(err: unknown): void {
    if (this.#state.phase !== "reading") return;
    this.#finish(isEndOfStream(err, this.#signal) ? { phase: "ended" } : { phase: "failed", error: watchError(err) });
  }

  /** Stops reading (the body is destroyed) and settles a waiting consumer. */
  #finish(state: ReaderState): void {
    if (this.#state.phase !== "reading") return;
    this.#state = state;
    this.#body.destroy();
    this.#wake();
  }

  /** Hands the next event, the end or the failure to a consumer waiting in `next()`. */
  #wake(): void {
    const waiting = this.#waiting;
    if (waiting === undefined) return;
    if (this.#head < this.#events.length) {
      this.#waiting = undefined;
      waiting.resolve({ done: false, value: this.#take() });
      return;
    }
    const state = this.#state;
    if (state.phase === "reading") return;
    this.#waiting = undefined;
    if (state.phase === "failed") {
      this.#state = { phase: "ended" };
      waiting.reject(state.error);
    } else {
      waiting.resolve(doneResult);
    }
  }
}

/** Yields the events of a watch response body (see the module comment for the guarantees). */
export function decodeWatchStream<T extends KubeObject>(
  body: WatchBody,
  signal?: AbortSignal,
): AsyncIterableIterator<WatchEvent<T>> {
  return new WatchEventReader<T>(body, signal);
}
