/**
 * API errors: every non-2xx answer of the API server becomes one `ApiError` carrying a
 * `metav1.Status`. When the server sent a Status body we keep it as is; when it did not (a proxy's
 * HTML page, an empty body, a plain-text message), we synthesize one the way client-go does
 * (apimachinery `NewGenericServerResponse`): the reason follows from the HTTP code, the message is
 * client-go's wording, and the body text (text/* or no content type only, at most 2048 bytes) is kept
 * as a cause with reason `UnexpectedServerResponse` (Go's `StatusCause.Type`, JSON `reason`).
 */
import type { Status } from "./types.ts";

/**
 * Status reasons apimachinery knows. A Status with one of these reasons is judged by its reason;
 * a Status with any other (or no) reason falls back to its HTTP code, exactly as client-go's `IsNotFound`
 * & co. do.
 */
const knownReasons = new Set([
  "Unauthorized",
  "Forbidden",
  "NotFound",
  "AlreadyExists",
  "Conflict",
  "Gone",
  "Invalid",
  "ServerTimeout",
  "StoreReadError",
  "Timeout",
  "TooManyRequests",
  "BadRequest",
  "MethodNotAllowed",
  "NotAcceptable",
  "RequestEntityTooLarge",
  "UnsupportedMediaType",
  "InternalError",
  "Expired",
  "ServiceUnavailable",
]);

/** client-go keeps at most this much of an unstructured body in the error (`maxUnstructuredResponseTextBytes`). */
const maxUnstructuredBodyChars = 2048;

/** An error answer of the API server (or of something in front of it), with its Status. */
export class ApiError extends Error {
  /** The Status the server sent, or the one synthesized from the HTTP answer. */
  readonly status: Status;
  /** HTTP status code (`status.code`). */
  readonly code: number;
  /** `status.reason`, `""` when the server gave none. */
  readonly reason: string;
  /** Seconds from a `Retry-After` header or `status.details.retryAfterSeconds`, if any. */
  readonly retryAfterSeconds: number | undefined;

  constructor(status: Status, retryAfterSeconds?: number) {
    super(status.message || `the server responded with the status code ${status.code ?? 0}`);
    this.name = "ApiError";
    this.status = status;
    this.code = status.code ?? 0;
    this.reason = status.reason ?? "";
    this.retryAfterSeconds = retryAfterSeconds ?? positive(status.details?.retryAfterSeconds);
  }
}

function positive(n: number | undefined): number | undefined {
  return n !== undefined && n > 0 ? n : undefined;
}

/** What the transport knows about a failed answer, to build an `ApiError` from. */
export interface ErrorResponse {
  statusCode: number;
  /** HTTP method of the request, upper case (decides AlreadyExists vs Conflict for a synthesized 409). */
  method: string;
  /** Response body as text ("" when empty). */
  body: string;
  /** `content-type` header, if any. */
  contentType?: string;
  /** `retry-after` header, if any. */
  retryAfter?: string;
  /** Resource (plural, with group) and name the request addressed, for synthesized messages. */
  resource?: { group: string; plural: string; name?: string };
  /**
   * What authenticated the request (`Credentials.description`) and the server it went to: a 401's
   * message then says which credential which server refused.
   */
  refused?: { credentials: string; server: string };
}

/**
 * Builds the error for a non-2xx answer: the server's Status when the body is one (`kind: Status`
 * and a `status` field, as client-go's decoder requires), a synthesized Status otherwise.
 */
export function apiErrorFromResponse(res: ErrorResponse): ApiError {
  const retryAfter = parseRetryAfter(res.retryAfter);
  const parsed = parseStatus(res.body);
  let error: ApiError;
  if (parsed) {
    if (parsed.code === undefined || parsed.code === 0) parsed.code = res.statusCode;
    error = new ApiError(parsed, retryAfter);
  } else {
    error = new ApiError(synthesizeStatus(res, retryAfter), retryAfter);
  }
  if (res.statusCode === 401 && res.refused) {
    // The server's "Unauthorized" alone does not say which of several kubeconfigs, users or plugins is
    // to blame; the Status itself stays as the server sent it.
    error.message = `${res.refused.server} refused the ${res.refused.credentials}: ${error.message}`;
  }
  return error;
}

function parseStatus(body: string): Status | undefined {
  if (body.length === 0 || body.charCodeAt(0) !== 123 /* { */) return undefined;
  try {
    const value = JSON.parse(body) as unknown;
    if (isStatus(value)) return value;
  } catch {
    // Not JSON: handled as an unstructured answer.
  }
  return undefined;
}

/** True for a `kind: Status` object with a `status` field (how ERROR watch events and error bodies look). */
export function isStatus(value: unknown): value is Status {
  if (typeof value !== "object" || value === null) return false;
  const v = value as { kind?: unknown; status?: unknown };
  return v.kind === "Status" && typeof v.status === "string";
}

/** Seconds of a `Retry-After` header; only the integer form counts, as in client-go. */
export function parseRetryAfter(header: string | undefined): number | undefined {
  if (header === undefined || !/^\s*\d+\s*$/.test(header)) return undefined;
  return Number(header);
}

function isTextContentType(contentType: string | undefined): boolean {
  if (contentType === undefined || contentType === "") return true;
  return contentType.trimStart().toLowerCase().startsWith("text/");
}

function synthesizeStatus(res: ErrorResponse, retryAfter: number | undefined): Status {
  const code = res.statusCode;
  const serverMessage = isTextContentType(res.contentType)
    ? res.body.slice(0, maxUnstructuredBodyChars).trim()
    : "unknown";
  let reason = "";
  let message = `the server responded with the status code ${code} but did not return more information`;
  switch (code) {
    case 409:
      reason = res.method === "POST" ? "AlreadyExists" : "Conflict";
      message = "the server reported a conflict";
      break;
    case 404:
      reason = "NotFound";
      message = "the server could not find the requested resource";
      break;
    case 400:
      reason = "BadRequest";
      message = "the server rejected our request for an unknown reason";
      break;
    case 401:
      reason = "Unauthorized";
      message = "the server has asked for the client to provide credentials";
      break;
    case 403:
      // The server's text says who tried to do what: keep it.
      reason = "Forbidden";
      message = serverMessage;
      break;
    case 405:
      reason = "MethodNotAllowed";
      message = "the server does not allow this method on the requested resource";
      break;
    case 406:
      reason = "NotAcceptable";
      message =
        serverMessage === "" || serverMessage === "unknown"
          ? "the server was unable to respond with a content type that the client supports"
          : serverMessage;
      break;
    case 415:
      reason = "UnsupportedMediaType";
      message = serverMessage;
      break;
    case 422:
      reason = "Invalid";
      message = "the server rejected our request due to an error in our request";
      break;
    case 429:
      reason = "TooManyRequests";
      message = "the server has received too many requests and has asked us to try again later";
      break;
    case 503:
      reason = "ServiceUnavailable";
      message = "the server is currently unable to handle the request";
      break;
    case 504:
      reason = "Timeout";
      message =
        "the server was unable to return a response in the time allotted, but may still be processing the request";
      break;
    default:
      if (code >= 500) {
        reason = "InternalError";
        message = `an error on the server (${JSON.stringify(serverMessage)}) has prevented the request from succeeding`;
      }
  }
  const r = res.resource;
  if (r) {
    const qualified = r.group === "" ? r.plural : `${r.plural}.${r.group}`;
    message += r.name
      ? ` (${res.method.toLowerCase()} ${qualified} ${r.name})`
      : ` (${res.method.toLowerCase()} ${qualified})`;
  }
  const status: Status = {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    code,
    message,
    details: {
      causes: [{ reason: "UnexpectedServerResponse", message: serverMessage }],
      ...(r ? { group: r.group, kind: r.plural, ...(r.name ? { name: r.name } : {}) } : {}),
      ...(retryAfter !== undefined ? { retryAfterSeconds: retryAfter } : {}),
    },
  };
  if (reason !== "") status.reason = reason;
  return status;
}

/**
 * The reason and code of an API error, recognised by shape rather than by class, as apimachinery's
 * `ReasonForError` recognises any `APIStatus`: an `ApiError` of this client, or any error carrying a
 * Status (`kind: Status`) as its `status`, such as the embedded API server's own ApiError thrown
 * in-process, or one of another copy of this module. The error's own `reason`/`code` win over its
 * Status's, as the client's ApiError keeps them side by side.
 */
function reasonAndCode(err: unknown): { reason: string; code: number } | undefined {
  if (err instanceof ApiError) return { reason: err.reason, code: err.code };
  if (typeof err !== "object" || err === null) return undefined;
  const e = err as { status?: unknown; reason?: unknown; code?: unknown; cause?: unknown };
  if (isStatus(e.status)) {
    return {
      reason: typeof e.reason === "string" ? e.reason : (e.status.reason ?? ""),
      code: typeof e.code === "number" ? e.code : (e.status.code ?? 0),
    };
  }
  // Errors wrapped with `new Error(msg, { cause })` still count, as errors.As does in Go.
  if (err instanceof Error && e.cause !== undefined && e.cause !== err) return reasonAndCode(e.cause);
  return undefined;
}

/**
 * Whether `err` is an API error (a Status answer of the server), by the same structural rule the
 * `is*` helpers use: this client's {@link ApiError}, any error carrying a `kind: Status` object as
 * its `status`, or an error wrapping one of those as its `cause`.
 */
export function isApiError(err: unknown): boolean {
  return reasonAndCode(err) !== undefined;
}

/** The apimachinery rule: the reason decides; an unknown reason falls back to the HTTP code. */
function matches(err: unknown, reason: string, code: number): boolean {
  const rc = reasonAndCode(err);
  if (!rc) return false;
  if (rc.reason === reason) return true;
  return !knownReasons.has(rc.reason) && rc.code === code;
}

/** 404 NotFound. */
export function isNotFound(err: unknown): boolean {
  return matches(err, "NotFound", 404);
}
/** 409 Conflict (a stale resourceVersion, or an apply conflict). */
export function isConflict(err: unknown): boolean {
  return matches(err, "Conflict", 409);
}
/** 409 AlreadyExists (a create of a name that exists). */
export function isAlreadyExists(err: unknown): boolean {
  const rc = reasonAndCode(err);
  return rc?.reason === "AlreadyExists";
}
/** 422 Invalid; `status.details.causes[].field` names the fields. */
export function isInvalid(err: unknown): boolean {
  return matches(err, "Invalid", 422);
}
/**
 * 410: the requested resourceVersion is older than the history the server keeps. Unlike client-go's
 * `IsGone` (reason `Gone` only) this also counts reason `Expired` with code 410, which is what a real
 * API server sends in a watch ERROR event ("too old resource version") and what a reflector checks with
 * `IsResourceExpired || IsGone`: every caller here wants "relist", whichever of the two it was.
 */
export function isGone(err: unknown): boolean {
  const rc = reasonAndCode(err);
  if (!rc) return false;
  return rc.reason === "Gone" || rc.reason === "Expired" || rc.code === 410;
}
/** 403 Forbidden. */
export function isForbidden(err: unknown): boolean {
  return matches(err, "Forbidden", 403);
}
/** 401 Unauthorized. */
export function isUnauthorized(err: unknown): boolean {
  return matches(err, "Unauthorized", 401);
}
/** 429 TooManyRequests (server-side throttling, priority and fairness). */
export function isTooManyRequests(err: unknown): boolean {
  return matches(err, "TooManyRequests", 429);
}
/** 500-with-reason ServerTimeout, or 504 Timeout: the server may still complete the request. */
export function isServerTimeout(err: unknown): boolean {
  const rc = reasonAndCode(err);
  if (!rc) return false;
  return rc.reason === "ServerTimeout" || rc.reason === "Timeout" || (!knownReasons.has(rc.reason) && rc.code === 504);
}
