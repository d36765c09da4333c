/**
 * CustomResourceDefinition validation as kube-apiserver performs it on create and update
 * (apiextensions-apiserver `pkg/apis/apiextensions/validation/validation.go`, Kubernetes 1.32), with the
 * real server's messages, field paths and bad values (Go's `%#v` of the internal structs).
 *
 * Expected flow: the server calls `validateCustomResourceDefinition(crd)` on create and
 * `validateCustomResourceDefinitionUpdate(newCrd, oldCrd)` on update with the v1 objects as received
 * (the old one as stored); a non-empty result becomes `invalidStatus("apiextensions.k8s.io",
 * "CustomResourceDefinition", name, errors)`.
 *
 * Guarantees:
 * - Paths are the internal version's (see crd-internal.ts): schemas shared by every version are
 *   reported under `spec.validation.openAPIV3Schema`, differing ones under `spec.versions[i].schema`.
 * - status.storedVersions is computed as PrepareForCreate/PrepareForUpdate compute it (the client's
 *   status is ignored), so "must have at least one stored version" appears exactly when it would.
 * - Never throws on malformed input.
 * Caveats:
 * - CEL rules (`x-kubernetes-validations`) are checked for shape (rule/message/reason/fieldPath);
 *   compiling them (compile errors, cost limits) is left to the `compileRules` extension point.
 * - Defaults inside embedded-resource metadata are not checked as ObjectMeta (schemaobjectmeta).
 * - Go walks schema properties in random order; we use the schema's order (the structural-schema
 *   part is sorted by message, as Go sorts it).
 */

import {
  acceptedNames,
  type Column,
  type CustomResourceDefinitionV1,
  goSchema,
  goSchemaItems,
  goStrings,
  goVersions,
  type InternalSpec,
  type Names,
  type Subresources,
  semanticEqual,
  toInternalSpec,
} from "./crd-internal.ts";
import {
  duplicate,
  type FieldError,
  type FieldPath,
  fieldPath,
  forbidden,
  invalid,
  notSupported,
  required,
  tooMany,
} from "./field-errors.ts";
import { isDNS1035Label, isDNS1123Subdomain, nameIsDNSSubdomain } from "./names.ts";
import { validateObjectMeta, validateObjectMetaUpdate } from "./object-meta.ts";
import { pruneSchemaValue } from "./schema-prune.ts";
import type { JSONSchemaProps } from "./schema-types.ts";
import { validateCustomObject } from "./schema-validate.ts";
import { newStructuralError, schemaIsNonStructural, validateStructural } from "./structural.ts";

export type { CustomResourceDefinitionV1 } from "./crd-internal.ts";

const PRINTER_COLUMN_TYPES = ["boolean", "date", "integer", "number", "string"];
const PRINTER_COLUMN_FORMATS = ["byte", "date", "date-time", "double", "float", "int32", "int64", "password"];
const OPENAPI_V3_TYPES = ["array", "boolean", "integer", "number", "object", "string"];
const SUPPORTED_VALIDATION_REASONS = [
  "FieldValueDuplicate",
  "FieldValueForbidden",
  "FieldValueInvalid",
  "FieldValueRequired",
];
/** MaxSelectableFields in the apiextensions validation. */
const MAX_SELECTABLE_FIELDS = 8;
/** validateDeprecationWarning's limit. */
const MAX_DEPRECATION_WARNING_LENGTH = 256;
const META_FIELDS = new Set(["metadata", "kind", "apiVersion"]);
const API_APPROVAL_ANNOTATION = "api-approved.kubernetes.io";
/** The JSONSchemaProps fields (Go names, declaration order) allowed at the root when /status is enabled. */
const ALLOWED_AT_ROOT = [
  "Description",
  "Type",
  "Format",
  "Title",
  "Maximum",
  "ExclusiveMaximum",
  "Minimum",
  "ExclusiveMinimum",
  "MaxLength",
  "MinLength",
  "Pattern",
  "MaxItems",
  "MinItems",
  "UniqueItems",
  "MultipleOf",
  "Required",
  "Items",
  "Properties",
  "ExternalDocs",
  "Example",
  "XPreserveUnknownFields",
  "XValidations",
];

interface Options {
  requireRecognizedConversionReviewVersion: boolean;
  requireImmutableNames: boolean;
  requireOpenAPISchema: boolean;
  requireValidPropertyType: boolean;
  requireStructuralSchema: boolean;
  requirePrunedDefaults: boolean;
  requireAtomicSetType: boolean;
  requireMapListKeysMapSetValidation: boolean;
}

const CREATE_OPTIONS: Options = {
  requireRecognizedConversionReviewVersion: true,
  requireImmutableNames: false,
  requireOpenAPISchema: true,
  requireValidPropertyType: true,
  requireStructuralSchema: true,
  requirePrunedDefaults: true,
  requireAtomicSetType: true,
  requireMapListKeysMapSetValidation: true,
};

function isSchema(v: unknown): v is JSONSchemaProps {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function nonEmpty(v: unknown): v is string {
  return typeof v === "string" && v.length > 0;
}

// ---------------------------------------------------------------------------------------------
// Schema walks

/** SchemaHas: whether any node of the schema satisfies `pred`. */
function schemaHas(s: JSONSchemaProps | undefined, pred: (s: JSONSchemaProps) => boolean): boolean {
  if (!isSchema(s)) return false;
  if (pred(s)) return true;
  const items = s.items;
  const children: unknown[] = [
    ...(Array.isArray(items) ? items : [items]),
    ...(s.allOf ?? []),
    ...(s.anyOf ?? []),
    ...(s.oneOf ?? []),
    s.not,
    ...Object.values(s.properties ?? {}),
    s.additionalProperties,
    ...Object.values(s.patternProperties ?? {}),
    s.additionalItems,
    ...Object.values(s.definitions ?? {}),
    ...Object.values(s.dependencies ?? {}),
  ];
  return children.some((c) => isSchema(c) && schemaHas(c, pred));
}

function specSchemas(spec: InternalSpec): JSONSchemaProps[] {
  const out: JSONSchemaProps[] = [];
  if (spec.validation?.openAPIV3Schema) out.push(spec.validation.openAPIV3Schema);
  for (const v of spec.versions) if (v.schema?.openAPIV3Schema) out.push(v.schema.openAPIV3Schema);
  return out;
}

function specHas(spec: InternalSpec, pred: (s: JSONSchemaProps) => boolean): boolean {
  return specSchemas(spec).some((s) => schemaHas(s, pred));
}

const hasDefault = (s: JSONSchemaProps) => s.default !== undefined && s.default !== null;
const hasKubernetesExtensions = (s: JSONSchemaProps) =>
  s["x-kubernetes-embedded-resource"] === true ||
  (s["x-kubernetes-preserve-unknown-fields"] !== undefined && s["x-kubernetes-preserve-unknown-fields"] !== null) ||
  s["x-kubernetes-int-or-string"] === true ||
  (s["x-kubernetes-list-map-keys"] ?? []).length > 0 ||
  (s["x-kubernetes-list-type"] !== undefined && s["x-kubernetes-list-type"] !== null) ||
  (s["x-kubernetes-validations"] ?? []).length > 0;

// ---------------------------------------------------------------------------------------------
// The OpenAPI schema walk (ValidateCustomResourceDefinitionOpenAPISchema)

/**
 * The extension point for CEL (issue 4): compiles the `x-kubernetes-validations` rules of one schema
 * node and returns the compile/cost errors, e.g. at `path.child("x-kubernetes-validations").index(i).child("rule")`.
 * Called as the real server compiles: only for nodes whose own subtree had no schema errors, only when
 * the schema is structural with valid defaults; its errors come after every schema error.
 */
export type RuleCompiler = (schema: JSONSchemaProps, path: FieldPath) => FieldError[];

/** Options of the CRD validation entry points. */
export interface CrdValidationOptions {
  compileRules?: RuleCompiler;
}

interface WalkContext {
  allowDefaults: boolean;
  disallowDefaultsReason: string;
  insideResourceMeta: boolean;
  requireValidPropertyType: boolean;
  requireAtomicSetType: boolean;
  requireMapListKeysMapSetValidation: boolean;
  /** CEL errors of the whole walk, or undefined when the schema cannot have a CEL context. */
  celErrors: FieldError[] | undefined;
  compileRules: RuleCompiler | undefined;
}

/** specStandardValidatorV3.validate: the keywords CRDs never support, and defaults where forbidden. */
function standardChecks(s: JSONSchemaProps, path: FieldPath, ctx: WalkContext): FieldError[] {
  const errs: FieldError[] = [];
  const type = typeof s.type === "string" ? s.type : "";
  if (ctx.requireValidPropertyType && type !== "" && !OPENAPI_V3_TYPES.includes(type)) {
    errs.push(notSupported(path.child("type"), type, OPENAPI_V3_TYPES));
  }
  if (s.default !== undefined && s.default !== null && !ctx.allowDefaults) {
    errs.push(
      forbidden(
        path.child("default"),
        "must not be set" + (ctx.disallowDefaultsReason ? " " + ctx.disallowDefaultsReason : ""),
      ),
    );
  }
  if (nonEmpty(s.id)) errs.push(forbidden(path.child("id"), "id is not supported"));
  if (s.additionalItems !== undefined && s.additionalItems !== null) {
    errs.push(forbidden(path.child("additionalItems"), "additionalItems is not supported"));
  }
  if (s.patternProperties && Object.keys(s.patternProperties).length > 0) {
    errs.push(forbidden(path.child("patternProperties"), "patternProperties is not supported"));
  }
  if (s.definitions && Object.keys(s.definitions).length > 0) {
    errs.push(forbidden(path.child("definitions"), "definitions is not supported"));
  }
  if (s.dependencies !== undefined && s.dependencies !== null) {
    errs.push(forbidden(path.child("dependencies"), "dependencies is not supported"));
  }
  if (s.$ref !== undefined && s.$ref !== null) errs.push(forbidden(path.child("$ref"), "$ref is not supported"));
  if (type === "null")
    errs.push(forbidden(path.child("type"), "type cannot be set to null, use nullable as an alternative"));
  if (Array.isArray(s.items) && s.items.length > 0) {
    errs.push(forbidden(path.child("items"), "items must be a schema object and not an array"));
  }
  if (ctx.insideResourceMeta && s["x-kubernetes-embedded-resource"] === true) {
    errs.push(forbidden(path.child("x-kubernetes-embedded-resource"), "must not be used inside of resource meta"));
  }
  return errs;
}

/** A field path a rule's `fieldPath` or a selectable field names, resolved against the schema (cel.ValidFieldPath). */
export function resolveFieldPath(
  jsonPath: string,
  schema: JSONSchemaProps | undefined,
  allowArrayNotation: boolean,
): { path: string[]; schema: JSONSchemaProps | undefined } | { error: string } {
  const tokens: string[] = [];
  let i = 0;
  while (i < jsonPath.length) {
    const c = jsonPath[i]!;
    if (c === "." || c === "[" || c === "]") {
      tokens.push(c);
      i++;
    } else if (c === "'") {
      let j = i + 1;
      while (j < jsonPath.length && !(jsonPath[j] === "'" && jsonPath[j - 1] !== "\\")) j++;
      tokens.push(jsonPath.slice(i, j + 1));
      i = j + 1;
    } else {
      let j = i;
      while (j < jsonPath.length && !".[]".includes(jsonPath[j]!)) j++;
      tokens.push(jsonPath.slice(i, j));
      i = j;
    }
  }
  let current = schema;
  const path: string[] = [];
  const step = (name: string): string | undefined => {
    if (current?.properties) {
      // `name` is the CRD author's text: `constructor` must not resolve to Object.prototype's member.
      const next = Object.hasOwn(current.properties, name) ? current.properties[name] : undefined;
      if (!next) return "does not refer to a valid field";
      current = next;
    } else if (current?.additionalProperties !== undefined && current.additionalProperties !== null) {
      current = isSchema(current.additionalProperties) ? current.additionalProperties : undefined;
    } else {
      return "does not refer to a valid field";
    }
    path.push(name);
    return undefined;
  };
  for (let t = 0; t < tokens.length; t++) {
    const tok = tokens[t]!;
    if (tok === "[") {
      if (!allowArrayNotation) return { error: "array notation is not allowed" };
      const lit = tokens[++t];
      if (lit === undefined) return { error: "unexpected end of JSON path" };
      if (lit.length < 2 || !lit.startsWith("'") || !lit.endsWith("'"))
        return { error: `expected single quoted string but got ${lit}` };
      const err = step(lit.slice(1, -1).replace(/\\'/g, "'"));
      if (err) return { error: err };
      const close = tokens[++t];
      if (close === undefined) return { error: "unexpected end of JSON path" };
      if (close !== "]") return { error: `expected ] but got ${close}` };
    } else if (tok === ".") {
      const name = tokens[++t];
      if (name === undefined) return { error: "unexpected end of JSON path" };
      const err = step(name);
      if (err) return { error: err };
    } else {
      return { error: `expected [ or . but got: ${tok}` };
    }
  }
  return { path, schema: current };
}

function validateMapListKeysMapSet(s: JSONSchemaProps, path: FieldPath): FieldError[] {
  const items = isSchema(s.items) ? s.items : undefined;
  const listType = s["x-kubernetes-list-type"];
  if (!items || (listType !== "set" && listType !== "map")) return [];
  const errs: FieldError[] = [];
  if (items.nullable === true) {
    errs.push(
      forbidden(path.child("items").child("nullable"), "cannot be nullable when x-kubernetes-list-type is " + listType),
    );
  }
  if (listType === "map") {
    const req = new Set(items.required ?? []);
    for (const k of s["x-kubernetes-list-map-keys"] ?? []) {
      const p = items.properties?.[k];
      if (!p) continue;
      if (!req.has(k) && (p.default === undefined || p.default === null)) {
        errs.push(
          required(
            path.child("items").child("properties").key(k).child("default"),
            "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
          ),
        );
      }
      if (p.nullable === true) {
        errs.push(
          forbidden(
            path.child("items").child("properties").key(k).child("nullable"),
            "this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
          ),
        );
      }
    }
  }
  return errs;
}

function hasNewlines(s: string): boolean {
  return /[\n\r]/.test(s);
}

function validateRules(s: JSONSchemaProps, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  (s["x-kubernetes-validations"] ?? []).forEach((r, i) => {
    const p = path.child("x-kubernetes-validations").index(i);
    const rule = typeof r?.rule === "string" ? r.rule : "";
    const message = typeof r?.message === "string" ? r.message : "";
    const messageExpression = typeof r?.messageExpression === "string" ? r.messageExpression : "";
    const fp = typeof r?.fieldPath === "string" ? r.fieldPath : "";
    const trimmedRule = rule.trim();
    const trimmedMsg = message.trim();
    if (trimmedRule === "") errs.push(required(p.child("rule"), "rule is not specified"));
    else if (message.length > 0 && trimmedMsg === "")
      errs.push(invalid(p.child("message"), message, "message must be non-empty if specified"));
    else if (hasNewlines(trimmedMsg))
      errs.push(invalid(p.child("message"), message, "message must not contain line breaks"));
    else if (hasNewlines(trimmedRule) && trimmedMsg === "") {
      errs.push(required(p.child("message"), "message must be specified if rule contains line breaks"));
    }
    if (messageExpression.length > 0 && messageExpression.trim() === "") {
      errs.push(required(p.child("messageExpression"), "messageExpression must be non-empty if specified"));
    }
    if (r?.reason !== undefined && r.reason !== null && !SUPPORTED_VALIDATION_REASONS.includes(r.reason)) {
      errs.push(notSupported(p.child("reason"), r.reason, SUPPORTED_VALIDATION_REASONS));
    }
    if (fp.length > 0 && fp.trim() === "")
      errs.push(invalid(p.child("fieldPath"), fp, "fieldPath must be non-empty if specified"));
    if (hasNewlines(fp)) errs.push(invalid(p.child("fieldPath"), fp, "fieldPath must not contain line breaks"));
    if (fp.length > 0 && "error" in resolveFieldPath(fp.trim(), s, true)) {
      errs.push(invalid(p.child("fieldPath"), fp, "fieldPath must be a valid path"));
    }
  });
  return errs;
}

function walkSchema(s: JSONSchemaProps | undefined, path: FieldPath, ctx: WalkContext, isRoot: boolean): FieldError[] {
  if (!isSchema(s)) return [];
  const errs = standardChecks(s, path, ctx);
  const type = typeof s.type === "string" ? s.type : "";
  if (s.uniqueItems === true) {
    errs.push(
      forbidden(
        path.child("uniqueItems"),
        "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
      ),
    );
  }
  const ap = s.additionalProperties;
  if (ap !== undefined && ap !== null) {
    if (s.properties && Object.keys(s.properties).length > 0 && (ap === false || isSchema(ap))) {
      errs.push(
        forbidden(path.child("additionalProperties"), "additionalProperties and properties are mutual exclusive"),
      );
    }
    const sub = ctx.insideResourceMeta
      ? {
          ...ctx,
          allowDefaults: false,
          disallowDefaultsReason: "inside additionalProperties applying to object metadata",
        }
      : ctx;
    if (isSchema(ap)) errs.push(...walkSchema(ap, path.child("additionalProperties"), sub, false));
  }
  for (const [name, prop] of Object.entries(s.properties ?? {})) {
    let sub = ctx;
    if ((isRoot || s["x-kubernetes-embedded-resource"] === true) && META_FIELDS.has(name)) {
      sub = { ...sub, insideResourceMeta: true };
      if (isRoot) sub = { ...sub, allowDefaults: false, disallowDefaultsReason: `in top-level ${name}` };
    }
    errs.push(...walkSchema(prop, path.child("properties").key(name), sub, false));
  }
  if (isSchema(s.not)) errs.push(...walkSchema(s.not, path.child("not"), ctx, false));
  (s.allOf ?? []).forEach((x, i) => void errs.push(...walkSchema(x, path.child("allOf").index(i), ctx, false)));
  (s.oneOf ?? []).forEach((x, i) => void errs.push(...walkSchema(x, path.child("oneOf").index(i), ctx, false)));
  (s.anyOf ?? []).forEach((x, i) => void errs.push(...walkSchema(x, path.child("anyOf").index(i), ctx, false)));
  for (const [name, d] of Object.entries(s.definitions ?? {}))
    errs.push(...walkSchema(d, path.child("definitions").key(name), ctx, false));
  if (s.items !== undefined && s.items !== null) {
    if (isSchema(s.items)) errs.push(...walkSchema(s.items, path.child("items"), ctx, false));
    else if (Array.isArray(s.items))
      s.items.forEach((x, i) => void errs.push(...walkSchema(x, path.child("items").index(i), ctx, false)));
  }
  for (const [name, d] of Object.entries(s.dependencies ?? {})) {
    if (isSchema(d)) errs.push(...walkSchema(d, path.child("dependencies").key(name), ctx, false));
  }
  if (s["x-kubernetes-preserve-unknown-fields"] === false) {
    errs.push(invalid(path.child("x-kubernetes-preserve-unknown-fields"), false, "must be true or undefined"));
  }
  const mapType = s["x-kubernetes-map-type"];
  if (mapType !== undefined && mapType !== null) {
    if (type !== "object") {
      if (type === "") errs.push(required(path.child("type"), "must be object if x-kubernetes-map-type is specified"));
      else errs.push(invalid(path.child("type"), type, "must be object if x-kubernetes-map-type is specified"));
    }
    if (mapType !== "atomic" && mapType !== "granular") {
      errs.push(notSupported(path.child("x-kubernetes-map-type"), mapType, ["atomic", "granular"]));
    }
  }
  const listType = s["x-kubernetes-list-type"];
  const items = isSchema(s.items) ? s.items : undefined;
  if (listType !== undefined && listType !== null && type !== "array") {
    if (type === "") errs.push(required(path.child("type"), "must be array if x-kubernetes-list-type is specified"));
    else errs.push(invalid(path.child("type"), type, "must be array if x-kubernetes-list-type is specified"));
  } else if (ctx.requireAtomicSetType && listType === "set" && items) {
    if (items.type === "array") {
      const ilt = items["x-kubernetes-list-type"];
      if (ilt !== undefined && ilt !== null && ilt !== "atomic") {
        errs.push(
          invalid(
            path.child("items").child("x-kubernetes-list-type"),
            ilt,
            "must be atomic as item of a list with x-kubernetes-list-type=set",
          ),
        );
      }
    } else if (items.type === "object") {
      if (items["x-kubernetes-map-type"] !== "atomic") {
        // Go reports the item's list type here (a nil pointer when unset).
        errs.push(
          invalid(
            path.child("items").child("x-kubernetes-map-type"),
            items["x-kubernetes-list-type"] ?? null,
            "must be atomic as item of a list with x-kubernetes-list-type=set",
          ),
        );
      }
    }
  }
  if (listType !== undefined && listType !== null && !["atomic", "set", "map"].includes(listType)) {
    errs.push(notSupported(path.child("x-kubernetes-list-type"), listType, ["atomic", "set", "map"]));
  }
  const mapKeys = s["x-kubernetes-list-map-keys"] ?? [];
  if (mapKeys.length > 0) {
    if (listType === undefined || listType === null) {
      errs.push(
        required(path.child("x-kubernetes-list-type"), "must be map if x-kubernetes-list-map-keys is non-empty"),
      );
    } else if (listType !== "map") {
      errs.push(
        invalid(
          path.child("x-kubernetes-list-type"),
          listType,
          "must be map if x-kubernetes-list-map-keys is non-empty",
        ),
      );
    }
  }
  if (listType === "map") {
    if (mapKeys.length === 0) {
      errs.push(
        required(path.child("x-kubernetes-list-map-keys"), "must not be empty if x-kubernetes-list-type is map"),
      );
    }
    if (s.items === undefined || s.items === null) {
      errs.push(required(path.child("items"), "must have a schema if x-kubernetes-list-type is map"));
    }
    if (Array.isArray(s.items)) {
      errs.push(
        invalid(
          path.child("items"),
          goSchemaItems(s.items),
          "must only have a single schema if x-kubernetes-list-type is map",
        ),
      );
    }
    if (items && items.type !== "object") {
      errs.push(
        invalid(
          path.child("items").child("type"),
          items.type ?? "",
          "must be object if parent array's x-kubernetes-list-type is map",
        ),
      );
    }
    if (items && items.type === "object") {
      const seen = new Set<string>();
      for (const k of mapKeys) {
        const p = items.properties?.[k];
        if (p) {
          if (p.type === "array" || p.type === "object") {
            errs.push(
              invalid(
                path.child("items").child("properties").key(k).child("type"),
                items.type,
                "must be a scalar type if parent array's x-kubernetes-list-type is map",
              ),
            );
          }
        } else {
          errs.push(
            invalid(
              path.child("x-kubernetes-list-map-keys"),
              goStrings(mapKeys),
              "entries must all be names of item properties",
            ),
          );
        }
        if (seen.has(k))
          errs.push(
            invalid(path.child("x-kubernetes-list-map-keys"), goStrings(mapKeys), "must not contain duplicate entries"),
          );
        seen.add(k);
      }
    }
  }
  if (ctx.requireMapListKeysMapSetValidation) errs.push(...validateMapListKeysMapSet(s, path));
  errs.push(...validateRules(s, path));
  if ((s["x-kubernetes-validations"] ?? []).length > 0 && errs.length === 0 && ctx.celErrors && ctx.compileRules) {
    ctx.celErrors.push(...ctx.compileRules(s, path));
  }
  return errs;
}

// ---------------------------------------------------------------------------------------------
// Defaults (structuraldefaulting.ValidateDefaults)

function validateDefaults(
  s: JSONSchemaProps,
  path: FieldPath,
  requirePruned: boolean,
  embedded: boolean,
  insideMeta: boolean,
): FieldError[] {
  const errs: FieldError[] = [];
  const isEmbedded = embedded || s["x-kubernetes-embedded-resource"] === true;
  const meta = isEmbedded ? false : insideMeta;
  if (s.default !== undefined && s.default !== null) {
    const p = path.child("default");
    if (!meta && requirePruned) {
      const copy = structuredClone(s.default);
      pruneSchemaValue(s, copy, isEmbedded);
      if (!semanticEqual(copy, s.default)) errs.push(invalid(p, s.default, "must not have unknown fields"));
    }
    errs.push(...validateCustomObject(s, s.default, { fieldPrefix: p.toString() }));
  }
  if (isSchema(s.items)) errs.push(...validateDefaults(s.items, path.child("items"), requirePruned, false, meta));
  for (const [k, sub] of Object.entries(s.properties ?? {})) {
    const subMeta = isEmbedded && META_FIELDS.has(k) ? true : meta;
    errs.push(...validateDefaults(sub, path.child("properties").key(k), requirePruned, false, subMeta));
  }
  return errs;
}

// ---------------------------------------------------------------------------------------------
// Per-version and top-level pieces

/** The Go struct order of JSONSchemaProps with a predicate telling whether the field is set (non-zero). */
const ROOT_FIELDS: Array<[string, (s: JSONSchemaProps) => boolean]> = [
  ["ID", (s) => nonEmpty(s.id)],
  ["Schema", (s) => nonEmpty(s.$schema)],
  ["Ref", (s) => s.$ref !== undefined && s.$ref !== null],
  ["Description", (s) => nonEmpty(s.description)],
  ["Type", (s) => nonEmpty(s.type)],
  ["Nullable", (s) => s.nullable === true],
  ["Format", (s) => nonEmpty(s.format)],
  ["Title", (s) => nonEmpty(s.title)],
  ["Default", (s) => s.default !== undefined && s.default !== null],
  ["Maximum", (s) => typeof s.maximum === "number"],
  ["ExclusiveMaximum", (s) => s.exclusiveMaximum === true],
  ["Minimum", (s) => typeof s.minimum === "number"],
  ["ExclusiveMinimum", (s) => s.exclusiveMinimum === true],
  ["MaxLength", (s) => typeof s.maxLength === "number"],
  ["MinLength", (s) => typeof s.minLength === "number"],
  ["Pattern", (s) => nonEmpty(s.pattern)],
  ["MaxItems", (s) => typeof s.maxItems === "number"],
  ["MinItems", (s) => typeof s.minItems === "number"],
  ["UniqueItems", (s) => s.uniqueItems === true],
  ["MultipleOf", (s) => typeof s.multipleOf === "number"],
  ["Enum", (s) => Array.isArray(s.enum)],
  ["MaxProperties", (s) => typeof s.maxProperties === "number"],
  ["MinProperties", (s) => typeof s.minProperties === "number"],
  ["Required", (s) => Array.isArray(s.required)],
  ["Items", (s) => s.items !== undefined && s.items !== null],
  ["AllOf", (s) => Array.isArray(s.allOf)],
  ["OneOf", (s) => Array.isArray(s.oneOf)],
  ["AnyOf", (s) => Array.isArray(s.anyOf)],
  ["Not", (s) => isSchema(s.not)],
  ["Properties", (s) => isSchema(s.properties)],
  ["AdditionalProperties", (s) => s.additionalProperties !== undefined && s.additionalProperties !== null],
  ["PatternProperties", (s) => isSchema(s.patternProperties)],
  ["Dependencies", (s) => isSchema(s.dependencies)],
  ["AdditionalItems", (s) => s.additionalItems !== undefined && s.additionalItems !== null],
  ["Definitions", (s) => isSchema(s.definitions)],
  ["ExternalDocs", (s) => isSchema(s.externalDocs)],
  ["Example", (s) => s.example !== undefined && s.example !== null],
  ["XPreserveUnknownFields", (s) => typeof s["x-kubernetes-preserve-unknown-fields"] === "boolean"],
  ["XEmbeddedResource", (s) => s["x-kubernetes-embedded-resource"] === true],
  ["XIntOrString", (s) => s["x-kubernetes-int-or-string"] === true],
  ["XListMapKeys", (s) => Array.isArray(s["x-kubernetes-list-map-keys"])],
  ["XListType", (s) => typeof s["x-kubernetes-list-type"] === "string"],
  ["XMapType", (s) => typeof s["x-kubernetes-map-type"] === "string"],
  ["XValidations", (s) => Array.isArray(s["x-kubernetes-validations"])],
];

/** validateCustomResourceDefinitionValidation: one `{openAPIV3Schema}` at `path` (spec.validation or a version's schema). */
function validateSchemaBlock(
  block: { openAPIV3Schema: JSONSchemaProps | undefined } | undefined,
  statusEnabled: boolean,
  opts: Options,
  path: FieldPath,
  compileRules: RuleCompiler | undefined,
): FieldError[] {
  const errs: FieldError[] = [];
  const schema = block?.openAPIV3Schema;
  if (!isSchema(schema)) return errs;
  const schemaPath = path.child("openAPIV3Schema");
  if (statusEnabled) {
    for (const [name, isSet] of ROOT_FIELDS) {
      if (!isSet(schema)) continue;
      if (name === "Type") {
        if (schema.type !== "object") {
          errs.push(
            invalid(
              path.child("openAPIV3Schema.type"),
              schema.type,
              `only "object" is allowed as the type at the root of the schema if the status subresource is enabled`,
            ),
          );
          break;
        }
        continue;
      }
      if (!ALLOWED_AT_ROOT.includes(name)) {
        errs.push(
          invalid(
            schemaPath,
            goSchema(schema),
            `only [${ALLOWED_AT_ROOT.join(" ")}] fields are allowed at the root of the schema if the status subresource is enabled`,
          ),
        );
        break;
      }
    }
  }
  if (schema.nullable === true)
    errs.push(forbidden(path.child("openAPIV3Schema.nullable"), "nullable cannot be true at the root"));
  const initErrs: FieldError[] = [];
  let celErrors: FieldError[] | undefined;
  if (opts.requireStructuralSchema) {
    const notStructural = newStructuralError(schema);
    if (notStructural) {
      initErrs.push(invalid(schemaPath, "", notStructural));
    } else {
      const structuralErrs = validateStructural(schemaPath, schema);
      if (structuralErrs.length > 0) errs.push(...structuralErrs);
      else {
        const defaultErrs = validateDefaults(schema, schemaPath, opts.requirePrunedDefaults, true, false);
        errs.push(...defaultErrs);
        // Only a structural schema with valid defaults gets a CEL context (RootCELContext).
        if (defaultErrs.length === 0) celErrors = [];
      }
    }
  }
  const ctx: WalkContext = {
    allowDefaults: true,
    disallowDefaultsReason: "",
    insideResourceMeta: false,
    requireValidPropertyType: opts.requireValidPropertyType,
    requireAtomicSetType: opts.requireAtomicSetType,
    requireMapListKeysMapSetValidation: opts.requireMapListKeysMapSetValidation,
    celErrors,
    compileRules,
  };
  errs.push(...walkSchema(schema, schemaPath, ctx, true));
  errs.push(...(celErrors ?? []));
  if (errs.length === 0) errs.push(...initErrs);
  return errs;
}

function validateSimpleJSONPath(s: string, path: FieldPath): FieldError[] {
  if (s.length === 0) return [invalid(path, s, "must not be empty")];
  if (s[0] !== ".") return [invalid(path, s, "must be a simple json path starting with .")];
  return [];
}

function validateSubresources(sub: Subresources | undefined, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const scale = sub?.scale;
  if (!scale) return errs;
  const spec = typeof scale.specReplicasPath === "string" ? scale.specReplicasPath : "";
  if (spec === "") errs.push(required(path.child("scale.specReplicasPath")));
  else {
    const e = validateSimpleJSONPath(spec, path.child("scale.specReplicasPath"));
    if (e.length > 0) errs.push(...e);
    else if (!spec.startsWith(".spec."))
      errs.push(invalid(path.child("scale.specReplicasPath"), spec, "should be a json path under .spec"));
  }
  const status = typeof scale.statusReplicasPath === "string" ? scale.statusReplicasPath : "";
  if (status === "") errs.push(required(path.child("scale.statusReplicasPath")));
  else {
    const e = validateSimpleJSONPath(status, path.child("scale.statusReplicasPath"));
    if (e.length > 0) errs.push(...e);
    else if (!status.startsWith(".status.")) {
      errs.push(invalid(path.child("scale.statusReplicasPath"), status, "should be a json path under .status"));
    }
  }
  const selector = scale.labelSelectorPath;
  if (typeof selector === "string" && selector.length > 0) {
    const e = validateSimpleJSONPath(selector, path.child("scale.labelSelectorPath"));
    if (e.length > 0) errs.push(...e);
    else if (!selector.startsWith(".spec.") && !selector.startsWith(".status.")) {
      errs.push(
        invalid(path.child("scale.labelSelectorPath"), selector, "should be a json path under either .spec or .status"),
      );
    }
  }
  return errs;
}

function validateColumn(col: Column, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const types = `must be one of ${PRINTER_COLUMN_TYPES.join(",")}`;
  if (col.name === "") errs.push(required(path.child("name")));
  if (col.type === "") errs.push(required(path.child("type"), types));
  else if (!PRINTER_COLUMN_TYPES.includes(col.type)) errs.push(invalid(path.child("type"), col.type, types));
  if (col.format !== "" && !PRINTER_COLUMN_FORMATS.includes(col.format)) {
    errs.push(invalid(path.child("format"), col.format, `must be one of ${PRINTER_COLUMN_FORMATS.join(",")}`));
  }
  if (col.jsonPath === "") errs.push(required(path.child("JSONPath")));
  else errs.push(...validateSimpleJSONPath(col.jsonPath, path.child("JSONPath")));
  return errs;
}

function validateSelectableFields(
  fields: Array<{ jsonPath: string }>,
  schema: JSONSchemaProps | undefined,
  path: FieldPath,
): FieldError[] {
  const errs: FieldError[] = [];
  const unique = new Set<string>();
  fields.forEach((f, i) => {
    const p = path.index(i).child("jsonPath");
    if (f.jsonPath === "") {
      errs.push(required(p));
      return;
    }
    const resolved = resolveFieldPath(f.jsonPath, schema, false);
    if ("error" in resolved) {
      errs.push(invalid(p, f.jsonPath, `is an invalid path: ${resolved.error}`));
      return;
    }
    if (resolved.path[0] === "metadata") errs.push(invalid(p, f.jsonPath, "must not point to fields in metadata"));
    const t = resolved.schema?.type;
    if (t !== "string" && t !== "boolean" && t !== "integer") {
      errs.push(
        invalid(
          p,
          f.jsonPath,
          "must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.",
        ),
      );
    }
    const key = resolved.path.join(".");
    if (unique.has(key)) errs.push(duplicate(p, f.jsonPath));
    else unique.add(key);
  });
  if (unique.size > MAX_SELECTABLE_FIELDS) errs.push(tooMany(path, unique.size, MAX_SELECTABLE_FIELDS));
  return errs;
}

function isPrintable(ch: string): boolean {
  return /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u.test(ch);
}

function validateDeprecationWarning(deprecated: boolean, warning: string | undefined): string[] {
  if (!deprecated && warning !== undefined) return ["can only be set for deprecated versions"];
  if (warning === undefined) return [];
  const errs: string[] = [];
  if (Buffer.byteLength(warning) > MAX_DEPRECATION_WARNING_LENGTH) errs.push("must be <= 256 characters long");
  if (warning.length === 0) errs.push("must not be an empty string");
  let index = 0;
  for (const ch of warning) {
    if (!isPrintable(ch)) {
      errs.push(`must only contain printable UTF-8 characters; non-printable character found at index ${index}`);
      break;
    }
    index += Buffer.byteLength(ch);
  }
  return errs;
}

function validateNames(names: Names, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const joined = (xs: string[]) => xs.join(",");
  if (names.plural !== "" && isDNS1035Label(names.plural).length > 0) {
    errs.push(invalid(path.child("plural"), names.plural, joined(isDNS1035Label(names.plural))));
  }
  if (names.singular !== "" && isDNS1035Label(names.singular).length > 0) {
    errs.push(invalid(path.child("singular"), names.singular, joined(isDNS1035Label(names.singular))));
  }
  const mixed = "may have mixed case, but should otherwise match: ";
  if (names.kind !== "" && isDNS1035Label(names.kind.toLowerCase()).length > 0) {
    errs.push(invalid(path.child("kind"), names.kind, mixed + joined(isDNS1035Label(names.kind.toLowerCase()))));
  }
  if (names.listKind !== "" && isDNS1035Label(names.listKind.toLowerCase()).length > 0) {
    errs.push(
      invalid(path.child("listKind"), names.listKind, mixed + joined(isDNS1035Label(names.listKind.toLowerCase()))),
    );
  }
  names.shortNames.forEach((s, i) => {
    const e = isDNS1035Label(s);
    if (e.length > 0) errs.push(invalid(path.child("shortNames").index(i), s, joined(e)));
  });
  if (names.kind !== "" && names.kind === names.listKind) {
    errs.push(invalid(path.child("listKind"), names.listKind, "kind and listKind may not be the same"));
  }
  names.categories.forEach((c, i) => {
    const e = isDNS1035Label(c);
    if (e.length > 0) errs.push(invalid(path.child("categories").index(i), c, joined(e)));
  });
  return errs;
}

function validateWebhookURL(url: string, path: FieldPath): FieldError[] {
  const form = "; desired format: https://host[/path]";
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return [invalid(path, "", "host must be specified" + form)];
  }
  const errs: FieldError[] = [];
  const scheme = u.protocol.replace(/:$/, "");
  if (scheme !== "https") errs.push(invalid(path, scheme, "'https' is the only allowed URL scheme" + form));
  if (u.host === "") errs.push(invalid(path, u.host, "host must be specified" + form));
  if (u.username !== "" || u.password !== "") {
    errs.push(
      invalid(
        path,
        u.password ? `${u.username}:${u.password}` : u.username,
        "user information is not permitted in the URL",
      ),
    );
  }
  if (u.hash.length > 1) errs.push(invalid(path, u.hash.slice(1), "fragments are not permitted in the URL"));
  if (u.search.length > 1) errs.push(invalid(path, u.search.slice(1), "query parameters are not permitted in the URL"));
  return errs;
}

function validateWebhookService(
  svc: { namespace?: string; name?: string; path?: string | null; port?: number | null },
  path: FieldPath,
): FieldError[] {
  const errs: FieldError[] = [];
  if (!nonEmpty(svc.name)) errs.push(required(path.child("name")));
  if (!nonEmpty(svc.namespace)) errs.push(required(path.child("namespace")));
  // v1 defaults the port to 443.
  const port = typeof svc.port === "number" ? svc.port : 443;
  if (port < 1 || port > 65535) {
    errs.push(invalid(path.child("port"), port, "port is not valid: must be between 1 and 65535, inclusive"));
  }
  const urlPath = svc.path;
  if (typeof urlPath !== "string" || urlPath === "/" || urlPath === "") return errs;
  if (urlPath === "//") return [...errs, invalid(path.child("path"), urlPath, "segment[0] may not be empty")];
  if (!urlPath.startsWith("/")) errs.push(invalid(path.child("path"), urlPath, "must start with a '/'"));
  let toCheck = urlPath.slice(1);
  if (toCheck.endsWith("/")) toCheck = toCheck.slice(0, -1);
  toCheck.split("/").forEach((step, i) => {
    if (step === "") {
      errs.push(invalid(path.child("path"), urlPath, `segment[${i}] may not be empty`));
      return;
    }
    for (const f of isDNS1123Subdomain(step)) errs.push(invalid(path.child("path"), urlPath, `segment[${i}]: ${f}`));
  });
  return errs;
}

function validateConversion(spec: InternalSpec, opts: Options, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const c = spec.conversion;
  const strategies = ["None", "Webhook"];
  if (c.strategy === "") errs.push(required(path.child("strategy")));
  else if (!strategies.includes(c.strategy)) errs.push(notSupported(path.child("strategy"), c.strategy, strategies));
  if (c.strategy === "Webhook") {
    const cc = c.webhookClientConfig;
    const ccPath = path.child("webhookClientConfig");
    if (!cc) errs.push(required(ccPath, "required when strategy is set to Webhook"));
    else {
      const hasURL = typeof cc.url === "string";
      const hasService = isSchema(cc.service);
      if (hasURL === hasService) errs.push(required(ccPath, "exactly one of url or service is required"));
      else if (hasURL) errs.push(...validateWebhookURL(cc.url as string, ccPath.child("url")));
      else errs.push(...validateWebhookService(cc.service!, ccPath.child("service")));
    }
    const versions = c.conversionReviewVersions;
    const vPath = path.child("conversionReviewVersions");
    if (versions.length < 1) errs.push(required(vPath));
    else {
      const seen = new Set<string>();
      let accepted = false;
      versions.forEach((v, i) => {
        if (seen.has(v)) {
          errs.push(invalid(vPath.index(i), v, "duplicate version"));
          return;
        }
        seen.add(v);
        for (const e of isDNS1035Label(v)) errs.push(invalid(vPath.index(i), v, e));
        if (v === "v1" || v === "v1beta1") accepted = true;
      });
      if (opts.requireRecognizedConversionReviewVersion && !accepted) {
        errs.push(invalid(vPath, goStrings(versions), "must include at least one of v1, v1beta1"));
      }
    }
  } else {
    if (c.webhookClientConfig)
      errs.push(forbidden(path.child("webhookClientConfig"), "should not be set when strategy is not set to Webhook"));
    if (c.conversionReviewVersions.length > 0) {
      errs.push(
        forbidden(path.child("conversionReviewVersions"), "should not be set when strategy is not set to Webhook"),
      );
    }
  }
  return errs;
}

function hasStatus(sub: Subresources | undefined): boolean {
  return isSchema(sub) && isSchema(sub.status);
}

function validateSpec(spec: InternalSpec, optsIn: Options, path: FieldPath, compileRules?: RuleCompiler): FieldError[] {
  const opts = { ...optsIn };
  const errs: FieldError[] = [];
  if (spec.group === "") errs.push(required(path.child("group")));
  else if (isDNS1123Subdomain(spec.group).length > 0) {
    errs.push(invalid(path.child("group"), spec.group, isDNS1123Subdomain(spec.group).join(",")));
  } else if (spec.group.split(".").length < 2) {
    errs.push(invalid(path.child("group"), spec.group, "should be a domain with at least one dot"));
  }
  const scopes = ["Cluster", "Namespaced"];
  if (spec.scope === "") errs.push(required(path.child("scope")));
  else if (!scopes.includes(spec.scope)) errs.push(notSupported(path.child("scope"), spec.scope, scopes));

  if (!spec.preserveUnknownFields) opts.requireStructuralSchema = true;
  const versionsPath = path.child("versions");
  if (opts.requireOpenAPISchema) {
    if (!spec.validation?.openAPIV3Schema) {
      spec.versions.forEach((v, i) => {
        if (!v.schema?.openAPIV3Schema)
          errs.push(required(versionsPath.index(i).child("schema").child("openAPIV3Schema"), "schemas are required"));
      });
    }
  } else if (!spec.preserveUnknownFields && !spec.validation?.openAPIV3Schema) {
    spec.versions.forEach((v, i) => {
      if (v.served && !v.schema?.openAPIV3Schema) {
        errs.push(
          required(versionsPath.index(i).child("schema", "openAPIV3Schema"), "because otherwise all fields are pruned"),
        );
      }
    });
  }
  if (specHas(spec, hasDefault)) {
    opts.requireStructuralSchema = true;
    if (spec.preserveUnknownFields) {
      errs.push(
        invalid(path.child("preserveUnknownFields"), true, "must be false in order to use defaults in the schema"),
      );
    }
  }
  if (specHas(spec, hasKubernetesExtensions)) opts.requireStructuralSchema = true;

  const perVersionSubresources = spec.versions.some((v) => v.subresources !== undefined);
  let storageCount = 0;
  const seenNames = new Set<string>();
  let uniqueNames = true;
  spec.versions.forEach((v, i) => {
    const vp = versionsPath.index(i);
    if (v.storage) storageCount++;
    if (seenNames.has(v.name)) uniqueNames = false;
    else seenNames.add(v.name);
    const nameErrs = isDNS1035Label(v.name);
    if (nameErrs.length > 0) errs.push(invalid(vp.child("name"), v.name, nameErrs.join(",")));
    const subresources = perVersionSubresources ? v.subresources : spec.subresources;
    for (const e of validateDeprecationWarning(v.deprecated, v.deprecationWarning)) {
      errs.push(invalid(vp.child("deprecationWarning"), v.deprecationWarning ?? null, e));
    }
    errs.push(...validateSchemaBlock(v.schema, hasStatus(subresources), opts, vp.child("schema"), compileRules));
    errs.push(...validateSubresources(v.subresources, vp.child("subresources")));
    v.additionalPrinterColumns.forEach((c, j) => {
      errs.push(...validateColumn(c, vp.child("additionalPrinterColumns").index(j)));
    });
    if (v.selectableFields.length > 0) {
      if (!v.schema?.openAPIV3Schema) {
        errs.push(
          invalid(
            vp.child("selectableFields"),
            "",
            "selectableFields may only be set when version.schema.openAPIV3Schema is not included",
          ),
        );
      } else {
        errs.push(
          ...validateSelectableFields(v.selectableFields, v.schema.openAPIV3Schema, vp.child("selectableFields")),
        );
      }
    }
  });
  if (!uniqueNames) errs.push(invalid(versionsPath, goVersions(spec), "must contain unique version names"));
  if (storageCount !== 1) {
    errs.push(invalid(versionsPath, goVersions(spec), "must have exactly one version marked as storage version"));
  }
  if (spec.version !== "") {
    const e = isDNS1035Label(spec.version);
    if (e.length > 0) errs.push(invalid(path.child("version"), spec.version, e.join(",")));
  }
  const names = path.child("names");
  if (spec.names.plural === "") errs.push(required(names.child("plural")));
  if (spec.names.singular === "") errs.push(required(names.child("singular")));
  if (spec.names.kind === "") errs.push(required(names.child("kind")));
  if (spec.names.listKind === "") errs.push(required(names.child("listKind")));
  errs.push(...validateNames(spec.names, names));
  const anyStatus = hasStatus(spec.subresources) || spec.versions.some((v) => hasStatus(v.subresources));
  errs.push(...validateSchemaBlock(spec.validation, anyStatus, opts, path.child("validation"), compileRules));
  errs.push(...validateSubresources(spec.subresources, path.child("subresources")));
  spec.additionalPrinterColumns.forEach((c, i) => {
    errs.push(...validateColumn(c, path.child("additionalPrinterColumns").index(i)));
  });
  if (spec.selectableFields.length > 0) {
    if (!spec.validation) {
      errs.push(
        invalid(
          path.child("selectableFields"),
          "",
          "selectableFields may only be set when validations.schema is included",
        ),
      );
    } else {
      errs.push(
        ...validateSelectableFields(
          spec.selectableFields,
          spec.validation.openAPIV3Schema,
          path.child("selectableFields"),
        ),
      );
    }
  }
  if (spec.conversion.strategy !== "None" && spec.preserveUnknownFields) {
    errs.push(
      invalid(
        path.child("conversion").child("strategy"),
        spec.conversion.strategy,
        "must be None if spec.preserveUnknownFields is true",
      ),
    );
  }
  errs.push(...validateConversion(spec, opts, path.child("conversion")));
  return errs;
}

/** Whether a node's default changes when pruned against the node's own schema (schemaHasUnprunedDefaults). */
function defaultHasUnknownFields(s: JSONSchemaProps): boolean {
  if (s.default === undefined || s.default === null) return false;
  const copy = structuredClone(s.default);
  pruneSchemaValue(s, copy, s["x-kubernetes-embedded-resource"] === true);
  return !semanticEqual(copy, s.default);
}

/**
 * The stored versions the registry computes (PrepareForCreate / PrepareForUpdate): the previous ones
 * (undefined for none: a nil slice, as on create) plus the storage version.
 */
function storedVersionsFor(spec: InternalSpec, previous: string[] | undefined): string[] | undefined {
  const storage = spec.versions.find((v) => v.storage);
  if (!storage || previous?.includes(storage.name)) return previous;
  return [...(previous ?? []), storage.name];
}

function validateStoredVersions(stored: string[] | undefined, spec: InternalSpec): FieldError[] {
  const path = fieldPath("status", "storedVersions");
  if (stored === undefined || stored.length === 0) {
    return [invalid(path, goStrings(stored), "must have at least one stored version")];
  }
  const errs: FieldError[] = [];
  const remaining = new Map(stored.map((v, i) => [v, i]));
  for (const v of spec.versions) {
    const present = remaining.has(v.name);
    if (v.storage && !present) errs.push(invalid(path, goStrings(stored), "must have the storage version " + v.name));
    if (present) remaining.delete(v.name);
  }
  for (const [v, i] of remaining) errs.push(invalid(path.index(i), v, "must appear in spec.versions"));
  return errs;
}

function isProtectedGroup(group: string): boolean {
  return (
    group === "k8s.io" || group.endsWith(".k8s.io") || group === "kubernetes.io" || group.endsWith(".kubernetes.io")
  );
}

type ApprovalState = "missing" | "bypassed" | "approved" | "invalid";

function approvalState(annotations: Record<string, string> | undefined): { state: ApprovalState; reason: string } {
  const value = annotations?.[API_APPROVAL_ANNOTATION] ?? "";
  if (value === "") {
    return {
      state: "missing",
      reason: `protected groups must have approval annotation "${API_APPROVAL_ANNOTATION}", see https://github.com/kubernetes/enhancements/pull/1111`,
    };
  }
  if (value.startsWith("unapproved")) return { state: "bypassed", reason: "" };
  try {
    const u = new URL(value);
    if (u.host !== "" && u.protocol !== "") return { state: "approved", reason: "" };
  } catch {
    // falls through to invalid
  }
  return {
    state: "invalid",
    reason: `protected groups must have approval annotation "${API_APPROVAL_ANNOTATION}" with either a URL or a reason starting with "unapproved", see https://github.com/kubernetes/enhancements/pull/1111`,
  };
}

function validateAPIApproval(
  crd: CustomResourceDefinitionV1,
  spec: InternalSpec,
  old: CustomResourceDefinitionV1 | undefined,
): FieldError[] {
  if (!isProtectedGroup(spec.group)) return [];
  const next = approvalState(crd.metadata?.annotations);
  if (old !== undefined && approvalState(old.metadata?.annotations).state === next.state) return [];
  const path = fieldPath("metadata", "annotations").key(API_APPROVAL_ANNOTATION);
  if (next.state === "missing") return [required(path, next.reason)];
  if (next.state === "invalid")
    return [invalid(path, crd.metadata?.annotations?.[API_APPROVAL_ANNOTATION] ?? "", next.reason)];
  return [];
}

function validatePreserveUnknownFields(spec: InternalSpec, oldSpec: InternalSpec | undefined): FieldError[] {
  if (oldSpec?.preserveUnknownFields) return [];
  if (!spec.preserveUnknownFields) return [];
  return [
    invalid(
      fieldPath("spec", "preserveUnknownFields"),
      true,
      "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead",
    ),
  ];
}

function crdNameValidator(spec: InternalSpec) {
  return (name: string, prefix: boolean): string[] => {
    const errs = nameIsDNSSubdomain(name, prefix);
    if (name !== `${spec.names.plural}.${spec.group}`) errs.push(`must be spec.names.plural+"."+spec.group`);
    return errs;
  };
}

/** ValidateCustomResourceDefinition: the errors kube-apiserver answers a CRD create with. */
export function validateCustomResourceDefinition(
  crd: CustomResourceDefinitionV1,
  options: CrdValidationOptions = {},
): FieldError[] {
  const spec = toInternalSpec(crd ?? {});
  const errs = validateObjectMeta(crd?.metadata, { namespaced: false, nameValidator: crdNameValidator(spec) });
  errs.push(...validateSpec(spec, CREATE_OPTIONS, fieldPath("spec"), options.compileRules));
  errs.push(...validateNames(acceptedNames({}), fieldPath("status", "acceptedNames")));
  errs.push(...validateStoredVersions(storedVersionsFor(spec, undefined), spec));
  errs.push(...validateAPIApproval(crd ?? {}, spec, undefined));
  errs.push(...validatePreserveUnknownFields(spec, undefined));
  return errs;
}

function isEstablished(crd: CustomResourceDefinitionV1): boolean {
  return (crd.status?.conditions ?? []).some((c) => c?.type === "Established" && c.status === "True");
}

function updateOptions(oldCrd: CustomResourceDefinitionV1, oldSpec: InternalSpec): Options {
  const oldSchemas = specSchemas(oldSpec);
  const reviewVersions = oldSpec.conversion.conversionReviewVersions;
  const schemaPath = fieldPath("x");
  return {
    requireRecognizedConversionReviewVersion:
      reviewVersions.length === 0 || reviewVersions.some((v) => v === "v1" || v === "v1beta1"),
    requireImmutableNames: isEstablished(oldCrd),
    requireOpenAPISchema:
      oldSpec.validation?.openAPIV3Schema !== undefined || oldSpec.versions.every((v) => v.schema?.openAPIV3Schema),
    requireValidPropertyType: !specHas(oldSpec, (s) => nonEmpty(s.type) && !OPENAPI_V3_TYPES.includes(s.type)),
    requireStructuralSchema: !oldSchemas.some((s) => schemaIsNonStructural(s, schemaPath)),
    // Old CRDs whose defaults carry unknown fields keep being accepted (requirePrunedDefaults).
    requirePrunedDefaults: !oldSchemas.some((s) => schemaHas(s, defaultHasUnknownFields)),
    requireAtomicSetType: !specHas(oldSpec, (s) => {
      const items = isSchema(s.items) ? s.items : undefined;
      if (s["x-kubernetes-list-type"] !== "set" || !items) return false;
      if (items.type === "array") return (items["x-kubernetes-list-type"] ?? "atomic") !== "atomic";
      if (items.type === "object") return items["x-kubernetes-map-type"] !== "atomic";
      return false;
    }),
    requireMapListKeysMapSetValidation: !oldSchemas.some((s) =>
      schemaHas(s, (n) => validateMapListKeysMapSet(n, schemaPath).length > 0),
    ),
  };
}

/** ValidateCustomResourceDefinitionUpdate: the errors kube-apiserver answers a CRD update with. */
export function validateCustomResourceDefinitionUpdate(
  newCrd: CustomResourceDefinitionV1,
  oldCrd: CustomResourceDefinitionV1,
  options: CrdValidationOptions = {},
): FieldError[] {
  const spec = toInternalSpec(newCrd ?? {});
  const oldSpec = toInternalSpec(oldCrd ?? {});
  const opts = updateOptions(oldCrd ?? {}, oldSpec);
  const errs = validateObjectMetaUpdate(newCrd?.metadata, oldCrd?.metadata);
  const specPath = fieldPath("spec");
  errs.push(...validateSpec(spec, opts, specPath, options.compileRules));
  if (opts.requireImmutableNames) {
    if (spec.scope !== oldSpec.scope) errs.push(invalid(specPath.child("scope"), spec.scope, "field is immutable"));
    if (spec.names.kind !== oldSpec.names.kind) {
      errs.push(invalid(specPath.child("names", "kind"), spec.names.kind, "field is immutable"));
    }
  }
  if (spec.group !== oldSpec.group) errs.push(invalid(specPath.child("group"), spec.group, "field is immutable"));
  if (spec.names.plural !== oldSpec.names.plural) {
    errs.push(invalid(specPath.child("names", "plural"), spec.names.plural, "field is immutable"));
  }
  // PrepareForUpdate keeps the stored status, adding the new storage version to storedVersions.
  errs.push(...validateNames(acceptedNames(oldCrd ?? {}), fieldPath("status", "acceptedNames")));
  const previous = Array.isArray(oldCrd?.status?.storedVersions) ? oldCrd.status.storedVersions : undefined;
  errs.push(...validateStoredVersions(storedVersionsFor(spec, previous), spec));
  errs.push(...validateAPIApproval(newCrd ?? {}, spec, oldCrd ?? {}));
  errs.push(...validatePreserveUnknownFields(spec, oldSpec));
  return errs;
}
