/**
 * A watch whose stream failed after the server accepted it. The stream ending (the server's timeout,
 * a dropped or reset connection, an abort, a closed client) is not a failure: the iterator ends
 * quietly and an informer re-watches, as client-go's StreamWatcher does. An ERROR event is the
 * server's answer, an `ApiError` (`isGone` for a 410). What is left, a failure of the body itself
 * (a TLS error mid-stream, a socket error other than a reset), is a `WatchError`; its message and
 * `code` are the underlying error's, which is its `cause`.
 */
import { isInChain } from "./error-chain.ts";

/** The watch stream failed; see the module documentation. */
export class WatchError extends Error {
  override readonly name = "WatchError";
  /** The underlying error's code (`ERR_SSL_...`, `EPIPE`), `""` when it has none. */
  readonly code: string;

  constructor(message: string, options: { cause: unknown; code?: string }) {
    super(message, { cause: options.cause });
    this.code = options.code ?? "";
  }
}

/** The failure of a watch body as a {@link WatchError} (a WatchError already is one). */
export function watchError(err: unknown): WatchError {
  if (err instanceof WatchError) return err;
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  return new WatchError(message, { cause: err, code: typeof code === "string" ? code : "" });
}

/** Whether `err` (or an error it wraps) is a {@link WatchError}. */
export function isWatchError(err: unknown): boolean {
  return isInChain(err, WatchError, "WatchError");
}
