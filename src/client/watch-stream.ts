/**
 * Decoding a watch response: newline-delimited JSON events, split incrementally as chunks arrive (an
 * event may span chunks, a chunk may hold many events; multi-byte characters may be cut anywhere).
 *
 * Expected flow: the resource client opens the stream, checks the status is 200, then hands the body here.
 *
 * Guarantees: each complete line is parsed once and yielded as it is (no copy); an ERROR event is thrown
 * as an `ApiError` carrying its Status; the iterator ends quietly when the server ends the stream, when
 * the connection drops (like client-go's StreamWatcher treats a probable EOF), or when `signal` aborts;
 * in every case, including a consumer that stops early, the body is destroyed and the socket released.
 */
import { StringDecoder } from "node:string_decoder";
import { ApiError, isStatus } from "./errors.ts";
import type { StreamResponse } from "./transport.ts";
import type { KubeObject, Status, WatchEvent } from "./types.ts";

const eventTypes = new Set(["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]);

/** Errors that mean "the connection went away", which ends a watch rather than failing it. */
function isEndOfStream(err: unknown, signal: AbortSignal | undefined): boolean {
  if (signal?.aborted) return true;
  const e = err as { code?: unknown; name?: unknown } | null;
  return (
    e?.name === "AbortError" ||
    e?.code === "UND_ERR_ABORTED" ||
    e?.code === "UND_ERR_SOCKET" ||
    e?.code === "UND_ERR_CLOSED" ||
    e?.code === "ECONNRESET" ||
    e?.code === "UND_ERR_DESTROYED"
  );
}

function decodeLine<T extends KubeObject>(line: string): WatchEvent<T> {
  let event: { type?: unknown; object?: unknown };
  try {
    event = JSON.parse(line) as { type?: unknown; object?: unknown };
  } catch (err) {
    throw new Error(`watch: cannot decode event ${JSON.stringify(line.slice(0, 200))}: ${(err as Error).message}`);
  }
  if (typeof event.type !== "string" || !eventTypes.has(event.type) || typeof event.object !== "object") {
    throw new Error(`watch: malformed event ${JSON.stringify(line.slice(0, 200))}`);
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

/** Yields the events of a watch response body (see the module comment for the guarantees). */
export async function* decodeWatchStream<T extends KubeObject>(
  body: StreamResponse["body"],
  signal?: AbortSignal,
): AsyncGenerator<WatchEvent<T>, void, undefined> {
  const decoder = new StringDecoder("utf8");
  let pending = "";
  try {
    for await (const chunk of body) {
      const text = pending + decoder.write(chunk);
      let start = 0;
      let nl = text.indexOf("\n", start);
      while (nl !== -1) {
        if (nl > start) yield decodeLine<T>(text.slice(start, nl));
        start = nl + 1;
        nl = text.indexOf("\n", start);
      }
      pending = start === 0 ? text : text.slice(start);
    }
    pending += decoder.end();
    if (pending.trim() !== "") yield decodeLine<T>(pending);
  } catch (err) {
    if (err instanceof ApiError || !isEndOfStream(err, signal)) throw err;
  } finally {
    body.destroy();
  }
}
