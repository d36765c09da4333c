/** The transport's own failures: timeouts and a closed client (socket failures keep Node's codes). */

/** Codes of the transport's own errors. */
export type TransportErrorCode =
  | "ERR_CONNECT_TIMEOUT"
  | "ERR_HEADERS_TIMEOUT"
  | "ERR_BODY_TIMEOUT"
  /** The body was destroyed before its end (an abort without a reason). */
  | "ERR_BODY_INCOMPLETE"
  | "ERR_CLIENT_CLOSED";

/** A failure of the transport itself (a timeout, a closed client), with its {@link TransportErrorCode}. */
export class TransportError extends Error {
  override readonly name = "TransportError";
  constructor(
    message: string,
    readonly code: TransportErrorCode,
  ) {
    super(message);
  }
}
