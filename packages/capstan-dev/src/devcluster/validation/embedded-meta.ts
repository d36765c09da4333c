/**
 * Validation of `x-kubernetes-embedded-resource` values inside custom objects (a Pod template in a
 * custom resource, say), as apiextensions-apiserver `pkg/apiserver/schema/objectmeta/validation.go`
 * does it: apiVersion and kind required and well-formed, and metadata checked as ObjectMeta with
 * path-segment names, a namespace only when one is given, and a stand-in name when none is.
 *
 * The custom object's own root metadata is not checked here (object-meta.ts does that).
 */
import { type FieldError, FieldPath, invalid, required } from "./field-errors.ts";
import { isDNS1035Label } from "./names.ts";
import { validateObjectMeta } from "./object-meta.ts";
import { sanitizeSchema } from "./schema-sanitize.ts";
import type { JSONSchemaProps } from "./schema-types.ts";

type Json = Record<string, unknown>;

function isMap(x: unknown): x is Json {
  return x !== null && typeof x === "object" && !Array.isArray(x);
}

/** Go's `%T` of a decoded JSON value, for "expected object, got <type>". */
function goTypeName(v: unknown): string {
  if (v === null || v === undefined) return "<nil>";
  if (typeof v === "string") return "string";
  if (typeof v === "boolean") return "bool";
  if (typeof v === "number") return Number.isInteger(v) ? "int64" : "float64";
  if (Array.isArray(v)) return "[]interface {}";
  return "map[string]interface {}";
}

function validateEmbedded(path: FieldPath, x: Json): FieldError[] {
  const errs: FieldError[] = [];
  if (!Object.hasOwn(x, "apiVersion")) errs.push(required(path.child("apiVersion"), "must not be empty"));
  if (!Object.hasOwn(x, "kind")) errs.push(required(path.child("kind"), "must not be empty"));
  for (const [k, v] of Object.entries(x)) {
    if (k === "apiVersion") {
      if (typeof v !== "string") errs.push(invalid(path.child("apiVersion"), v, "must be a string"));
      else if (v === "") errs.push(invalid(path.child("apiVersion"), v, "must not be empty"));
      else if (v.split("/").length > 2)
        errs.push(invalid(path.child("apiVersion"), v, `unexpected GroupVersion string: ${v}`));
    } else if (k === "kind") {
      if (typeof v !== "string") errs.push(invalid(path.child("kind"), v, "must be a string"));
      else if (v === "") errs.push(invalid(path.child("kind"), v, "must not be empty"));
      else {
        const e = isDNS1035Label(v.toLowerCase());
        if (e.length > 0)
          errs.push(invalid(path.child("kind"), v, "may have mixed case, but should otherwise match: " + e.join(",")));
      }
    } else if (k === "metadata") {
      if (v !== null && !isMap(v)) {
        errs.push(invalid(path.child("metadata"), v, `invalid metadata: expected object, got ${goTypeName(v)}`));
      } else {
        const meta = { ...(v ?? {}) } as Json;
        if (typeof meta["name"] !== "string" || meta["name"] === "") meta["name"] = "fakename";
        const namespaced = typeof meta["namespace"] === "string" && meta["namespace"] !== "";
        for (const e of validateObjectMeta(meta, { namespaced, nameRule: "pathSegment" })) {
          // validateObjectMeta roots its paths at "metadata"; re-root them under this embedded object.
          errs.push({ ...e, field: path.toString() + "." + e.field });
        }
      }
    }
  }
  return errs;
}

function walk(path: FieldPath, x: unknown, s: JSONSchemaProps | undefined): FieldError[] {
  if (!s) return [];
  const errs: FieldError[] = [];
  if (isMap(x)) {
    if (s["x-kubernetes-embedded-resource"] === true) errs.push(...validateEmbedded(path, x));
    const ap = s.additionalProperties;
    for (const [k, v] of Object.entries(x)) {
      const prop = s.properties?.[k];
      if (prop) errs.push(...walk(path.child(k), v, prop));
      else if (ap && typeof ap === "object") errs.push(...walk(path.key(k), v, ap));
    }
  } else if (Array.isArray(x)) {
    const items = s.items && !Array.isArray(s.items) ? s.items : undefined;
    for (let i = 0; i < x.length; i++) errs.push(...walk(path.index(i), x[i], items));
  }
  return errs;
}

/** schemaobjectmeta.Validate for a custom object: every embedded resource under the root. */
export function validateEmbeddedResources(rawSchema: JSONSchemaProps, obj: unknown): FieldError[] {
  if (!isMap(obj)) return [];
  const schema = sanitizeSchema(rawSchema);
  const errs: FieldError[] = [];
  const ap = schema.additionalProperties;
  for (const [k, v] of Object.entries(obj)) {
    const prop = schema.properties?.[k];
    if (prop) errs.push(...walk(FieldPath.of(k), v, prop));
    else if (ap && typeof ap === "object") errs.push(...walk(FieldPath.of("").key(k), v, ap));
  }
  return errs;
}
