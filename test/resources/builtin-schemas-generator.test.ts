/**
 * scripts/builtin-schemas/openapi-to-typebox.ts on a small OpenAPI v3 fixture: the generated
 * modules are written beside the workspace's node_modules, loaded, and embedded in a resource whose
 * CRD shows what became of each construct (references inlined, markers kept, a cycle cut, the
 * known types replaced, zero-value defaults dropped).
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { defineResource, Type, toCrd } from "capstan";
import type { KubeSchema } from "capstan/resources";
import type { TSchema } from "typebox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  generateModules,
  type OpenApiSchema,
  QUANTITY_PATTERN,
  SchemaGenerationError,
} from "../../scripts/builtin-schemas/openapi-to-typebox.ts";

const META = "io.k8s.apimachinery.pkg.apis.meta.v1";
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

const FIXTURE: Record<string, OpenApiSchema> = {
  [`${META}.ObjectMeta`]: {
    type: "object",
    description: "ObjectMeta is metadata.",
    properties: {
      name: { type: "string", description: "Name." },
      namespace: { type: "string" },
      labels: { type: "object", additionalProperties: { type: "string", default: "" } },
      annotations: { type: "object", additionalProperties: { type: "string", default: "" } },
      finalizers: { type: "array", items: { type: "string", default: "" }, "x-kubernetes-list-type": "set" },
      uid: { type: "string" },
      managedFields: { type: "array", items: ref(`${META}.ManagedFieldsEntry`) },
    },
  },
  [`${META}.ManagedFieldsEntry`]: { type: "object", properties: { manager: { type: "string" } } },
  "io.k8s.apimachinery.pkg.api.resource.Quantity": {
    description: "Quantity is a fixed-point representation of a number.",
    oneOf: [{ type: "string" }, { type: "number" }],
  },
  "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {
    format: "int-or-string",
    oneOf: [{ type: "integer" }, { type: "string" }],
  },
  "io.k8s.api.demo.v1.Port": {
    type: "object",
    properties: {
      port: { type: "integer", format: "int32", default: 0 },
      protocol: { type: "string", default: "TCP" },
      target: ref("io.k8s.apimachinery.pkg.util.intstr.IntOrString"),
    },
    required: ["port"],
  },
  "io.k8s.api.demo.v1.SecretRef": {
    type: "object",
    properties: { name: { type: "string", default: "" } },
    "x-kubernetes-map-type": "atomic",
  },
  "io.k8s.api.demo.v1.WidgetSpec": {
    type: "object",
    description: "WidgetSpec is the spec of a widget.",
    properties: {
      metadata: { allOf: [ref(`${META}.ObjectMeta`)], default: {}, description: "The widget's metadata." },
      ports: {
        type: "array",
        items: { allOf: [ref("io.k8s.api.demo.v1.Port")], default: {} },
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["port", "protocol"],
        "x-kubernetes-patch-merge-key": "port",
        "x-kubernetes-patch-strategy": "merge",
      },
      secrets: {
        type: "array",
        items: { allOf: [ref("io.k8s.api.demo.v1.SecretRef")], default: {} },
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
      },
      limits: { type: "object", additionalProperties: ref("io.k8s.apimachinery.pkg.api.resource.Quantity") },
      paused: { type: "boolean", default: false },
      // Keyed by a field that may be absent (ServiceAccount.secrets): a CRD refuses such a list-map.
      refs: {
        type: "array",
        items: ref("io.k8s.api.demo.v1.Ref"),
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
      },
      props: ref("io.k8s.api.demo.v1.Props"),
    },
    required: ["ports"],
  },
  "io.k8s.api.demo.v1.Ref": { type: "object", properties: { name: { type: "string" } } },
  // JSONSchemaProps' shape: a definition reachable from itself.
  "io.k8s.api.demo.v1.Props": {
    type: "object",
    properties: {
      type: { type: "string" },
      properties: { type: "object", additionalProperties: { allOf: [ref("io.k8s.api.demo.v1.Props")], default: {} } },
    },
  },
  "io.k8s.api.demo.v1.WidgetList": {
    type: "object",
    properties: { items: { type: "array", items: ref("io.k8s.api.demo.v1.WidgetSpec") } },
  },
};

const TARGETS = [
  {
    module: "meta/v1",
    definitions: [
      `${META}.ObjectMeta`,
      "io.k8s.apimachinery.pkg.api.resource.Quantity",
      "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
    ],
  },
  { module: "demo/v1", prefix: "io.k8s.api.demo.v1." },
];

let folder: string;
let demo: Record<string, TSchema>;
let sources: Record<string, string>;

beforeAll(async () => {
  // Beside node_modules, so that the modules' `import ... from "typebox"` resolves.
  const cache = resolve(import.meta.dirname, "../../node_modules/.cache");
  mkdirSync(cache, { recursive: true });
  folder = mkdtempSync(join(cache, "schemas-generator-"));
  const modules = generateModules(FIXTURE, TARGETS, "// fixture");
  sources = Object.fromEntries(modules.map((m) => [m.module, m.source]));
  for (const { module, source } of modules) {
    const file = join(folder, `${module}.ts`);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, source);
  }
  // The helper the generated files share, as the package has it.
  copyFileSync(
    resolve(import.meta.dirname, "../../packages/capstan/src/schemas/described.ts"),
    join(folder, "described.ts"),
  );
  demo = await import(pathToFileURL(join(folder, "demo/v1.ts")).href);
});

afterAll(() => {
  if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
});

function crdSpecOf(schema: TSchema): KubeSchema {
  const Widget = defineResource({
    group: "demo.capstan.test",
    version: "v1",
    kind: "Widget",
    scope: "Namespaced",
    spec: Type.Object({ widget: schema }),
  });
  const root = toCrd(Widget).spec.versions[0]?.schema?.openAPIV3Schema as unknown as KubeSchema;
  return root.properties?.spec?.properties?.widget as KubeSchema;
}

describe("the built-in schema generator", () => {
  it("exports one schema per definition of the group-version, lists left out, filed by the modules that reach it", () => {
    expect(Object.keys(demo).sort()).toEqual(["Port", "Props", "Ref", "SecretRef", "WidgetSpec"]);
    // Definitions are filed by who needs them, so a bundler splitting code loads only what an import reaches.
    expect(Object.keys(sources).sort()).toEqual([
      "demo/v1",
      "demo/v1.parts/own",
      "meta/v1",
      "meta/v1.parts/shared-with-demo-v1",
    ]);
    expect(sources["demo/v1"]).toContain(
      `export { Port, Props, Ref, SecretRef, WidgetSpec } from "./v1.parts/own.ts";`,
    );
    const part = sources["demo/v1.parts/own"];
    expect(part).toContain(
      `import { IntOrString, ObjectMeta, Quantity } from "../../meta/v1.parts/shared-with-demo-v1.ts";`,
    );
    expect(part).toMatch(/^export interface WidgetSpec \{/m);
    expect(part).toContain("/* @__PURE__ */ Type.Unsafe<WidgetSpec>(");
    // ObjectMeta's embedded subset refers to nothing: ManagedFieldsEntry is not generated.
    expect(Object.values(sources).join("\n")).not.toContain("ManagedFieldsEntry");
  });

  it("inlines references, keeps list and map markers, drops patch markers and zero-value defaults", () => {
    const spec = crdSpecOf(demo.WidgetSpec as TSchema);
    expect(JSON.stringify(spec)).not.toContain("$ref");
    expect(JSON.stringify(spec)).not.toContain("x-kubernetes-patch");
    expect(spec.description).toBe("WidgetSpec is the spec of a widget.");
    expect(spec.required).toEqual(["ports"]);
    expect(spec.properties?.ports).toMatchObject({
      type: "array",
      "x-kubernetes-list-type": "map",
      "x-kubernetes-list-map-keys": ["port", "protocol"],
      items: {
        type: "object",
        required: ["port"],
        properties: {
          port: { type: "integer", format: "int32" },
          protocol: { type: "string", default: "TCP" },
          target: { "x-kubernetes-int-or-string": true },
        },
      },
    });
    expect(spec.properties?.ports?.items?.properties?.port).not.toHaveProperty("default");
    expect(spec.properties?.paused).toEqual({ type: "boolean" });
    // An optional list-map key keeps its zero default: the server needs keys required or defaulted.
    expect(spec.properties?.secrets?.items).toMatchObject({
      "x-kubernetes-map-type": "atomic",
      properties: { name: { type: "string", default: "" } },
    });
    expect(spec.properties?.refs).toMatchObject({ type: "array", "x-kubernetes-list-type": "atomic" });
    expect(spec.properties?.refs).not.toHaveProperty("x-kubernetes-list-map-keys");
  });

  it("gives Quantity the quantity pattern, and a nested metadata only the five fields a template may carry", () => {
    const spec = crdSpecOf(demo.WidgetSpec as TSchema);
    expect(spec.properties?.limits?.additionalProperties).toEqual({
      "x-kubernetes-int-or-string": true,
      pattern: QUANTITY_PATTERN,
    });
    expect(new RegExp(QUANTITY_PATTERN).test("1.5Gi")).toBe(true);
    expect(new RegExp(QUANTITY_PATTERN).test("1 GB")).toBe(false);
    const metadata = spec.properties?.metadata;
    expect(metadata?.description).toBe("The widget's metadata.");
    expect(Object.keys(metadata?.properties ?? {}).sort()).toEqual([
      "annotations",
      "finalizers",
      "labels",
      "name",
      "namespace",
    ]);
    expect(metadata?.properties?.labels).toEqual({ type: "object", additionalProperties: { type: "string" } });
  });

  it("cuts a cycle where it closes, keeping what lies beyond as unknown fields", () => {
    const props = crdSpecOf(demo.WidgetSpec as TSchema).properties?.props;
    expect(props?.properties?.type).toEqual({ type: "string" });
    expect(props?.properties?.properties?.additionalProperties).toEqual({
      type: "object",
      "x-kubernetes-preserve-unknown-fields": true,
    });
    expect(sources["demo/v1.parts/own"]).toMatch(/properties\?: \{ \[key: string\]: Props \}/);
  });

  it("refuses a reference to a definition the documents do not have", () => {
    const broken = { ...FIXTURE, "io.k8s.api.demo.v1.Bad": { type: "object", properties: { x: ref("nowhere.X") } } };
    expect(() => generateModules(broken, TARGETS, "")).toThrow(SchemaGenerationError);
  });
});
