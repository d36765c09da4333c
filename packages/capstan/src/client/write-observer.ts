/**
 * Watching the writes a client sends: every mutating request (POST, PUT, PATCH, DELETE) of a client
 * and of its `withRetry` views is reported to the observers registered with
 * `client.observeWrites(observer)`, when it starts and when it ends with the object the server
 * answered. The runtime uses it to know when its informers have caught up with the operator's own
 * writes (runtime/write-visibility.ts, for `Manager.whenIdle`).
 *
 * ## Guarantees
 * - Each write is reported `started` once, before its first attempt (rate limiting included), and
 *   `ended` once, after its last attempt, to the observers registered when it started.
 * - An observer that throws is ignored: it never fails the request.
 * - Without observers a request pays one size comparison.
 *
 * ## Caveats
 * - Reads and watches are not reported, nor raw streams.
 */

/** A write as an observer sees it. */
export interface ObservedWrite {
  /** POST, PUT, PATCH or DELETE. */
  readonly method: string;
  /** The request path, query included (`/apis/apps/v1/namespaces/ns/deployments/web?fieldManager=x`). */
  readonly path: string;
}

/** How a write ended: the parsed body of a 2xx answer, or the error the request rejected with. */
export type WriteResult = { readonly body: unknown } | { readonly error: unknown };

/** Receives a client's writes; see the module documentation. */
export interface WriteObserver {
  started?(write: ObservedWrite): void;
  ended?(write: ObservedWrite, result: WriteResult): void;
}

/** Methods that change something on the server. */
export const WRITE_METHODS: ReadonlySet<string> = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** Calls `fn` on each observer, ignoring observers that throw. */
export function notifyObservers(observers: readonly WriteObserver[], fn: (o: WriteObserver) => void): void {
  for (const o of observers) {
    try {
      fn(o);
    } catch {
      // An observer must not fail the caller's request.
    }
  }
}
