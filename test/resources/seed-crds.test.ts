import { describe, expect, it } from "vitest";
import { toCrd } from "../../packages/capstan/src/resources/crd.ts";
import { formatProblem, structuralProblems } from "../../packages/capstan/src/resources/structural.ts";
import { fieldErrorMessage } from "../../packages/capstan-dev/src/devcluster/validation/field-errors.ts";
import type { JSONSchemaProps } from "../../packages/capstan-dev/src/devcluster/validation/schema-types.ts";
import { validateCustomObject } from "../../packages/capstan-dev/src/devcluster/validation/schema-validate.ts";
import { ExchangeRate, Guitar, ImmortalContainer, Machine, SEED_KINDS, Switch } from "./seed-kinds.ts";

function schemaOf(kind: (typeof SEED_KINDS)[number]): JSONSchemaProps {
  const schema = toCrd(kind).spec.versions[0]?.schema?.openAPIV3Schema;
  if (schema === undefined) throw new Error("no schema");
  return schema as JSONSchemaProps;
}

/** The field errors the devcluster's schema validator (kube-openapi's rules) reports, sorted. */
function errorsFor(kind: (typeof SEED_KINDS)[number], obj: unknown): string[] {
  return validateCustomObject(schemaOf(kind), obj).map(fieldErrorMessage).sort();
}

describe("the seed operators' CRDs", () => {
  it.each(SEED_KINDS.map((k) => [k.kind, k] as const))("%s has a structural schema", (_name, kind) => {
    const crd = toCrd(kind);
    for (const version of crd.spec.versions) {
      const problems = structuralProblems(version.schema?.openAPIV3Schema as never, {
        statusSubresource: version.subresources?.status !== undefined,
      });
      expect(problems.map(formatProblem)).toEqual([]);
    }
  });

  it("ExchangeRate matches the seed's hand-written CRD where it matters", () => {
    const crd = toCrd(ExchangeRate);
    expect(crd.metadata?.name).toBe("exchangerates.operators.brennerm.github.io");
    expect(crd.spec.names).toEqual({
      kind: "ExchangeRate",
      listKind: "ExchangeRateList",
      plural: "exchangerates",
      singular: "exchangerate",
      shortNames: ["er"],
    });
    expect(schemaOf(ExchangeRate).properties?.spec?.properties?.currency).toEqual({
      type: "string",
      enum: ["CAD", "CHF", "GBP", "JPY", "PLN", "USD"],
    });
  });

  it("ImmortalContainer matches the seed's schema (image minLength 1, startTimes int64, status subresource)", () => {
    const crd = toCrd(ImmortalContainer);
    expect(crd.spec.versions[0]?.subresources).toEqual({ status: {} });
    const schema = schemaOf(ImmortalContainer);
    expect(schema.properties?.spec).toEqual({
      type: "object",
      required: ["image"],
      properties: { image: { type: "string", minLength: 1 } },
    });
    expect(schema.properties?.status?.properties?.startTimes).toEqual({ type: "integer", minimum: 0, format: "int64" });
  });

  it("accepts valid objects and rejects invalid ones, naming the field", () => {
    const er = (spec: unknown) => ({
      apiVersion: ExchangeRate.apiVersion,
      kind: "ExchangeRate",
      metadata: { name: "x" },
      spec,
    });
    expect(errorsFor(ExchangeRate, er({ currency: "USD" }))).toEqual([]);
    expect(errorsFor(ExchangeRate, er({ currency: "EUR" }))).toEqual([
      'spec.currency: Unsupported value: "EUR": supported values: "CAD", "CHF", "GBP", "JPY", "PLN", "USD"',
    ]);
    expect(errorsFor(ExchangeRate, er({}))).toEqual(["spec.currency: Required value"]);

    const ic = (spec: unknown, status?: unknown) => ({
      ...ImmortalContainer.make({ metadata: { name: "x" }, spec: spec as never }),
      ...(status === undefined ? {} : { status }),
    });
    expect(
      errorsFor(ImmortalContainer, ic({ image: "nginx:latest" }, { currentPod: "x-immortalpod", startTimes: 2 })),
    ).toEqual([]);
    expect(errorsFor(ImmortalContainer, ic({ image: "" }))).toEqual([
      'spec.image: Invalid value: "": spec.image in body should be at least 1 chars long',
    ]);
    expect(errorsFor(ImmortalContainer, ic({ image: "nginx" }, { startTimes: "two" }))).toEqual([
      'status.startTimes: Invalid value: "string": status.startTimes in body must be of type integer: "string"',
    ]);

    const machine = (spec: unknown) => ({
      apiVersion: Machine.apiVersion,
      kind: "Machine",
      metadata: { name: "m" },
      spec,
    });
    expect(errorsFor(Machine, machine({ switchPosition: "up", switches: 3 }))).toEqual([]);
    expect(errorsFor(Machine, machine({ switchPosition: "sideways", switches: 21 }))).toEqual([
      'spec.switchPosition: Unsupported value: "sideways": supported values: "up", "down"',
      "spec.switches: Invalid value: 21: spec.switches in body should be less than or equal to 20",
    ]);

    expect(errorsFor(Switch, Switch.make({ metadata: { name: "s" }, spec: { position: "down" } }))).toEqual([]);
    expect(
      errorsFor(Guitar, Guitar.make({ metadata: { name: "strat" }, spec: { brand: "fender", review: false } })),
    ).toEqual([]);
    expect(
      errorsFor(Guitar, {
        ...Guitar.make({ metadata: { name: "g" }, spec: { brand: "gibson" } }),
        spec: { review: "yes" },
      }),
    ).toEqual([
      "spec.brand: Required value",
      'spec.review: Invalid value: "string": spec.review in body must be of type boolean: "string"',
    ]);
  });
});
