/**
 * Decoded JSON -> CEL values, typed by the structural schema as apiextensions-apiserver's
 * `UnstructuredToVal` types them (apiserver `pkg/cel/common/values.go`, `schemas.go`).
 *
 * - `integer` -> int (bigint), `number` -> double (a JSON `3` in a number field is `3.0`),
 *   int-or-string -> int or string, untyped numbers (preserve-unknown-fields) -> int when integral.
 * - objects with `properties` expose only the declared properties, under their CEL-escaped names
 *   (`foo-bar` is `self.foo__dash__bar`, `namespace` is `self.__namespace__`); names that cannot be
 *   escaped are not reachable, as in the real server.
 * - objects with `additionalProperties` are maps keyed by the raw keys (`self['foo-bar']`).
 * - the resource root and embedded resources expose `apiVersion`, `kind` and of `metadata` only
 *   `name` and `generateName` (model.WithTypeAndObjectMeta).
 * - `format: byte` strings are bytes; `date`/`date-time` strings are timestamps and `duration` strings
 *   durations (a value CEL cannot parse stays a string; the schema's format check reports it).
 */
import { type CelInput, celEnv, isCelError, parse, plan } from "@bufbuild/cel";
import type { JSONSchemaProps } from "../schema-types.ts";

/** CEL's reserved words: a property with one of these names is reached as `__name__` (cel.Escape). */
const RESERVED = new Set([
  "true",
  "false",
  "null",
  "in",
  "as",
  "break",
  "const",
  "continue",
  "else",
  "for",
  "function",
  "if",
  "import",
  "let",
  "loop",
  "package",
  "namespace",
  "return",
  "var",
  "void",
  "while",
]);

/** cel.Escape: the CEL name of a property, or undefined when the property is not reachable from CEL. */
export function escapePropertyName(name: string): string | undefined {
  if (name.length === 0 || (name[0]! >= "0" && name[0]! <= "9")) return undefined;
  if (RESERVED.has(name)) return `__${name}__`;
  if (!/^[a-zA-Z0-9_./-]+$/.test(name)) return undefined;
  return name.replace(/__|[-./]/g, (m) =>
    m === "__" ? "__underscores__" : m === "-" ? "__dash__" : m === "." ? "__dot__" : "__slash__",
  );
}

/** The schema's declared properties under their CEL names (raw name by CEL name). */
export function celPropertyNames(schema: JSONSchemaProps): Map<string, string> {
  const out = new Map<string, string>();
  for (const name of Object.keys(schema.properties ?? {})) {
    const escaped = escapePropertyName(name);
    if (escaped !== undefined) out.set(escaped, name);
  }
  return out;
}

/** The schema type name the real server puts in rule errors (`sts.Type`). */
export function schemaTypeName(schema: JSONSchemaProps | undefined): string {
  return typeof schema?.type === "string" ? schema.type : "";
}

/** CEL's own conversions, planned once: they build the timestamp/duration values CEL compares. */
const CONVERSION_ENV = celEnv();
const toTimestamp = plan(CONVERSION_ENV, parse("timestamp(v)")) as (b: { v: string }) => unknown;
const toDuration = plan(CONVERSION_ENV, parse("duration(v)")) as (b: { v: string }) => unknown;

function formattedString(value: string, format: string | undefined): CelInput {
  let converted: unknown;
  if (format === "date-time") converted = toTimestamp({ v: value });
  else if (format === "date") converted = toTimestamp({ v: `${value}T00:00:00Z` });
  else if (format === "duration") converted = toDuration({ v: value });
  else if (format === "byte") return Buffer.from(value, "base64");
  else return value;
  return isCelError(converted) ? value : (converted as CelInput);
}

const OBJECT_META_FIELDS = ["name", "generateName"];

/** Whether a node is a resource root for CEL (the custom resource itself or an embedded resource). */
export function isResourceNode(schema: JSONSchemaProps | undefined, isRoot: boolean): boolean {
  return isRoot || schema?.["x-kubernetes-embedded-resource"] === true;
}

/** The CEL value of `value` under `schema` (see the module comment for the mapping). */
export function toCelValue(value: unknown, schema: JSONSchemaProps | undefined, resourceRoot = false): CelInput {
  if (value === null || value === undefined) return null;
  if (schema?.["x-kubernetes-int-or-string"] === true) {
    if (typeof value === "number") return Number.isInteger(value) ? BigInt(value) : value;
  }
  switch (typeof value) {
    case "boolean":
      return value;
    case "number":
      if (schema?.type === "number") return value;
      return Number.isInteger(value) ? BigInt(value) : value;
    case "string":
      return schema?.type === "string" ? formattedString(value, schema.format) : value;
    case "object":
      break;
    default:
      return null;
  }
  if (Array.isArray(value)) {
    const items = schema?.items !== undefined && !Array.isArray(schema.items) ? schema.items : undefined;
    return value.map((v) => toCelValue(v, items));
  }
  return objectValue(value as Record<string, unknown>, schema, isResourceNode(schema, resourceRoot));
}

function objectValue(obj: Record<string, unknown>, schema: JSONSchemaProps | undefined, resource: boolean): CelInput {
  const out = new Map<string, CelInput>();
  const props = schema?.properties;
  const additional = schema?.additionalProperties;
  if (props && Object.keys(props).length > 0) {
    for (const [celName, raw] of celPropertyNames(schema)) {
      if (Object.hasOwn(obj, raw)) out.set(celName, toCelValue(obj[raw], props[raw]));
    }
  } else if (additional !== undefined && additional !== false) {
    const itemSchema = typeof additional === "object" ? additional : undefined;
    for (const [k, v] of Object.entries(obj)) out.set(k, toCelValue(v, itemSchema));
  } else if (!resource) {
    // Untyped (preserve-unknown-fields) objects are dynamic maps of everything they hold.
    for (const [k, v] of Object.entries(obj)) out.set(k, toCelValue(v, undefined));
  }
  if (resource) {
    for (const k of ["apiVersion", "kind"]) {
      if (typeof obj[k] === "string") out.set(k, obj[k] as string);
    }
    const meta = obj["metadata"];
    if (meta !== null && typeof meta === "object" && !Array.isArray(meta)) {
      const m = new Map<string, CelInput>();
      for (const k of OBJECT_META_FIELDS) {
        const v = (meta as Record<string, unknown>)[k];
        if (typeof v === "string") m.set(k, v);
      }
      out.set("metadata", m);
    }
  }
  return out;
}
