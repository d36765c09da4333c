/**
 * Validation of custom objects against their CRD version's OpenAPI v3 schema, reproducing what
 * kube-apiserver does: kube-openapi's `validate.SchemaValidator` (validator order, error texts, result
 * de-duplication, anyOf/oneOf "best failure" choice) followed by apiextensions-apiserver's conversion of
 * those errors into field errors (`pkg/apiserver/validation/validation.go` kubeOpenAPIResultToFieldErrors).
 *
 * Expected flow: the server prunes unknown fields and applies defaults (schema-prune.ts,
 * schema-default.ts), then calls `validateCustomObject(schema, obj)` for the whole object, or with
 * `{ fieldPrefix: "status" }` and the status sub-schema for a /status write. CEL rules
 * (`x-kubernetes-validations`) are an extension point: pass `rules` to have them run after the schema
 * checks, skipped with the real server's message when blocking errors were found.
 *
 * Guarantees: pure, never throws on any JSON input; a schema is compiled once and cached by identity
 * (a WeakMap), so repeated writes of the same kind pay only for the walk.
 *
 * Caveats (kept on purpose, because the real server does the same):
 * - Errors kube-openapi reports without a field (anyOf/oneOf/allOf/not failures, number range/format
 *   failures) carry the field `<nil>`, as the real server's Status does.
 * - Go walks properties in random map order; we walk them in schema order, so with several errors the
 *   order can differ from one real response to the next, but the set is the same.
 * - Patterns are Go RE2 syntax run by JavaScript's engine; the common subset behaves the same.
 */
import { type FieldError, invalid, notSupported, required, tooLong, tooMany, typeInvalid } from "./field-errors.ts";
import { goFloatV, goJSON, goNumberV, goQuote, isGoInt64 } from "./go-format.ts";
import { type CompiledPattern, compileGoRegExp } from "./go-regexp.ts";
import { effectiveFormat, formatCheck } from "./schema-formats.ts";
import { sanitizeSchema } from "./schema-sanitize.ts";
import type { JSONSchemaProps, ValidationRule } from "./schema-types.ts";

// ---------------------------------------------------------------------------------------------
// Compiled schema

interface Node {
  readonly schema: JSONSchemaProps;
  types: string[];
  nullable: boolean;
  format: string;
  formatCheck: ((s: string) => boolean) | undefined;
  enumValues: unknown[] | undefined;
  pattern: CompiledPattern | undefined;
  properties: Map<string, Node>;
  patternProperties: Array<{ pattern: CompiledPattern; node: Node }>;
  /** undefined: absent; allows=false: additionalProperties false. */
  additionalProperties: { allows: boolean; node: Node | undefined } | undefined;
  items: Node | undefined;
  itemsTuple: Node[] | undefined;
  allOf: Node[];
  anyOf: Node[];
  oneOf: Node[];
  not: Node | undefined;
  rules: ValidationRule[] | undefined;
}

const compiled = new WeakMap<object, Node>();

function compile(schema: JSONSchemaProps): Node {
  const cached = compiled.get(schema);
  if (cached) return cached;
  // ConvertJSONSchemaProps: int-or-string becomes type [integer, string].
  const types = schema["x-kubernetes-int-or-string"] ? ["integer", "string"] : schema.type ? [schema.type] : [];
  const node: Node = {
    schema,
    types,
    nullable: schema.nullable === true,
    format: effectiveFormat(schema.format, types),
    formatCheck: undefined,
    enumValues: Array.isArray(schema.enum) ? schema.enum : undefined,
    pattern: schema.pattern ? compileGoRegExp(schema.pattern) : undefined,
    properties: new Map(),
    patternProperties: [],
    additionalProperties: undefined,
    items: undefined,
    itemsTuple: undefined,
    allOf: [],
    anyOf: [],
    oneOf: [],
    not: undefined,
    rules: schema["x-kubernetes-validations"],
  };
  node.formatCheck = formatCheck(node.format);
  // Cache before recursing so a schema object reachable twice is compiled once.
  compiled.set(schema, node);
  const props = schema.properties;
  if (props && typeof props === "object") {
    for (const [k, v] of Object.entries(props)) if (isSchema(v)) node.properties.set(k, compile(v));
  }
  const pprops = schema.patternProperties;
  if (pprops && typeof pprops === "object") {
    for (const [k, v] of Object.entries(pprops)) {
      if (isSchema(v)) node.patternProperties.push({ pattern: compileGoRegExp(k), node: compile(v) });
    }
  }
  const ap = schema.additionalProperties;
  if (typeof ap === "boolean") node.additionalProperties = { allows: ap, node: undefined };
  else if (isSchema(ap)) node.additionalProperties = { allows: true, node: compile(ap) };
  const items = schema.items;
  if (Array.isArray(items)) node.itemsTuple = items.filter(isSchema).map(compile);
  else if (isSchema(items)) node.items = compile(items);
  node.allOf = (schema.allOf ?? []).filter(isSchema).map(compile);
  node.anyOf = (schema.anyOf ?? []).filter(isSchema).map(compile);
  node.oneOf = (schema.oneOf ?? []).filter(isSchema).map(compile);
  if (isSchema(schema.not)) node.not = compile(schema.not);
  return node;
}

function isSchema(v: unknown): v is JSONSchemaProps {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

// ---------------------------------------------------------------------------------------------
// kube-openapi errors and results

/** An openapierrors.Validation (has a field name) or a plain error (reported on the `<nil>` field). */
type OpenAPIError =
  | {
      kind: "validation";
      code: Code;
      name: string;
      value: unknown;
      valid?: number;
      values?: unknown[];
      message: string;
    }
  | { kind: "plain"; message: string };

type Code =
  | "invalidType"
  | "required"
  | "tooLong"
  | "tooShort"
  | "pattern"
  | "enum"
  | "multipleOf"
  | "max"
  | "min"
  | "unique"
  | "maxItems"
  | "minItems"
  | "tooFewProperties"
  | "tooManyProperties"
  | "unallowedProperty"
  | "multipleOfMustBePositive";

/** validate.Result: errors de-duplicated by message, and a match count for anyOf/oneOf. */
class Result {
  readonly errors: OpenAPIError[] = [];
  /** Created on the first error: most results stay empty, and this runs for every node of every write. */
  private seen: Set<string> | undefined;
  matchCount = 0;

  add(e: OpenAPIError): void {
    this.seen ??= new Set();
    if (this.seen.has(e.message)) return;
    this.seen.add(e.message);
    this.errors.push(e);
  }

  merge(other: Result | undefined): this {
    if (other) {
      for (const e of other.errors) this.add(e);
      this.matchCount += other.matchCount;
    }
    return this;
  }

  get valid(): boolean {
    return this.errors.length === 0;
  }
}

function single(e: OpenAPIError): Result {
  const r = new Result();
  r.add(e);
  return r;
}

const IN = "body";

type ValueKind = "null" | "string" | "int" | "float" | "bool" | "slice" | "map";

/** The Go kind the apiserver's JSON decoder gives a value (integers int64, other numbers float64). */
function kindOf(v: unknown): ValueKind {
  if (v === null || v === undefined) return "null";
  if (typeof v === "string") return "string";
  if (typeof v === "number") return isGoInt64(v) ? "int" : "float";
  if (typeof v === "boolean") return "bool";
  if (Array.isArray(v)) return "slice";
  return "map";
}

/** `%v` of a Go value: int64 and float64 as Go prints them (bounds in schemas are float64). */
function vFloat(n: number): string {
  return goFloatV(n);
}

function invalidType(name: string, typeName: string, value: unknown): OpenAPIError {
  // InvalidType shows the value only when it is a string (typeFailWithData).
  const message =
    typeof value === "string"
      ? `${name} in ${IN} must be of type ${typeName}: ${goQuote(value)}`
      : `${name} in ${IN} must be of type ${typeName}`;
  return { kind: "validation", code: "invalidType", name, value, message };
}

// ---------------------------------------------------------------------------------------------
// The validators, in SchemaValidator's order

function schemaInfoForType(kind: ValueKind): { type: string; format: string } {
  switch (kind) {
    case "bool":
      return { type: "boolean", format: "" };
    case "string":
      return { type: "string", format: "" };
    case "int":
      return { type: "integer", format: "int64" };
    case "float":
      return { type: "number", format: "float64" };
    case "slice":
      return { type: "array", format: "" };
    default:
      return { type: "object", format: "" };
  }
}

/** JSON's safe-integer bounds, as swag defines them. */
const MAX_JSON_FLOAT = 2 ** 53 - 1;
/** swag's relative tolerance: a float this close to an integer counts as one (0.3 / 0.1 passes multipleOf). */
const JSON_INTEGER_EPSILON = 1e-9;

/**
 * swag.IsFloat64AJSONInteger (go-openapi/swag v0.23.0, what Kubernetes 1.32 builds with): integers up to
 * 2^53 with a relative tolerance. Go's `uint64(f)` of a negative float is huge on amd64, so negative
 * near-integers only pass when exact; `0.1 * 3` style values just below an integer do not pass either.
 */
function isJSONInteger(f: number): boolean {
  if (!Number.isFinite(f) || f < -MAX_JSON_FLOAT || f > MAX_JSON_FLOAT) return false;
  if (Number.isInteger(f)) return true;
  if (f < 0) return false;
  const g = Math.trunc(f);
  const diff = Math.abs(f - g);
  if (g === 0 || diff < Number.MIN_VALUE) return diff < JSON_INTEGER_EPSILON * Number.MIN_VALUE;
  return diff / Math.min(f + g, Number.MAX_VALUE) < JSON_INTEGER_EPSILON;
}

function validateType(node: Node, data: unknown, kind: ValueKind, path: string): Result {
  const result = new Result();
  result.matchCount++;
  const t = node.types;
  if (kind === "null") {
    if (t.length > 0 && !t.includes("null") && !node.nullable) {
      return single(invalidType(path, t.join(","), "null"));
    }
    return result;
  }
  const { type: schType, format } = schemaInfoForType(kind);
  const isFloatInt = schType === "number" && isJSONInteger(data as number) && t.includes("integer");
  const isIntFloat = schType === "integer" && t.includes("number");
  const stringOrSlice = kind === "string" || kind === "slice";
  if (
    !stringOrSlice &&
    node.format !== "" &&
    !(t.includes(schType) || format === node.format || isFloatInt || isIntFloat)
  ) {
    return single(invalidType(path, node.format, format));
  }
  if (!(t.includes("number") || t.includes("integer")) && node.format !== "" && stringOrSlice) return result;
  if (!(t.includes(schType) || isFloatInt || isIntFloat)) return single(invalidType(path, t.join(","), schType));
  return result;
}

/** The result of a schemaPropsValidator with nothing to check: valid, one match. Never merged into. */
const NO_SCHEMA_PROPS = (() => {
  const r = new Result();
  r.matchCount = 1;
  return r;
})();

function validateSchemaProps(node: Node, data: unknown, path: string, old: Old): Result {
  if (node.anyOf.length === 0 && node.oneOf.length === 0 && node.allOf.length === 0 && !node.not)
    return NO_SCHEMA_PROPS;
  const main = new Result();
  if (node.anyOf.length > 0) {
    let best: Result | undefined;
    let firstSuccess: Result | undefined;
    let succeeded = false;
    for (const sub of node.anyOf) {
      const r = validateNode(sub, data, path, old);
      if (r.valid) {
        best = undefined;
        succeeded = true;
        firstSuccess ??= r;
        break;
      }
      if (best === undefined || r.matchCount > best.matchCount) best = r;
    }
    if (!succeeded) main.add({ kind: "plain", message: `${goQuote(path)} must validate at least one schema (anyOf)` });
    if (best) main.merge(best);
    else if (firstSuccess) main.merge(firstSuccess);
  }
  if (node.oneOf.length > 0) {
    let best: Result | undefined;
    let firstSuccess: Result | undefined;
    let validated = 0;
    for (const sub of node.oneOf) {
      const r = validateNode(sub, data, path, old);
      if (r.valid) {
        validated++;
        best = undefined;
        firstSuccess ??= r;
        continue;
      }
      if (validated === 0 && (best === undefined || r.matchCount > best.matchCount)) best = r;
    }
    if (validated !== 1) {
      const extra = validated === 0 ? "Found none valid" : `Found ${validated} valid alternatives`;
      main.add({ kind: "plain", message: `${goQuote(path)} must validate one and only one schema (oneOf). ${extra}` });
      if (best) main.merge(best);
    } else if (firstSuccess) {
      main.merge(firstSuccess);
    }
  }
  if (node.allOf.length > 0) {
    let validated = 0;
    for (const sub of node.allOf) {
      const r = validateNode(sub, data, path, old);
      if (r.valid) validated++;
      main.merge(r);
    }
    if (validated !== node.allOf.length) {
      const extra = validated === 0 ? ". None validated" : "";
      main.add({ kind: "plain", message: `${goQuote(path)} must validate all the schemas (allOf)${extra}` });
    }
  }
  if (node.not && validateNode(node.not, data, path, old).valid) {
    main.add({ kind: "plain", message: `${goQuote(path)} must not validate the schema (not)` });
  }
  main.matchCount++;
  return main;
}

/** utf8.RuneCount: code points, not UTF-16 units. */
function runeCount(data: string): number {
  let n = 0;
  for (const _ of data) n++;
  return n;
}

function validateString(node: Node, data: string, path: string): Result | undefined {
  const s = node.schema;
  if (typeof s.maxLength === "number" && runeCount(data) > s.maxLength) {
    return single({
      kind: "validation",
      code: "tooLong",
      name: path,
      value: data,
      valid: s.maxLength,
      message: `${path} in ${IN} should be at most ${s.maxLength} chars long`,
    });
  }
  if (typeof s.minLength === "number" && runeCount(data) < s.minLength) {
    return single({
      kind: "validation",
      code: "tooShort",
      name: path,
      value: data,
      valid: s.minLength,
      message: `${path} in ${IN} should be at least ${s.minLength} chars long`,
    });
  }
  const p = node.pattern;
  if (p) {
    if (!p.re) {
      return single({
        kind: "validation",
        code: "pattern",
        name: path,
        value: data,
        message: `${path} in ${IN} should match '${p.source}, but pattern is invalid: ${p.error}'`,
      });
    }
    if (!p.re.test(data)) {
      return single({
        kind: "validation",
        code: "pattern",
        name: path,
        value: data,
        message: `${path} in ${IN} should match '${p.source}'`,
      });
    }
  }
  return undefined;
}

function validateFormat(node: Node, data: string, path: string): Result | undefined {
  const check = node.formatCheck;
  if (check && !check(data)) return single(invalidType(path, node.format, data));
  return undefined;
}

const INT32_MAX = 2 ** 31 - 1;
const INT64_LIMIT = 2 ** 63;
const FLOAT32_MAX = 3.4028234663852886e38;

/** IsValueValidAgainstRange: does the value's decimal text parse as the schema's integer/float format? */
function rangeError(value: number, typeName: string, format: string, prefix: string, path: string): string | undefined {
  // strconv.ParseInt of the value's decimal text fails on fractions and outside the bit size;
  // ParseFloat(.., 32) fails beyond float32's range. Checked on numbers directly: this runs per value.
  let bad = false;
  if (typeName === "integer") {
    if (!Number.isInteger(value)) bad = true;
    else if (format === "int32") bad = value > INT32_MAX || value < -INT32_MAX - 1;
    else bad = value >= INT64_LIMIT || value < -INT64_LIMIT;
  } else if (format === "float") {
    bad = Math.abs(value) > FLOAT32_MAX;
  }
  if (!bad) return undefined;
  return format !== ""
    ? `${prefix} value must be of type ${typeName} with format ${format} in ${path}`
    : `${prefix} value must be of type ${typeName} (default format) in ${path}`;
}

function validateNumber(node: Node, data: number, kind: ValueKind, path: string): Result {
  const s = node.schema;
  const res = new Result();
  let typeName = "";
  let format = "";
  if (node.types.length === 1) {
    const t = node.types[0]!;
    if (t === "integer") {
      typeName = t;
      if (s.format === "int32" || s.format === "int64") format = s.format;
    } else if (t === "number") {
      typeName = t;
      if (s.format === "float" || s.format === "double") format = s.format;
    }
  }
  const isInt = kind === "int";
  const checked = rangeError(data, typeName, format, "Checked", path);
  if (checked) res.add({ kind: "plain", message: checked });

  const resMultiple = new Result();
  const resMinimum = new Result();
  const resMaximum = new Result();
  const trunc = (f: number) => Math.trunc(f);

  if (typeof s.multipleOf === "number") {
    const f = s.multipleOf;
    const bound = rangeError(f, typeName, format, "MultipleOf", path);
    if (bound) resMultiple.add({ kind: "plain", message: bound });
    if (!bound && isInt) {
      const factor = trunc(f);
      if (factor <= 0) resMultiple.add(mustBePositive(path, factor, String(factor)));
      else if (data % factor !== 0) resMultiple.add(notMultipleOf(path, String(factor), data));
    } else if (f <= 0) {
      resMultiple.add(mustBePositive(path, f, vFloat(f)));
    } else {
      const mult = f < 1 ? (1 / f) * data : data / f;
      if (!isJSONInteger(mult)) resMultiple.add(notMultipleOf(path, vFloat(f), data));
    }
  }
  if (typeof s.maximum === "number") {
    const max = s.maximum;
    const excl = s.exclusiveMaximum === true;
    const bound = rangeError(max, typeName, format, "Maximum boundary", path);
    if (bound) resMaximum.add({ kind: "plain", message: bound });
    const [limit, shown] = !bound && isInt ? [trunc(max), String(trunc(max))] : [max, vFloat(max)];
    if ((!excl && data > limit) || (excl && data >= limit)) {
      resMaximum.add({
        kind: "validation",
        code: "max",
        name: path,
        value: data,
        message: `${path} in ${IN} should be less than ${excl ? "" : "or equal to "}${shown}`,
      });
    }
  }
  if (typeof s.minimum === "number") {
    const min = s.minimum;
    const excl = s.exclusiveMinimum === true;
    const bound = rangeError(min, typeName, format, "Minimum boundary", path);
    if (bound) resMinimum.add({ kind: "plain", message: bound });
    const [limit, shown] = !bound && isInt ? [trunc(min), String(trunc(min))] : [min, vFloat(min)];
    if ((!excl && data < limit) || (excl && data <= limit)) {
      resMinimum.add({
        kind: "validation",
        code: "min",
        name: path,
        value: data,
        message: `${path} in ${IN} should be greater than ${excl ? "" : "or equal to "}${shown}`,
      });
    }
  }
  res.merge(resMultiple).merge(resMinimum).merge(resMaximum);
  res.matchCount++;
  return res;
}

/** errors.MultipleOfMustBePositive: the factor (an int64 or float64, so printed bare) is the bad value. */
function mustBePositive(path: string, factor: number, shown: string): OpenAPIError {
  return {
    kind: "validation",
    code: "multipleOfMustBePositive",
    name: path,
    value: factor,
    message: `factor MultipleOf declared for ${path} must be positive: ${shown}`,
  };
}

function notMultipleOf(path: string, factor: string, value: number): OpenAPIError {
  return {
    kind: "validation",
    code: "multipleOf",
    name: path,
    value,
    message: `${path} in ${IN} should be a multiple of ${factor}`,
  };
}

/** reflect.DeepEqual between two decoded JSON values (int64 and float64 of equal value differ in Go). */
function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return kindOf(a) === kindOf(b);
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((v, i) => deepEqual(v, bb[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const ak = Object.keys(ao);
  if (ak.length !== Object.keys(bo).length) return false;
  return ak.every((k) => Object.hasOwn(bo, k) && deepEqual(ao[k], bo[k]));
}

/** The enum check: equal after Go's reflect conversion of the value to the enum member's type. */
function enumMatches(data: unknown, member: unknown): boolean {
  if (data === null || data === undefined || member === null || member === undefined) return false;
  const dk = kindOf(data);
  const mk = kindOf(member);
  if ((dk === "int" || dk === "float") && (mk === "int" || mk === "float")) {
    // Numeric conversions: to int64 truncates, to float64 is exact for our values.
    return mk === "int" ? Math.trunc(data as number) === member : data === member;
  }
  if (dk === "int" && mk === "string") {
    // Go converts an integer to a string as the rune with that code point.
    const n = data as number;
    const rune = n >= 0 && n <= 0x10ffff && !(n >= 0xd800 && n <= 0xdfff) ? String.fromCodePoint(n) : "\ufffd";
    return rune === member;
  }
  return deepEqual(data, member);
}

function validateEnum(node: Node, data: unknown, path: string): Result | undefined {
  const values = node.enumValues;
  if (!values || values.length === 0) return undefined;
  for (const v of values) if (enumMatches(data, v)) return undefined;
  return single({
    kind: "validation",
    code: "enum",
    name: path,
    value: data,
    values,
    message: `${path} in ${IN} should be one of [${values.map(goSprintV).join(" ")}]`,
  });
}

/** `%v` of a decoded JSON value, as in EnumFail's message (not shown by the apiserver, kept faithful). */
function goSprintV(v: unknown): string {
  if (typeof v === "string") return v;
  if (typeof v === "number") return goNumberV(v);
  if (v === null || v === undefined) return "<nil>";
  if (typeof v === "boolean") return String(v);
  return goJSON(v);
}

function validateSlice(node: Node, data: unknown[], path: string, old: Old): Result {
  const result = new Result();
  const s = node.schema;
  if (node.items) {
    for (let i = 0; i < data.length; i++) {
      result.merge(validateNode(node.items, data[i], `${path}[${i}]`, correlateItem(node, data[i], old)));
    }
  }
  if (node.itemsTuple) {
    for (let i = 0; i < node.itemsTuple.length && i < data.length; i++) {
      result.merge(validateNode(node.itemsTuple[i]!, data[i], `${path}[${i}]`, undefined));
    }
  }
  const size = data.length;
  if (typeof s.minItems === "number" && size < s.minItems) {
    result.add({
      kind: "validation",
      code: "minItems",
      name: path,
      value: size,
      valid: s.minItems,
      message: `${path} in ${IN} should have at least ${s.minItems} items`,
    });
  }
  if (typeof s.maxItems === "number" && size > s.maxItems) {
    result.add({
      kind: "validation",
      code: "maxItems",
      name: path,
      value: size,
      valid: s.maxItems,
      message: `${path} in ${IN} should have at most ${s.maxItems} items`,
    });
  }
  if (s.uniqueItems === true) {
    const dup = data.some((v, i) => data.slice(0, i).some((u) => deepEqual(u, v)));
    if (dup) {
      result.add({
        kind: "validation",
        code: "unique",
        name: path,
        value: undefined,
        message: `${path} in ${IN} shouldn't contain duplicates`,
      });
    }
  }
  result.matchCount++;
  return result;
}

const NO_PATTERNS: Node["patternProperties"] = [];

/** The patternProperties whose regexp matches `key` (none without patternProperties, the common case). */
function matchingPatterns(node: Node, key: string): Node["patternProperties"] {
  if (node.patternProperties.length === 0) return NO_PATTERNS;
  return node.patternProperties.filter((pp) => pp.pattern.re?.test(key) === true);
}

function validateObject(node: Node, data: Record<string, unknown>, path: string, old: Old): Result {
  const res = new Result();
  const s = node.schema;
  const keys = Object.keys(data);
  const numKeys = keys.length;
  if (typeof s.minProperties === "number" && numKeys < s.minProperties) {
    res.add({
      kind: "validation",
      code: "tooFewProperties",
      name: path,
      value: numKeys,
      valid: s.minProperties,
      message: `${path} in ${IN} should have at least ${s.minProperties} properties`,
    });
  }
  if (typeof s.maxProperties === "number" && numKeys > s.maxProperties) {
    res.add({
      kind: "validation",
      code: "tooManyProperties",
      name: path,
      value: numKeys,
      valid: s.maxProperties,
      message: `${path} in ${IN} should have at most ${s.maxProperties} properties`,
    });
  }

  const ap = node.additionalProperties;
  if (ap && !ap.allows) {
    for (const k of keys) {
      if (!node.properties.has(k) && matchingPatterns(node, k).length === 0) {
        res.add({
          kind: "validation",
          code: "unallowedProperty",
          name: path,
          value: k,
          message: `${path}.${k} in ${IN} is a forbidden property`,
        });
      }
    }
  } else {
    for (const k of keys) {
      const patterns = matchingPatterns(node, k);
      for (const pp of patterns)
        res.merge(validateNode(pp.node, data[k], `${path}.${k}`, correlateKey(node, path, k, old)));
      if (!node.properties.has(k) && patterns.length === 0 && ap?.node) {
        res.merge(validateNode(ap.node, data[k], `${path}.${k}`, correlateKey(node, path, k, old)));
      }
    }
  }
  for (const [name, child] of node.properties) {
    if (Object.hasOwn(data, name)) {
      const childPath = path === "" ? name : `${path}.${name}`;
      res.merge(validateNode(child, data[name], childPath, correlateKey(node, path, name, old)));
    }
  }
  for (const k of s.required ?? []) {
    if (!Object.hasOwn(data, k)) {
      res.add({
        kind: "validation",
        code: "required",
        name: `${path}.${k}`,
        value: undefined,
        message: `${path}.${k} in ${IN} is required`,
      });
    }
  }
  for (const k of node.patternProperties.length === 0 ? [] : keys) {
    if (node.properties.has(k)) continue;
    for (const pp of matchingPatterns(node, k))
      res.merge(validateNode(pp.node, data[k], `${path}.${k}`, correlateKey(node, path, k, old)));
  }
  return res;
}

// ---------------------------------------------------------------------------------------------
// Ratcheting (CRDValidationRatcheting, beta and on by default in 1.32)

/**
 * The stored value correlated with the value being validated, on updates. A subtree whose new value
 * deep-equals its correlated old value keeps its errors as warnings only, so objects stored before a
 * schema got stricter can still be updated elsewhere.
 */
type Old = { value: unknown } | undefined;

/** CorrelatedObject.Key: the old value of a field present on both sides (not apiVersion/kind at the root). */
function correlateKey(node: Node, path: string, key: string, old: Old): Old {
  if (old === undefined || !isMap(old.value)) return undefined;
  if (path === "" && (key === "apiVersion" || key === "kind")) return undefined;
  if (!node.properties.has(key) && !node.additionalProperties?.node) return undefined;
  return Object.hasOwn(old.value, key) ? { value: old.value[key] } : undefined;
}

/** CorrelatedObject.Index: only map lists correlate their items, by the list-map keys. */
function correlateItem(node: Node, item: unknown, old: Old): Old {
  if (
    old === undefined ||
    !Array.isArray(old.value) ||
    node.schema["x-kubernetes-list-type"] !== "map" ||
    !isMap(item)
  ) {
    return undefined;
  }
  const keys = node.schema["x-kubernetes-list-map-keys"] ?? [];
  const match = old.value.find((o) => isMap(o) && keys.every((k) => deepEqual(o[k], item[k])));
  return match === undefined ? undefined : { value: match };
}

function isMap(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** SchemaValidator.Validate: every validator that applies to the value's kind, in kube-openapi's order. */
function validateNode(node: Node, data: unknown, path: string, old: Old): Result {
  const result = validateNodeOnce(node, data, path, old);
  if (!result.valid && old !== undefined && deepEqual(data, old.value)) {
    const ratcheted = new Result();
    ratcheted.matchCount = result.matchCount;
    return ratcheted;
  }
  return result;
}

function validateNodeOnce(node: Node, data: unknown, path: string, old: Old): Result {
  const kind = kindOf(data);
  const result = new Result();
  if (kind === "null") {
    result.merge(validateType(node, null, kind, path));
    result.merge(validateEnum(node, null, path));
    return result;
  }
  // Each validator that applies adds one match (SchemaValidator.Validate's result.Inc()).
  let applied = 0;
  if (node.types.length > 0 || node.format !== "") {
    result.merge(validateType(node, data, kind, path));
    applied++;
  }
  result.merge(validateSchemaProps(node, data, path, old));
  applied++;
  if (kind === "string") {
    result.merge(validateString(node, data as string, path));
    applied++;
    if (node.formatCheck) {
      result.merge(validateFormat(node, data as string, path));
      applied++;
    }
  } else if (kind === "int" || kind === "float") {
    result.merge(validateNumber(node, data as number, kind, path));
    applied++;
  } else if (kind === "slice") {
    result.merge(validateSlice(node, data as unknown[], path, old));
    applied++;
  }
  result.merge(validateEnum(node, data, path));
  applied++;
  if (kind === "map") {
    result.merge(validateObject(node, data as Record<string, unknown>, path, old));
    applied++;
  }
  result.matchCount += applied + 1;
  return result;
}

// ---------------------------------------------------------------------------------------------
// Conversion to field errors and the public entry point

/** kubeOpenAPIResultToFieldErrors: field paths are the validator's names; unnamed errors go to the prefix or `<nil>`. */
function toFieldErrors(errors: readonly OpenAPIError[], prefix: string | undefined): FieldError[] {
  const base = prefix ?? "<nil>";
  return errors.map((e): FieldError => {
    if (e.kind === "plain") return invalid(base, "", e.message);
    const trimmed = e.name.startsWith(".") ? e.name.slice(1) : e.name;
    const field =
      e.name.length > 0 && e.name !== "." ? (prefix === undefined ? trimmed : `${prefix}.${trimmed}`) : base;
    const value = e.value === undefined || e.value === null ? "" : e.value;
    switch (e.code) {
      case "required":
        return required(field);
      case "enum":
        return notSupported(
          field,
          e.value === undefined ? null : e.value,
          (e.values ?? []).map((v) => (typeof v === "string" ? v : goJSON(v))),
        );
      case "tooLong":
        return tooLong(field, e.valid ?? -1);
      case "maxItems":
      case "tooManyProperties":
        return tooMany(field, typeof e.value === "number" ? e.value : -1, e.valid ?? -1);
      case "invalidType":
        return typeInvalid(field, value, e.message);
      default:
        return invalid(field, value, e.message);
    }
  });
}

/** Errors that make the real server skip CEL rules (strategy.go hasBlockingErr). */
export const BLOCKING_ERROR_TYPES: ReadonlySet<string> = new Set([
  "FieldValueNotSupported",
  "FieldValueRequired",
  "FieldValueTooLong",
  "FieldValueTooMany",
  "FieldValueTypeInvalid",
]);

/** The message the real server appends instead of running CEL rules on an object with blocking errors. */
export const RULES_SKIPPED_MESSAGE =
  "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation";

/**
 * The extension point for `x-kubernetes-validations`: evaluates every rule of `schema` against `obj`
 * (and `oldObj` for transition rules) and returns the failures as field errors.
 */
export type ValidationRulesEvaluator = (schema: JSONSchemaProps, obj: unknown, oldObj: unknown) => FieldError[];

export interface CustomObjectValidationOptions {
  /** Prefix of every field path, e.g. "status" when validating a /status write against the status schema. */
  fieldPrefix?: string;
  /**
   * The stored object (or stored part) on update: unchanged subtrees are ratcheted (their errors
   * dropped, as CRDValidationRatcheting does), and CEL transition rules see it as oldSelf.
   */
  oldObj?: unknown;
  /** Runs CEL rules after the schema checks, unless those found blocking errors. */
  rules?: ValidationRulesEvaluator;
}

/**
 * Validates a custom object (or, with `fieldPrefix`, one of its parts) against a structural schema.
 * Returns the field errors kube-apiserver would put in its 422 Invalid Status.
 */
export function validateCustomObject(
  schema: JSONSchemaProps,
  obj: unknown,
  options: CustomObjectValidationOptions = {},
): FieldError[] {
  // With a stored object this is an update: ratchet unchanged subtrees as the real server does.
  const old: Old = options.oldObj === undefined ? undefined : { value: options.oldObj };
  const result = validateNode(compile(sanitizeSchema(schema)), obj, "", old);
  const errs = toFieldErrors(result.errors, options.fieldPrefix);
  if (options.rules) {
    if (errs.some((e) => BLOCKING_ERROR_TYPES.has(e.type))) errs.push(invalid("<nil>", null, RULES_SKIPPED_MESSAGE));
    else errs.push(...options.rules(schema, obj, options.oldObj));
  }
  return errs;
}

/** Whether any node of the schema carries CEL rules (so the server knows to wire an evaluator). */
export function hasValidationRules(schema: JSONSchemaProps): boolean {
  const seen = new Set<Node>();
  const walk = (n: Node): boolean => {
    if (seen.has(n)) return false;
    seen.add(n);
    if (n.rules && n.rules.length > 0) return true;
    const children = [
      ...n.properties.values(),
      ...n.patternProperties.map((p) => p.node),
      ...(n.additionalProperties?.node ? [n.additionalProperties.node] : []),
      ...(n.items ? [n.items] : []),
      ...(n.itemsTuple ?? []),
      ...n.allOf,
      ...n.anyOf,
      ...n.oneOf,
      ...(n.not ? [n.not] : []),
    ];
    return children.some(walk);
  };
  return walk(compile(sanitizeSchema(schema)));
}
