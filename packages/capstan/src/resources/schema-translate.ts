/**
 * TypeBox (JSON Schema 2020-12 flavoured) -> the structural OpenAPI v3 schema a CRD needs.
 *
 * Expected flow: `translateSchema(schema, path, subject)` walks the TypeBox schema once, top-down,
 * rewriting what TypeBox emits into what kube-apiserver accepts, and throws a
 * {@link SchemaTranslationError} naming the field at the first construct that has no faithful
 * translation.
 *
 * Guarantees:
 * - The output only uses keywords `JSONSchemaProps` knows, never `$id`, `$schema`, `const`,
 *   `patternProperties`, tuple `items`, numeric `exclusiveMinimum`/`exclusiveMaximum` or
 *   `additionalProperties: false`; TypeBox's non-enumerable `~kind`/`~optional` markers never leak.
 * - Every field, array item and map value has a `type`, or `x-kubernetes-int-or-string` /
 *   `x-kubernetes-preserve-unknown-fields` (the structural rule of
 *   apiextensions-apiserver `pkg/apiserver/schema/validation.go`).
 * - Nothing is silently weakened: a constraint the server would drop or refuse (an unknown
 *   `format`, `uniqueItems`, a lookahead in a `pattern`, a union of object shapes) is an error, not a no-op.
 * - The input is never mutated.
 *
 * Assumptions: the input is JSON-shaped (what `Type.*` builders produce, possibly with
 * `Type.Unsafe` escape hatches); it is not recursive (`Type.Cyclic` emits `$ref`, refused).
 *
 * Caveats:
 * - `T | null` becomes `nullable: true`, but a nullable enum is refused: kube-openapi checks `enum`
 *   even for a null value, so `null` would be rejected anyway (use `Type.Optional` instead).
 * - Defaults are checked against the translated schema for type, enum, bounds and required
 *   properties only; CEL rules are not evaluated here (the server does that on registration).
 */
import { Type } from "typebox";
import {
  INTEGER_FORMATS,
  type KubeSchema,
  NUMBER_FORMATS,
  STRING_FORMATS,
  VALIDATION_REASONS,
  type ValidationRule,
} from "./kube-schema.ts";

/** A schema that Kubernetes would refuse or silently weaken, with the field it was found at. */
export class SchemaTranslationError extends Error {
  override readonly name = "SchemaTranslationError";
  constructor(
    /** The object path of the offending field, e.g. `spec.ports[*].name`. */
    readonly field: string,
    readonly reason: string,
    subject: string,
  ) {
    super(`${subject} ${field}: ${reason}`);
  }
}

const OPENAPI_TYPES = new Set(["string", "number", "integer", "boolean", "array", "object"]);

/** Keywords that only annotate; the CRD has no field for them, so they are dropped. */
const DROPPED_ANNOTATIONS = new Set(["$id", "$schema", "$comment", "$anchor", "readOnly", "writeOnly", "deprecated"]);

/** Copied as they are: same meaning in JSON Schema and in `JSONSchemaProps`. */
const COPIED = new Set([
  "title",
  "description",
  "example",
  "externalDocs",
  "minLength",
  "maxLength",
  "minItems",
  "maxItems",
  "minProperties",
  "maxProperties",
  "multipleOf",
  "minimum",
  "maximum",
  "nullable",
]);

/** TypeBox emits a string-keyed `Type.Record` as this single pattern property. */
const ANY_KEY_PATTERN = "^.*$";

interface Context {
  subject: string;
}

/**
 * Translates one TypeBox schema into a CRD schema node.
 * @param path the object path of this node as users see it (`spec`, `status.conditions[*]`).
 * @param subject what the error messages start with, usually the kind (`ExchangeRate`).
 */
export function translateSchema(schema: unknown, path: string, subject: string): KubeSchema {
  return translate(schema, path, { subject });
}

function fail(ctx: Context, path: string, reason: string): never {
  throw new SchemaTranslationError(path, reason, ctx.subject);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Enumerable own keys only: TypeBox keeps its `~kind`/`~optional` markers non-enumerable. */
function keysOf(node: Record<string, unknown>): string[] {
  return Object.keys(node).filter((k) => !k.startsWith("~"));
}

function translate(node: unknown, path: string, ctx: Context): KubeSchema {
  if (!isRecord(node)) fail(ctx, path, `is not a schema object (got ${JSON.stringify(node)})`);
  if ("$ref" in node || "$defs" in node || "definitions" in node) {
    fail(
      ctx,
      path,
      "schema references ($ref/$defs, e.g. from Type.Ref or Type.Cyclic) are not supported by CRDs; inline the schema (recursive types cannot be expressed)",
    );
  }
  // TypeBox keeps these as hidden keys; dropping them silently would weaken what the author wrote.
  if (Object.hasOwn(node, "~refine")) {
    fail(
      ctx,
      path,
      "Type.Refine predicates are JavaScript functions the API server cannot run; express the rule as a CEL rule (Kube.validations)",
    );
  }
  if (Object.hasOwn(node, "~codec")) {
    fail(
      ctx,
      path,
      "Type.Codec transforms values in JavaScript, but objects from the API server are plain JSON; use the wire type",
    );
  }
  if ("not" in node) {
    fail(ctx, path, "`not` is not supported; express the restriction as an x-kubernetes-validations rule");
  }
  if ("oneOf" in node) {
    fail(
      ctx,
      path,
      "`oneOf` is not supported; use a union of literals (an enum) or a single object with optional fields",
    );
  }
  if (Array.isArray(node.items) || "prefixItems" in node) {
    fail(
      ctx,
      path,
      "tuples are not supported by CRDs (items must be a single schema); use an object with named fields",
    );
  }
  if ("anyOf" in node) return translateUnion(node, path, ctx);
  if ("allOf" in node) return translateIntersection(node, path, ctx);
  const seed: KubeSchema = {};
  // Type.Unknown()/Type.Any() emit `{}`: the faithful translation is "keep any value".
  if (!("type" in node) && (Type.IsUnknown(node) || Type.IsAny(node))) {
    seed["x-kubernetes-preserve-unknown-fields"] = true;
  }
  return translateNode(node, path, ctx, seed);
}

/** Translates a node without `anyOf`/`allOf`; `seed` carries what a union or intersection already decided. */
function translateNode(node: Record<string, unknown>, path: string, ctx: Context, seed: KubeSchema): KubeSchema {
  const out: KubeSchema = { ...seed };
  readType(node, path, ctx, out);
  for (const key of keysOf(node)) {
    const value = node[key];
    if (key === "type" || key === "exclusiveMinimum" || key === "exclusiveMaximum") continue;
    if (DROPPED_ANNOTATIONS.has(key)) continue;
    if (COPIED.has(key)) {
      (out as Record<string, unknown>)[key] = value;
      continue;
    }
    if (key.startsWith("x-kubernetes-")) {
      copyExtension(key, value, path, ctx, out);
      continue;
    }
    switch (key) {
      case "examples":
        if (Array.isArray(value) && value.length > 0 && !("example" in node)) out.example = value[0];
        break;
      case "default":
        out.default = value;
        break;
      case "const":
        out.enum = [value];
        break;
      case "enum":
        if (!Array.isArray(value) || value.length === 0) fail(ctx, path, "enum must be a non-empty array");
        out.enum = [...value];
        break;
      case "format":
        out.format = value as string;
        break;
      case "pattern":
        out.pattern = checkPattern(value, path, ctx);
        break;
      case "required":
        if (!Array.isArray(value) || value.some((v) => typeof v !== "string")) {
          fail(ctx, path, "required must be an array of property names");
        }
        if (value.length > 0) out.required = [...(value as string[])];
        break;
      case "properties":
        if (!isRecord(value)) fail(ctx, path, "properties must be an object");
        out.properties = {};
        for (const [name, child] of Object.entries(value)) {
          out.properties[name] = translate(child, joinPath(path, name), ctx);
        }
        break;
      case "items":
        out.items = translate(value, `${path}[*]`, ctx);
        break;
      case "additionalProperties":
      case "patternProperties":
        // Handled below, once properties are known.
        break;
      case "uniqueItems":
        if (value === true) {
          fail(
            ctx,
            path,
            'uniqueItems is forbidden in CRDs (quadratic validation cost); use { "x-kubernetes-list-type": "set" } instead',
          );
        }
        break;
      case "additionalItems":
        fail(ctx, path, "additionalItems is not supported by CRDs");
        break;
      case "dependencies":
      case "dependentRequired":
      case "dependentSchemas":
        fail(ctx, path, `${key} is not supported by CRDs; use an x-kubernetes-validations rule`);
        break;
      default:
        fail(
          ctx,
          path,
          `keyword "${key}" has no CRD equivalent (JSONSchemaProps would drop or reject it); remove it or use x-kubernetes-validations`,
        );
    }
  }
  translateBounds(node, out);
  translateMapShape(node, path, ctx, out);
  for (const name of out.required ?? []) {
    // The server prunes undeclared fields before validating, so such a field could never be present.
    if (
      out.properties?.[name] === undefined &&
      out.additionalProperties === undefined &&
      !out["x-kubernetes-preserve-unknown-fields"]
    ) {
      fail(ctx, path, `required property "${name}" is not declared in properties, so no object could ever be valid`);
    }
  }
  inferType(out, path, ctx);
  checkFormat(out, path, ctx);
  checkShape(out, path, ctx);
  if ("default" in out) checkDefault(out.default, out, `${path} (default)`, ctx);
  return out;
}

function joinPath(path: string, name: string): string {
  const simple = /^[A-Za-z_$][\w$]*$/.test(name);
  if (path === "") return simple ? name : `[${JSON.stringify(name)}]`;
  return simple ? `${path}.${name}` : `${path}[${JSON.stringify(name)}]`;
}

function readType(node: Record<string, unknown>, path: string, ctx: Context, out: KubeSchema): void {
  if (!("type" in node)) return;
  let type = node.type;
  if (Array.isArray(type)) {
    const nonNull = type.filter((t) => t !== "null");
    if (nonNull.length !== 1) {
      fail(ctx, path, `type ${JSON.stringify(type)} is not structural: Kubernetes needs exactly one type per field`);
    }
    if (nonNull.length !== type.length) out.nullable = true;
    type = nonNull[0];
  }
  if (type === "null") {
    fail(ctx, path, "type null alone is not allowed in CRDs; make the field Type.Optional or T | null");
  }
  if (typeof type !== "string" || !OPENAPI_TYPES.has(type)) {
    fail(
      ctx,
      path,
      `type ${JSON.stringify(type)} cannot be stored in a Kubernetes object (JSON types only: ${[...OPENAPI_TYPES].join(", ")})`,
    );
  }
  out.type = type;
}

/** JSON Schema's numeric `exclusiveMinimum: n` is OpenAPI v3.0's `minimum: n, exclusiveMinimum: true`. */
function translateBounds(node: Record<string, unknown>, out: KubeSchema): void {
  for (const [exclusiveKey, boundKey, stricter] of [
    ["exclusiveMinimum", "minimum", (a: number, b: number) => a > b],
    ["exclusiveMaximum", "maximum", (a: number, b: number) => a < b],
  ] as const) {
    const exclusive = node[exclusiveKey];
    if (exclusive === undefined) continue;
    if (typeof exclusive === "boolean") {
      // Already OpenAPI v3.0 style (from a Type.Unsafe schema).
      if (exclusive) out[exclusiveKey] = true;
      continue;
    }
    const bound = out[boundKey];
    if (typeof exclusive === "number" && !(typeof bound === "number" && stricter(bound, exclusive))) {
      out[boundKey] = exclusive;
      out[exclusiveKey] = true;
    }
  }
}

/** `additionalProperties` and `Type.Record`'s `patternProperties` -> the CRD's map form. */
function translateMapShape(node: Record<string, unknown>, path: string, ctx: Context, out: KubeSchema): void {
  const hasProperties = out.properties !== undefined && Object.keys(out.properties).length > 0;
  const pattern = node.patternProperties;
  if (pattern !== undefined) {
    const keys = isRecord(pattern) ? Object.keys(pattern) : [];
    if (!isRecord(pattern) || keys.length !== 1 || keys[0] !== ANY_KEY_PATTERN) {
      fail(
        ctx,
        path,
        `pattern properties (${JSON.stringify(keys)}) are not supported by CRDs; use Type.Record(Type.String(), T) and an x-kubernetes-validations rule on the keys`,
      );
    }
    if (hasProperties) fail(ctx, path, "an object cannot have both named properties and a record's values in a CRD");
    out.additionalProperties = translate(pattern[ANY_KEY_PATTERN], `${path}.*`, ctx);
  }
  const additional = node.additionalProperties;
  if (additional === undefined || additional === false) return; // false: Kubernetes prunes unknown fields instead.
  if (additional === true) {
    out["x-kubernetes-preserve-unknown-fields"] = true;
    return;
  }
  if (hasProperties) {
    fail(
      ctx,
      path,
      "additionalProperties and properties are mutually exclusive in CRDs (structs vs maps); use one or the other",
    );
  }
  if (pattern !== undefined) fail(ctx, path, "both patternProperties and additionalProperties are set");
  out.additionalProperties = translate(additional, `${path}.*`, ctx);
}

function jsonTypeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

/** A type for schemas that only said `enum`/`const` (Type.Enum emits no type). */
function inferType(out: KubeSchema, path: string, ctx: Context): void {
  if (out.type !== undefined) return;
  if (out.enum !== undefined) {
    out.type = commonType(out.enum, path, ctx);
    return;
  }
  if (out["x-kubernetes-int-or-string"] || out["x-kubernetes-preserve-unknown-fields"]) return;
  fail(
    ctx,
    path,
    "has no type; Kubernetes needs one for every field (use Type.Unknown() or x-kubernetes-preserve-unknown-fields to keep any value)",
  );
}

function commonType(values: unknown[], path: string, ctx: Context): string {
  const types = new Set(values.map(jsonTypeOf));
  if (types.has("integer") && types.has("number")) types.delete("integer");
  if (types.size !== 1) {
    fail(ctx, path, `enum mixes value types (${[...types].join(", ")}); a CRD field has exactly one type`);
  }
  const [type] = types as Set<string>;
  if (type === "null" || type === undefined) fail(ctx, path, "enum of only null is not allowed");
  return type;
}

function checkFormat(out: KubeSchema, path: string, ctx: Context): void {
  if (out.type === "integer" && out.format === undefined) {
    // A JavaScript number holds integers up to 2^53; int64 is the closest server-side width and
    // what Go's int64 fields get, so clients and CEL see the same type.
    out.format = "int64";
  }
  if (out.format === undefined) return;
  const format = out.format;
  const allowed =
    out.type === "integer"
      ? INTEGER_FORMATS.has(format)
      : out.type === "number"
        ? NUMBER_FORMATS.has(format)
        : out.type === "string" || out.type === undefined
          ? STRING_FORMATS.has(format.replaceAll("-", ""))
          : false;
  if (!allowed) {
    fail(
      ctx,
      path,
      `format "${format}" is not one kube-apiserver validates for type ${out.type ?? "(none)"}; it would be silently ignored`,
    );
  }
}

/**
 * Go's regexp (RE2) is what the server compiles patterns with: no lookaround, no backreferences.
 * A pattern using them is refused on registration, so refuse it here with the field's name.
 */
function checkPattern(value: unknown, path: string, ctx: Context): string {
  if (typeof value !== "string") fail(ctx, path, "pattern must be a string");
  if (/\(\?<?[=!]/.test(value) || /\\[1-9]|\\k</.test(value)) {
    fail(
      ctx,
      path,
      `pattern ${JSON.stringify(value)} uses lookaround or backreferences, which Go's RE2 does not support`,
    );
  }
  try {
    new RegExp(value);
  } catch (err) {
    fail(ctx, path, `pattern ${JSON.stringify(value)} is not a valid regular expression: ${(err as Error).message}`);
  }
  return value;
}

function copyExtension(key: string, value: unknown, path: string, ctx: Context, out: KubeSchema): void {
  switch (key) {
    case "x-kubernetes-int-or-string":
    case "x-kubernetes-embedded-resource":
      if (typeof value !== "boolean") fail(ctx, path, `${key} must be a boolean`);
      if (value) out[key] = true;
      return;
    case "x-kubernetes-preserve-unknown-fields":
      if (value !== true) fail(ctx, path, "x-kubernetes-preserve-unknown-fields must be true or undefined");
      out[key] = true;
      return;
    case "x-kubernetes-list-type":
      if (value !== "atomic" && value !== "set" && value !== "map") {
        fail(ctx, path, `x-kubernetes-list-type must be "atomic", "set" or "map", got ${JSON.stringify(value)}`);
      }
      out[key] = value;
      return;
    case "x-kubernetes-map-type":
      if (value !== "atomic" && value !== "granular") {
        fail(ctx, path, `x-kubernetes-map-type must be "atomic" or "granular", got ${JSON.stringify(value)}`);
      }
      out[key] = value;
      return;
    case "x-kubernetes-list-map-keys":
      if (!Array.isArray(value) || value.length === 0 || value.some((v) => typeof v !== "string")) {
        fail(ctx, path, "x-kubernetes-list-map-keys must be a non-empty array of property names");
      }
      if (new Set(value).size !== value.length)
        fail(ctx, path, "x-kubernetes-list-map-keys must not contain duplicates");
      out[key] = [...(value as string[])];
      return;
    case "x-kubernetes-validations":
      out[key] = checkValidationRules(value, path, ctx);
      return;
    default:
      fail(ctx, path, `unknown extension "${key}"`);
  }
}

const RULE_KEYS = new Set(["rule", "message", "messageExpression", "reason", "fieldPath", "optionalOldSelf"]);

/** The static checks apiextensions applies to `x-kubernetes-validations` (CEL itself is compiled by the server). */
export function checkValidationRules(value: unknown, path: string, subject: string | Context): ValidationRule[] {
  const ctx = typeof subject === "string" ? { subject } : subject;
  if (!Array.isArray(value)) fail(ctx, path, "x-kubernetes-validations must be an array of rules");
  return value.map((rule, i) => {
    const where = `${path} (x-kubernetes-validations[${i}])`;
    if (!isRecord(rule)) fail(ctx, where, "a validation rule must be an object with a `rule`");
    for (const k of Object.keys(rule)) {
      if (!RULE_KEYS.has(k)) fail(ctx, where, `unknown validation rule field "${k}"`);
    }
    if (typeof rule.rule !== "string" || rule.rule.trim() === "") fail(ctx, where, "rule is not specified");
    if (rule.message !== undefined) {
      if (typeof rule.message !== "string" || rule.message.trim() === "") {
        fail(ctx, where, "message must be non-empty if specified");
      }
      if (/[\r\n]/.test(rule.message)) fail(ctx, where, "message must not contain line breaks");
    } else if (/[\r\n]/.test(rule.rule)) {
      fail(ctx, where, "message must be specified if rule contains line breaks");
    }
    if (
      rule.messageExpression !== undefined &&
      (typeof rule.messageExpression !== "string" || !rule.messageExpression.trim())
    ) {
      fail(ctx, where, "messageExpression must be non-empty if specified");
    }
    if (rule.reason !== undefined && !(VALIDATION_REASONS as readonly unknown[]).includes(rule.reason)) {
      fail(ctx, where, `reason must be one of ${VALIDATION_REASONS.join(", ")}`);
    }
    if (rule.fieldPath !== undefined && (typeof rule.fieldPath !== "string" || rule.fieldPath.trim() === "")) {
      fail(ctx, where, "fieldPath must be non-empty if specified");
    }
    if (rule.optionalOldSelf !== undefined && typeof rule.optionalOldSelf !== "boolean") {
      fail(ctx, where, "optionalOldSelf must be a boolean");
    }
    return { ...(rule as unknown as ValidationRule) };
  });
}

const SCALAR_TYPES = new Set(["string", "number", "integer", "boolean"]);

/** Rules on combinations of keywords that apiextensions validation enforces. */
function checkShape(out: KubeSchema, path: string, ctx: Context): void {
  if (out.type === "array" && out.items === undefined) {
    fail(ctx, path, "an array must say what its items are (Type.Array(T))");
  }
  if (out["x-kubernetes-int-or-string"]) {
    if (out["x-kubernetes-preserve-unknown-fields"]) {
      fail(ctx, path, "x-kubernetes-preserve-unknown-fields must be false if x-kubernetes-int-or-string is true");
    }
    if (out["x-kubernetes-embedded-resource"]) {
      fail(ctx, path, "x-kubernetes-embedded-resource must be false if x-kubernetes-int-or-string is true");
    }
    if (out.type !== undefined) fail(ctx, path, "x-kubernetes-int-or-string replaces type; do not also set type");
  }
  if (out["x-kubernetes-embedded-resource"]) {
    if (out.type !== "object") fail(ctx, path, "must be type object if x-kubernetes-embedded-resource is true");
    if (!out["x-kubernetes-preserve-unknown-fields"] && Object.keys(out.properties ?? {}).length === 0) {
      fail(ctx, path, "an embedded resource needs properties or x-kubernetes-preserve-unknown-fields");
    }
  }
  if (out["x-kubernetes-map-type"] !== undefined && out.type !== "object") {
    fail(ctx, path, "must be type object if x-kubernetes-map-type is specified");
  }
  const listType = out["x-kubernetes-list-type"];
  const mapKeys = out["x-kubernetes-list-map-keys"];
  if (mapKeys !== undefined && listType !== "map")
    fail(ctx, path, "x-kubernetes-list-type must be map if x-kubernetes-list-map-keys is set");
  if (listType === undefined) return;
  if (out.type !== "array") fail(ctx, path, "must be type array if x-kubernetes-list-type is specified");
  const items = out.items as KubeSchema;
  if (listType !== "atomic" && items.nullable) {
    fail(ctx, `${path}[*]`, `items cannot be nullable when x-kubernetes-list-type is ${listType}`);
  }
  if (listType === "set") {
    const atomic =
      (items.type !== undefined && SCALAR_TYPES.has(items.type)) ||
      (items.type === "object" && items["x-kubernetes-map-type"] === "atomic") ||
      (items.type === "array" && items["x-kubernetes-list-type"] === "atomic");
    if (!atomic) fail(ctx, `${path}[*]`, "items of a list with x-kubernetes-list-type=set must be scalars (or atomic)");
  }
  if (listType === "map") {
    if (mapKeys === undefined)
      fail(ctx, path, "x-kubernetes-list-map-keys must not be empty if x-kubernetes-list-type is map");
    if (items.type !== "object") fail(ctx, `${path}[*]`, "items must be objects if x-kubernetes-list-type is map");
    for (const key of mapKeys) {
      const prop = items.properties?.[key];
      if (prop === undefined) {
        fail(ctx, path, `x-kubernetes-list-map-keys entry "${key}" is not a property of the items`);
      }
      if (prop.type === undefined || !SCALAR_TYPES.has(prop.type)) {
        fail(ctx, joinPath(`${path}[*]`, key), "a list map key must be a scalar (string, integer, number or boolean)");
      }
      if (!items.required?.includes(key) && prop.default === undefined) {
        fail(
          ctx,
          joinPath(`${path}[*]`, key),
          "is in x-kubernetes-list-map-keys, so it must be required or have a default",
        );
      }
      if (prop.nullable)
        fail(ctx, joinPath(`${path}[*]`, key), "is in x-kubernetes-list-map-keys, so it cannot be nullable");
    }
  }
}

function isNullSchema(node: unknown): boolean {
  return (
    isRecord(node) && node.type === "null" && keysOf(node).every((k) => k === "type" || DROPPED_ANNOTATIONS.has(k))
  );
}

function literalValues(node: unknown): unknown[] | undefined {
  if (!isRecord(node)) return undefined;
  const keys = keysOf(node).filter((k) => !DROPPED_ANNOTATIONS.has(k) && k !== "description" && k !== "title");
  if ("const" in node && keys.every((k) => k === "const" || k === "type")) return [node.const];
  if (Array.isArray(node.enum) && keys.every((k) => k === "enum" || k === "type")) return node.enum;
  return undefined;
}

function isBare(node: unknown, type: string): boolean {
  return (
    isRecord(node) &&
    node.type === type &&
    keysOf(node).every((k) => k === "type" || k === "format" || DROPPED_ANNOTATIONS.has(k))
  );
}

/** `anyOf` as TypeBox emits it for `Type.Union`: literal unions, `T | null`, `integer | string`. */
function translateUnion(node: Record<string, unknown>, path: string, ctx: Context): KubeSchema {
  const members = node.anyOf;
  if (!Array.isArray(members) || members.length === 0) fail(ctx, path, "anyOf must be a non-empty array");
  if ("allOf" in node) fail(ctx, path, "anyOf together with allOf is not supported");
  const { anyOf: _members, ...outer } = node;
  const nullable = members.some(isNullSchema);
  const rest = members.filter((m) => !isNullSchema(m));
  let seed: KubeSchema;
  const literals = rest.map(literalValues);
  if (rest.length === 0) {
    fail(ctx, path, "a union of only null is not allowed");
  } else if (literals.every((l) => l !== undefined)) {
    if (nullable) {
      fail(
        ctx,
        path,
        "a nullable enum (literals | null) is not supported: kube-apiserver checks enum even for null values, so null would be rejected; make the field Type.Optional instead",
      );
    }
    const values = literals.flat();
    seed = { type: commonType(values, path, ctx), enum: [...new Set(values)] };
  } else if (rest.length === 1) {
    seed = translate(rest[0], path, ctx);
  } else if (rest.length === 2 && rest.some((m) => isBare(m, "integer")) && rest.some((m) => isBare(m, "string"))) {
    seed = { "x-kubernetes-int-or-string": true };
  } else if (rest.length === 2 && rest.some((m) => isBare(m, "number")) && rest.some((m) => isBare(m, "string"))) {
    fail(
      ctx,
      path,
      "number | string is not a structural schema; Kubernetes only knows integer | string (use Type.Union([Type.Integer(), Type.String()]) or Kube.IntOrString())",
    );
  } else {
    fail(
      ctx,
      path,
      "anyOf of non-literal types is not a structural schema; Kubernetes needs one type per field — use a union of literals, T | null, integer | string, or a single object with optional fields",
    );
  }
  if (nullable) seed.nullable = true;
  if ("type" in outer) fail(ctx, path, "a union must not also set type");
  // Keywords on the union itself (description, default, x-kubernetes-*) apply to the whole field.
  return translateNode(outer, path, ctx, seed);
}

/** `allOf` as `Type.Intersect` emits it: objects merged into one (what `Type.Evaluate` would give). */
function translateIntersection(node: Record<string, unknown>, path: string, ctx: Context): KubeSchema {
  const members = node.allOf;
  if (!Array.isArray(members) || members.length === 0) fail(ctx, path, "allOf must be a non-empty array");
  const { allOf: _members, ...outer } = node;
  const merged: KubeSchema = { type: "object", properties: {} };
  const required = new Set<string>();
  for (const member of members) {
    const part = translate(member, path, ctx);
    if (part.type !== "object" || part.additionalProperties !== undefined) {
      fail(ctx, path, "allOf (Type.Intersect) is only supported for object schemas with named properties");
    }
    for (const [name, prop] of Object.entries(part.properties ?? {})) {
      const existing = merged.properties?.[name];
      if (existing !== undefined && JSON.stringify(existing) !== JSON.stringify(prop)) {
        fail(ctx, joinPath(path, name), "is declared differently by two members of an intersection");
      }
      (merged.properties as Record<string, KubeSchema>)[name] = prop;
    }
    for (const name of part.required ?? []) required.add(name);
    if (part["x-kubernetes-validations"]) {
      merged["x-kubernetes-validations"] = [
        ...(merged["x-kubernetes-validations"] ?? []),
        ...part["x-kubernetes-validations"],
      ];
    }
    if (part["x-kubernetes-preserve-unknown-fields"]) merged["x-kubernetes-preserve-unknown-fields"] = true;
  }
  if (required.size > 0) merged.required = [...required];
  if ("type" in outer && outer.type !== "object") fail(ctx, path, "an intersection of objects must be type object");
  const { type: _t, ...outerRest } = outer;
  return translateNode(outerRest, path, ctx, merged);
}

/**
 * Kubernetes validates defaults against the schema when the CRD is registered; check the same
 * things early so the error names the field rather than arriving as a 422 at start-up.
 */
function checkDefault(value: unknown, schema: KubeSchema, path: string, ctx: Context): void {
  const problem = defaultProblem(value, schema);
  if (problem !== undefined) fail(ctx, path, `default ${JSON.stringify(value)} ${problem}`);
}

function defaultProblem(value: unknown, schema: KubeSchema): string | undefined {
  if (value === null) return schema.nullable ? undefined : "is null but the field is not nullable";
  if (schema["x-kubernetes-int-or-string"]) {
    return Number.isInteger(value) || typeof value === "string" ? undefined : "is neither an integer nor a string";
  }
  const actual = jsonTypeOf(value);
  if (schema.type !== undefined) {
    const ok = schema.type === actual || (schema.type === "number" && actual === "integer");
    if (!ok) return `is ${actual}, but the field is ${schema.type}`;
  }
  if (schema.enum !== undefined && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) {
    return `is not one of ${JSON.stringify(schema.enum)}`;
  }
  if (typeof value === "string") {
    if (schema.minLength !== undefined && [...value].length < schema.minLength)
      return `is shorter than minLength ${schema.minLength}`;
    if (schema.maxLength !== undefined && [...value].length > schema.maxLength)
      return `is longer than maxLength ${schema.maxLength}`;
    if (schema.pattern !== undefined && !new RegExp(schema.pattern).test(value))
      return `does not match pattern ${schema.pattern}`;
  }
  if (typeof value === "number") {
    if (
      schema.minimum !== undefined &&
      (value < schema.minimum || (schema.exclusiveMinimum && value === schema.minimum))
    ) {
      return `is below the minimum ${schema.minimum}`;
    }
    if (
      schema.maximum !== undefined &&
      (value > schema.maximum || (schema.exclusiveMaximum && value === schema.maximum))
    ) {
      return `is above the maximum ${schema.maximum}`;
    }
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems)
      return `has fewer than minItems ${schema.minItems}`;
    if (schema.maxItems !== undefined && value.length > schema.maxItems)
      return `has more than maxItems ${schema.maxItems}`;
    if (schema.items !== undefined) {
      for (const [i, item] of value.entries()) {
        const inner = defaultProblem(item, schema.items);
        if (inner !== undefined) return `item ${i} ${inner}`;
      }
    }
  }
  if (isRecord(value)) {
    for (const name of schema.required ?? []) {
      // Kubernetes applies nested defaults before validating, so a required field with its own default is fine.
      if (!(name in value) && schema.properties?.[name]?.default === undefined)
        return `lacks required property "${name}"`;
    }
    for (const [name, inner] of Object.entries(value)) {
      const prop =
        schema.properties?.[name] ?? (isRecord(schema.additionalProperties) ? schema.additionalProperties : undefined);
      if (prop === undefined) {
        // v1 CRDs must have pruned defaults (apiextensions defaulting/validation.go: "must not have unknown fields").
        if (schema["x-kubernetes-preserve-unknown-fields"] || schema.additionalProperties === true) continue;
        return `has unknown field "${name}" (the server refuses defaults that pruning would change)`;
      }
      const problem = defaultProblem(inner, prop);
      if (problem !== undefined) return `property "${name}" ${problem}`;
    }
  }
  return undefined;
}
