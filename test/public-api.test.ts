import { defineResource, KubeClient, operator, Type, toCrd } from "capstan";
import { ConfigMap } from "capstan/core";
import { describe, expect, expectTypeOf, it } from "vitest";

describe("the public entry points", () => {
  it("define a resource, its CRD and an operator with the imports DESIGN.md shows", () => {
    const ExchangeRate = defineResource({
      group: "operators.example.com",
      version: "v1",
      kind: "ExchangeRate",
      scope: "Namespaced",
      shortNames: ["er"],
      spec: Type.Object({ currency: Type.Enum(["CAD", "CHF", "USD"]) }),
      status: Type.Object({ rate: Type.Optional(Type.Number()) }),
    });
    const er = ExchangeRate.make({ metadata: { name: "usd" }, spec: { currency: "USD" } });
    expectTypeOf(er.spec.currency).toEqualTypeOf<"CAD" | "CHF" | "USD">();
    expect(er).toMatchObject({ apiVersion: "operators.example.com/v1", kind: "ExchangeRate" });
    expect(toCrd(ExchangeRate).metadata?.name).toBe("exchangerates.operators.example.com");

    const op = operator({ name: "exchangerates" });
    op.controller(ExchangeRate).owns(ConfigMap);
    expect(typeof KubeClient.load).toBe("function");
    expect(ConfigMap).toMatchObject({ group: "", version: "v1", plural: "configmaps", namespaced: true });
  });
});
