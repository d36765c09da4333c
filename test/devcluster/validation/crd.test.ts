import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  type CustomResourceDefinitionV1,
  validateCustomResourceDefinition,
  validateCustomResourceDefinitionUpdate,
} from "../../../packages/capstan-dev/src/devcluster/validation/crd.ts";
import {
  fieldErrorMessage,
  invalidStatus,
  required,
} from "../../../packages/capstan-dev/src/devcluster/validation/field-errors.ts";
import type { JSONSchemaProps } from "../../../packages/capstan-dev/src/devcluster/validation/schema-types.ts";

// Expected messages come from apiextensions-apiserver v0.32: test/integration/validation_test.go
// (TestNonStructuralSchemaConditionForCRDV1 create errors) and pkg/apis/apiextensions/validation; bad
// values of internal structs are printed with Go's %#v, as apimachinery v0.32's field errors print them.

function crd(
  schema: JSONSchemaProps | undefined,
  extra: Partial<NonNullable<CustomResourceDefinitionV1["spec"]>> = {},
): CustomResourceDefinitionV1 {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "crontabs.stable.example.com" },
    spec: {
      group: "stable.example.com",
      scope: "Namespaced",
      names: { plural: "crontabs", singular: "crontab", kind: "CronTab", shortNames: ["ct"] },
      versions: [
        { name: "v1", served: true, storage: true, ...(schema ? { schema: { openAPIV3Schema: schema } } : {}) },
      ],
      ...extra,
    },
  };
}

const messages = (c: CustomResourceDefinitionV1) => validateCustomResourceDefinition(c).map(fieldErrorMessage);
const yamlSchema = (y: string) => parse(y) as JSONSchemaProps;

const cronTabSchema = yamlSchema(`
type: object
properties:
  spec:
    type: object
    properties:
      cronSpec: {type: string, pattern: '^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$'}
      image: {type: string}
      replicas: {type: integer, minimum: 1, maximum: 10, default: 1}
      ports:
        type: array
        x-kubernetes-list-type: map
        x-kubernetes-list-map-keys: [name]
        items:
          type: object
          required: [name]
          properties: {name: {type: string}, port: {type: integer}}
  status:
    type: object
    x-kubernetes-preserve-unknown-fields: true
`);

describe("validateCustomResourceDefinition: accepted CRDs", () => {
  it("accepts the CronTab example with defaults, list-map keys, status and scale, and printer columns", () => {
    const c = crd(cronTabSchema);
    c.spec!.versions![0]!.subresources = {
      status: {},
      scale: { specReplicasPath: ".spec.replicas", statusReplicasPath: ".status.replicas" },
    };
    c.spec!.versions![0]!.additionalPrinterColumns = [{ name: "Spec", type: "string", jsonPath: ".spec.cronSpec" }];
    c.spec!.versions![0]!.selectableFields = [{ jsonPath: ".spec.image" }];
    expect(messages(c)).toEqual([]);
  });

  it("accepts metadata restricted to name and generateName only", () => {
    const s = yamlSchema(`
type: object
properties:
  metadata:
    type: object
    properties:
      name: {type: string, pattern: "^[a-z]+$"}
      generateName: {type: string, pattern: "^[a-z]+$"}
`);
    expect(messages(crd(s))).toEqual([]);
  });
});

describe("validateCustomResourceDefinition: names, group, scope and versions", () => {
  it("requires the name to be <plural>.<group>", () => {
    const c = crd(cronTabSchema);
    c.metadata!.name = "crontab.stable.example.com";
    expect(messages(c)).toEqual([
      'metadata.name: Invalid value: "crontab.stable.example.com": must be spec.names.plural+"."+spec.group',
    ]);
  });

  it("checks group, scope and the names", () => {
    const c = crd(cronTabSchema, { group: "example", scope: "Global" });
    c.metadata!.name = "crontabs.example";
    c.spec!.names = { plural: "CronTabs", kind: "Cron_Tab", shortNames: ["c t"] };
    expect(messages(c)).toEqual([
      'metadata.name: Invalid value: "crontabs.example": must be spec.names.plural+"."+spec.group',
      'spec.group: Invalid value: "example": should be a domain with at least one dot',
      'spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"',
      "spec.names.plural: Invalid value: \"CronTabs\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
      "spec.names.singular: Invalid value: \"cron_tab\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
      "spec.names.kind: Invalid value: \"Cron_Tab\": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
      "spec.names.listKind: Invalid value: \"Cron_TabList\": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
      "spec.names.shortNames[0]: Invalid value: \"c t\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
    ]);
  });

  it("requires exactly one storage version, reports the versions as Go prints them, and the missing stored version", () => {
    const c = crd({ type: "object" });
    c.spec!.versions![0]!.storage = false;
    expect(messages(c)).toEqual([
      'spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{apiextensions.CustomResourceDefinitionVersion{Name:"v1", Served:true, Storage:false, Deprecated:false, DeprecationWarning:(*string)(nil), Schema:(*apiextensions.CustomResourceValidation)(nil), Subresources:(*apiextensions.CustomResourceSubresources)(nil), AdditionalPrinterColumns:[]apiextensions.CustomResourceColumnDefinition(nil), SelectableFields:[]apiextensions.SelectableField(nil)}}: must have exactly one version marked as storage version',
      "status.storedVersions: Invalid value: []string(nil): must have at least one stored version",
    ]);
  });

  it("requires unique version names and a schema for every version", () => {
    const c = crd(undefined);
    c.spec!.versions = [
      { name: "v1", served: true, storage: true },
      { name: "v1", served: true, storage: false },
    ];
    const errs = messages(c);
    expect(errs).toContain("spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required");
    expect(errs).toContain("spec.versions[1].schema.openAPIV3Schema: Required value: schemas are required");
    expect(
      errs.some(
        (e) =>
          e.startsWith("spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{") &&
          e.endsWith(": must contain unique version names"),
      ),
    ).toBe(true);
  });

  it("checks printer columns, scale paths and selectable fields", () => {
    const c = crd(cronTabSchema);
    c.spec!.versions![0]!.additionalPrinterColumns = [{ name: "", type: "text", format: "ip", jsonPath: "spec.x" }];
    c.spec!.versions![0]!.subresources = { scale: { specReplicasPath: ".status.replicas", statusReplicasPath: "" } };
    c.spec!.versions![0]!.selectableFields = [
      { jsonPath: ".spec.ports" },
      { jsonPath: ".spec.nope" },
      { jsonPath: ".metadata.name" },
    ];
    // Identical in every version, so lifted to the top level as the internal version holds them.
    expect(messages(c)).toEqual([
      'spec.subresources.scale.specReplicasPath: Invalid value: ".status.replicas": should be a json path under .spec',
      "spec.subresources.scale.statusReplicasPath: Required value",
      "spec.additionalPrinterColumns[0].name: Required value",
      'spec.additionalPrinterColumns[0].type: Invalid value: "text": must be one of boolean,date,integer,number,string',
      'spec.additionalPrinterColumns[0].format: Invalid value: "ip": must be one of byte,date,date-time,double,float,int32,int64,password',
      'spec.additionalPrinterColumns[0].JSONPath: Invalid value: "spec.x": must be a simple json path starting with .',
      'spec.selectableFields[0].jsonPath: Invalid value: ".spec.ports": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.',
      'spec.selectableFields[1].jsonPath: Invalid value: ".spec.nope": is an invalid path: does not refer to a valid field',
      'spec.selectableFields[2].jsonPath: Invalid value: ".metadata.name": is an invalid path: does not refer to a valid field',
    ]);
  });

  it("refuses preserveUnknownFields: true in v1", () => {
    expect(messages(crd(cronTabSchema, { preserveUnknownFields: true }))).toContain(
      "spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead",
    );
  });

  it("requires the API approval annotation for protected groups", () => {
    const c = crd({ type: "object" }, { group: "widgets.k8s.io" });
    c.metadata!.name = "crontabs.widgets.k8s.io";
    expect(messages(c)).toEqual([
      'metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111',
    ]);
    c.metadata!.annotations = { "api-approved.kubernetes.io": "unapproved, experimental" };
    expect(messages(c)).toEqual([]);
  });

  it("checks the conversion webhook configuration", () => {
    const c = crd(
      { type: "object" },
      { conversion: { strategy: "Webhook", webhook: { conversionReviewVersions: ["v2"] } } },
    );
    expect(messages(c)).toEqual([
      "spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook",
      'spec.conversion.conversionReviewVersions: Invalid value: []string{"v2"}: must include at least one of v1, v1beta1',
    ]);
  });
});

describe("validateCustomResourceDefinition: structural schemas", () => {
  it("reports schemas shared by all versions under spec.validation, sorted as the server sorts them", () => {
    const s = yamlSchema(`
properties:
  foo:
    properties:
      a: {}
  bar:
    items:
      additionalProperties:
        properties:
          a: {}
        items: {}
  json:
    x-kubernetes-preserve-unknown-fields: true
    properties:
      a: {}
  int-or-string:
    x-kubernetes-int-or-string: true
    properties:
      a: {}
`);
    expect(messages(crd(s))).toEqual([
      "spec.validation.openAPIV3Schema.properties[bar].items.additionalProperties.items.type: Required value: must not be empty for specified array items",
      "spec.validation.openAPIV3Schema.properties[bar].items.additionalProperties.properties[a].type: Required value: must not be empty for specified object fields",
      "spec.validation.openAPIV3Schema.properties[bar].items.additionalProperties.type: Required value: must not be empty for specified object fields",
      "spec.validation.openAPIV3Schema.properties[bar].items.type: Required value: must not be empty for specified array items",
      "spec.validation.openAPIV3Schema.properties[bar].type: Required value: must not be empty for specified object fields",
      "spec.validation.openAPIV3Schema.properties[foo].properties[a].type: Required value: must not be empty for specified object fields",
      "spec.validation.openAPIV3Schema.properties[foo].type: Required value: must not be empty for specified object fields",
      "spec.validation.openAPIV3Schema.properties[int-or-string].properties[a].type: Required value: must not be empty for specified object fields",
      "spec.validation.openAPIV3Schema.properties[json].properties[a].type: Required value: must not be empty for specified object fields",
      "spec.validation.openAPIV3Schema.type: Required value: must not be empty at the root",
    ]);
  });

  it("reports differing per-version schemas under spec.versions[i].schema", () => {
    const c = crd(undefined);
    c.spec!.versions = [
      {
        name: "v1",
        served: true,
        storage: true,
        schema: { openAPIV3Schema: yamlSchema("type: object\nproperties: {spec: {properties: {a: {type: string}}}}") },
      },
      { name: "v2", served: true, storage: false, schema: { openAPIV3Schema: { type: "object" } } },
    ];
    expect(messages(c)).toEqual([
      "spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields",
    ]);
  });

  it("allows only the int-or-string anyOf idiom to name types in value validations", () => {
    const s = yamlSchema(`
type: object
properties:
  b:
    x-kubernetes-int-or-string: true
    anyOf: [{type: integer}, {type: string}]
    allOf: [{pattern: abc}]
  d:
    x-kubernetes-int-or-string: true
    anyOf: [{type: integer}, {type: string, pattern: abc}]
  g:
    x-kubernetes-int-or-string: true
    anyOf: [{type: string}, {type: integer}]
`);
    expect(messages(crd(s))).toEqual([
      "spec.validation.openAPIV3Schema.properties[d].anyOf[0].type: Forbidden: must be empty to be structural",
      "spec.validation.openAPIV3Schema.properties[d].anyOf[1].type: Forbidden: must be empty to be structural",
      "spec.validation.openAPIV3Schema.properties[g].anyOf[0].type: Forbidden: must be empty to be structural",
      "spec.validation.openAPIV3Schema.properties[g].anyOf[1].type: Forbidden: must be empty to be structural",
    ]);
  });

  it("requires value validations to stay within the declared structure", () => {
    const s = yamlSchema(`
type: object
properties:
  b: {type: object, properties: {a: {type: string}}}
not:
  properties:
    a: {}
    b:
      not:
        properties:
          c: {}
allOf:
- properties:
    e: {}
`);
    expect(messages(crd(s))).toEqual([
      "spec.validation.openAPIV3Schema.properties[a]: Required value: because it is defined in spec.validation.openAPIV3Schema.not.properties[a]",
      "spec.validation.openAPIV3Schema.properties[b].properties[c]: Required value: because it is defined in spec.validation.openAPIV3Schema.not.properties[b].not.properties[c]",
      "spec.validation.openAPIV3Schema.properties[e]: Required value: because it is defined in spec.validation.openAPIV3Schema.allOf[0].properties[e]",
    ]);
  });

  it("forbids metadata restrictions, root additionalProperties, and extensions that contradict each other", () => {
    const s = yamlSchema(`
type: object
additionalProperties: {type: string}
properties:
  metadata:
    type: object
    properties:
      labels: {type: object}
  x:
    type: object
    x-kubernetes-embedded-resource: true
  y:
    x-kubernetes-int-or-string: true
    x-kubernetes-preserve-unknown-fields: true
`);
    expect(messages(crd(s))).toEqual([
      "spec.validation.openAPIV3Schema.additionalProperties: Forbidden: must not be used at the root",
      "spec.validation.openAPIV3Schema.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified",
      "spec.validation.openAPIV3Schema.properties[x].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
      "spec.validation.openAPIV3Schema.properties[y].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true",
      "spec.validation.openAPIV3Schema.additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive",
    ]);
  });

  it("rejects items given as an array and unsupported keywords", () => {
    const s = yamlSchema(`
type: object
properties:
  slice:
    type: array
    items:
    - type: string
    - type: integer
`);
    expect(messages(crd(s))).toEqual([
      "spec.validation.openAPIV3Schema.properties[slice].items: Forbidden: items must be a schema object and not an array",
    ]);
  });

  it("refuses an invalid pattern with Go's regexp error", () => {
    const s = yamlSchema("type: object\nproperties: {a: {type: string, pattern: '(abc'}}");
    expect(messages(crd(s))).toEqual([
      'spec.validation.openAPIV3Schema.properties[a].pattern: Invalid value: "(abc": must be a valid regular expression, but isn\'t: error parsing regexp: missing closing ): `(abc`',
    ]);
  });
});

describe("validateCustomResourceDefinition: defaults and list types", () => {
  it("checks defaults against their schema and refuses unknown fields in them", () => {
    const s = yamlSchema(`
type: object
properties:
  spec:
    type: object
    properties:
      replicas: {type: integer, default: "three"}
      size: {type: integer, maximum: 5, default: 7}
      tpl: {type: object, properties: {a: {type: string}}, default: {a: x, b: y}}
`);
    expect(messages(crd(s))).toEqual([
      'spec.validation.openAPIV3Schema.properties[spec].properties[replicas].default: Invalid value: "string":  in body must be of type integer: "string"',
      "spec.validation.openAPIV3Schema.properties[spec].properties[size].default: Invalid value: 7:  in body should be less than or equal to 5",
      'spec.validation.openAPIV3Schema.properties[spec].properties[tpl].default: Invalid value: map[string]interface {}{"a":"x", "b":"y"}: must not have unknown fields',
    ]);
  });

  it("forbids defaults in top-level metadata", () => {
    const s = yamlSchema("type: object\nproperties: {metadata: {type: object, default: {}}}");
    expect(messages(crd(s))).toContain(
      "spec.validation.openAPIV3Schema.properties[metadata].default: Forbidden: must not be set in top-level metadata",
    );
  });

  it("checks x-kubernetes-list-type and map keys", () => {
    const s = yamlSchema(`
type: object
properties:
  a: {type: string, x-kubernetes-list-type: set}
  b:
    type: array
    x-kubernetes-list-type: map
    x-kubernetes-list-map-keys: [name, missing]
    items: {type: object, properties: {name: {type: string}}}
  c: {type: array, x-kubernetes-list-type: bag, items: {type: string}}
`);
    expect(messages(crd(s))).toEqual([
      'spec.validation.openAPIV3Schema.properties[a].type: Invalid value: "string": must be array if x-kubernetes-list-type is specified',
      'spec.validation.openAPIV3Schema.properties[b].x-kubernetes-list-map-keys: Invalid value: []string{"name", "missing"}: entries must all be names of item properties',
      "spec.validation.openAPIV3Schema.properties[b].items.properties[name].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
      'spec.validation.openAPIV3Schema.properties[c].x-kubernetes-list-type: Unsupported value: "bag": supported values: "atomic", "set", "map"',
    ]);
  });

  it("checks CEL rule shapes without compiling them", () => {
    const s: JSONSchemaProps = {
      type: "object",
      "x-kubernetes-validations": [{ rule: " " }, { rule: "self.a\n== 1" }, { rule: "true", reason: "Nope" as never }],
    };
    expect(messages(crd(s))).toEqual([
      "spec.validation.openAPIV3Schema.x-kubernetes-validations[0].rule: Required value: rule is not specified",
      "spec.validation.openAPIV3Schema.x-kubernetes-validations[1].message: Required value: message must be specified if rule contains line breaks",
      'spec.validation.openAPIV3Schema.x-kubernetes-validations[2].reason: Unsupported value: "Nope": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"',
    ]);
  });

  it("words blank messages and bad fieldPaths as 1.32 does, naming the field in the detail", () => {
    const s: JSONSchemaProps = {
      type: "object",
      properties: { a: { type: "string" } },
      "x-kubernetes-validations": [
        { rule: "true", message: " " },
        { rule: "true", message: "a\nb" },
        { rule: "true", fieldPath: " " },
        { rule: "true", fieldPath: ".a\n" },
        { rule: "true", fieldPath: ".nope" },
      ],
    };
    const at = "spec.validation.openAPIV3Schema.x-kubernetes-validations";
    expect(messages(crd(s))).toEqual([
      `${at}[0].message: Invalid value: " ": message must be non-empty if specified`,
      `${at}[1].message: Invalid value: "a\\nb": message must not contain line breaks`,
      `${at}[2].fieldPath: Invalid value: " ": fieldPath must be non-empty if specified`,
      `${at}[3].fieldPath: Invalid value: ".a\\n": fieldPath must not contain line breaks`,
      `${at}[4].fieldPath: Invalid value: ".nope": fieldPath must be a valid path`,
    ]);
  });

  it("prints an items list of schemas as the internal JSONSchemaPropsOrArray", () => {
    const s = yamlSchema(`
type: object
properties:
  l:
    type: array
    x-kubernetes-list-type: map
    x-kubernetes-list-map-keys: [k]
    items: [{type: object, required: [k], properties: {k: {type: string}}}]
`);
    expect(messages(crd(s))).toContain(
      'spec.validation.openAPIV3Schema.properties[l].items: Invalid value: apiextensions.JSONSchemaPropsOrArray{Schema:(*apiextensions.JSONSchemaProps)(nil), JSONSchemas:[]apiextensions.JSONSchemaProps{apiextensions.JSONSchemaProps{ID:"", Schema:"", Ref:(*string)(nil), Description:"", Type:"object", Nullable:false, Format:"", Title:"", Default:(*apiextensions.JSON)(nil), Maximum:(*float64)(nil), ExclusiveMaximum:false, Minimum:(*float64)(nil), ExclusiveMinimum:false, MaxLength:(*int64)(nil), MinLength:(*int64)(nil), Pattern:"", MaxItems:(*int64)(nil), MinItems:(*int64)(nil), UniqueItems:false, MultipleOf:(*float64)(nil), Enum:[]apiextensions.JSON(nil), MaxProperties:(*int64)(nil), MinProperties:(*int64)(nil), Required:[]string{"k"}, Items:(*apiextensions.JSONSchemaPropsOrArray)(nil), AllOf:[]apiextensions.JSONSchemaProps(nil), OneOf:[]apiextensions.JSONSchemaProps(nil), AnyOf:[]apiextensions.JSONSchemaProps(nil), Not:(*apiextensions.JSONSchemaProps)(nil), Properties:map[string]apiextensions.JSONSchemaProps{"k":apiextensions.JSONSchemaProps{ID:"", Schema:"", Ref:(*string)(nil), Description:"", Type:"string", Nullable:false, Format:"", Title:"", Default:(*apiextensions.JSON)(nil), Maximum:(*float64)(nil), ExclusiveMaximum:false, Minimum:(*float64)(nil), ExclusiveMinimum:false, MaxLength:(*int64)(nil), MinLength:(*int64)(nil), Pattern:"", MaxItems:(*int64)(nil), MinItems:(*int64)(nil), UniqueItems:false, MultipleOf:(*float64)(nil), Enum:[]apiextensions.JSON(nil), MaxProperties:(*int64)(nil), MinProperties:(*int64)(nil), Required:[]string(nil), Items:(*apiextensions.JSONSchemaPropsOrArray)(nil), AllOf:[]apiextensions.JSONSchemaProps(nil), OneOf:[]apiextensions.JSONSchemaProps(nil), AnyOf:[]apiextensions.JSONSchemaProps(nil), Not:(*apiextensions.JSONSchemaProps)(nil), Properties:map[string]apiextensions.JSONSchemaProps(nil), AdditionalProperties:(*apiextensions.JSONSchemaPropsOrBool)(nil), PatternProperties:map[string]apiextensions.JSONSchemaProps(nil), Dependencies:apiextensions.JSONSchemaDependencies(nil), AdditionalItems:(*apiextensions.JSONSchemaPropsOrBool)(nil), Definitions:apiextensions.JSONSchemaDefinitions(nil), ExternalDocs:(*apiextensions.ExternalDocumentation)(nil), Example:(*apiextensions.JSON)(nil), XPreserveUnknownFields:(*bool)(nil), XEmbeddedResource:false, XIntOrString:false, XListMapKeys:[]string(nil), XListType:(*string)(nil), XMapType:(*string)(nil), XValidations:apiextensions.ValidationRules(nil)}}, AdditionalProperties:(*apiextensions.JSONSchemaPropsOrBool)(nil), PatternProperties:map[string]apiextensions.JSONSchemaProps(nil), Dependencies:apiextensions.JSONSchemaDependencies(nil), AdditionalItems:(*apiextensions.JSONSchemaPropsOrBool)(nil), Definitions:apiextensions.JSONSchemaDefinitions(nil), ExternalDocs:(*apiextensions.ExternalDocumentation)(nil), Example:(*apiextensions.JSON)(nil), XPreserveUnknownFields:(*bool)(nil), XEmbeddedResource:false, XIntOrString:false, XListMapKeys:[]string(nil), XListType:(*string)(nil), XMapType:(*string)(nil), XValidations:apiextensions.ValidationRules(nil)}}}: must only have a single schema if x-kubernetes-list-type is map',
    );
  });

  it("hands rules to the CEL compiler extension point only where the real server compiles them", () => {
    const seen: string[] = [];
    const compileRules = (node: JSONSchemaProps, path: { toString(): string }) => {
      seen.push(path.toString());
      return node["x-kubernetes-validations"]![0]!.rule === "bad("
        ? [required(`${path.toString()}.x-kubernetes-validations[0].rule`, "compilation failed")]
        : [];
    };
    const s = yamlSchema(`
type: object
properties:
  spec:
    type: object
    x-kubernetes-validations: [{rule: "bad("}]
    properties: {a: {type: string, x-kubernetes-validations: [{rule: "self != ''"}]}}
  other:
    type: object
    x-kubernetes-validations: [{rule: "true"}]
    properties: {b: {type: string, pattern: "(x"}}
`);
    expect(validateCustomResourceDefinition(crd(s), { compileRules }).map(fieldErrorMessage)).toEqual([
      'spec.validation.openAPIV3Schema.properties[other].properties[b].pattern: Invalid value: "(x": must be a valid regular expression, but isn\'t: error parsing regexp: missing closing ): `(x`',
    ]);
    expect(seen).toEqual([]);
    const valid = yamlSchema(`
type: object
properties:
  spec:
    type: object
    x-kubernetes-validations: [{rule: "bad("}]
    properties: {a: {type: string, x-kubernetes-validations: [{rule: "self != ''"}]}}
`);
    expect(validateCustomResourceDefinition(crd(valid), { compileRules }).map(fieldErrorMessage)).toEqual([
      "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Required value: compilation failed",
    ]);
    expect(seen).toEqual([
      "spec.validation.openAPIV3Schema.properties[spec].properties[a]",
      "spec.validation.openAPIV3Schema.properties[spec]",
    ]);
  });

  it("restricts the root when the status subresource is on", () => {
    const s: JSONSchemaProps = { type: "object", nullable: true };
    const c = crd(s);
    c.spec!.versions![0]!.subresources = { status: {} };
    const errs = messages(c);
    expect(errs[0]).toBe(
      'spec.validation.openAPIV3Schema: Invalid value: apiextensions.JSONSchemaProps{ID:"", Schema:"", Ref:(*string)(nil), Description:"", Type:"object", Nullable:true, Format:"", Title:"", Default:(*apiextensions.JSON)(nil), Maximum:(*float64)(nil), ExclusiveMaximum:false, Minimum:(*float64)(nil), ExclusiveMinimum:false, MaxLength:(*int64)(nil), MinLength:(*int64)(nil), Pattern:"", MaxItems:(*int64)(nil), MinItems:(*int64)(nil), UniqueItems:false, MultipleOf:(*float64)(nil), Enum:[]apiextensions.JSON(nil), MaxProperties:(*int64)(nil), MinProperties:(*int64)(nil), Required:[]string(nil), Items:(*apiextensions.JSONSchemaPropsOrArray)(nil), AllOf:[]apiextensions.JSONSchemaProps(nil), OneOf:[]apiextensions.JSONSchemaProps(nil), AnyOf:[]apiextensions.JSONSchemaProps(nil), Not:(*apiextensions.JSONSchemaProps)(nil), Properties:map[string]apiextensions.JSONSchemaProps(nil), AdditionalProperties:(*apiextensions.JSONSchemaPropsOrBool)(nil), PatternProperties:map[string]apiextensions.JSONSchemaProps(nil), Dependencies:apiextensions.JSONSchemaDependencies(nil), AdditionalItems:(*apiextensions.JSONSchemaPropsOrBool)(nil), Definitions:apiextensions.JSONSchemaDefinitions(nil), ExternalDocs:(*apiextensions.ExternalDocumentation)(nil), Example:(*apiextensions.JSON)(nil), XPreserveUnknownFields:(*bool)(nil), XEmbeddedResource:false, XIntOrString:false, XListMapKeys:[]string(nil), XListType:(*string)(nil), XMapType:(*string)(nil), XValidations:apiextensions.ValidationRules(nil)}: only [Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations] fields are allowed at the root of the schema if the status subresource is enabled',
    );
    expect(errs[1]).toBe("spec.validation.openAPIV3Schema.nullable: Forbidden: nullable cannot be true at the root");
  });

  it("builds the 422 Status kubectl prints for an invalid CRD", () => {
    const c = crd(yamlSchema("type: object\nproperties: {spec: {properties: {a: {type: string}}}}"));
    const status = invalidStatus(
      "apiextensions.k8s.io",
      "CustomResourceDefinition",
      c.metadata!.name!,
      validateCustomResourceDefinition(c),
    );
    expect(status.message).toBe(
      'CustomResourceDefinition.apiextensions.k8s.io "crontabs.stable.example.com" is invalid: spec.validation.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields',
    );
  });
});

describe("malformed input", () => {
  it("validates schemas with fields of the wrong JSON type without throwing, ignoring those fields", () => {
    const malformed = [
      { type: "object", anyOf: { maximum: null }, properties: [[]], required: -2.5 },
      { type: "object", pattern: { anyOf: [] }, format: ["x"], allOf: "", items: [null, 1] },
      { type: "object", properties: { a: { type: 5, enum: 3, "x-kubernetes-list-map-keys": 1, default: 3 } } },
    ] as unknown as JSONSchemaProps[];
    for (const s of malformed) {
      expect(() => validateCustomResourceDefinition(crd(s))).not.toThrow();
      expect(() => validateCustomResourceDefinitionUpdate(crd(s), crd(s))).not.toThrow();
    }
    expect(messages(crd(malformed[2]!))).toEqual([
      "spec.validation.openAPIV3Schema.properties[a].type: Required value: must not be empty for specified object fields",
    ]);
  });

  it("survives a spec whose parts have the wrong shape", () => {
    const c = {
      metadata: { name: 5 },
      spec: { names: 7, group: [], versions: [null, 1, { name: "v1", additionalPrinterColumns: [null] }] },
    };
    expect(() => validateCustomResourceDefinition(c as never)).not.toThrow();
  });
});

describe("validateCustomResourceDefinitionUpdate", () => {
  const established = (c: CustomResourceDefinitionV1): CustomResourceDefinitionV1 => ({
    ...c,
    metadata: { ...c.metadata, resourceVersion: "5", uid: "u1" },
    status: { storedVersions: ["v1"], conditions: [{ type: "Established", status: "True" }] },
  });

  it("keeps group and plural immutable, and scope and kind once established", () => {
    const old = established(crd(cronTabSchema));
    const next = established(crd(cronTabSchema, { scope: "Cluster" }));
    next.spec!.names = { ...next.spec!.names!, kind: "Cron" };
    expect(validateCustomResourceDefinitionUpdate(next, old).map(fieldErrorMessage)).toEqual([
      'spec.scope: Invalid value: "Cluster": field is immutable',
      'spec.names.kind: Invalid value: "Cron": field is immutable',
    ]);
    const moved = established(crd(cronTabSchema, { group: "other.example.com" }));
    expect(validateCustomResourceDefinitionUpdate(moved, old).map(fieldErrorMessage)).toContain(
      'spec.group: Invalid value: "other.example.com": field is immutable',
    );
  });

  it("refuses dropping a version that is still in status.storedVersions", () => {
    const old = established(crd(cronTabSchema));
    const next = established(crd(cronTabSchema));
    next.spec!.versions![0]!.name = "v2";
    expect(validateCustomResourceDefinitionUpdate(next, old).map(fieldErrorMessage)).toContain(
      'status.storedVersions[0]: Invalid value: "v1": must appear in spec.versions',
    );
  });

  it("keeps accepting defaults with unknown fields when the stored CRD already had them", () => {
    const withUnpruned = yamlSchema(
      "type: object\nproperties: {tpl: {type: object, properties: {a: {type: string}}, default: {a: x, b: y}}}",
    );
    const old = established(crd(withUnpruned));
    expect(validateCustomResourceDefinitionUpdate(established(crd(withUnpruned)), old)).toEqual([]);
    expect(
      validateCustomResourceDefinitionUpdate(established(crd(withUnpruned)), established(crd(cronTabSchema))).map(
        fieldErrorMessage,
      ),
    ).toEqual([
      'spec.validation.openAPIV3Schema.properties[tpl].default: Invalid value: map[string]interface {}{"a":"x", "b":"y"}: must not have unknown fields',
    ]);
  });

  it("refuses more than 8 selectable fields even when the stored CRD already had them (1.32 has no exemption)", () => {
    const many = Array.from({ length: 9 }, () => ({ jsonPath: ".spec.image" }));
    const withMany = (): CustomResourceDefinitionV1 => {
      const c = established(crd(cronTabSchema));
      c.spec!.versions![0]!.selectableFields = many.map((f, i) => ({ jsonPath: i === 0 ? f.jsonPath : `.spec.f${i}` }));
      c.spec!.versions![0]!.schema!.openAPIV3Schema = yamlSchema(`
type: object
properties:
  spec:
    type: object
    properties: {image: {type: string}, ${many.map((_, i) => `f${i}: {type: string}`).join(", ")}}
`);
      return c;
    };
    expect(validateCustomResourceDefinitionUpdate(withMany(), withMany()).map(fieldErrorMessage)).toEqual([
      "spec.selectableFields: Too many: 9: must have at most 8 items",
    ]);
  });

  it("says where selectable fields need a schema as 1.32 does", () => {
    const c = crd(undefined);
    c.spec!.versions = [
      { name: "v1", served: true, storage: true, selectableFields: [{ jsonPath: ".spec.a" }] },
      { name: "v2", served: true, storage: false, schema: { openAPIV3Schema: { type: "object" } } },
    ];
    expect(messages(c)).toContain(
      'spec.versions[0].selectableFields: Invalid value: "": selectableFields may only be set when version.schema.openAPIV3Schema is not included',
    );
  });

  it("accepts an unchanged CRD", () => {
    const old = established(crd(cronTabSchema));
    expect(validateCustomResourceDefinitionUpdate(established(crd(cronTabSchema)), old)).toEqual([]);
  });
});
