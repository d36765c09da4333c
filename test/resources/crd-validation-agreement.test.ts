/**
 * toCrd's output checked by a second, independent implementation of apiextensions' CRD validation
 * (the devcluster's, written from kube-apiserver's sources by another engineer): every CRD Capstan
 * generates must pass it, and the schemas Capstan's structural checker refuses must be refused
 * there too.
 */
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { toCrd } from "../../packages/capstan/src/resources/crd.ts";
import { defineResource } from "../../packages/capstan/src/resources/define-resource.ts";
import { Kube } from "../../packages/capstan/src/resources/kube-extensions.ts";
import type { KubeSchema } from "../../packages/capstan/src/resources/kube-schema.ts";
import { structuralProblems } from "../../packages/capstan/src/resources/structural.ts";
import { validateCustomResourceDefinition } from "../../packages/capstan-dev/src/devcluster/validation/crd.ts";
import type { CustomResourceDefinitionV1 } from "../../packages/capstan-dev/src/devcluster/validation/crd-internal.ts";
import { fieldErrorMessage } from "../../packages/capstan-dev/src/devcluster/validation/field-errors.ts";
import { SEED_KINDS } from "./seed-kinds.ts";

const serverErrors = (crd: unknown) =>
  validateCustomResourceDefinition(crd as CustomResourceDefinitionV1).map(fieldErrorMessage);

/** A kind using every construct the translator supports, in spec and status, with several versions. */
const Everything = defineResource({
  group: "everything.example.com",
  kind: "Everything",
  scope: "Cluster",
  shortNames: ["ev"],
  categories: ["all"],
  versions: [
    {
      name: "v1",
      spec: Type.Object(
        {
          s: Type.String({ minLength: 1, maxLength: 10, pattern: "^[a-z]+$", format: "hostname" }),
          i: Type.Integer({ exclusiveMinimum: 0, maximum: 100, default: 5 }),
          i32: Type.Optional(Type.Integer({ format: "int32" })),
          n: Type.Optional(Type.Union([Type.Number({ multipleOf: 0.5 }), Type.Null()])),
          b: Type.Optional(Type.Boolean({ default: true })),
          e: Type.Enum(["a", "b"], { default: "a" }),
          lit: Type.Optional(Type.Literal("fixed")),
          arr: Type.Optional(Type.Array(Type.String(), { minItems: 1, maxItems: 5, ...Kube.listSet() })),
          rec: Type.Optional(Type.Record(Type.String(), Type.Array(Type.Integer()))),
          ports: Type.Optional(
            Type.Array(Type.Object({ name: Type.String(), port: Kube.IntOrString() }), {
              ...Kube.listMap(["name"]),
              maxItems: 10,
            }),
          ),
          port: Type.Optional(Type.Union([Type.Integer(), Type.String()])),
          any: Type.Optional(Type.Unknown()),
          obj: Type.Optional(Type.Object({ a: Type.String() }, { additionalProperties: true })),
          embedded: Type.Optional(Kube.EmbeddedResource()),
          merged: Type.Optional(
            Type.Intersect([Type.Object({ x: Type.String() }), Type.Object({ y: Type.Optional(Type.String()) })]),
          ),
          atomic: Type.Optional(Type.Object({ k: Type.String() }, Kube.mapAtomic())),
          ranged: Type.Optional(
            Type.Object(
              { min: Type.Integer(), max: Type.Integer() },
              Kube.validations({
                rule: "self.min <= self.max",
                message: "min must not exceed max",
                reason: "FieldValueInvalid",
              }),
            ),
          ),
        },
        { description: "everything", $id: "Spec" },
      ),
      status: Type.Object({
        conditions: Type.Optional(
          Type.Array(
            Type.Object({
              type: Type.String(),
              status: Type.Enum(["True", "False", "Unknown"]),
              lastTransitionTime: Type.Optional(Type.String({ format: "date-time" })),
            }),
            Kube.listMap(["type"]),
          ),
        ),
        observedGeneration: Type.Optional(Type.Integer()),
      }),
      printerColumns: [
        { name: "S", type: "string", jsonPath: ".spec.s" },
        { name: "I", type: "integer", jsonPath: ".spec.i", priority: 1, format: "int64", description: "an integer" },
      ],
      selectableFields: [".spec.s", ".spec.e"],
      validations: [{ rule: "self.spec.i > 0" }],
      scale: { specReplicasPath: ".spec.i", statusReplicasPath: ".status.observedGeneration" },
    },
    { name: "v1beta1", spec: Type.Object({ s: Type.String() }), deprecated: true, deprecationWarning: "use v1" },
  ],
});

describe("generated CRDs pass the devcluster's apiextensions validation", () => {
  it.each([...SEED_KINDS, Everything].map((k) => [k.kind, k] as const))("%s", (_name, kind) => {
    expect(serverErrors(toCrd(kind))).toEqual([]);
  });
});

describe("what the structural checker refuses, the devcluster's CRD validation refuses too", () => {
  const crdWith = (spec: KubeSchema) => {
    const crd = toCrd(SEED_KINDS[0]);
    const version = crd.spec.versions[0] as { schema: { openAPIV3Schema: KubeSchema } };
    version.schema.openAPIV3Schema = { type: "object", properties: { spec } };
    crd.spec.versions[0] = { ...crd.spec.versions[0], subresources: undefined } as (typeof crd.spec.versions)[0];
    return { crd, root: version.schema.openAPIV3Schema };
  };

  it.each<[string, KubeSchema]>([
    ["a field without a type", { type: "object", properties: { a: {} } }],
    ["a type inside anyOf", { type: "object", properties: { a: { type: "string" } }, anyOf: [{ type: "object" }] }],
    [
      "additionalProperties beside properties",
      { type: "object", properties: { a: { type: "string" } }, additionalProperties: { type: "string" } },
    ],
    ["an array without items", { type: "object", properties: { l: { type: "array" } } }],
    [
      "uniqueItems",
      { type: "object", properties: { l: { type: "array", items: { type: "string" }, uniqueItems: true } } },
    ],
    ["patternProperties", { type: "object", patternProperties: { x: { type: "string" } } } as unknown as KubeSchema],
    ["type null", { type: "object", properties: { a: { type: "null" } } } as unknown as KubeSchema],
  ])("%s", (_what, spec) => {
    const { crd, root } = crdWith(spec);
    expect(structuralProblems(root)).not.toEqual([]);
    expect(serverErrors(crd)).not.toEqual([]);
  });
});
