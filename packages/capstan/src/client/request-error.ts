/**
 * An API call that got no HTTP answer, as Go's `url.Error` ("Get \"https://...\": dial tcp ...")
 * wraps a round trip's failure: it names the method, the path and the server, and its `cause` is
 * what failed: a `ConnectionError` when the server could not be reached or did not answer in
 * time (`isConnectionError` is then true of this error too), or a failure on an established
 * connection (a reset, a body that stopped arriving, a closed client) with its own `code`.
 * Answers with an HTTP status are never RequestErrors: those are `ApiError`s.
 */
import { isInChain } from "./error-chain.ts";

/** A call that got no answer; see the module documentation. */
export class RequestError extends Error {
  override readonly name = "RequestError";
  /** HTTP method of the call, upper case. */
  readonly method: string;
  /** Path of the call, with its query. */
  readonly path: string;
  /** The server URL the call was for. */
  readonly server: string;

  constructor(message: string, details: { method: string; path: string; server: string; cause: unknown }) {
    super(message, { cause: details.cause });
    this.method = details.method;
    this.path = details.path;
    this.server = details.server;
  }
}

/** Whether `err` (or an error it wraps) is a {@link RequestError}. */
export function isRequestError(err: unknown): boolean {
  return isInChain(err, RequestError, "RequestError");
}
