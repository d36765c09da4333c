/**
 * The shape kube-apiserver validates a CRD in: apiextensions.k8s.io/v1 converted to the internal
 * version, which matters for error paths. The v1 -> internal conversion lifts a per-version `schema`,
 * `subresources`, `additionalPrinterColumns` or `selectableFields` to the top level when every version
 * has the same value, so a CRD whose versions share one schema (every single-version CRD) reports
 * schema errors under `spec.validation.openAPIV3Schema...`, and only CRDs with differing per-version
 * schemas under `spec.versions[i].schema.openAPIV3Schema...`. v1 defaulting (singular, listKind,
 * conversion strategy None) happens before, as in the real decode.
 *
 * It also renders internal values the way Kubernetes 1.32 prints the internal structs (Go's `%#v`:
 * type and field names as declared) when the real server puts them in an error message.
 */
import { goQuote } from "./go-format.ts";
import {
  goPrinted,
  goSharpDecoded,
  goSharpMap,
  goSharpPointer,
  goSharpSlice,
  goSharpStrings,
  goSharpStruct,
} from "./go-sharp-v.ts";
import { sanitizeSchema } from "./schema-sanitize.ts";
import type { JSONSchemaProps, ValidationRule } from "./schema-types.ts";

/** The v1 CustomResourceDefinition as it arrives (loosely typed: it is untrusted input). */
export interface CustomResourceDefinitionV1 {
  apiVersion?: string;
  kind?: string;
  metadata?: Record<string, unknown> & { name?: string; annotations?: Record<string, string> };
  spec?: {
    group?: string;
    names?: Partial<Names>;
    scope?: string;
    versions?: Array<{
      name?: string;
      served?: boolean;
      storage?: boolean;
      deprecated?: boolean;
      deprecationWarning?: string | null;
      schema?: { openAPIV3Schema?: JSONSchemaProps } | null;
      subresources?: Subresources | null;
      additionalPrinterColumns?: Array<Partial<Column>> | null;
      selectableFields?: Array<{ jsonPath?: string }> | null;
    }>;
    conversion?: {
      strategy?: string;
      webhook?: { clientConfig?: WebhookClientConfig; conversionReviewVersions?: string[] } | null;
    } | null;
    preserveUnknownFields?: boolean;
  };
  status?: {
    acceptedNames?: Partial<Names>;
    storedVersions?: string[];
    conditions?: Array<{ type?: string; status?: string }>;
  };
}

export interface Names {
  plural: string;
  singular: string;
  kind: string;
  listKind: string;
  shortNames: string[];
  categories: string[];
}

export interface Subresources {
  status?: Record<string, never> | null;
  scale?: { specReplicasPath?: string; statusReplicasPath?: string; labelSelectorPath?: string | null } | null;
}

export interface Column {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
  jsonPath: string;
}

export interface WebhookClientConfig {
  url?: string | null;
  service?: { namespace?: string; name?: string; path?: string | null; port?: number | null } | null;
  caBundle?: string | null;
}

/** One internal CustomResourceDefinitionVersion. */
export interface InternalVersion {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated: boolean;
  deprecationWarning: string | undefined;
  schema: { openAPIV3Schema: JSONSchemaProps | undefined } | undefined;
  subresources: Subresources | undefined;
  additionalPrinterColumns: Column[];
  selectableFields: Array<{ jsonPath: string }>;
}

/** The internal CustomResourceDefinitionSpec (only what validation reads). */
export interface InternalSpec {
  group: string;
  names: Names;
  scope: string;
  versions: InternalVersion[];
  version: string;
  validation: { openAPIV3Schema: JSONSchemaProps | undefined } | undefined;
  subresources: Subresources | undefined;
  additionalPrinterColumns: Column[];
  selectableFields: Array<{ jsonPath: string }>;
  conversion: {
    strategy: string;
    webhookClientConfig: WebhookClientConfig | undefined;
    conversionReviewVersions: string[];
  };
  preserveUnknownFields: boolean;
  /** spec.versions was absent (a nil slice in Go), not an empty list. */
  versionsAbsent: boolean;
}

function str(v: unknown): string {
  return typeof v === "string" ? v : "";
}

function strs(v: unknown): string[] {
  return Array.isArray(v) ? v.map(str) : [];
}

/** k8s Semantic.DeepEqual on decoded JSON: empty and absent slices/maps are the same. */
export function semanticEqual(a: unknown, b: unknown): boolean {
  const empty = (v: unknown) =>
    v === undefined ||
    v === null ||
    (Array.isArray(v) && v.length === 0) ||
    (typeof v === "object" && v !== null && !Array.isArray(v) && Object.keys(v).length === 0);
  if (a === b) return true;
  if (empty(a) && empty(b)) return Array.isArray(a) === Array.isArray(b) || a == null || b == null;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((v, i) => semanticEqual(v, bb[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const keys = new Set([...Object.keys(ao), ...Object.keys(bo)]);
  for (const k of keys) if (!semanticEqual(ao[k], bo[k])) return false;
  return true;
}

/** Names after v1 defaulting (singular = lower-case kind, listKind = kind + "List"). */
function defaultedNames(n: Partial<Names> | undefined, applyDefaults: boolean): Names {
  const kind = str(n?.kind);
  let singular = str(n?.singular);
  let listKind = str(n?.listKind);
  if (applyDefaults) {
    if (singular === "") singular = kind.toLowerCase();
    if (listKind === "" && kind !== "") listKind = kind + "List";
  }
  return {
    plural: str(n?.plural),
    singular,
    kind,
    listKind,
    shortNames: strs(n?.shortNames),
    categories: strs(n?.categories),
  };
}

function column(cIn: Partial<Column> | null): Column {
  const c = cIn !== null && typeof cIn === "object" ? cIn : {};
  return {
    name: str(c.name),
    type: str(c.type),
    format: str(c.format),
    description: str(c.description),
    priority: typeof c.priority === "number" ? c.priority : 0,
    jsonPath: str(c.jsonPath),
  };
}

/** The status names, which v1 defaulting does not touch. */
export function acceptedNames(crd: CustomResourceDefinitionV1): Names {
  return defaultedNames(crd.status?.acceptedNames, false);
}

/** Converts a v1 CRD spec to the internal spec the validation reads, after v1 defaulting. */
export function toInternalSpec(crd: CustomResourceDefinitionV1): InternalSpec {
  const spec = crd.spec ?? {};
  const versions: InternalVersion[] = (Array.isArray(spec.versions) ? spec.versions : []).map((v) => ({
    name: str(v?.name),
    served: v?.served === true,
    storage: v?.storage === true,
    deprecated: v?.deprecated === true,
    deprecationWarning: typeof v?.deprecationWarning === "string" ? v.deprecationWarning : undefined,
    schema:
      v?.schema && typeof v.schema === "object"
        ? {
            openAPIV3Schema:
              v.schema.openAPIV3Schema !== null && typeof v.schema.openAPIV3Schema === "object"
                ? sanitizeSchema(v.schema.openAPIV3Schema)
                : undefined,
          }
        : undefined,
    subresources: v?.subresources ?? undefined,
    additionalPrinterColumns: Array.isArray(v?.additionalPrinterColumns) ? v.additionalPrinterColumns.map(column) : [],
    selectableFields: Array.isArray(v?.selectableFields)
      ? v.selectableFields.map((f) => ({ jsonPath: str(f?.jsonPath) }))
      : [],
  }));
  const conv = spec.conversion ?? { strategy: "None" };
  const internal: InternalSpec = {
    group: str(spec.group),
    names: defaultedNames(spec.names, true),
    scope: str(spec.scope),
    versions,
    version: versions[0]?.name ?? "",
    validation: undefined,
    subresources: undefined,
    additionalPrinterColumns: [],
    selectableFields: [],
    conversion: {
      strategy: str(conv.strategy),
      webhookClientConfig: conv.webhook?.clientConfig ?? undefined,
      conversionReviewVersions: strs(conv.webhook?.conversionReviewVersions),
    },
    preserveUnknownFields: spec.preserveUnknownFields === true,
    versionsAbsent: !Array.isArray(spec.versions),
  };
  if (versions.length === 0) return internal;
  const first = versions[0]!;
  const same = (pick: (v: InternalVersion) => unknown) => versions.every((v) => semanticEqual(pick(v), pick(first)));
  if (same((v) => v.subresources)) {
    internal.subresources = first.subresources;
    for (const v of versions) v.subresources = undefined;
  }
  if (same((v) => v.schema)) {
    internal.validation = first.schema;
    for (const v of versions) v.schema = undefined;
  }
  if (same((v) => v.additionalPrinterColumns)) {
    internal.additionalPrinterColumns = first.additionalPrinterColumns;
    for (const v of versions) v.additionalPrinterColumns = [];
  }
  if (same((v) => v.selectableFields)) {
    internal.selectableFields = first.selectableFields;
    for (const v of versions) v.selectableFields = [];
  }
  return internal;
}

// ---------------------------------------------------------------------------------------------
// The internal structs as 1.32's field errors print them (`%#v`, go-sharp-v.ts)

const q = (v: unknown): string => goQuote(typeof v === "string" ? v : "");
const ptr = (elemType: string, set: boolean): string => goSharpPointer(elemType, !set);
const has = (v: unknown): boolean => v !== undefined && v !== null;
const SCHEMA = "apiextensions.JSONSchemaProps";

function ruleText(r: ValidationRule): string {
  return goSharpStruct("apiextensions.ValidationRule", [
    ["Rule", q(r.rule)],
    ["Message", q(r.message)],
    ["MessageExpression", q(r.messageExpression)],
    ["Reason", ptr("apiextensions.FieldValueErrorReason", typeof r.reason === "string")],
    ["FieldPath", q(r.fieldPath)],
    ["OptionalOldSelf", ptr("bool", typeof r.optionalOldSelf === "boolean")],
  ]);
}

function schemaListText(xs: JSONSchemaProps[] | undefined): string {
  return goSharpSlice(`[]${SCHEMA}`, xs?.map(schemaText));
}

function schemaMapText(type: string, m: Record<string, JSONSchemaProps> | undefined): string {
  return goSharpMap(type, m === undefined ? undefined : Object.entries(m).map(([k, v]) => [k, schemaText(v)] as const));
}

function dependenciesText(deps: JSONSchemaProps["dependencies"]): string {
  const entries =
    deps === undefined
      ? undefined
      : Object.entries(deps).map(
          ([k, v]) =>
            [
              k,
              goSharpStruct("apiextensions.JSONSchemaPropsOrStringArray", [
                ["Schema", ptr(SCHEMA, !Array.isArray(v))],
                ["Property", goSharpStrings(Array.isArray(v) ? v : undefined)],
              ]),
            ] as const,
        );
  return goSharpMap("apiextensions.JSONSchemaDependencies", entries);
}

/** The internal apiextensions.JSONSchemaProps (of a sanitized v1 schema) as `%#v` prints it. */
function schemaText(s: JSONSchemaProps): string {
  return goSharpStruct(SCHEMA, [
    ["ID", q(s.id)],
    ["Schema", q(s.$schema)],
    ["Ref", ptr("string", has(s.$ref))],
    ["Description", q(s.description)],
    ["Type", q(s.type)],
    ["Nullable", String(s.nullable === true)],
    ["Format", q(s.format)],
    ["Title", q(s.title)],
    ["Default", ptr("apiextensions.JSON", has(s.default))],
    ["Maximum", ptr("float64", has(s.maximum))],
    ["ExclusiveMaximum", String(s.exclusiveMaximum === true)],
    ["Minimum", ptr("float64", has(s.minimum))],
    ["ExclusiveMinimum", String(s.exclusiveMinimum === true)],
    ["MaxLength", ptr("int64", has(s.maxLength))],
    ["MinLength", ptr("int64", has(s.minLength))],
    ["Pattern", q(s.pattern)],
    ["MaxItems", ptr("int64", has(s.maxItems))],
    ["MinItems", ptr("int64", has(s.minItems))],
    ["UniqueItems", String(s.uniqueItems === true)],
    ["MultipleOf", ptr("float64", has(s.multipleOf))],
    [
      "Enum",
      goSharpSlice(
        "[]apiextensions.JSON",
        s.enum?.map((v) => goSharpDecoded(v, "apiextensions.JSON")),
      ),
    ],
    ["MaxProperties", ptr("int64", has(s.maxProperties))],
    ["MinProperties", ptr("int64", has(s.minProperties))],
    ["Required", goSharpStrings(s.required)],
    ["Items", ptr("apiextensions.JSONSchemaPropsOrArray", has(s.items))],
    ["AllOf", schemaListText(s.allOf)],
    ["OneOf", schemaListText(s.oneOf)],
    ["AnyOf", schemaListText(s.anyOf)],
    ["Not", ptr(SCHEMA, has(s.not))],
    ["Properties", schemaMapText(`map[string]${SCHEMA}`, s.properties)],
    ["AdditionalProperties", ptr("apiextensions.JSONSchemaPropsOrBool", has(s.additionalProperties))],
    ["PatternProperties", schemaMapText(`map[string]${SCHEMA}`, s.patternProperties)],
    ["Dependencies", dependenciesText(s.dependencies)],
    ["AdditionalItems", ptr("apiextensions.JSONSchemaPropsOrBool", has(s.additionalItems))],
    ["Definitions", schemaMapText("apiextensions.JSONSchemaDefinitions", s.definitions)],
    ["ExternalDocs", ptr("apiextensions.ExternalDocumentation", has(s.externalDocs))],
    ["Example", ptr("apiextensions.JSON", has(s.example))],
    ["XPreserveUnknownFields", ptr("bool", has(s["x-kubernetes-preserve-unknown-fields"]))],
    ["XEmbeddedResource", String(s["x-kubernetes-embedded-resource"] === true)],
    ["XIntOrString", String(s["x-kubernetes-int-or-string"] === true)],
    ["XListMapKeys", goSharpStrings(s["x-kubernetes-list-map-keys"])],
    ["XListType", ptr("string", has(s["x-kubernetes-list-type"]))],
    ["XMapType", ptr("string", has(s["x-kubernetes-map-type"]))],
    ["XValidations", goSharpSlice("apiextensions.ValidationRules", s["x-kubernetes-validations"]?.map(ruleText))],
  ]);
}

/** A schema node (`*schema`) as a field error prints it. */
export function goSchema(s: JSONSchemaProps): object {
  return goPrinted(schemaText(s));
}

/** An `items` holding a list of schemas (the dereferenced *JSONSchemaPropsOrArray) as a field error prints it. */
export function goSchemaItems(items: JSONSchemaProps[]): object {
  return goPrinted(
    goSharpStruct("apiextensions.JSONSchemaPropsOrArray", [
      ["Schema", ptr(SCHEMA, false)],
      ["JSONSchemas", schemaListText(items)],
    ]),
  );
}

/** One x-kubernetes-validations rule (apiextensions.ValidationRule) as a field error prints it. */
export function goValidationRule(r: ValidationRule): object {
  return goPrinted(ruleText(r));
}

/** A []string bad value (stored versions, list-map keys, review versions); undefined is a nil slice. */
export function goStrings(values: readonly string[] | undefined): object {
  return goPrinted(goSharpStrings(values));
}

function columnText(c: Column): string {
  return goSharpStruct("apiextensions.CustomResourceColumnDefinition", [
    ["Name", q(c.name)],
    ["Type", q(c.type)],
    ["Format", q(c.format)],
    ["Description", q(c.description)],
    ["Priority", String(c.priority)],
    ["JSONPath", q(c.jsonPath)],
  ]);
}

function selectableFieldText(f: { jsonPath: string }): string {
  return goSharpStruct("apiextensions.SelectableField", [["JSONPath", q(f.jsonPath)]]);
}

/** A per-version list: empty prints as nil (the lists the conversion lifted are empty here). */
function nilIfEmpty(xs: string[]): string[] | undefined {
  return xs.length === 0 ? undefined : xs;
}

/**
 * The internal []CustomResourceDefinitionVersion (spec.versions) as a field error prints it. Per-version
 * values the conversion lifted to the spec are nil here; empty lists print as nil too.
 */
export function goVersions(spec: InternalSpec): object {
  const items = spec.versionsAbsent
    ? undefined
    : spec.versions.map((v) => {
        return goSharpStruct("apiextensions.CustomResourceDefinitionVersion", [
          ["Name", q(v.name)],
          ["Served", String(v.served)],
          ["Storage", String(v.storage)],
          ["Deprecated", String(v.deprecated)],
          ["DeprecationWarning", ptr("string", v.deprecationWarning !== undefined)],
          ["Schema", ptr("apiextensions.CustomResourceValidation", v.schema !== undefined)],
          ["Subresources", ptr("apiextensions.CustomResourceSubresources", v.subresources !== undefined)],
          [
            "AdditionalPrinterColumns",
            goSharpSlice(
              "[]apiextensions.CustomResourceColumnDefinition",
              nilIfEmpty(v.additionalPrinterColumns.map(columnText)),
            ),
          ],
          [
            "SelectableFields",
            goSharpSlice("[]apiextensions.SelectableField", nilIfEmpty(v.selectableFields.map(selectableFieldText))),
          ],
        ]);
      });
  return goPrinted(goSharpSlice("[]apiextensions.CustomResourceDefinitionVersion", items));
}
