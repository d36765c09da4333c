/**
 * An independent check that a CRD schema is structural and uses only what apiextensions accepts,
 * written from the rules in kubernetes/apiextensions-apiserver:
 * `pkg/apiserver/schema/validation.go` (ValidateStructural: types everywhere, nothing but value
 * validations inside anyOf/allOf/oneOf/not, completeness, metadata, root) and
 * `pkg/apis/apiextensions/validation/validation.go` (forbidden keywords, additionalProperties vs
 * properties, root fields allowed with the status subresource, nullable root).
 *
 * `toCrd` runs it on everything it generates, so a translation bug surfaces as an error at
 * definition time rather than as a 422 from a real cluster; tests run it on hand-written schemas.
 * Problems are rendered the way the server renders field errors
 * (`<path>: Required value: must not be empty for specified object fields`).
 */
import type { KubeSchema } from "./kube-schema.ts";

/** One violation, in the server's `field.Error` wording. */
export interface StructuralProblem {
  field: string;
  type: "Required value" | "Forbidden" | "Invalid value" | "Unsupported value";
  detail: string;
}

export interface StructuralCheckOptions {
  /** With the status subresource, only some keywords may sit at the root (`allowedFieldsAtRootSchema`). */
  statusSubresource?: boolean;
  /** Prefix of every reported path; the server uses `spec.validation.openAPIV3Schema` or a per-version path. */
  basePath?: string;
}

/** Every keyword `JSONSchemaProps` has (JSON names), so anything else is an unknown field. */
const KNOWN_KEYS = new Set([
  "id",
  "$schema",
  "$ref",
  "description",
  "type",
  "format",
  "title",
  "default",
  "maximum",
  "exclusiveMaximum",
  "minimum",
  "exclusiveMinimum",
  "maxLength",
  "minLength",
  "pattern",
  "maxItems",
  "minItems",
  "uniqueItems",
  "multipleOf",
  "enum",
  "maxProperties",
  "minProperties",
  "required",
  "items",
  "allOf",
  "oneOf",
  "anyOf",
  "not",
  "properties",
  "additionalProperties",
  "patternProperties",
  "dependencies",
  "additionalItems",
  "definitions",
  "externalDocs",
  "example",
  "nullable",
  "x-kubernetes-preserve-unknown-fields",
  "x-kubernetes-embedded-resource",
  "x-kubernetes-int-or-string",
  "x-kubernetes-list-map-keys",
  "x-kubernetes-list-type",
  "x-kubernetes-map-type",
  "x-kubernetes-validations",
]);

const ALLOWED_AT_ROOT_WITH_STATUS = new Set([
  "description",
  "type",
  "format",
  "title",
  "maximum",
  "exclusiveMaximum",
  "minimum",
  "exclusiveMinimum",
  "maxLength",
  "minLength",
  "pattern",
  "maxItems",
  "minItems",
  "uniqueItems",
  "multipleOf",
  "required",
  "items",
  "properties",
  "externalDocs",
  "example",
  "x-kubernetes-preserve-unknown-fields",
  "x-kubernetes-validations",
]);

const OPENAPI_TYPES = new Set(["string", "number", "integer", "boolean", "array", "object"]);

/** Keywords that must not appear inside a logical junctor (NestedValueValidation's forbidden generics/extensions). */
const FORBIDDEN_IN_JUNCTOR: ReadonlyArray<[string, string]> = [
  ["type", "must be empty to be structural"],
  ["default", "must be undefined to be structural"],
  ["title", "must be empty to be structural"],
  ["description", "must be empty to be structural"],
  ["nullable", "must be false to be structural"],
  ["additionalProperties", "must be undefined to be structural"],
  ["x-kubernetes-preserve-unknown-fields", "must be false to be structural"],
  ["x-kubernetes-embedded-resource", "must be false to be structural"],
  ["x-kubernetes-int-or-string", "must be false to be structural"],
  ["x-kubernetes-list-map-keys", "must be empty to be structural"],
  ["x-kubernetes-list-type", "must be undefined to be structural"],
  ["x-kubernetes-map-type", "must be undefined to be structural"],
  ["x-kubernetes-validations", "must be empty to be structural"],
];

type Level = "root" | "item" | "field";

/** Returns every structural violation of `schema`; an empty list means the server would accept it. */
export function structuralProblems(schema: KubeSchema, options: StructuralCheckOptions = {}): StructuralProblem[] {
  const problems: StructuralProblem[] = [];
  const base = options.basePath ?? "openAPIV3Schema";
  const report = (field: string, type: StructuralProblem["type"], detail: string) =>
    problems.push({ field, type, detail });
  checkNode(schema, "root", base, report);
  if (schema.nullable) report(`${base}.nullable`, "Forbidden", "nullable cannot be true at the root");
  if (options.statusSubresource) {
    for (const key of Object.keys(schema)) {
      if (!ALLOWED_AT_ROOT_WITH_STATUS.has(key)) {
        report(
          base,
          "Invalid value",
          `only ${[...ALLOWED_AT_ROOT_WITH_STATUS].join(", ")} are allowed at the root of the schema if the status subresource is enabled (found ${key})`,
        );
      }
    }
  }
  return problems.sort((a, b) => formatProblem(a).localeCompare(formatProblem(b)));
}

/** `path: Type: detail`, as `field.Error.Error()` prints it. */
export function formatProblem(p: StructuralProblem): string {
  return `${p.field}: ${p.type}: ${p.detail}`;
}

type Report = (field: string, type: StructuralProblem["type"], detail: string) => void;

function checkNode(s: KubeSchema, level: Level, path: string, report: Report): void {
  checkKeywords(s, path, report);
  const type = s.type;
  if (s["x-kubernetes-embedded-resource"] && type !== "object") {
    report(
      `${path}.type`,
      type ? "Invalid value" : "Required value",
      "must be object if x-kubernetes-embedded-resource is true",
    );
  } else if (!type && !s["x-kubernetes-int-or-string"] && !s["x-kubernetes-preserve-unknown-fields"]) {
    const detail = {
      root: "must not be empty at the root",
      item: "must not be empty for specified array items",
      field: "must not be empty for specified object fields",
    }[level];
    report(`${path}.type`, "Required value", detail);
  }
  if (type && !OPENAPI_TYPES.has(type)) {
    report(
      `${path}.type`,
      type === "null" ? "Forbidden" : "Unsupported value",
      type === "null"
        ? "type cannot be set to null, use nullable as an alternative"
        : `supported values: ${[...OPENAPI_TYPES].join(", ")}`,
    );
  }
  if (level === "root" && type && type !== "object")
    report(`${path}.type`, "Invalid value", "must be object at the root");
  if (type === "array" && s.items === undefined) report(`${path}.items`, "Required value", "must be specified");
  if (s["x-kubernetes-int-or-string"] && s["x-kubernetes-preserve-unknown-fields"]) {
    report(
      `${path}.x-kubernetes-preserve-unknown-fields`,
      "Invalid value",
      "must be false if x-kubernetes-int-or-string is true",
    );
  }
  if (s["x-kubernetes-preserve-unknown-fields"] === false) {
    report(`${path}.x-kubernetes-preserve-unknown-fields`, "Invalid value", "must be true or undefined");
  }
  const hasProperties = s.properties !== undefined && Object.keys(s.properties).length > 0;
  if (s.additionalProperties !== undefined) {
    if (level === "root") report(`${path}.additionalProperties`, "Forbidden", "must not be used at the root");
    if (hasProperties && s.additionalProperties !== true) {
      report(`${path}.additionalProperties`, "Forbidden", "additionalProperties and properties are mutual exclusive");
    }
    if (typeof s.additionalProperties === "object")
      checkNode(s.additionalProperties, "field", `${path}.additionalProperties`, report);
  }
  if (s.items !== undefined) {
    if (Array.isArray(s.items)) report(`${path}.items`, "Forbidden", "items must be a schema object and not an array");
    else checkNode(s.items, "item", `${path}.items`, report);
  }
  for (const [name, prop] of Object.entries(s.properties ?? {})) {
    checkNode(prop, "field", `${path}.properties[${name}]`, report);
  }
  const metadata = s.properties?.metadata;
  if (metadata !== undefined && (level === "root" || s["x-kubernetes-embedded-resource"])) {
    if (metadata.type !== "object") report(`${path}.properties[metadata].type`, "Invalid value", "must be object");
    if (level === "root") {
      const extra = Object.keys(metadata).filter((k) => k !== "type" && k !== "properties");
      const props = Object.keys(metadata.properties ?? {}).filter((k) => k !== "name" && k !== "generateName");
      if (extra.length > 0 || props.length > 0) {
        report(
          `${path}.properties[metadata]`,
          "Forbidden",
          "must not specify anything other than name and generateName, but metadata is implicitly specified",
        );
      }
    }
  }
  for (const meta of ["kind", "apiVersion"] as const) {
    const prop = s.properties?.[meta];
    if (prop !== undefined && (level === "root" || s["x-kubernetes-embedded-resource"]) && prop.type !== "string") {
      report(`${path}.properties[${meta}].type`, "Invalid value", "must be string");
    }
  }
  const intOrStringAnyOf = isIntOrStringPattern(s.anyOf);
  for (const junctor of ["anyOf", "allOf", "oneOf"] as const) {
    const members = s[junctor];
    if (members === undefined) continue;
    members.forEach((member, i) => {
      if (junctor === "anyOf" && intOrStringAnyOf) return;
      if (junctor === "allOf" && i === 0 && isIntOrStringPattern(member.anyOf)) {
        checkNested({ ...member, anyOf: undefined }, s, path, `${path}.${junctor}[${i}]`, report);
        return;
      }
      checkNested(member, s, path, `${path}.${junctor}[${i}]`, report);
    });
  }
  if (s.not !== undefined) checkNested(s.not, s, path, `${path}.not`, report);
}

function isIntOrStringPattern(members: KubeSchema[] | undefined): boolean {
  return (
    members !== undefined &&
    members.length === 2 &&
    JSON.stringify(members[0]) === '{"type":"integer"}' &&
    JSON.stringify(members[1]) === '{"type":"string"}'
  );
}

function checkKeywords(s: KubeSchema, path: string, report: Report): void {
  for (const key of Object.keys(s)) {
    if (!KNOWN_KEYS.has(key))
      report(`${path}.${key}`, "Forbidden", "unknown field: JSONSchemaProps has no such keyword");
  }
  const raw = s as Record<string, unknown>;
  const forbidden: Array<[string, string]> = [
    ["id", "id is not supported"],
    ["additionalItems", "additionalItems is not supported"],
    ["patternProperties", "patternProperties is not supported"],
    ["definitions", "definitions is not supported"],
    ["dependencies", "dependencies is not supported"],
    ["$ref", "$ref is not supported"],
  ];
  for (const [key, detail] of forbidden) {
    if (raw[key] !== undefined) report(`${path}.${key}`, "Forbidden", detail);
  }
  if (s.uniqueItems) {
    report(
      `${path}.uniqueItems`,
      "Forbidden",
      "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
    );
  }
}

/**
 * A schema under anyOf/allOf/oneOf/not may only hold value validations, and every field or item
 * it mentions must also be specified in the structural part (`complete.go`: for CRDs even a map's
 * `additionalProperties` does not count). `sPath` is where the structural counterpart should be,
 * `vPath` where the value validation is; the server reports the first "because it is defined in" the second.
 */
function checkNested(v: KubeSchema, outer: KubeSchema | undefined, sPath: string, vPath: string, report: Report): void {
  checkKeywords(v, vPath, report);
  const raw = v as Record<string, unknown>;
  for (const [key, detail] of FORBIDDEN_IN_JUNCTOR) {
    if (raw[key] !== undefined && raw[key] !== false) report(`${vPath}.${key}`, "Forbidden", detail);
  }
  if (v.properties?.metadata !== undefined) {
    report(`${vPath}.properties[metadata]`, "Forbidden", "must not be specified in a nested context");
  }
  for (const [name, prop] of Object.entries(v.properties ?? {})) {
    const outerProp = outer?.properties?.[name];
    const sChild = `${sPath}.properties[${name}]`;
    const vChild = `${vPath}.properties[${name}]`;
    if (outerProp === undefined) report(sChild, "Required value", `because it is defined in ${vChild}`);
    else checkNested(prop, outerProp, sChild, vChild, report);
  }
  if (v.items !== undefined && !Array.isArray(v.items)) {
    if (outer?.items === undefined)
      report(`${sPath}.items`, "Required value", `because it is defined in ${vPath}.items`);
    else checkNested(v.items, outer.items, `${sPath}.items`, `${vPath}.items`, report);
  }
  for (const junctor of ["anyOf", "allOf", "oneOf"] as const) {
    for (const [i, member] of (v[junctor] ?? []).entries()) {
      checkNested(member, outer, sPath, `${vPath}.${junctor}[${i}]`, report);
    }
  }
  if (v.not !== undefined) checkNested(v.not, outer, sPath, `${vPath}.not`, report);
}
