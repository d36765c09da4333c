import { describe, expect, it } from "vitest";
import type { KubeSchema } from "../../packages/capstan/src/resources/kube-schema.ts";
import { formatProblem, structuralProblems } from "../../packages/capstan/src/resources/structural.ts";

const check = (schema: KubeSchema, statusSubresource = false) =>
  structuralProblems(schema, { statusSubresource }).map(formatProblem);
const root = (spec: KubeSchema): KubeSchema => ({ type: "object", properties: { spec } });

describe("structuralProblems (apiextensions' structural rules)", () => {
  it("accepts a plain structural schema", () => {
    expect(
      check({
        type: "object",
        properties: {
          metadata: { type: "object" },
          spec: {
            type: "object",
            properties: { a: { type: "string" }, m: { type: "object", additionalProperties: { type: "integer" } } },
          },
          status: { type: "object", properties: { n: { type: "integer" } } },
        },
      }),
    ).toEqual([]);
  });

  it("requires a type on every field, item and at the root", () => {
    expect(
      check({ properties: { spec: { type: "object", properties: { a: {}, l: { type: "array", items: {} } } } } }),
    ).toEqual([
      "openAPIV3Schema.properties[spec].properties[a].type: Required value: must not be empty for specified object fields",
      "openAPIV3Schema.properties[spec].properties[l].items.type: Required value: must not be empty for specified array items",
      "openAPIV3Schema.type: Required value: must not be empty at the root",
    ]);
  });

  it("allows a missing type with int-or-string or preserve-unknown-fields", () => {
    expect(
      check(
        root({
          type: "object",
          properties: {
            p: { "x-kubernetes-int-or-string": true },
            u: { "x-kubernetes-preserve-unknown-fields": true },
          },
        }),
      ),
    ).toEqual([]);
    // The int-or-string anyOf pattern is allowed under the extension.
    expect(
      check(
        root({
          type: "object",
          properties: { p: { "x-kubernetes-int-or-string": true, anyOf: [{ type: "integer" }, { type: "string" }] } },
        }),
      ),
    ).toEqual([]);
  });

  it("forbids types, defaults and descriptions inside anyOf/allOf/oneOf/not", () => {
    expect(
      check(
        root({
          type: "object",
          properties: { a: { type: "string" } },
          anyOf: [{ type: "object", properties: { a: { type: "string", description: "x" } } }],
          not: { default: 1 },
        }),
      ),
    ).toEqual([
      "openAPIV3Schema.properties[spec].anyOf[0].properties[a].description: Forbidden: must be empty to be structural",
      "openAPIV3Schema.properties[spec].anyOf[0].properties[a].type: Forbidden: must be empty to be structural",
      "openAPIV3Schema.properties[spec].anyOf[0].type: Forbidden: must be empty to be structural",
      "openAPIV3Schema.properties[spec].not.default: Forbidden: must be undefined to be structural",
    ]);
  });

  it("requires fields named in value validations to be specified outside them", () => {
    expect(
      check(
        root({
          type: "object",
          properties: { a: { type: "string" } },
          oneOf: [{ required: ["a"] }, { properties: { b: { minLength: 1 } } }],
        }),
      ),
    ).toEqual([
      "openAPIV3Schema.properties[spec].properties[b]: Required value: because it is defined in openAPIV3Schema.properties[spec].oneOf[1].properties[b]",
    ]);
  });

  it("does not let a map's additionalProperties stand in for a property named in a value validation", () => {
    expect(
      check(
        root({
          type: "object",
          additionalProperties: { type: "string" },
          anyOf: [{ required: ["a"] }, { properties: { a: { minLength: 1 } } }],
        }),
      ),
    ).toEqual([
      "openAPIV3Schema.properties[spec].properties[a]: Required value: because it is defined in openAPIV3Schema.properties[spec].anyOf[1].properties[a]",
    ]);
  });

  it("refuses additionalProperties beside properties and at the root", () => {
    expect(check({ type: "object", additionalProperties: { type: "string" } })).toEqual([
      "openAPIV3Schema.additionalProperties: Forbidden: must not be used at the root",
    ]);
    expect(check(root({ type: "object", properties: { a: { type: "string" } }, additionalProperties: false }))).toEqual(
      [
        "openAPIV3Schema.properties[spec].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive",
      ],
    );
  });

  it("refuses keywords CRDs do not support", () => {
    const bad = {
      type: "object",
      patternProperties: { x: { type: "string" } },
      $ref: "#/x",
      uniqueItems: true,
      const: 1,
    } as unknown as KubeSchema;
    expect(check(root(bad))).toEqual([
      "openAPIV3Schema.properties[spec].$ref: Forbidden: $ref is not supported",
      "openAPIV3Schema.properties[spec].const: Forbidden: unknown field: JSONSchemaProps has no such keyword",
      "openAPIV3Schema.properties[spec].patternProperties: Forbidden: patternProperties is not supported",
      "openAPIV3Schema.properties[spec].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
    ]);
    expect(check(root({ type: "null" } as KubeSchema))).toEqual([
      "openAPIV3Schema.properties[spec].type: Forbidden: type cannot be set to null, use nullable as an alternative",
    ]);
  });

  it("restricts metadata at the root to name and generateName", () => {
    expect(
      check({
        type: "object",
        properties: { metadata: { type: "object", properties: { labels: { type: "object" } } } },
      }),
    ).toEqual([
      "openAPIV3Schema.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified",
    ]);
  });

  it("restricts the root keywords when the status subresource is on", () => {
    expect(check({ type: "object", properties: {}, nullable: true }, true)).toEqual([
      expect.stringMatching(
        /^openAPIV3Schema: Invalid value: only .* are allowed at the root of the schema if the status subresource is enabled \(found nullable\)$/,
      ),
      "openAPIV3Schema.nullable: Forbidden: nullable cannot be true at the root",
    ]);
  });
});
