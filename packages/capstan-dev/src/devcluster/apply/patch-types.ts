/**
 * The two patch content types backed by this folder's engines, in the shape the request path registers
 * (rest/patchers.ts `PatchType`):
 * - `application/strategic-merge-patch+json` for built-in kinds (patch/strategic-merge.ts), refused
 *   for custom resources with the 415 the real server gives;
 * - `application/apply-patch+yaml`, server-side apply (field-manager.ts), with `fieldManager` required
 *   and `force` honoured as kube-apiserver 1.32 does.
 *
 * {@link patchEnginesPlugin} registers both on a running server (`startApiServer({ plugins: [...] })`);
 * patchers.ts can also register the two objects directly. This module imports neither patchers.ts nor
 * server.ts (it declares their shapes structurally), so either can import it without a cycle.
 *
 * The request path tells a patcher which subresource it serves (`context.subresource`): apply through
 * `/status` records its manager with `subresource: status` and leaves `spec` alone (a reset field
 * there); apply through `/scale` works on the autoscaling/v1 Scale (scale-fields.ts maps its managers
 * onto the parent). Apply of a missing main object creates it ({@link applyCreate}).
 */
import { parse as parseYaml } from "yaml";
import { ApiError, badRequest, failure } from "../machinery/status.ts";
import { builtinPatchMeta, LOOSE, type PatchMeta } from "../patch/patch-meta.ts";
import { StrategicMergePatchError, strategicMergePatch } from "../patch/strategic-merge.ts";
import { groupVersion, type JsonObject, type ServedResource } from "../registry/served-resource.ts";
import { queryBool } from "../request/query-params.ts";
import { yamlDepthMessage } from "../serializer/body.ts";
import { GoJsonSyntaxError, parseJsonLimited, yamlDepthProblem } from "../serializer/nesting-depth.ts";
import { type FieldError, forbidden, invalid, invalidStatus, required, tooLong } from "../validation/field-errors.ts";
import { ApplyError } from "./errors.ts";
import {
  applyConfiguration,
  type FieldManagerTarget,
  type KubeJson,
  statusResetFields,
  statusSubresourceResetFields,
} from "./field-manager.ts";
import { SCALE_API_VERSION, SCALE_TYPE } from "./scale-fields.ts";
import { managedTypeOf } from "./write-tracking.ts";

/** The patch metadata strategic merge uses for a served built-in kind. */
export function strategicMergeMetaFor(served: ServedResource): PatchMeta {
  // Every built-in the devcluster serves has a table; an unlisted one merges like untagged Go structs.
  return builtinPatchMeta(served.group, served.kind) ?? LOOSE;
}

/** The type tree apply uses for a served resource: the CRD schema for custom resources, the table otherwise. */
export function applyTypeFor(served: ServedResource): PatchMeta {
  return managedTypeOf(served);
}

/** The request context a patcher gets (structurally patchers.ts `PatchContext`). */
export interface PatchContext {
  served: ServedResource;
  query: URLSearchParams;
  /** `status` or `scale` when the patch targets that subresource (apply's manager identity and types). */
  subresource?: string;
}

/** One patch content type (structurally patchers.ts `PatchType`). */
export interface PatchType {
  contentType: string;
  appliesTo(served: ServedResource): boolean;
  patch(current: JsonObject, patch: string, context: PatchContext): JsonObject;
}

function statusOfSmpError(err: StrategicMergePatchError): ApiError {
  if (err.code === 400) return badRequest(err.message);
  if (err.code === 422) {
    // apierrors.NewGenericServerResponse(422, ...) as patch.go's interpretStrategicMergePatchError builds it.
    return new ApiError(
      failure(422, "Invalid", "the server rejected our request due to an error in our request", {
        causes: [{ reason: "UnexpectedServerResponse", message: err.message }],
      }),
    );
  }
  return new ApiError(unknownFailure(err.message));
}

/** A Status for an error that is not an API status: 500, reason left empty (ErrorToAPIStatus). */
function unknownFailure(message: string) {
  return { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, code: 500 };
}

export const strategicMergePatchType: PatchType = {
  contentType: "application/strategic-merge-patch+json",
  appliesTo: (served) => !served.custom,
  patch: (current, body, context) => {
    checkPatchOptions(context.query, false);
    let doc: unknown;
    try {
      doc = parseJsonLimited(body);
    } catch (err) {
      if (err instanceof GoJsonSyntaxError) throw badRequest(err.message);
      throw err;
    }
    try {
      return strategicMergePatch(current, doc, strategicMergeMetaFor(context.served)) as JsonObject;
    } catch (err) {
      if (err instanceof StrategicMergePatchError) throw statusOfSmpError(err);
      throw err;
    }
  },
};

/** FieldManagerMaxLength of ValidateFieldManager. */
const FIELD_MANAGER_MAX_LENGTH_BYTES = 128;

/** unicode.IsPrint's complement: control, format, unassigned, separators other than the ASCII space. */
const NON_PRINTABLE = /^(?! )[\p{C}\p{Z}]$/u;

/** Go's `%#U`: `U+0007`, plus the quoted character when it is printable. */
function goUnicodeVerb(ch: string): string {
  const hex = ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0");
  return NON_PRINTABLE.test(ch) ? `U+${hex}` : `U+${hex} '${ch}'`;
}

/**
 * ValidatePatchOptions: `fieldManager` required for apply and `force` forbidden otherwise, then
 * ValidateFieldManager (length, printable characters). All errors in one 422, as the handler answers.
 */
function patchOptionsErrors(query: URLSearchParams, isApply: boolean): FieldError[] {
  const errors: FieldError[] = [];
  const manager = query.get("fieldManager") ?? "";
  if (isApply && manager === "") errors.push(required("fieldManager", "is required for apply patch"));
  if (!isApply && query.has("force")) errors.push(forbidden("force", "may not be specified for non-apply patch"));
  errors.push(...fieldManagerErrors(manager));
  return errors;
}

/** ValidateFieldManager: at most 128 bytes, printable characters only. */
function fieldManagerErrors(manager: string): FieldError[] {
  const errors: FieldError[] = [];
  if (Buffer.byteLength(manager) > FIELD_MANAGER_MAX_LENGTH_BYTES) {
    errors.push(tooLong("fieldManager", FIELD_MANAGER_MAX_LENGTH_BYTES));
  }
  let position = 0;
  for (const ch of manager) {
    if (NON_PRINTABLE.test(ch)) {
      errors.push(invalid("fieldManager", manager, `invalid character ${goUnicodeVerb(ch)} (at position ${position})`));
    }
    position += Buffer.byteLength(ch);
  }
  return errors;
}

/**
 * ValidateCreateOptions / ValidateUpdateOptions' fieldManager check: a create or update naming an
 * invalid manager is refused with 422 (`CreateOptions.meta.k8s.io "" is invalid: fieldManager: ...`).
 */
export function checkWriteFieldManager(query: URLSearchParams, options: "CreateOptions" | "UpdateOptions"): void {
  const manager = query.get("fieldManager");
  if (manager === null || manager === "") return;
  const errors = fieldManagerErrors(manager);
  if (errors.length > 0) throw new ApiError(invalidStatus("meta.k8s.io", options, "", errors));
}

function checkPatchOptions(query: URLSearchParams, isApply: boolean): void {
  const errors = patchOptionsErrors(query, isApply);
  if (errors.length > 0) throw new ApiError(invalidStatus("meta.k8s.io", "PatchOptions", "", errors));
}

/** The apply options of a request, validated as ValidatePatchOptions does for apply. */
function applyOptionsOf(query: URLSearchParams): { manager: string; force: boolean } {
  const force = queryBool(query, "force") === true;
  checkPatchOptions(query, true);
  return { manager: query.get("fieldManager")!, force };
}

function decodeApplyBody(body: string): KubeJson {
  // Checked before parsing: the YAML parser recurses per level and would overflow the stack.
  const deep = yamlDepthProblem(body);
  if (deep?.kind === "yaml") {
    throw badRequest(`error decoding YAML: error converting YAML to JSON: ${yamlDepthMessage(deep.line)}`);
  }
  if (deep?.kind === "json") {
    throw badRequest(
      `error decoding YAML: error unmarshaling JSON: while decoding JSON: invalid character '${deep.char}' exceeded max depth`,
    );
  }
  let doc: unknown;
  try {
    // sigs.k8s.io/yaml reads YAML 1.1 (go-yaml v2): `yes`/`on` are booleans there too.
    doc = parseYaml(body, { version: "1.1" });
  } catch (err) {
    throw badRequest(`error decoding YAML: error converting YAML to JSON: ${(err as Error).message.split("\n")[0]}`);
  }
  if (doc === null || typeof doc !== "object" || Array.isArray(doc)) {
    const kind = Array.isArray(doc) ? "array" : doc === null ? "null" : typeof doc === "string" ? "string" : "number";
    throw badRequest(
      `error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal ${kind} into Go value of type map[string]interface {}`,
    );
  }
  return doc as KubeJson;
}

/**
 * What apply works on for a request: the object itself, its `/status` (manager identity with
 * `subresource: status`, `spec` reset), or its `/scale` (an autoscaling/v1 Scale, see scale-fields.ts).
 */
function applyTarget(context: PatchContext): FieldManagerTarget {
  const served = context.served;
  if (context.subresource === "scale") {
    return { type: SCALE_TYPE, apiVersion: SCALE_API_VERSION, kind: "Scale", subresource: "scale" };
  }
  const target: FieldManagerTarget = {
    type: applyTypeFor(served),
    apiVersion: groupVersion(served),
    kind: served.kind,
  };
  if (context.subresource === "status")
    return { ...target, subresource: "status", ignored: statusSubresourceResetFields() };
  return served.subresources.status ? { ...target, ignored: statusResetFields() } : target;
}

/** Server-side apply of the request body onto the current object (or its Scale). */
export function applyPatch(current: JsonObject, body: string, context: PatchContext): JsonObject {
  const { manager, force } = applyOptionsOf(context.query);
  const applied = decodeApplyBody(body);
  try {
    const result = applyConfiguration(current as KubeJson, applied, { manager, force, ...applyTarget(context) });
    return result.object as JsonObject;
  } catch (err) {
    if (err instanceof ApplyError) throw new ApiError(err.status());
    throw err;
  }
}

/**
 * Server-side apply of a body to an object that does not exist yet: the object to create, owned by
 * the applying manager (the real server's apply-create path). Name and namespace come from the URL
 * when the body leaves them out.
 */
export function applyCreate(body: string, context: PatchContext & { name: string; namespace: string }): JsonObject {
  const { manager, force } = applyOptionsOf(context.query);
  const applied = decodeApplyBody(body);
  const served = context.served;
  try {
    const result = applyConfiguration(undefined, applied, {
      manager,
      force,
      type: applyTypeFor(served),
      apiVersion: groupVersion(served),
      kind: served.kind,
      ...(served.subresources.status ? { ignored: statusResetFields() } : {}),
    });
    const obj = result.object as JsonObject;
    obj["metadata"] ??= {};
    const meta = obj["metadata"] as Record<string, unknown>;
    meta["name"] ??= context.name;
    if (served.namespaced) meta["namespace"] ??= context.namespace;
    return obj;
  } catch (err) {
    if (err instanceof ApplyError) throw new ApiError(err.status());
    throw err;
  }
}

export const applyPatchType: PatchType = {
  contentType: "application/apply-patch+yaml",
  appliesTo: () => true,
  patch: applyPatch,
};

/** Registers strategic merge and server-side apply on a server (replacing part 1's stand-in); a ServerPlugin. */
export const patchEnginesPlugin = (context: { patchTypes: { register(type: PatchType): void } }): void => {
  context.patchTypes.register(strategicMergePatchType);
  context.patchTypes.register(applyPatchType);
};
