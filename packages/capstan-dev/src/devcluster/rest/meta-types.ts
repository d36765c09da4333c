/**
 * The JSON type checks kube-apiserver's decoder applies to ObjectMeta before any validation: a field of
 * the wrong JSON type, or a time time.Parse refuses (machinery/go-time.ts), is a 400 BadRequest with
 * Go's message, not a 422. Built-in kinds with a Go struct are checked whole by builtin-decoding.ts
 * first; this is what custom objects (and built-ins without one) get.
 */
import { GoTimeParseError, metaTimeJson } from "../machinery/go-time.ts";
import { type ApiError, badRequest } from "../machinery/status.ts";
import type { JsonObject, ServedResource } from "../registry/served-resource.ts";

type GoType =
  | "string"
  | "int64"
  | "map[string]string"
  | "[]string"
  | "[]v1.OwnerReference"
  | "v1.Time"
  | "[]v1.ManagedFieldsEntry";

const META_FIELDS = new Map<string, GoType>(
  Object.entries({
    name: "string",
    generateName: "string",
    namespace: "string",
    uid: "string",
    resourceVersion: "string",
    generation: "int64",
    creationTimestamp: "v1.Time",
    deletionTimestamp: "v1.Time",
    deletionGracePeriodSeconds: "int64",
    labels: "map[string]string",
    annotations: "map[string]string",
    finalizers: "[]string",
    ownerReferences: "[]v1.OwnerReference",
    managedFields: "[]v1.ManagedFieldsEntry",
  } satisfies Record<string, GoType>),
);

/** encoding/json's name for a JSON value's type in its unmarshal errors. */
function jsonTypeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "object") return "object";
  if (typeof value === "boolean") return "bool";
  return typeof value;
}

/** A value that does not fit: what the decoder saw and the Go type it wanted. */
interface Misfit {
  got: unknown;
  as: string;
}

/** Undefined when `value` fits `type` (no allocation on the path every write takes). */
function misfit(value: unknown, type: GoType): Misfit | undefined {
  if (value === null) return undefined; // null leaves the zero value in Go
  switch (type) {
    case "string":
      return typeof value === "string" ? undefined : { got: value, as: type };
    case "int64":
      return typeof value === "number" && Number.isInteger(value) ? undefined : { got: value, as: type };
    case "map[string]string": {
      if (typeof value !== "object" || Array.isArray(value)) return { got: value, as: type };
      for (const key in value as Record<string, unknown>) {
        const v = (value as Record<string, unknown>)[key];
        if (typeof v !== "string" && v !== null) return { got: v, as: "string" };
      }
      return undefined;
    }
    case "[]string": {
      if (!Array.isArray(value)) return { got: value, as: type };
      for (const v of value) if (typeof v !== "string") return { got: v, as: "string" };
      return undefined;
    }
    default: {
      if (!Array.isArray(value)) return { got: value, as: type };
      for (const v of value)
        if (v === null || typeof v !== "object" || Array.isArray(v)) return { got: v, as: type.slice(2) };
      return undefined;
    }
  }
}

/** The decoder's 400: `message` is what sigs.k8s.io/json returned. */
function cannotBeHandled(served: ServedResource, message: string): ApiError {
  return badRequest(`${served.kind} in version "${served.version}" cannot be handled as a ${served.kind}: ${message}`);
}

/**
 * Go's struct-field context of a metadata field in an UnmarshalTypeError. A built-in object is decoded
 * whole (`ObjectMeta.metadata.labels`); a custom object's metadata alone is unmarshalled into
 * ObjectMeta (apiextensions-apiserver schema/objectmeta GetObjectMetaWithOptions): `ObjectMeta.labels`.
 */
function fieldContext(served: ServedResource, struct: string, path: string): string {
  return `${struct}.${served.custom ? "" : "metadata."}${path}`;
}

/**
 * The time.Parse error of a metadata time, or its UnmarshalTypeError when it is no string: either
 * stops Go's decoder at once, so it wins over a type error seen earlier.
 */
function timeError(served: ServedResource, value: unknown, struct: string, path: string): ApiError | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value !== "string") {
    return cannotBeHandled(
      served,
      `json: cannot unmarshal ${jsonTypeName(value)} into Go struct field ${fieldContext(served, struct, path)} of type string`,
    );
  }
  try {
    metaTimeJson(value);
    return undefined;
  } catch (err) {
    if (err instanceof GoTimeParseError) return cannotBeHandled(served, err.message);
    throw err;
  }
}

/** The time error of the first managedFields entry, in document order, whose `time` Go refuses. */
function managedFieldsTimeError(served: ServedResource, entries: unknown): ApiError | undefined {
  if (!Array.isArray(entries)) return undefined;
  for (const entry of entries) {
    if (entry === null || typeof entry !== "object" || Array.isArray(entry)) continue;
    const err = timeError(
      served,
      (entry as Record<string, unknown>)["time"],
      "ManagedFieldsEntry",
      "managedFields.time",
    );
    if (err) return err;
  }
  return undefined;
}

/**
 * Throws the decoder's 400 when `obj.metadata` or one of its fields has the wrong JSON type, or one of
 * its times does not parse. Fields are visited in document order, as Go decodes them: the first type
 * error is kept while decoding goes on, a time error stops it and wins.
 */
export function checkMetadataTypes(served: ServedResource, obj: JsonObject): void {
  const meta = obj.metadata as unknown;
  if (meta === undefined || meta === null) return;
  if (typeof meta !== "object" || Array.isArray(meta)) {
    throw unmarshalError(served, meta, `${served.kind}.metadata`, "v1.ObjectMeta");
  }
  let first: ApiError | undefined;
  for (const key in meta as Record<string, unknown>) {
    const type = META_FIELDS.get(key);
    if (type === undefined) continue;
    const value = (meta as Record<string, unknown>)[key];
    if (value === undefined) continue;
    if (type === "v1.Time") {
      const err = timeError(served, value, "ObjectMeta", key);
      if (err) throw err;
      continue;
    }
    const bad = misfit(value, type);
    if (bad) first ??= unmarshalError(served, bad.got, fieldContext(served, "ObjectMeta", key), bad.as);
    else if (key === "managedFields") {
      const err = managedFieldsTimeError(served, value);
      if (err) throw err;
    }
  }
  if (first) throw first;
}

function unmarshalError(served: ServedResource, got: unknown, field: string, as: string): ApiError {
  return cannotBeHandled(
    served,
    `json: cannot unmarshal ${jsonTypeName(got)} into Go struct field ${field} of type ${as}`,
  );
}
