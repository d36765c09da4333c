/**
 * Structural defaulting of custom objects, as kube-apiserver applies it while decoding a request body
 * or a stored object (apiextensions-apiserver `pkg/apiserver/schema/defaulting/algorithm.go`).
 *
 * Guarantees (mutates `obj` in place):
 * - A property with a `default` that is missing, or `null` where the property is not nullable, gets
 *   a deep copy of its default; then defaulting continues inside every property value.
 * - Inside arrays (`items`) and maps (`additionalProperties`), a `null` element whose schema is not
 *   nullable is replaced by that schema's default (left null when there is none).
 * - Defaults are applied top-down, so an object default is itself defaulted further.
 * Caveats: a `null` default counts as no default, as in Go (`Default.Object == nil`).
 */

import { setOwn } from "../machinery/own-properties.ts";
import { sanitizeSchema } from "./schema-sanitize.ts";
import type { JSONSchemaProps } from "./schema-types.ts";

type Json = Record<string, unknown>;

function isMap(x: unknown): x is Json {
  return x !== null && typeof x === "object" && !Array.isArray(x);
}

function hasDefault(s: JSONSchemaProps | undefined): s is JSONSchemaProps {
  return s !== undefined && s.default !== undefined && s.default !== null;
}

function isNonNullableNull(x: unknown, s: JSONSchemaProps | undefined): boolean {
  return x === null && s !== undefined && s.nullable !== true;
}

function copyDefault(s: JSONSchemaProps | undefined): unknown {
  return s?.default === undefined ? null : structuredClone(s.default);
}

/** Applies the schema's defaults to `obj`, in place. */
export function applyDefaults(schema: JSONSchemaProps | undefined, obj: unknown): void {
  if (schema !== undefined && schema !== null) defaultValue(sanitizeSchema(schema), obj);
}

function defaultValue(schema: JSONSchemaProps | undefined, obj: unknown): void {
  if (schema === undefined) return;
  if (isMap(obj)) {
    const props = schema.properties ?? {};
    for (const [k, prop] of Object.entries(props)) {
      if (!hasDefault(prop)) continue;
      if (!Object.hasOwn(obj, k) || isNonNullableNull(obj[k], prop)) setOwn(obj, k, copyDefault(prop));
    }
    const ap = schema.additionalProperties;
    const apSchema = ap !== undefined && ap !== null && typeof ap !== "boolean" ? ap : undefined;
    for (const k of Object.keys(obj)) {
      const prop = props[k];
      if (prop) {
        defaultValue(prop, obj[k]);
      } else if (ap !== undefined && ap !== null) {
        if (isNonNullableNull(obj[k], apSchema)) obj[k] = copyDefault(apSchema);
        defaultValue(apSchema, obj[k]);
      }
    }
  } else if (Array.isArray(obj)) {
    const items = schema.items && !Array.isArray(schema.items) ? schema.items : undefined;
    for (let i = 0; i < obj.length; i++) {
      if (isNonNullableNull(obj[i], items)) obj[i] = copyDefault(items);
      defaultValue(items, obj[i]);
    }
  }
}
