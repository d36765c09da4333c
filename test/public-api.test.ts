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

describe("the public tiers", () => {
  const internalNames = ["pluralize", "checkVerb", "structuralProblems", "formatProblem", "OperatorTestHooks"];

  it("keep the root to the author's names: resources, operator, reconcile, the client and its common errors", async () => {
    const root = Object.keys(await import("capstan")).sort();
    expect(root).toEqual(
      expect.arrayContaining(["ApiError", "KubeClient", "PermanentError", "TemporaryError", "TerminalError"]),
    );
    expect(root).toEqual(expect.arrayContaining(["defineResource", "isDeleted", "isNotFound", "needs", "operator"]));
    // The primitives live in their tiers, not in the root.
    for (const name of ["Manager", "WorkQueue", "Informer", "loadClientConfig", "rbacManifests", ...internalNames]) {
      expect(root, name).not.toContain(name);
    }
    expect(root.length).toBeLessThanOrEqual(32); // values (7 of them conditions: schema and helpers); the root's types are about as many again
  });

  it("give the primitives their own entry points: capstan/runtime, capstan/client, capstan/resources", async () => {
    const runtime = Object.keys(await import("capstan/runtime"));
    expect(runtime).toEqual(
      expect.arrayContaining([
        "Manager",
        "Controller",
        "Informer",
        "WorkQueue",
        "LeaderElector",
        "predicates",
        "ensureCrds",
        "systemClock",
        "NotIdleError",
      ]),
    );
    const client = Object.keys(await import("capstan/client"));
    expect(client).toEqual(
      expect.arrayContaining(["loadClientConfig", "ConfigError", "ConnectionError", "KubeClient"]),
    );
    const resources = Object.keys(await import("capstan/resources"));
    expect(resources).toEqual(expect.arrayContaining(["toCrd", "rbacManifests", "deriveRules", "translateSchema"]));
    for (const tier of [runtime, client, resources]) {
      for (const name of internalNames) expect(tier, name).not.toContain(name);
    }
  });
});

describe("the clock of time travel", () => {
  it("is a type of capstan/runtime that capstan-dev/testing's ManualClock implements", async () => {
    const { systemClock } = await import("capstan/runtime");
    const { ManualClock } = await import("capstan-dev/testing");
    expectTypeOf(new ManualClock()).toExtend<import("capstan/runtime").Clock>();
    expectTypeOf(systemClock).toEqualTypeOf<import("capstan/runtime").Clock>();
    expect(typeof systemClock.setTimer).toBe("function");
  });
});
