/**
 * The custom-object admission path of kube-apiserver in two calls, for the server's write handlers.
 *
 * Expected flow (create, update, patch of a custom resource):
 * 1. `admitCustomObject(schema, obj)`: what decoding does to the body (apply defaults, prune unknown
 *    fields, drop non-nullable nulls); returns the pruned fields' paths for `fieldValidation`
 *    (Warn: `unknown field "spec.foo"` warnings, Strict: a 400/422 as the server chooses).
 * 2. `validateTypeMeta` (when it fails, only its errors are reported), metadata checks (object-meta.ts),
 *    then `validateCustomResource(schema, obj, { oldObj, scale, rules })`: schema, scale replicas,
 *    embedded resources, list-type uniqueness, then CEL rules through the extension point, in the
 *    real strategy's order.
 * For a /status write, call `validateCustomResource(statusSchema, obj.status, { fieldPrefix: "status" })`
 * then `validateScaleStatus(obj, scale)`, as customResourceValidator.ValidateStatusUpdate does.
 *
 * Guarantees: pure apart from the documented mutation of step 1; never throws.
 */

import { validateEmbeddedResources } from "./embedded-meta.ts";
import type { FieldError } from "./field-errors.ts";
import { invalid } from "./field-errors.ts";
import { goNumberV, isGoInt64 } from "./go-format.ts";
import { validateListSetsAndMaps } from "./list-types.ts";
import { applyDefaults } from "./schema-default.ts";
import { pruneUnknownFields } from "./schema-prune.ts";
import type { JSONSchemaProps } from "./schema-types.ts";
import {
  BLOCKING_ERROR_TYPES,
  type CustomObjectValidationOptions,
  RULES_SKIPPED_MESSAGE,
  validateCustomObject,
} from "./schema-validate.ts";

export interface CustomResourceValidationOptions extends CustomObjectValidationOptions {
  /** The version's scale subresource: its replicas paths are checked after the schema, as the real server does. */
  scale?: ScalePaths;
}

/** Defaults, prunes and drops non-nullable nulls in place; returns the removed unknown fields' paths. */
export function admitCustomObject(schema: JSONSchemaProps | undefined, obj: unknown): string[] {
  applyDefaults(schema, obj);
  return pruneUnknownFields(schema, obj);
}

/** Every error the real server's custom resource strategy reports for `obj` (metadata excepted). */
export function validateCustomResource(
  schema: JSONSchemaProps,
  obj: unknown,
  options: CustomResourceValidationOptions = {},
): FieldError[] {
  const { rules, scale, ...schemaOptions } = options;
  const errs = validateCustomObject(schema, obj, schemaOptions);
  if (options.fieldPrefix !== undefined) return rules ? withRules(errs, schema, obj, options) : errs;
  errs.push(...validateScaleSpec(obj, scale), ...validateScaleStatus(obj, scale));
  errs.push(...validateEmbeddedResources(schema, obj));
  errs.push(...validateListSetsAndMaps(schema, obj));
  return rules ? withRules(errs, schema, obj, options) : errs;
}

function withRules(
  errs: FieldError[],
  schema: JSONSchemaProps,
  obj: unknown,
  options: CustomObjectValidationOptions,
): FieldError[] {
  if (errs.some((e) => BLOCKING_ERROR_TYPES.has(e.type))) errs.push(invalid("<nil>", null, RULES_SKIPPED_MESSAGE));
  else errs.push(...options.rules!(schema, obj, options.oldObj));
  return errs;
}

/** The CRD's scale subresource paths (`.spec.replicas` style). */
export interface ScalePaths {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string | null;
}

const MAX_INT32 = 2 ** 31 - 1;

/** Go's `%v` of a decoded JSON value (fmt's map[k:v] and [a b] forms). */
function goV(v: unknown): string {
  if (v === null || v === undefined) return "<nil>";
  if (typeof v === "string") return v;
  if (typeof v === "number") return goNumberV(v);
  if (typeof v === "boolean") return String(v);
  if (Array.isArray(v)) return "[" + v.map(goV).join(" ") + "]";
  const rec = v as Record<string, unknown>;
  return (
    "map[" +
    Object.keys(rec)
      .sort()
      .map((k) => `${k}:${goV(rec[k])}`)
      .join(" ") +
    "]"
  );
}

/** Go's `%T` of a decoded JSON value. */
function goT(v: unknown): string {
  if (v === null || v === undefined) return "<nil>";
  if (typeof v === "string") return "string";
  if (typeof v === "boolean") return "bool";
  if (typeof v === "number") return isGoInt64(v) ? "int64" : "float64";
  return Array.isArray(v) ? "[]interface {}" : "map[string]interface {}";
}

/** unstructured.NestedFieldNoCopy + a type check: the value, absent, or the accessor error Go reports. */
function nested(
  obj: unknown,
  path: string,
  want: "int64" | "string",
): { value: unknown } | { error: string } | undefined {
  const fields = path.replace(/^\./, "").split(".");
  let cur: unknown = obj;
  for (let i = 0; i < fields.length; i++) {
    if (cur === null || typeof cur !== "object" || Array.isArray(cur)) {
      const at = "." + fields.slice(0, i).join(".");
      return { error: `${at} accessor error: ${goV(cur)} is of the type ${goT(cur)}, expected map[string]interface{}` };
    }
    const rec = cur as Record<string, unknown>;
    if (!Object.hasOwn(rec, fields[i]!)) return undefined;
    cur = rec[fields[i]!];
  }
  const ok = want === "int64" ? typeof cur === "number" && isGoInt64(cur) : typeof cur === "string";
  if (!ok)
    return { error: `.${fields.join(".")} accessor error: ${goV(cur)} is of the type ${goT(cur)}, expected ${want}` };
  return { value: cur };
}

function replicasErrors(obj: unknown, path: string): FieldError[] {
  const got = nested(obj, path, "int64");
  if (got === undefined) return [];
  if ("error" in got) return [invalid(path, 0, got.error)];
  const n = got.value as number;
  if (n < 0) return [invalid(path, n, "should be a non-negative integer")];
  if (n > MAX_INT32) return [invalid(path, n, `should be less than or equal to ${MAX_INT32}`)];
  return [];
}

/** ValidateScaleSpec: the replicas at specReplicasPath must be an int32 >= 0 (field is the raw path). */
export function validateScaleSpec(obj: unknown, scale: ScalePaths | undefined): FieldError[] {
  return scale ? replicasErrors(obj, scale.specReplicasPath) : [];
}

/** ValidateScaleStatus: the same for statusReplicasPath, and labelSelectorPath must hold a string. */
export function validateScaleStatus(obj: unknown, scale: ScalePaths | undefined): FieldError[] {
  if (!scale) return [];
  const errs = replicasErrors(obj, scale.statusReplicasPath);
  if (scale.labelSelectorPath) {
    const got = nested(obj, scale.labelSelectorPath, "string");
    if (got && "error" in got) errs.push(invalid(scale.labelSelectorPath, "", got.error));
  }
  return errs;
}

/** ValidateTypeMeta: kind and apiVersion must be the served ones (checked before anything else). */
export function validateTypeMeta(obj: unknown, group: string, version: string, kind: string): FieldError[] {
  const rec = (obj !== null && typeof obj === "object" ? obj : {}) as Record<string, unknown>;
  const errs: FieldError[] = [];
  const gotKind = typeof rec["kind"] === "string" ? rec["kind"] : "";
  const gotVersion = typeof rec["apiVersion"] === "string" ? rec["apiVersion"] : "";
  if (gotKind !== kind) errs.push(invalid("kind", gotKind, `must be ${kind}`));
  if (gotVersion !== `${group}/${version}`) errs.push(invalid("apiVersion", gotVersion, `must be ${group}/${version}`));
  return errs;
}
