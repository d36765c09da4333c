/**
 * Structural checks on errors thrown by a client: the HTTP status code of a failed API call,
 * read from `err.code` or `err.status.code` (the shape of the client's `ApiError` and of a
 * Kubernetes `Status`). Runtime code checks errors through these so that it works with the real
 * client and with test fakes alike, without importing the client's implementation.
 */

/** The HTTP status code an error carries, if it carries one. */
export function statusCodeOf(err: unknown): number | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const direct = (err as { code?: unknown }).code;
  if (typeof direct === "number") return direct;
  const status = (err as { status?: unknown }).status;
  if (typeof status === "object" && status !== null) {
    const nested = (status as { code?: unknown }).code;
    if (typeof nested === "number") return nested;
  }
  return undefined;
}

/** 410 Gone: the requested resourceVersion is older than the history the server keeps. */
export function isGone(err: unknown): boolean {
  return statusCodeOf(err) === 410;
}

/** 404 Not Found. */
export function isNotFound(err: unknown): boolean {
  return statusCodeOf(err) === 404;
}

/** 409 Conflict (stale resourceVersion) or AlreadyExists (also 409). */
export function isConflict(err: unknown): boolean {
  return statusCodeOf(err) === 409;
}
