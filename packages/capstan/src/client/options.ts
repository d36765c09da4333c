/**
 * The options of the client's calls, as controller-runtime's `options.go` gathers them: what each verb
 * of a resource client accepts, what a raw `KubeClient.request` accepts, and how the options become
 * query parameters and a `DeleteOptions` body.
 */
import type { ListOptions } from "./types.ts";

/** Options every single-object call accepts. */
export interface CallOptions {
  /** Namespace for this call; wins over the object's and the client's bound namespace. */
  namespace?: string;
  signal?: AbortSignal;
}

/** Options of create/update/updateStatus. */
export interface WriteOptions extends CallOptions {
  /** `dryRun=All`: validated and defaulted by the server, not persisted. */
  dryRun?: boolean;
  fieldManager?: string;
  /** `fieldValidation` query parameter (server-side unknown/duplicate field checks). */
  fieldValidation?: "Ignore" | "Warn" | "Strict";
}

/** Patch flavours and their content types. */
export type PatchType = "json" | "merge" | "strategic" | "apply";

/** Options of patch. */
export interface PatchOptions extends WriteOptions {
  /**
   * `json` = RFC 6902 (application/json-patch+json), `merge` = RFC 7386 (application/merge-patch+json),
   * `strategic` = strategic merge (built-in kinds only), `apply` = server-side apply (needs `fieldManager`).
   */
  type: PatchType;
  subresource?: "status" | "scale";
  /** Server-side apply only: take ownership of conflicting fields. */
  force?: boolean;
}

/** Options of delete (a `DeleteOptions` body). */
export interface DeleteOptions extends CallOptions {
  propagationPolicy?: "Foreground" | "Background" | "Orphan";
  gracePeriodSeconds?: number;
  /** The delete fails with 409 Conflict unless the object still has this uid / resourceVersion. */
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
}

/** Options of server-side apply. */
export interface ApplyOptions extends CallOptions {
  fieldManager: string;
  force?: boolean;
  subresource?: "status";
  dryRun?: boolean;
}

/** Options of `KubeClient.request`. */
export interface RequestOptions {
  /** Query parameters; undefined values are left out. */
  query?: Record<string, string | number | boolean | undefined>;
  /** A string is sent as is; anything else as JSON. */
  body?: unknown;
  contentType?: string;
  /** `accept` header; `application/json` by default. */
  accept?: string;
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Whether sending the request twice is harmless (decides retries on 5xx); default: by method. */
  idempotent?: boolean;
  /** For client-go style messages of synthesized errors. */
  resource?: { group: string; plural: string; name?: string };
}

/** The query parameters of a list, watch or deleteCollection. */
export function listQuery(opts: ListOptions): RequestOptions["query"] {
  return {
    labelSelector: opts.labelSelector,
    fieldSelector: opts.fieldSelector,
    limit: opts.limit,
    continue: opts.continue,
    resourceVersion: opts.resourceVersion,
    resourceVersionMatch: opts.resourceVersionMatch,
  };
}

/** The query parameters of a create, update or patch. */
export function writeQuery(opts: WriteOptions): RequestOptions["query"] {
  return {
    dryRun: opts.dryRun ? "All" : undefined,
    fieldManager: opts.fieldManager,
    fieldValidation: opts.fieldValidation,
  };
}

/** The `DeleteOptions` body of a delete, or undefined when no option asks for one. */
export function deleteBody(opts: DeleteOptions): Record<string, unknown> | undefined {
  if (
    opts.propagationPolicy === undefined &&
    opts.gracePeriodSeconds === undefined &&
    opts.preconditions === undefined &&
    !opts.dryRun
  ) {
    return undefined;
  }
  return {
    apiVersion: "v1",
    kind: "DeleteOptions",
    ...(opts.propagationPolicy ? { propagationPolicy: opts.propagationPolicy } : {}),
    ...(opts.gracePeriodSeconds !== undefined ? { gracePeriodSeconds: opts.gracePeriodSeconds } : {}),
    ...(opts.preconditions ? { preconditions: opts.preconditions } : {}),
    ...(opts.dryRun ? { dryRun: ["All"] } : {}),
  };
}
