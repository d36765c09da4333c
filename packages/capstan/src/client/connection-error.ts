/**
 * A request that never got an answer from the API server: the connection was refused, the host name
 * did not resolve, TLS verification failed, no connection or no answer came in time. The transport
 * throws it in place of Node's socket error, with a message that names the server and
 * says what failed in words a user can act on.
 *
 * `code` is the underlying error's code (`ECONNREFUSED`, `ENOTFOUND`, `ERR_CONNECT_TIMEOUT`, a TLS
 * verification code such as `UNABLE_TO_VERIFY_LEAF_SIGNATURE`), so every decision taken on codes
 * (retry.ts, the client's timeout message) is unchanged; the original error is the `cause`.
 * Failures on a connection that was established (a reset, a socket closed mid-answer) are not
 * connection errors and pass through as they are.
 */

import { isInChain } from "./error-chain.ts";

/** What kind of failure it was. */
export type ConnectionFailure = "refused" | "dns" | "tls" | "timeout" | "unreachable";

/** The API server could not be reached, or did not answer; see the module documentation. */
export class ConnectionError extends Error {
  override readonly name = "ConnectionError";
  /** The server URL the request was for. */
  readonly server: string;
  readonly failure: ConnectionFailure;
  /** The underlying error's code. */
  readonly code: string;

  constructor(message: string, details: { server: string; failure: ConnectionFailure; code: string; cause: unknown }) {
    super(message, { cause: details.cause });
    this.server = details.server;
    this.failure = details.failure;
    this.code = details.code;
  }
}

/**
 * Whether `err` (or an error it wraps, such as the `RequestError` of the call that failed) is a
 * {@link ConnectionError}: the API server could not be reached, or did not answer in time.
 */
export function isConnectionError(err: unknown): boolean {
  return isInChain(err, ConnectionError, "ConnectionError");
}

/** Codes of a failed certificate verification (OpenSSL's, as Node reports them) and of a failed handshake. */
const TLS_VERIFY_CODES = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "CERT_SIGNATURE_FAILURE",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "INVALID_CA",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

const UNREACHABLE_CODES = new Set(["EHOSTUNREACH", "ENETUNREACH", "ETIMEDOUT", "EADDRNOTAVAIL"]);

/**
 * The connection error for `err`, thrown by a request to `server` (given `timeoutMs` for its answer),
 * or undefined when `err` is not one (an abort, a failure on an established connection).
 */
export function connectionError(err: unknown, server: string, timeoutMs?: number): ConnectionError | undefined {
  const code = codeOf(err);
  const detail = messageOf(err);
  const make = (failure: ConnectionFailure, message: string) =>
    new ConnectionError(message, { server, failure, code, cause: err });
  const host = hostOf(server);
  if (code === "ECONNREFUSED") return make("refused", `cannot connect to ${server}: connection refused${detail}`);
  if (code === "ENOTFOUND") return make("dns", `cannot connect to ${server}: host name "${host}" not found${detail}`);
  if (code === "EAI_AGAIN") {
    return make("dns", `cannot connect to ${server}: host name "${host}" could not be resolved now${detail}`);
  }
  if (UNREACHABLE_CODES.has(code)) return make("unreachable", `cannot connect to ${server}: unreachable${detail}`);
  if (code === "ERR_CONNECT_TIMEOUT") {
    return make("timeout", `cannot connect to ${server}: timed out${detail}`);
  }
  if (code === "ERR_HEADERS_TIMEOUT") {
    const within = timeoutMs !== undefined && timeoutMs > 0 ? ` within ${timeoutMs} ms` : "";
    return make("timeout", `no answer from ${server}${within}`);
  }
  if (TLS_VERIFY_CODES.has(code)) {
    return make(
      "tls",
      `cannot connect to ${server}: its TLS certificate does not verify${detail}; check the cluster's certificate-authority (and tls-server-name)`,
    );
  }
  if (code.startsWith("ERR_SSL_")) return make("tls", `cannot connect to ${server}: the TLS handshake failed${detail}`);
  return undefined;
}

/** The error's code, or the first one of an AggregateError's errors (a connection tried on several addresses). */
function codeOf(err: unknown): string {
  const e = err as { code?: unknown; errors?: unknown } | null;
  if (typeof e?.code === "string") return e.code;
  if (Array.isArray(e?.errors)) return codeOf(e.errors[0]);
  return "";
}

/** ` (<message>)` of the original error, or nothing when it has none (an AggregateError's is empty). */
function messageOf(err: unknown): string {
  const message = err instanceof Error ? err.message : "";
  return message === "" ? "" : ` (${message})`;
}

function hostOf(server: string): string {
  try {
    return new URL(server).hostname;
  } catch {
    return server;
  }
}
