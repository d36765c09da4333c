import type { ObjectMeta } from "kubernetes-types/meta/v1.d.ts";
import { type Static, Type } from "typebox";
import { describe, expect, expectTypeOf, it } from "vitest";
import type { ResourceKind } from "../../packages/capstan/src/client/types.ts";
import { ConfigMap } from "../../packages/capstan/src/resources/builtins.ts";
import { toCrd } from "../../packages/capstan/src/resources/crd.ts";
import {
  defineResource,
  isCustomResource,
  ResourceDefinitionError,
} from "../../packages/capstan/src/resources/define-resource.ts";
import { Kube } from "../../packages/capstan/src/resources/kube-extensions.ts";
import { pluralize } from "../../packages/capstan/src/resources/plural.ts";
import type { ObjectOf, SpecOf, StatusOf } from "../../packages/capstan/src/resources/resource-types.ts";
import { SchemaTranslationError } from "../../packages/capstan/src/resources/schema-translate.ts";

const ExchangeRate = defineResource({
  group: "operators.example.com",
  version: "v1",
  kind: "ExchangeRate",
  scope: "Namespaced",
  shortNames: ["er"],
  spec: Type.Object({ currency: Type.Enum(["CAD", "CHF", "USD"]) }),
  status: Type.Object({
    rate: Type.Optional(Type.Number()),
    fetchedAt: Type.Optional(Type.String({ format: "date-time" })),
  }),
  printerColumns: [{ name: "Rate", type: "number", jsonPath: ".status.rate" }],
});

describe("pluralize (gengo's rules)", () => {
  it.each([
    ["ExchangeRate", "exchangerates"],
    ["Pod", "pods"],
    ["Ingress", "ingresses"],
    ["Box", "boxes"],
    ["Switch", "switches"],
    ["Mesh", "meshes"],
    ["Quiz", "quizes"],
    ["Policy", "policies"],
    ["NetworkPolicy", "networkpolicies"],
    ["Proxy", "proxies"],
    ["Gateway", "gateways"],
    ["Key", "keys"],
    ["Guitar", "guitars"],
    ["Machine", "machines"],
    ["ImmortalContainer", "immortalcontainers"],
  ])("%s -> %s", (kind, plural) => {
    expect(pluralize(kind)).toBe(plural);
  });
});

describe("defineResource", () => {
  it("derives names and REST coordinates", () => {
    expect(ExchangeRate).toMatchObject({
      group: "operators.example.com",
      version: "v1",
      kind: "ExchangeRate",
      plural: "exchangerates",
      singular: "exchangerate",
      listKind: "ExchangeRateList",
      namespaced: true,
      crdName: "exchangerates.operators.example.com",
      apiVersion: "operators.example.com/v1",
      storageVersion: "v1",
    });
    expect(Object.isFrozen(ExchangeRate)).toBe(true);
  });

  it("tells its kinds apart from built-in kinds and look-alikes", () => {
    expect(isCustomResource(ExchangeRate)).toBe(true);
    expect(isCustomResource({ ...ExchangeRate })).toBe(false);
    expect(isCustomResource(ConfigMap)).toBe(false);
  });

  it("takes explicit plural, singular and listKind", () => {
    const Shelf = defineResource({
      group: "x.example.com",
      version: "v1",
      kind: "Shelf",
      plural: "shelves",
      singular: "shelf",
      listKind: "ShelfCollection",
      scope: "Cluster",
      spec: Type.Object({}),
    });
    expect(toCrd(Shelf).spec.names).toEqual({
      kind: "Shelf",
      listKind: "ShelfCollection",
      plural: "shelves",
      singular: "shelf",
    });
    expect(Shelf.namespaced).toBe(false);
  });

  it("make() fills apiVersion and kind and leaves the input untouched", () => {
    const input = { metadata: { name: "usd" }, spec: { currency: "USD" as const } };
    const obj = ExchangeRate.make(input);
    expect(obj).toEqual({
      apiVersion: "operators.example.com/v1",
      kind: "ExchangeRate",
      metadata: { name: "usd" },
      spec: { currency: "USD" },
    });
    expect(input).toEqual({ metadata: { name: "usd" }, spec: { currency: "USD" } });
  });

  it("builds the CRD with the root Kubernetes expects, the status subresource and printer columns", () => {
    const crd = toCrd(ExchangeRate);
    expect(crd.metadata?.name).toBe("exchangerates.operators.example.com");
    expect(crd.spec.scope).toBe("Namespaced");
    expect(crd.spec.names.shortNames).toEqual(["er"]);
    const [version] = crd.spec.versions;
    expect(version?.subresources).toEqual({ status: {} });
    expect(version?.additionalPrinterColumns).toEqual([{ name: "Rate", type: "number", jsonPath: ".status.rate" }]);
    const root = version?.schema?.openAPIV3Schema;
    expect(root?.type).toBe("object");
    expect(root?.properties?.apiVersion).toEqual({ type: "string" });
    expect(root?.properties?.kind).toEqual({ type: "string" });
    expect(root?.properties?.metadata).toEqual({ type: "object" });
    expect(root?.properties?.spec?.properties?.currency).toEqual({ type: "string", enum: ["CAD", "CHF", "USD"] });
    expect(root?.required).toEqual(["spec"]);
  });

  it("declares status.capstan, where handlers keep their state, as a map of string maps, and reserves the name", () => {
    const status = toCrd(ExchangeRate).spec.versions[0]?.schema?.openAPIV3Schema?.properties?.status;
    expect(status?.properties?.capstan).toMatchObject({
      type: "object",
      additionalProperties: { type: "object", additionalProperties: { type: "string" } },
    });
    const define = () =>
      defineResource({
        group: "x.example.com",
        version: "v1",
        kind: "Clash",
        scope: "Namespaced",
        spec: Type.Object({}),
        status: Type.Object({ capstan: Type.String() }),
      });
    expect(define).toThrow(SchemaTranslationError);
    expect(define).toThrow(/status\.capstan.*reserved for the state of Capstan's handlers/);
  });

  it("toCrd returns a fresh copy each time", () => {
    const a = toCrd(ExchangeRate);
    a.spec.group = "changed";
    expect(toCrd(ExchangeRate).spec.group).toBe("operators.example.com");
  });

  it("defaults spec to {} when nothing in it is required, and adds no status subresource without a status", () => {
    const Guitar = defineResource({
      group: "kool.karmalabs.local",
      version: "v1",
      kind: "Guitar",
      scope: "Namespaced",
      spec: Type.Object({ brand: Type.Optional(Type.String()) }),
    });
    const version = toCrd(Guitar).spec.versions[0];
    expect(version?.schema?.openAPIV3Schema?.required).toBeUndefined();
    expect(version?.schema?.openAPIV3Schema?.properties?.spec?.default).toEqual({});
    expect(version?.subresources).toBeUndefined();
    expect(version?.schema?.openAPIV3Schema?.properties?.status).toBeUndefined();
  });

  it("puts resource-level validations on the root and selectable fields on the version", () => {
    const Range = defineResource({
      group: "x.example.com",
      version: "v1",
      kind: "Range",
      scope: "Namespaced",
      spec: Type.Object({ min: Type.Integer(), max: Type.Integer(), color: Type.String() }),
      validations: [{ rule: "self.spec.min <= self.spec.max", message: "min must not exceed max" }],
      selectableFields: [".spec.color"],
    });
    const version = toCrd(Range).spec.versions[0];
    expect(version?.selectableFields).toEqual([{ jsonPath: ".spec.color" }]);
    const root = version?.schema?.openAPIV3Schema as Record<string, unknown> | undefined;
    expect(root?.["x-kubernetes-validations"]).toEqual([
      { rule: "self.spec.min <= self.spec.max", message: "min must not exceed max" },
    ]);
  });

  it("adds the scale subresource and checks its paths as the server does", () => {
    const Pool = defineResource({
      group: "x.example.com",
      version: "v1",
      kind: "Pool",
      scope: "Namespaced",
      spec: Type.Object({ replicas: Type.Integer() }),
      status: Type.Object({ replicas: Type.Optional(Type.Integer()), selector: Type.Optional(Type.String()) }),
      scale: {
        specReplicasPath: ".spec.replicas",
        statusReplicasPath: ".status.replicas",
        labelSelectorPath: ".status.selector",
      },
    });
    expect(toCrd(Pool).spec.versions[0]?.subresources).toEqual({
      status: {},
      scale: {
        specReplicasPath: ".spec.replicas",
        statusReplicasPath: ".status.replicas",
        labelSelectorPath: ".status.selector",
      },
    });
    expect(() =>
      defineResource({
        group: "x.example.com",
        version: "v1",
        kind: "Pool",
        scope: "Namespaced",
        spec: Type.Object({ replicas: Type.Integer() }),
        scale: { specReplicasPath: ".status.replicas", statusReplicasPath: ".status.replicas" },
      }),
    ).toThrow('Pool: version v1 scale: specReplicasPath ".status.replicas" should be a json path under .spec');
  });

  it("serves several versions with exactly one storage version, typed by the first", () => {
    const Multi = defineResource({
      group: "x.example.com",
      kind: "Widget",
      scope: "Namespaced",
      versions: [
        { name: "v1", spec: Type.Object({ size: Type.Integer() }) },
        {
          name: "v1beta1",
          spec: Type.Object({ size: Type.Integer() }),
          deprecated: true,
          deprecationWarning: "use v1",
        },
        { name: "v1alpha1", spec: Type.Object({ size: Type.Integer() }), storage: true, served: false },
      ],
    });
    expect(Multi.version).toBe("v1");
    expect(Multi.storageVersion).toBe("v1alpha1");
    expect(toCrd(Multi).spec.versions.map((v) => [v.name, v.served, v.storage, v.deprecated ?? false])).toEqual([
      ["v1", true, false, false],
      ["v1beta1", true, false, true],
      ["v1alpha1", false, true, false],
    ]);
    expect(toCrd(Multi).spec.versions[1]?.deprecationWarning).toBe("use v1");
  });

  it("refuses two storage versions and duplicate versions", () => {
    const spec = Type.Object({});
    expect(() =>
      defineResource({
        group: "x.example.com",
        kind: "Widget",
        scope: "Namespaced",
        versions: [
          { name: "v1", spec, storage: true },
          { name: "v2", spec, storage: true },
        ],
      }),
    ).toThrow("Widget: exactly one version may be the storage version, got v1, v2");
    expect(() =>
      defineResource({
        group: "x.example.com",
        kind: "Widget",
        scope: "Namespaced",
        versions: [
          { name: "v1", spec },
          { name: "v1", spec },
        ],
      }),
    ).toThrow("Widget: version v1 is defined twice");
  });

  it("names the version in schema errors when there are several", () => {
    expect(() =>
      defineResource({
        group: "x.example.com",
        kind: "Widget",
        scope: "Namespaced",
        versions: [
          { name: "v1", spec: Type.Object({}) },
          {
            name: "v1beta1",
            spec: Type.Object({
              foo: Type.Union([Type.Object({ a: Type.String() }), Type.Object({ b: Type.String() })]),
            }),
          },
        ],
      }),
    ).toThrow(/^Widget v1beta1 spec\.foo: anyOf of non-literal types is not a structural schema/);
  });

  it("refuses a schema Kubernetes would not accept at definition time, naming kind and field", () => {
    const attempt = () =>
      defineResource({
        group: "operators.example.com",
        version: "v1",
        kind: "ExchangeRate",
        scope: "Namespaced",
        spec: Type.Object({ foo: Type.Union([Type.Object({ a: Type.String() }), Type.Object({ b: Type.Number() })]) }),
      });
    expect(attempt).toThrow(SchemaTranslationError);
    expect(attempt).toThrow(/^ExchangeRate spec\.foo: anyOf of non-literal types is not a structural schema; /);
  });

  it("refuses a spec or status that is not an object", () => {
    expect(() =>
      defineResource({ group: "x.example.com", version: "v1", kind: "Bad", scope: "Cluster", spec: Type.String() }),
    ).toThrow("Bad spec: must be an object schema (Type.Object)");
  });

  it.each([
    [{ group: "nodots" }, 'Thing: group "nodots" should be a domain with at least one dot'],
    [{ group: "Upper.Example.com" }, 'Thing: group "Upper.Example.com" must be a lower-case DNS subdomain'],
    [{ group: "apps.k8s.io" }, 'Thing: group "apps.k8s.io" is reserved for Kubernetes APIs'],
    [{ kind: "my-thing" }, 'my-thing: kind "my-thing" must be alphanumeric CamelCase'],
    [{ version: "V1" }, 'Thing: version "V1" must be a DNS-1035 label'],
    [{ plural: "Things" }, 'Thing: plural "Things" must be a lower-case DNS-1035 label'],
    [{ shortNames: ["t_1"] }, 'Thing: shortName "t_1" must be a lower-case DNS-1035 label'],
    [{ listKind: "Thing" }, "Thing: kind and listKind may not be the same"],
    [{ scope: "Global" }, 'Thing: scope must be "Namespaced" or "Cluster", got "Global"'],
    [
      { printerColumns: [{ name: "X", type: "float", jsonPath: ".spec.x" }] },
      'Thing: version v1 printer column "X": type must be one of',
    ],
    [
      { printerColumns: [{ name: "X", type: "string", jsonPath: "spec.x" }] },
      "jsonPath must be a simple json path starting with .",
    ],
  ])("refuses bad names and columns: %j", (override, message) => {
    const options = {
      group: "x.example.com",
      version: "v1",
      kind: "Thing",
      scope: "Namespaced",
      spec: Type.Object({ x: Type.String() }),
      ...override,
    } as Parameters<typeof defineResource>[0];
    expect(() => defineResource(options)).toThrow(ResourceDefinitionError);
    expect(() => defineResource(options)).toThrow(message);
  });

  it.each([
    [[".metadata.name"], "selectable field must not point to fields in metadata"],
    [[".spec.nope"], "selectable field does not name a field of the schema"],
    [[".spec.n"], "selectable field must point to a field of type string, boolean or integer"],
  ])("refuses selectable fields the server would refuse: %j", (selectableFields, message) => {
    expect(() =>
      defineResource({
        group: "x.example.com",
        version: "v1",
        kind: "Thing",
        scope: "Namespaced",
        spec: Type.Object({ n: Type.Number() }),
        selectableFields,
      }),
    ).toThrow(message);
  });
});

describe("static types", () => {
  it("types objects from the schemas, with no casting", () => {
    type ER = ObjectOf<typeof ExchangeRate>;
    expectTypeOf<ER["spec"]>().toEqualTypeOf<{ currency: "CAD" | "CHF" | "USD" }>();
    expectTypeOf<ER["status"]>().toEqualTypeOf<{ rate?: number; fetchedAt?: string } | undefined>();
    expectTypeOf<ER["metadata"]>().toEqualTypeOf<ObjectMeta>();
    expectTypeOf<SpecOf<typeof ExchangeRate>>().toEqualTypeOf<{ currency: "CAD" | "CHF" | "USD" }>();
    expectTypeOf<StatusOf<typeof ExchangeRate>>().toEqualTypeOf<{ rate?: number; fetchedAt?: string }>();
    expectTypeOf(ExchangeRate).toExtend<ResourceKind<ER>>();
  });

  it("make() demands a valid spec and returns the typed object", () => {
    const obj = ExchangeRate.make({ metadata: { name: "usd" }, spec: { currency: "USD" } });
    expectTypeOf(obj.spec.currency).toEqualTypeOf<"CAD" | "CHF" | "USD">();
    // @ts-expect-error EUR is not in the enum
    ExchangeRate.make({ metadata: { name: "eur" }, spec: { currency: "EUR" } });
    // @ts-expect-error spec is required
    ExchangeRate.make({ metadata: { name: "x" } });
  });

  it("types the Kube escape hatches and keeps literal types from Type.Enum", () => {
    const Mixed = defineResource({
      group: "x.example.com",
      version: "v1",
      kind: "Mixed",
      scope: "Namespaced",
      spec: Type.Object({
        port: Kube.IntOrString(),
        extra: Type.Optional(Kube.PreserveUnknownFields()),
        template: Type.Optional(Kube.EmbeddedResource()),
        mode: Type.Enum(["fast", "safe"]),
        note: Type.Union([Type.String(), Type.Null()]),
      }),
    });
    type Spec = SpecOf<typeof Mixed>;
    expectTypeOf<Spec["port"]>().toEqualTypeOf<number | string>();
    expectTypeOf<Spec["extra"]>().toEqualTypeOf<unknown>();
    expectTypeOf<NonNullable<Spec["template"]>>().toExtend<{ apiVersion?: string; kind?: string }>();
    expectTypeOf<Spec["mode"]>().toEqualTypeOf<"fast" | "safe">();
    expectTypeOf<Spec["note"]>().toEqualTypeOf<string | null>();
  });

  it("refuses at compile time a schema whose static type is never (literals built with .map)", () => {
    const mapped = Type.Union(["CAD", "USD"].map((c) => Type.Literal(c)));
    expectTypeOf<Static<typeof mapped>>().toBeNever();
    const options = {
      group: "x.example.com",
      version: "v1",
      kind: "Mapped",
      scope: "Namespaced",
      spec: Type.Object({ currency: mapped }),
    } as const;
    // @ts-expect-error spec.currency's type is never: use Type.Enum(["CAD", "USD"])
    const Mapped = defineResource(options);
    // The CRD is still right: the check is only about TypeScript.
    expect(toCrd(Mapped).spec.versions[0]?.schema?.openAPIV3Schema?.properties?.spec?.properties?.currency).toEqual({
      type: "string",
      enum: ["CAD", "USD"],
    });
    // Nested and optional fields are found too.
    const nested = {
      ...options,
      kind: "Nested",
      spec: Type.Object({ list: Type.Optional(Type.Array(Type.Object({ c: mapped }))) }),
    };
    // @ts-expect-error spec.list[*].c's type is never
    defineResource(nested);
    // ... and in status.
    // @ts-expect-error status.c's type is never
    defineResource({ ...options, kind: "InStatus", spec: Type.Object({}), status: Type.Object({ c: mapped }) });
  });

  it("has no status property when no status schema is given", () => {
    const NoStatus = defineResource({
      group: "x.example.com",
      version: "v1",
      kind: "Plain",
      scope: "Cluster",
      spec: Type.Object({ a: Type.String() }),
    });
    type O = ObjectOf<typeof NoStatus>;
    expectTypeOf<O>().toEqualTypeOf<{ apiVersion: string; kind: string; metadata: ObjectMeta; spec: { a: string } }>();
  });

  it("types a multi-version kind by its first version", () => {
    const Multi = defineResource({
      group: "x.example.com",
      kind: "Widget",
      scope: "Namespaced",
      versions: [
        { name: "v2", spec: Type.Object({ sizeBytes: Type.Integer() }), status: Type.Object({ ok: Type.Boolean() }) },
        { name: "v1", spec: Type.Object({ size: Type.String() }) },
      ],
    });
    expectTypeOf<SpecOf<typeof Multi>>().toEqualTypeOf<{ sizeBytes: number }>();
    expectTypeOf<StatusOf<typeof Multi>>().toEqualTypeOf<{ ok: boolean }>();
  });
});
