/**
 * `kind: Status` error bodies, built the way k8s.io/apimachinery/pkg/api/errors builds them, so that
 * clients (kubectl, client-go, our own client) recognise them by code, reason, message and details.
 */
import type { Status, StatusCause } from "kubernetes-types/meta/v1.d.ts";

/** A group and plural resource, printed as `plural` for the core group and `plural.group` otherwise. */
export interface GroupResource {
  group: string;
  resource: string;
}

/** `configmaps`, `deployments.apps`: how the apiserver names a resource in its messages. */
export function qualifiedResource(gr: GroupResource): string {
  return gr.group === "" ? gr.resource : `${gr.resource}.${gr.group}`;
}

/** An error that carries the Status the server answers with. Thrown anywhere below the HTTP layer. */
export class ApiError extends Error {
  readonly status: Status;
  constructor(status: Status) {
    super(status.message ?? status.reason ?? "error");
    this.status = status;
  }
  get code(): number {
    return this.status.code ?? 500;
  }
}

/** True when `err` is an ApiError with the given HTTP code. */
export function isApiError(err: unknown, code?: number): err is ApiError {
  return err instanceof ApiError && (code === undefined || err.code === code);
}

/** A failure Status body. `details` fields left undefined are omitted, as Go's omitempty does. */
export function failure(code: number, reason: string, message: string, details?: Status["details"]): Status {
  const status: Status = { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, reason };
  if (details !== undefined) status.details = compactDetails(details);
  status.code = code;
  return status;
}

function compactDetails(details: NonNullable<Status["details"]>): NonNullable<Status["details"]> {
  const out: NonNullable<Status["details"]> = {};
  if (details.name) out.name = details.name;
  if (details.group) out.group = details.group;
  if (details.kind) out.kind = details.kind;
  if (details.uid) out.uid = details.uid;
  if (details.causes && details.causes.length > 0) out.causes = details.causes;
  if (details.retryAfterSeconds) out.retryAfterSeconds = details.retryAfterSeconds;
  return out;
}

/** The Success Status a delete returns when it has no object to show (e.g. deletecollection of nothing). */
export function success(details?: Status["details"]): Status {
  const status: Status = { kind: "Status", apiVersion: "v1", metadata: {}, status: "Success" };
  if (details) status.details = compactDetails(details);
  return status;
}

export function notFound(gr: GroupResource, name: string): ApiError {
  return new ApiError(
    failure(404, "NotFound", `${qualifiedResource(gr)} "${name}" not found`, {
      name,
      group: gr.group,
      kind: gr.resource,
    }),
  );
}

/** The 404 for a URL that names no served resource. */
export function resourceNotServed(): ApiError {
  return new ApiError(failure(404, "NotFound", "the server could not find the requested resource", {}));
}

export function alreadyExists(gr: GroupResource, name: string): ApiError {
  return new ApiError(
    failure(409, "AlreadyExists", `${qualifiedResource(gr)} "${name}" already exists`, {
      name,
      group: gr.group,
      kind: gr.resource,
    }),
  );
}

export function conflict(gr: GroupResource, name: string, why: string): ApiError {
  return new ApiError(
    failure(409, "Conflict", `Operation cannot be fulfilled on ${qualifiedResource(gr)} "${name}": ${why}`, {
      name,
      group: gr.group,
      kind: gr.resource,
    }),
  );
}

/**
 * go-restful's answer to a verb a route does not serve (a GET on a create-only review, a
 * DELETE on the namespaces collection): 405 with empty details.
 */
export function routeNotAllowed(): ApiError {
  return new ApiError(
    failure(405, "MethodNotAllowed", "the server does not allow this method on the requested resource", {}),
  );
}

/** The reason the registry gives when a write carries a stale resourceVersion (registry/store.go). */
export const OPTIMISTIC_LOCK_ERROR_MSG =
  "the object has been modified; please apply your changes to the latest version and try again";

export function badRequest(message: string): ApiError {
  return new ApiError(failure(400, "BadRequest", message));
}

export function forbidden(gr: GroupResource, name: string, why: string, causes?: StatusCause[]): ApiError {
  const subject = name === "" ? qualifiedResource(gr) : `${qualifiedResource(gr)} "${name}"`;
  return new ApiError(
    failure(403, "Forbidden", `${subject} is forbidden: ${why}`, { name, group: gr.group, kind: gr.resource, causes }),
  );
}

export function methodNotSupported(gr: GroupResource, action: string): ApiError {
  return new ApiError(
    failure(405, "MethodNotAllowed", `${action} is not supported on resources of kind "${qualifiedResource(gr)}"`, {
      group: gr.group,
      kind: gr.resource,
    }),
  );
}

/** 410 Expired, the answer to a watch or list from a version older than the kept history. */
export function expired(message: string): ApiError {
  return new ApiError(failure(410, "Expired", message));
}

export function unsupportedMediaType(message: string): ApiError {
  return new ApiError(failure(415, "UnsupportedMediaType", message));
}

export function requestEntityTooLarge(limit: number): ApiError {
  return new ApiError(failure(413, "RequestEntityTooLarge", `Request entity too large: limit is ${limit}`));
}

export function internalError(err: unknown): ApiError {
  const why = err instanceof Error ? err.message : String(err);
  return new ApiError(failure(500, "InternalError", `Internal error occurred: ${why}`, { causes: [{ message: why }] }));
}

/**
 * ErrorToAPIStatus of an error that is no Status (a plain Go error, e.g. a conversion webhook's
 * failure): 500 with the bare message and no reason (StatusReasonUnknown is "", omitted), which
 * kubectl shows as `Error from server: <message>`.
 */
export function unknownError(message: string): ApiError {
  return new ApiError({ kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, code: 500 });
}

export function unauthorized(): ApiError {
  return new ApiError(failure(401, "Unauthorized", "Unauthorized"));
}

/** 504 for a read at a resourceVersion the server has not reached (storage/cacher `newTooLargeResourceVersionError`). */
export function tooLargeResourceVersion(requested: number, current: number): ApiError {
  return new ApiError(
    failure(504, "Timeout", `Too large resource version: ${requested}, current: ${current}`, {
      causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }],
      retryAfterSeconds: 1,
    }),
  );
}
