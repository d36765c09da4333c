/**
 * A well-typed view of an untrusted OpenAPI schema. kube-apiserver decodes CRDs into Go structs, so a
 * schema with `type: 5` or `properties: []` never reaches its validation (the decode fails first). Our
 * server hands validation raw JSON; this module gives every validation entry point a JSONSchemaProps
 * whose fields have the types the code relies on, so no input can make it throw.
 *
 * Guarantees: fields of the wrong JSON type are dropped (never coerced); the result for a given input
 * object is cached by identity, so callers that cache by schema identity (the compiled validator) keep
 * their cache hits. The name-keyed maps (`properties`, `patternProperties`, `definitions`,
 * `dependencies`) have no prototype: walks look them up with keys of the validated object, and a key
 * such as `constructor` or `__proto__` must find nothing rather than Object.prototype's member.
 * Caveats: a malformed schema is validated as if the malformed fields were absent, where the real server
 * would have answered 400 at decode time.
 */
import type { JSONSchemaProps, ValidationRule } from "./schema-types.ts";

type Json = Record<string, unknown>;

const sanitized = new WeakMap<object, JSONSchemaProps>();

const STRING_FIELDS = ["type", "format", "pattern", "description", "title", "id", "$schema", "$ref"] as const;
const BOOLEAN_FIELDS = [
  "nullable",
  "exclusiveMaximum",
  "exclusiveMinimum",
  "uniqueItems",
  "x-kubernetes-preserve-unknown-fields",
  "x-kubernetes-embedded-resource",
  "x-kubernetes-int-or-string",
] as const;
const NUMBER_FIELDS = ["maximum", "minimum", "multipleOf"] as const;
const INTEGER_FIELDS = ["maxLength", "minLength", "maxItems", "minItems", "maxProperties", "minProperties"] as const;
const SCHEMA_MAP_FIELDS = ["properties", "patternProperties", "definitions"] as const;
const SCHEMA_LIST_FIELDS = ["allOf", "anyOf", "oneOf"] as const;

function isMap(x: unknown): x is Json {
  return x !== null && typeof x === "object" && !Array.isArray(x);
}

function strings(x: unknown): string[] | undefined {
  return Array.isArray(x) ? x.filter((v): v is string => typeof v === "string") : undefined;
}

function schemaOrBool(x: unknown): JSONSchemaProps | boolean | undefined {
  if (typeof x === "boolean") return x;
  return isMap(x) ? sanitizeSchema(x) : undefined;
}

function rule(x: unknown): ValidationRule | undefined {
  if (!isMap(x)) return undefined;
  const r: ValidationRule = { rule: typeof x["rule"] === "string" ? x["rule"] : "" };
  for (const k of ["message", "messageExpression", "reason", "fieldPath"] as const) {
    if (typeof x[k] === "string") r[k] = x[k] as string;
  }
  if (typeof x["optionalOldSelf"] === "boolean") r.optionalOldSelf = x["optionalOldSelf"];
  return r;
}

/** The well-typed view of `raw` (the same object for the same input). */
export function sanitizeSchema(raw: unknown): JSONSchemaProps {
  if (!isMap(raw)) return {};
  const cached = sanitized.get(raw);
  if (cached) return cached;
  const out: Record<string, unknown> = {};
  // Registered first so a schema reachable from itself terminates.
  sanitized.set(raw, out as JSONSchemaProps);
  for (const k of STRING_FIELDS) if (typeof raw[k] === "string") out[k] = raw[k];
  for (const k of BOOLEAN_FIELDS) if (typeof raw[k] === "boolean") out[k] = raw[k];
  for (const k of NUMBER_FIELDS) if (typeof raw[k] === "number" && Number.isFinite(raw[k])) out[k] = raw[k];
  for (const k of INTEGER_FIELDS) if (typeof raw[k] === "number" && Number.isInteger(raw[k])) out[k] = raw[k];
  if (Object.hasOwn(raw, "default")) out["default"] = raw["default"];
  if (Object.hasOwn(raw, "example")) out["example"] = raw["example"];
  if (Array.isArray(raw["enum"])) out["enum"] = raw["enum"];
  const required = strings(raw["required"]);
  if (required) out["required"] = required;
  for (const k of SCHEMA_MAP_FIELDS) {
    const m = raw[k];
    if (isMap(m)) {
      const mapped: Record<string, JSONSchemaProps> = Object.create(null);
      for (const [name, v] of Object.entries(m)) if (isMap(v)) mapped[name] = sanitizeSchema(v);
      out[k] = mapped;
    }
  }
  for (const k of SCHEMA_LIST_FIELDS) {
    if (Array.isArray(raw[k])) out[k] = (raw[k] as unknown[]).filter(isMap).map(sanitizeSchema);
  }
  if (isMap(raw["not"])) out["not"] = sanitizeSchema(raw["not"]);
  const items = raw["items"];
  if (Array.isArray(items)) out["items"] = items.filter(isMap).map(sanitizeSchema);
  else if (isMap(items)) out["items"] = sanitizeSchema(items);
  const ap = schemaOrBool(raw["additionalProperties"]);
  if (ap !== undefined) out["additionalProperties"] = ap;
  const ai = schemaOrBool(raw["additionalItems"]);
  if (ai !== undefined) out["additionalItems"] = ai;
  if (isMap(raw["dependencies"])) {
    const deps: Record<string, JSONSchemaProps | string[]> = Object.create(null);
    for (const [name, v] of Object.entries(raw["dependencies"])) {
      if (Array.isArray(v)) deps[name] = strings(v)!;
      else if (isMap(v)) deps[name] = sanitizeSchema(v);
    }
    out["dependencies"] = deps;
  }
  if (isMap(raw["externalDocs"])) {
    const docs = raw["externalDocs"];
    out["externalDocs"] = {
      ...(typeof docs["description"] === "string" ? { description: docs["description"] } : {}),
      ...(typeof docs["url"] === "string" ? { url: docs["url"] } : {}),
    };
  }
  const keys = strings(raw["x-kubernetes-list-map-keys"]);
  if (keys) out["x-kubernetes-list-map-keys"] = keys;
  for (const k of ["x-kubernetes-list-type", "x-kubernetes-map-type"] as const) {
    if (typeof raw[k] === "string") out[k] = raw[k];
  }
  if (Array.isArray(raw["x-kubernetes-validations"])) {
    out["x-kubernetes-validations"] = (raw["x-kubernetes-validations"] as unknown[])
      .map(rule)
      .filter((r): r is ValidationRule => r !== undefined);
  }
  return out as JSONSchemaProps;
}
