/**
 * An answer that arrived but cannot be read: a body that is not the JSON its content type promised,
 * a watch line that is not JSON or not an event. Retrying the same request seldom helps: something
 * between the client and the server (a proxy, a wrong server URL) answers in another language.
 */
import { isInChain } from "./error-chain.ts";

/** The server's answer (a response body, a watch event) could not be decoded; see the module documentation. */
export class DecodeError extends Error {
  override readonly name = "DecodeError";
}

/** Whether `err` (or an error it wraps) is a {@link DecodeError}. */
export function isDecodeError(err: unknown): boolean {
  return isInChain(err, DecodeError, "DecodeError");
}
