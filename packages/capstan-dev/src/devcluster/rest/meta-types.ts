/**
 * The JSON type checks kube-apiserver's decoder applies to ObjectMeta before any validation: a field of
 * the wrong JSON type is a 400 BadRequest with Go's unmarshal message, not a 422.
 */
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

const META_FIELDS: Record<string, GoType> = {
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
};

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
    case "v1.Time":
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

/** META_FIELDS as an array, built once: every create and update walks it. */
const META_FIELD_LIST = Object.entries(META_FIELDS);

/** Throws the decoder's 400 when `obj.metadata` or one of its fields has the wrong JSON type. */
export function checkMetadataTypes(served: ServedResource, obj: JsonObject): void {
  const meta = obj.metadata as unknown;
  if (meta === undefined || meta === null) return;
  if (typeof meta !== "object" || Array.isArray(meta)) {
    throw unmarshalError(served, meta, `${served.kind}.metadata`, "v1.ObjectMeta");
  }
  for (const [key, type] of META_FIELD_LIST) {
    const value = (meta as Record<string, unknown>)[key];
    if (value === undefined) continue;
    const bad = misfit(value, type);
    if (bad) throw unmarshalError(served, bad.got, `ObjectMeta.metadata.${key}`, bad.as);
  }
}

function unmarshalError(served: ServedResource, got: unknown, field: string, as: string): ApiError {
  return badRequest(
    `${served.kind} in version "${served.version}" cannot be handled as a ${served.kind}: json: cannot unmarshal ${jsonTypeName(got)} into Go struct field ${field} of type ${as}`,
  );
}
