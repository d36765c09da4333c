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
    expect(root.length).toBeLessThanOrEqual(30); // values; the root's types are about as many again
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

describe("the built-in schemas", () => {
  const entryPoints = {
    "capstan/schemas/core/v1": ["PodTemplateSpec", "PodSpec", "Container", "ResourceRequirements", "ObjectReference"],
    "capstan/schemas/batch/v1": ["JobTemplateSpec", "JobSpec", "CronJobSpec"],
    "capstan/schemas/apps/v1": ["DeploymentSpec", "StatefulSetSpec", "DaemonSetSpec"],
    "capstan/schemas/meta/v1": [
      "LabelSelector",
      "LabelSelectorRequirement",
      "ObjectMeta",
      "OwnerReference",
      "Quantity",
    ],
    "capstan/schemas/networking/v1": ["IngressSpec", "NetworkPolicySpec"],
    "capstan/schemas/rbac/v1": ["PolicyRule", "Subject"],
    "capstan/schemas/policy/v1": ["PodDisruptionBudgetSpec"],
    "capstan/schemas/autoscaling/v2": ["HorizontalPodAutoscalerSpec", "MetricSpec"],
  };

  it("have one entry point per group-version, in the package's exports with the capstan-source condition", async () => {
    const { default: manifest } = await import("capstan/package.json", { with: { type: "json" } });
    for (const [specifier, names] of Object.entries(entryPoints)) {
      const subpath = `./${specifier.slice("capstan/".length)}`;
      expect(manifest.exports, subpath).toHaveProperty([subpath], {
        "capstan-source": `./src/${subpath.slice(2)}.ts`,
        types: `./dist/${subpath.slice(2)}.d.ts`,
        default: `./dist/${subpath.slice(2)}.js`,
      });
      const module = await import(/* @vite-ignore */ specifier);
      expect(Object.keys(module), specifier).toEqual(expect.arrayContaining(names));
    }
  });

  it("leave Condition to capstan's own, and stay out of the root (an operator that does not import them loads none)", async () => {
    expect(Object.keys(await import("capstan/schemas/meta/v1"))).not.toContain("Condition");
    const root = Object.keys(await import("capstan"));
    for (const name of ["PodSpec", "JobTemplateSpec", "LabelSelector"]) expect(root).not.toContain(name);
  });
});
