/**
 * The shape kube-apiserver validates a CRD in: apiextensions.k8s.io/v1 converted to the internal
 * version, which matters for error paths. The v1 -> internal conversion lifts a per-version `schema`,
 * `subresources`, `additionalPrinterColumns` or `selectableFields` to the top level when every version
 * has the same value, so a CRD whose versions share one schema (every single-version CRD) reports
 * schema errors under `spec.validation.openAPIV3Schema...`, and only CRDs with differing per-version
 * schemas under `spec.versions[i].schema.openAPIV3Schema...`. v1 defaulting (singular, listKind,
 * conversion strategy None) happens before, as in the real decode.
 *
 * It also renders internal values the way Go's json.Marshal renders the internal structs (which have
 * no json tags: field names as declared) when the real server puts them in an error message.
 */
import { setOwn } from "../machinery/own-properties.ts";
import { asGoStruct } from "./go-format.ts";
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
// Go renderings of internal structs (field names as declared, nil as null)

function nilIfEmpty<T>(xs: T[] | undefined): T[] | null {
  return xs && xs.length > 0 ? xs : null;
}

function orNull(v: unknown): unknown {
  return v === undefined ? null : v;
}

function rule(r: ValidationRule): object {
  return asGoStruct({
    Rule: str(r.rule),
    Message: str(r.message),
    MessageExpression: str(r.messageExpression),
    Reason: orNull(r.reason),
    FieldPath: str(r.fieldPath),
    OptionalOldSelf: orNull(r.optionalOldSelf),
  });
}

function schemaMap(m: Record<string, JSONSchemaProps> | undefined): Record<string, object> | null {
  if (!m || Object.keys(m).length === 0) return null;
  const out: Record<string, object> = {};
  for (const [k, v] of Object.entries(m)) if (v !== null && typeof v === "object") setOwn(out, k, goSchema(v));
  return out;
}

function schemaOrBool(v: JSONSchemaProps | boolean | undefined): object | null {
  if (v === undefined || v === null) return null;
  if (typeof v === "boolean") return asGoStruct({ Allows: v, Schema: null });
  return asGoStruct({ Allows: true, Schema: goSchema(v) });
}

function schemas(xs: unknown): JSONSchemaProps[] | undefined {
  return Array.isArray(xs) ? xs.filter((x): x is JSONSchemaProps => x !== null && typeof x === "object") : undefined;
}

/** The internal apiextensions.JSONSchemaProps as Go's json.Marshal prints it. */
export function goSchema(s: JSONSchemaProps): object {
  const items = s.items;
  return asGoStruct({
    ID: str(s.id),
    Schema: str(s.$schema),
    Ref: orNull(s.$ref),
    Description: str(s.description),
    Type: str(s.type),
    Nullable: s.nullable === true,
    Format: str(s.format),
    Title: str(s.title),
    Default: orNull(s.default),
    Maximum: orNull(s.maximum),
    ExclusiveMaximum: s.exclusiveMaximum === true,
    Minimum: orNull(s.minimum),
    ExclusiveMinimum: s.exclusiveMinimum === true,
    MaxLength: orNull(s.maxLength),
    MinLength: orNull(s.minLength),
    Pattern: str(s.pattern),
    MaxItems: orNull(s.maxItems),
    MinItems: orNull(s.minItems),
    UniqueItems: s.uniqueItems === true,
    MultipleOf: orNull(s.multipleOf),
    Enum: s.enum ?? null,
    MaxProperties: orNull(s.maxProperties),
    MinProperties: orNull(s.minProperties),
    Required: s.required ?? null,
    Items:
      items === undefined
        ? null
        : Array.isArray(items)
          ? asGoStruct({ Schema: null, JSONSchemas: (schemas(items) ?? []).map(goSchema) })
          : asGoStruct({ Schema: goSchema(items), JSONSchemas: null }),
    AllOf: nilIfEmpty(schemas(s.allOf)?.map(goSchema)),
    OneOf: nilIfEmpty(schemas(s.oneOf)?.map(goSchema)),
    AnyOf: nilIfEmpty(schemas(s.anyOf)?.map(goSchema)),
    Not: s.not ? goSchema(s.not) : null,
    Properties: schemaMap(s.properties),
    AdditionalProperties: schemaOrBool(s.additionalProperties),
    PatternProperties: schemaMap(s.patternProperties),
    Dependencies: s.dependencies
      ? Object.fromEntries(
          Object.entries(s.dependencies).map(([k, v]) => [
            k,
            Array.isArray(v)
              ? asGoStruct({ Schema: null, Property: v })
              : asGoStruct({ Schema: goSchema(v), Property: null }),
          ]),
        )
      : null,
    AdditionalItems: schemaOrBool(s.additionalItems),
    Definitions: schemaMap(s.definitions),
    ExternalDocs: s.externalDocs
      ? asGoStruct({ Description: str(s.externalDocs.description), URL: str(s.externalDocs.url) })
      : null,
    Example: orNull(s.example),
    XPreserveUnknownFields: orNull(s["x-kubernetes-preserve-unknown-fields"]),
    XEmbeddedResource: s["x-kubernetes-embedded-resource"] === true,
    XIntOrString: s["x-kubernetes-int-or-string"] === true,
    XListMapKeys: s["x-kubernetes-list-map-keys"] ?? null,
    XListType: orNull(s["x-kubernetes-list-type"]),
    XMapType: orNull(s["x-kubernetes-map-type"]),
    XValidations: nilIfEmpty(s["x-kubernetes-validations"]?.map(rule)),
  });
}

function goSubresources(s: Subresources | undefined): object | null {
  if (!s) return null;
  return asGoStruct({
    Status: s.status ? asGoStruct({}) : null,
    Scale: s.scale
      ? asGoStruct({
          SpecReplicasPath: str(s.scale.specReplicasPath),
          StatusReplicasPath: str(s.scale.statusReplicasPath),
          LabelSelectorPath: orNull(s.scale.labelSelectorPath),
        })
      : null,
  });
}

/** The internal []CustomResourceDefinitionVersion as Go's json.Marshal prints it. */
export function goVersions(versions: InternalVersion[]): object[] {
  return versions.map((v) =>
    asGoStruct({
      Name: v.name,
      Served: v.served,
      Storage: v.storage,
      Deprecated: v.deprecated,
      DeprecationWarning: orNull(v.deprecationWarning),
      Schema: v.schema
        ? asGoStruct({ OpenAPIV3Schema: v.schema.openAPIV3Schema ? goSchema(v.schema.openAPIV3Schema) : null })
        : null,
      Subresources: goSubresources(v.subresources),
      AdditionalPrinterColumns: nilIfEmpty(
        v.additionalPrinterColumns.map((c) =>
          asGoStruct({
            Name: c.name,
            Type: c.type,
            Format: c.format,
            Description: c.description,
            Priority: c.priority,
            JSONPath: c.jsonPath,
          }),
        ),
      ),
      SelectableFields: nilIfEmpty(v.selectableFields.map((f) => asGoStruct({ JSONPath: f.jsonPath }))),
    }),
  );
}
