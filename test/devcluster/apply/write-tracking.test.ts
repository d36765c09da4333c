import { describe, expect, it } from "vitest";
import { createdFieldsV1 } from "../../../packages/capstan-dev/src/devcluster/apply/created-fields.ts";
import {
  type KubeJson,
  statusResetFields,
  trackUpdate,
} from "../../../packages/capstan-dev/src/devcluster/apply/field-manager.ts";
import type { Json } from "../../../packages/capstan-dev/src/devcluster/apply/path-element.ts";
import {
  IN_PROCESS_MANAGER,
  managedTypeOf,
  trackCreate,
  trackWrite,
} from "../../../packages/capstan-dev/src/devcluster/apply/write-tracking.ts";
import { builtinResources } from "../../../packages/capstan-dev/src/devcluster/registry/builtins.ts";
import type {
  JsonObject,
  ServedResource,
} from "../../../packages/capstan-dev/src/devcluster/registry/served-resource.ts";

// biome-ignore lint/suspicious/noExplicitAny: test assertions read arbitrary JSON
type Doc = any;

const builtins = builtinResources();
function builtin(group: string, plural: string): ServedResource {
  return builtins.find((s) => s.group === group && s.plural === plural)!;
}
const configMaps = builtin("", "configmaps");
const deployments = builtin("apps", "deployments");
const pods = builtin("", "pods");
const services = builtin("", "services");

const widgets: ServedResource = {
  group: "example.com",
  version: "v1",
  kind: "Widget",
  listKind: "WidgetList",
  plural: "widgets",
  singular: "widget",
  namespaced: true,
  shortNames: [],
  categories: [],
  verbs: [],
  subresources: {},
  generation: "all-but-metadata-and-status",
  custom: true,
  schema: {
    type: "object",
    properties: {
      spec: {
        type: "object",
        properties: {
          ports: {
            type: "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["port"],
            items: { type: "object", properties: { port: { type: "integer" }, name: { type: "string" } } },
          },
          tags: { type: "array", "x-kubernetes-list-type": "set", items: { type: "string" } },
          args: { type: "array", items: { type: "string" } },
          selector: {
            type: "object",
            "x-kubernetes-map-type": "atomic",
            additionalProperties: { type: "string" },
          },
          extra: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
        },
      },
      status: { type: "object", properties: { ready: { type: "boolean" } } },
    },
  },
};

const META = { name: "x", namespace: "default", uid: "u-1", creationTimestamp: "2026-11-22T10:00:00Z" };

/** The objects whose created field sets both routes must agree on. */
const samples: [string, ServedResource, JsonObject][] = [
  ["a ConfigMap", configMaps, { metadata: { ...META, labels: { app: "a" } }, data: { a: "1", b: "2" } }],
  ["a ConfigMap with only a name", configMaps, { metadata: { name: "x", namespace: "default" } }],
  [
    "a ConfigMap with empty and null values",
    configMaps,
    { metadata: { ...META, annotations: {} }, data: {}, binaryData: null as unknown as Json },
  ],
  [
    "a Deployment with containers, env, ports and a status",
    deployments,
    {
      metadata: {
        ...META,
        labels: { app: "web" },
        finalizers: ["a/b", "c/d"],
        ownerReferences: [{ uid: "o1", name: "o", kind: "K", apiVersion: "v1" }],
      },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: "web" } },
        template: {
          metadata: { labels: { app: "web" } },
          spec: {
            containers: [
              {
                name: "app",
                image: "nginx",
                args: ["-a", "-b"],
                env: [
                  { name: "A", value: "1" },
                  { name: "B", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
                ],
                ports: [{ containerPort: 80 }, { containerPort: 53, protocol: "UDP" }],
                resources: {},
              },
              { name: "sidecar", image: "busybox" },
            ],
            tolerations: [{ key: "k", operator: "Exists" }],
          },
        },
      },
      status: { replicas: 2 },
    },
  ],
  [
    "a Deployment whose container list repeats a name",
    deployments,
    {
      metadata: META,
      spec: {
        template: {
          spec: {
            containers: [
              { name: "app", image: "a" },
              { name: "app", image: "b" },
            ],
          },
        },
      },
    },
  ],
  [
    "a Pod (status is reset on the main resource)",
    pods,
    { metadata: META, spec: { containers: [{ name: "c", image: "i" }] }, status: { phase: "Pending" } },
  ],
  [
    "a Service with ports keyed by port and protocol",
    services,
    {
      metadata: META,
      spec: {
        ports: [
          { port: 80, targetPort: 8080 },
          { port: 80, protocol: "UDP" },
        ],
        type: "ClusterIP",
      },
    },
  ],
  [
    "a Deployment whose containers all lack their key",
    deployments,
    { metadata: META, spec: { template: { spec: { containers: [{ image: "a" }], volumes: [] } } } },
  ],
  [
    "a custom resource with list-map, set, atomic and preserved fields",
    widgets,
    {
      metadata: META,
      spec: {
        ports: [{ port: 443, name: "https" }, { port: 80 }],
        tags: ["b", "a", "b"],
        args: ["x"],
        selector: { a: "1" },
        extra: { free: { form: [1, 2] }, n: null },
      },
      status: { ready: true },
    },
  ],
];

function generalFieldsV1(served: ServedResource, obj: JsonObject): unknown {
  const tracked = trackUpdate(undefined, obj as KubeJson, {
    manager: "m",
    type: managedTypeOf(served),
    apiVersion: "v1",
    kind: served.kind,
    ...(served.subresources.status ? { ignored: statusResetFields() } : {}),
  });
  return (tracked.metadata?.["managedFields"] as Doc)?.[0]?.fieldsV1;
}

describe("the created field set computed in one walk", () => {
  for (const [what, served, obj] of samples) {
    it(`equals the general field manager's for ${what}, key order included`, () => {
      const full = { apiVersion: "v1", kind: served.kind, ...structuredClone(obj) };
      const fast = createdFieldsV1(
        full as Record<string, Json>,
        managedTypeOf(served),
        served.subresources.status ? ["status"] : [],
      );
      expect(JSON.stringify(fast)).toBe(JSON.stringify(generalFieldsV1(served, full)));
    });
  }
});

describe("trackCreate", () => {
  it("records one Update entry for the creating manager, without the stripped metadata", () => {
    const obj: Doc = { apiVersion: "v1", kind: "ConfigMap", metadata: { ...META }, data: { a: "1" } };
    trackCreate(configMaps, obj, { manager: "kubectl-create" });
    expect(obj.metadata.managedFields).toEqual([
      {
        manager: "kubectl-create",
        operation: "Update",
        apiVersion: "v1",
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
        fieldsType: "FieldsV1",
        fieldsV1: { "f:data": { ".": {}, "f:a": {} } },
      },
    ]);
  });

  it("names in-process writes after the controller manager and empty user agents `unknown`", () => {
    const inProcess: Doc = { metadata: { ...META }, data: { a: "1" } };
    trackCreate(configMaps, inProcess, undefined);
    expect(inProcess.metadata.managedFields[0].manager).toBe(IN_PROCESS_MANAGER);
    const anonymous: Doc = { metadata: { ...META }, data: { a: "1" } };
    trackCreate(configMaps, anonymous, { manager: "" });
    expect(anonymous.metadata.managedFields[0].manager).toBe("unknown");
  });

  it("leaves an object that sets nothing but its name without managedFields", () => {
    const obj: Doc = { metadata: { name: "x", managedFields: [] } };
    trackCreate(configMaps, obj, { manager: "m" });
    expect(obj.metadata.managedFields).toBeUndefined();
  });

  it("keeps the managedFields of an apply (computed upstream)", () => {
    const entries = [{ manager: "alice", operation: "Apply", apiVersion: "v1", fieldsType: "FieldsV1", fieldsV1: {} }];
    const obj: Doc = { metadata: { ...META, managedFields: entries }, data: { a: "1" } };
    trackCreate(configMaps, obj, { manager: "alice", computed: true });
    expect(obj.metadata.managedFields).toBe(entries);
  });

  it("takes every field a client's managedFields claim on create, as upstream's compare with an empty object does", () => {
    const sent = [
      {
        manager: "importer",
        operation: "Update",
        apiVersion: "v1",
        fieldsType: "FieldsV1",
        fieldsV1: { "f:data": { "f:a": {}, "f:gone": {} } },
      },
    ];
    const obj: Doc = { metadata: { ...META, managedFields: sent }, data: { a: "1", b: "2" } };
    trackCreate(configMaps, obj, { manager: "kubectl-create" });
    // Every field of a new object is "added", so other managers keep only what the object lacks.
    expect(obj.metadata.managedFields.map((e: Doc) => [e.manager, e.fieldsV1])).toEqual([
      ["importer", { "f:data": { "f:gone": {} } }],
      ["kubectl-create", { "f:data": { ".": {}, "f:a": {}, "f:b": {} } }],
    ]);
  });
});

describe("trackWrite", () => {
  const created = (): Doc => {
    const obj: Doc = { apiVersion: "v1", kind: "ConfigMap", metadata: { ...META }, data: { a: "1" } };
    trackCreate(configMaps, obj, { manager: "kubectl-create" });
    return obj;
  };

  it("gives an updater what it changed and takes it from the creator", () => {
    const old = created();
    const next = structuredClone(old);
    next.data = { a: "2", b: "3" };
    const out: Doc = trackWrite(configMaps, old, next, next, "main", { manager: "kubectl-edit" });
    expect(out.metadata.managedFields.map((e: Doc) => [e.manager, e.fieldsV1])).toEqual([
      ["kubectl-create", { "f:data": {} }],
      ["kubectl-edit", { "f:data": { "f:a": {}, "f:b": {} } }],
    ]);
  });

  it("records a /status write with subresource status, the spec not owned", () => {
    const old: Doc = { apiVersion: "v1", kind: "Pod", metadata: { ...META }, spec: { containers: [] } };
    trackCreate(pods, old, { manager: "kubectl-create" });
    const next = structuredClone(old);
    next.status = { phase: "Running" };
    const out: Doc = trackWrite(pods, old, next, next, "status", { manager: "kubelet" });
    const kubelet = out.metadata.managedFields.find((e: Doc) => e.manager === "kubelet");
    expect(kubelet).toMatchObject({ subresource: "status", fieldsV1: { "f:status": { ".": {}, "f:phase": {} } } });
  });

  it("does not start tracking an existing object that has no managedFields", () => {
    const old: Doc = { apiVersion: "v1", kind: "ConfigMap", metadata: { ...META }, data: { a: "1" } };
    const next = structuredClone(old);
    next.data = { a: "2" };
    const out: Doc = trackWrite(configMaps, old, next, next, "main", { manager: "kubectl-edit" });
    expect(out.metadata.managedFields).toBeUndefined();
  });

  it("keeps the managedFields a /status apply computed, although the status strategy keeps the old metadata", () => {
    const old = created();
    const computed = [{ manager: "ctl", operation: "Apply", apiVersion: "v1", fieldsType: "FieldsV1", fieldsV1: {} }];
    const input: Doc = { metadata: { managedFields: computed } };
    const out: Doc = trackWrite(configMaps, old, structuredClone(old), input, "status", {
      manager: "ctl",
      computed: true,
    });
    expect(out.metadata.managedFields).toBe(computed);
  });
});
