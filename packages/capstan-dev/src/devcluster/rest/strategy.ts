/**
 * What a create or update may change and what it bumps, before the store commits it: kube's
 * rest.BeforeCreate / BeforeUpdate (registry/rest/create.go:103, update.go) and the kinds' strategies,
 * as free functions over the store's extension points. Metadata rules (generateName, uid, timestamps,
 * namespace), defaulting and mutators with `fieldValidation`, validation, status/spec split, generation.
 */
import { randomBytes, randomUUID } from "node:crypto";
import type { ObjectMeta, Status } from "kubernetes-types/meta/v1.d.ts";
import { trackCreate } from "../apply/write-tracking.ts";
import { jsonEqual } from "../machinery/semantic-equal.ts";
import { ApiError, badRequest } from "../machinery/status.ts";
import { nowRfc3339 } from "../machinery/timestamps.ts";
import { groupVersion, type JsonObject, type ServedResource } from "../registry/served-resource.ts";
import { builtinNameRule } from "../validation/builtin/builtin-validator.ts";
import { type FieldError, invalid as fieldInvalid, invalidStatus } from "../validation/field-errors.ts";
import { goValueV } from "../validation/go-format.ts";
import {
  prepareObjectMetaForUpdate,
  validateObjectMeta,
  validateObjectMetaUpdateCommon,
} from "../validation/object-meta.ts";
import { normalize } from "./encoding.ts";
import { checkMetadataTypes } from "./meta-types.ts";
import type { MutableMeta, ObjectMutator, ObjectValidator, WriteOptions, WriteTarget } from "./types.ts";

/** The store's extension points a strategy runs (ObjectStore has them). */
export interface StrategyHooks {
  readonly validators: readonly ObjectValidator[];
  readonly mutators: readonly ObjectMutator[];
  readonly statusValidators: readonly ObjectValidator[];
}

const GENERATE_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789";
/** utilrand.String(5): the random suffix kube-apiserver appends to generateName. */
const GENERATED_SUFFIX_LENGTH = 5;

/**
 * `fieldValidation` on unknown fields (create.go/update.go): Strict fails the write with every field
 * listed, Warn adds one warning per field (a warning already given is not repeated, as the warning
 * recorder dedupes them), Ignore says nothing.
 */
export function reportUnknownFields(served: ServedResource, unknown: readonly string[], options: WriteOptions): void {
  const fields = unknown.map((p) => `unknown field "${p}"`);
  const mode = options.fieldValidation ?? "Warn";
  if (mode === "Strict" && options.strategicPatch !== undefined) {
    throw strategicPatchInvalid(options.strategicPatch, `strict decoding error: ${fields.join(", ")}`);
  }
  if (mode === "Strict") {
    throw badRequest(
      `${served.kind} in version "${served.version}" cannot be handled as a ${served.kind}: strict decoding error: ${fields.join(", ")}`,
    );
  }
  // The response's warning recorder drops repeated texts.
  if (mode === "Warn" && options.warnings) for (const field of fields) options.warnings.push(field);
}

/** patch.go applyPatchToObject's refusal: a 422 with no kind nor name, the patch printed as Go's `%+v` of a map. */
function strategicPatchInvalid(patch: string, detail: string): ApiError {
  let value: unknown;
  try {
    value = JSON.parse(patch);
  } catch {
    value = patch;
  }
  const status = invalidStatus("", "", "", [fieldInvalid("patch", goValueV(value), detail)]);
  // metav1.StatusDetails' kind is omitempty.
  const { kind: _kind, ...details } = status.details;
  return new ApiError({ ...status, details } as unknown as Status);
}

/**
 * A create's body as the handler hands it to mutating admission (handlers/create.go): decoded and
 * defaulted in its kind, in the request's namespace, its managedFields recorded (the field manager
 * runs before admission), and the system fields a client may not set wiped
 * (rest.WipeObjectMetaSystemFields). No name is generated, and no uid, creationTimestamp or
 * generation given yet: {@link beforeCreate} does that, after mutating admission, as store.Create does.
 */
export function decodeCreate(
  hooks: StrategyHooks,
  served: ServedResource,
  namespace: string,
  input: JsonObject,
  options: WriteOptions,
): JsonObject {
  checkMetadataTypes(served, input);
  const source = options.owned ? input : structuredClone(input);
  const inMeta = (source.metadata && typeof source.metadata === "object" ? source.metadata : {}) as Record<
    string,
    unknown
  >;
  if (served.namespaced) {
    const bodyNs = inMeta["namespace"];
    if (typeof bodyNs === "string" && bodyNs !== "" && bodyNs !== namespace) {
      throw badRequest("the namespace of the provided object does not match the namespace sent on the request");
    }
    inMeta["namespace"] = namespace;
  } else delete inMeta["namespace"];
  delete inMeta["uid"];
  delete inMeta["creationTimestamp"];
  delete inMeta["resourceVersion"];
  delete inMeta["deletionTimestamp"];
  delete inMeta["deletionGracePeriodSeconds"];
  delete inMeta["selfLink"];
  source.metadata = inMeta;
  const obj: JsonObject = { ...source, apiVersion: groupVersion(served), kind: served.kind };
  served.defaults?.(obj);
  runMutators(hooks, served, obj, options);
  // The field manager sees the decoded, defaulted object: what PrepareForCreate adds is nobody's.
  trackCreate(served, obj, options.fieldManager);
  return obj;
}

/**
 * store.Create from FillObjectMetaSystemFields to rest.BeforeCreate, on the object mutating
 * admission left: a name from generateName, uid, creationTimestamp, generation 1, the status a
 * status subresource resets, the kind's PrepareForCreate (`defaultOnCreate`), then the strategy's
 * validation. Validating admission sees the result.
 */
export function beforeCreate(
  hooks: StrategyHooks,
  served: ServedResource,
  obj: JsonObject,
  options: WriteOptions,
): JsonObject {
  const meta = obj.metadata as Record<string, unknown>;
  if (
    (meta["name"] === undefined || meta["name"] === "") &&
    typeof meta["generateName"] === "string" &&
    meta["generateName"] !== ""
  ) {
    meta["name"] = meta["generateName"] + randomSuffix();
  }
  meta["uid"] = randomUUID();
  meta["creationTimestamp"] = nowRfc3339();
  if (served.generation !== "none") meta["generation"] = 1;
  else delete meta["generation"];
  if (served.subresources.status && !served.keepStatusOnCreate) {
    delete obj["status"];
    // kube-apiserver defaults again whenever it decodes the stored object (the create's answer too):
    // a default inside the status (a PVC's phase Pending) comes back.
    served.defaults?.(obj);
  }
  served.defaultOnCreate?.(obj, options.requester);
  validateCreated(hooks, served, obj);
  // Holds resourceVersion's place in ObjectMeta's order; the write fills it in (create) without normalizing again.
  meta["resourceVersion"] = "";
  return normalize(obj);
}

/**
 * The strategy's Validate of a prepared create ({@link beforeCreate}): after mutating admission, as in
 * kube-apiserver (a required field a webhook defaults is not refused before it can).
 */
function validateCreated(hooks: StrategyHooks, served: ServedResource, obj: JsonObject): void {
  const meta = obj.metadata as ObjectMeta;
  const errors = validateObjectMeta(meta, {
    namespaced: served.namespaced,
    // A built-in kind's own rule (RBAC objects and PDBs only need URL-safe names: `system:discovery`).
    nameValidator: builtinNameRule(served),
    nameRule: served.plural === "namespaces" ? "dns1123label" : "dns1123subdomain",
  });
  for (const validate of hooks.validators) errors.push(...validate(served, obj, undefined));
  if (errors.length > 0) throw invalid(served, String(meta.name ?? ""), errors);
}

/** The strategy's ValidateUpdate of a prepared update of the object itself; see {@link validateCreated}. */
export function validateUpdated(hooks: StrategyHooks, served: ServedResource, next: JsonObject, old: JsonObject): void {
  const meta = next.metadata as MutableMeta;
  const errors = validateObjectMetaUpdateCommon(meta, old.metadata as MutableMeta, served.namespaced);
  for (const validate of hooks.validators) errors.push(...validate(served, next, old));
  if (errors.length > 0) throw invalid(served, String(meta.name ?? ""), errors);
}

/** Runs the mutators, then applies `fieldValidation` to the unknown fields they dropped. */
export function runMutators(
  hooks: StrategyHooks,
  served: ServedResource,
  obj: JsonObject,
  options: WriteOptions,
): void {
  const unknown: string[] = [];
  for (const mutate of hooks.mutators) {
    const dropped = mutate(served, obj);
    if (Array.isArray(dropped)) unknown.push(...(dropped as string[]));
  }
  if (unknown.length > 0) reportUnknownFields(served, unknown, options);
}

/** BeforeUpdate plus the kind's strategy: what an update may change, and what it bumps. */
export function prepareUpdate(
  hooks: StrategyHooks,
  served: ServedResource,
  old: JsonObject,
  input: JsonObject,
  target: WriteTarget,
  rv: string,
  options: WriteOptions,
  validate = true,
): JsonObject {
  let next: JsonObject;
  if (target === "status") {
    // The body is decoded (defaulted, pruned, fieldValidation) as a whole, then only its status is
    // taken: status strategies keep spec and metadata.
    runMutators(hooks, served, input, options);
    next = structuredClone(old);
    if (input["status"] === undefined) delete next["status"];
    else next["status"] = input["status"];
    served.updateStrategy?.status?.(next, old, input);
    (next.metadata as Record<string, unknown>)["resourceVersion"] = rv;
    const statusErrors: FieldError[] = [];
    for (const validate of hooks.statusValidators) statusErrors.push(...validate(served, next, old));
    const name = String((old.metadata as MutableMeta).name ?? "");
    if (statusErrors.length > 0) throw invalid(served, name, statusErrors);
    return normalize(next);
  }
  if (target === "approval") {
    // A kind's own subresource strategy (CSR approval): only what it takes from the body changes.
    runMutators(hooks, served, input, options);
    next = served.updateStrategy?.approval?.(old, input) ?? structuredClone(old);
    (next.metadata as Record<string, unknown>)["resourceVersion"] = rv;
    return normalize(next);
  }
  if (target === "finalize") {
    next = structuredClone(old);
    const spec = (next["spec"] ?? {}) as Record<string, unknown>;
    const inputSpec = (input["spec"] ?? {}) as Record<string, unknown>;
    spec["finalizers"] = inputSpec["finalizers"] ?? [];
    next["spec"] = spec;
    return normalize(next);
  }
  checkMetadataTypes(served, input);
  next = { ...input, apiVersion: groupVersion(served), kind: served.kind };
  const meta = (next.metadata && typeof next.metadata === "object" ? next.metadata : {}) as MutableMeta;
  next.metadata = meta;
  const oldMeta = old.metadata as MutableMeta;
  prepareObjectMetaForUpdate(meta, oldMeta);
  meta.resourceVersion = rv;
  if (served.namespaced) meta.namespace = oldMeta.namespace;
  if (served.subresources.status) {
    if (old["status"] === undefined) delete next["status"];
    else next["status"] = old["status"];
  }
  served.defaults?.(next);
  runMutators(hooks, served, next, options);
  // PrepareForUpdate sees the decoded body: defaulted, its unknown fields already reported.
  served.updateStrategy?.main?.(next, old);
  if (validate) validateUpdated(hooks, served, next, old);
  if (oldMeta.generation !== undefined && generationChanged(served, old, next)) {
    meta.generation = (oldMeta.generation ?? 0) + 1;
  }
  return normalize(next);
}

export function invalid(served: ServedResource, name: string, errors: FieldError[]): ApiError {
  return new ApiError(
    invalidStatus(served.invalidGroup ?? served.group, served.kind, name, errors) as unknown as Status,
  );
}

export function checkBodyIdentity(served: ServedResource, namespace: string, name: string, input: JsonObject): void {
  const meta = (input.metadata ?? {}) as Record<string, unknown>;
  const bodyName = meta["name"];
  if (typeof bodyName === "string" && bodyName !== "" && bodyName !== name) {
    throw badRequest(`the name of the object (${bodyName}) does not match the name on the URL (${name})`);
  }
  if (bodyName === undefined || bodyName === "") meta["name"] = name;
  const bodyNs = meta["namespace"];
  if (served.namespaced && typeof bodyNs === "string" && bodyNs !== "" && bodyNs !== namespace) {
    throw badRequest("the namespace of the provided object does not match the namespace sent on the request");
  }
  input.metadata = meta;
}

function generationChanged(served: ServedResource, old: JsonObject, next: JsonObject): boolean {
  switch (served.generation) {
    case "none":
      return false;
    case "spec":
      return !jsonEqual(old["spec"], next["spec"]);
    case "spec-and-annotations":
      return (
        !jsonEqual(old["spec"], next["spec"]) ||
        !jsonEqual((old.metadata as ObjectMeta).annotations ?? {}, (next.metadata as ObjectMeta).annotations ?? {})
      );
    case "all-but-metadata-and-status": {
      const strip = (o: JsonObject) => {
        const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = o;
        return served.subresources.status ? rest : { ...rest, status: o["status"] };
      };
      return !jsonEqual(strip(old), strip(next));
    }
  }
}

function randomSuffix(): string {
  const bytes = randomBytes(GENERATED_SUFFIX_LENGTH);
  let out = "";
  for (const b of bytes) out += GENERATE_NAME_ALPHABET[b % GENERATE_NAME_ALPHABET.length];
  return out;
}
