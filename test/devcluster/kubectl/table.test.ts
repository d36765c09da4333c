import { describe, expect, it } from "vitest";
import { ageSince, humanDuration } from "../../../packages/capstan-dev/src/devcluster/printers/human-duration.ts";
import { evaluateJsonPath, parseJsonPath } from "../../../packages/capstan-dev/src/devcluster/printers/jsonpath.ts";
import { toTable } from "../../../packages/capstan-dev/src/devcluster/printers/table.ts";
import {
  builtinPrinter,
  customResourcePrinter,
  defaultPrinter,
  formatLabelSelector,
} from "../../../packages/capstan-dev/src/devcluster/printers/table-printers.ts";
import type { ServedResource } from "../../../packages/capstan-dev/src/devcluster/registry/served-resource.ts";

const NOW = Date.parse("2026-01-10T12:00:00Z");
const ago = (ms: number) => new Date(NOW - ms).toISOString();
const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

describe("ages as kubectl prints them (duration.HumanDuration)", () => {
  it.each([
    [0, "0s"],
    [-1500, "0s"],
    [-3000, "<invalid>"],
    [59 * S, "59s"],
    [119 * S, "119s"],
    [2 * M, "2m"],
    [3 * M + 12 * S, "3m12s"],
    [10 * M + 30 * S, "10m"],
    [179 * M, "179m"],
    [3 * H, "3h"],
    [4 * H + 20 * M, "4h20m"],
    [8 * H + 20 * M, "8h"],
    [47 * H, "47h"],
    [2 * D, "2d"],
    [3 * D + 5 * H, "3d5h"],
    [8 * D + 5 * H, "8d"],
    [2 * 365 * D, "2y"],
    [2 * 365 * D + 20 * D, "2y20d"],
    [9 * 365 * D, "9y"],
  ])("renders %i ms as %s", (ms, text) => {
    expect(humanDuration(ms)).toBe(text);
  });

  it("shows <unknown> for a missing timestamp and <invalid> for garbage", () => {
    expect(ageSince(undefined, NOW)).toBe("<unknown>");
    expect(ageSince("yesterday", NOW)).toBe("<invalid>");
  });
});

describe("JSONPath as printer columns use it", () => {
  const doc = {
    metadata: { labels: { "app.kubernetes.io/name": "web" } },
    status: {
      conditions: [
        { type: "Progressing", status: "True" },
        { type: "Ready", status: "False", reason: "Waiting" },
      ],
      replicas: 3,
    },
    spec: { items: [{ name: "a" }, { name: "b" }] },
  };

  it("follows fields, quoted keys, indexes, wildcards and filters", () => {
    expect(evaluateJsonPath(parseJsonPath(".status.replicas"), doc)).toEqual([3]);
    expect(evaluateJsonPath(parseJsonPath(".metadata.labels['app.kubernetes.io/name']"), doc)).toEqual(["web"]);
    expect(evaluateJsonPath(parseJsonPath(".spec.items[1].name"), doc)).toEqual(["b"]);
    expect(evaluateJsonPath(parseJsonPath(".spec.items[-1].name"), doc)).toEqual(["b"]);
    expect(evaluateJsonPath(parseJsonPath(".spec.items[*].name"), doc)).toEqual(["a", "b"]);
    expect(evaluateJsonPath(parseJsonPath('.status.conditions[?(@.type=="Ready")].reason'), doc)).toEqual(["Waiting"]);
    expect(evaluateJsonPath(parseJsonPath("{.status.replicas}"), doc)).toEqual([3]);
  });

  it("selects nothing for missing keys instead of failing", () => {
    expect(evaluateJsonPath(parseJsonPath(".status.missing.deeper"), doc)).toEqual([]);
    expect(evaluateJsonPath(parseJsonPath(".spec.items[7]"), doc)).toEqual([]);
  });

  it("rejects syntax it cannot evaluate", () => {
    expect(() => parseJsonPath(".spec..name")).toThrow(/recursive descent/);
    expect(() => parseJsonPath(".spec[")).toThrow();
    expect(() => parseJsonPath("spec")).toThrow();
  });
});

describe("built-in printers (pkg/printers/internalversion)", () => {
  it("prints pods as NAME READY STATUS RESTARTS AGE with wide columns at priority 1", () => {
    const printer = builtinPrinter("", "pods");
    expect(printer.columns.map((c) => [c.name, c.priority])).toEqual([
      ["Name", 0],
      ["Ready", 0],
      ["Status", 0],
      ["Restarts", 0],
      ["Age", 0],
      ["IP", 1],
      ["Node", 1],
      ["Nominated Node", 1],
      ["Readiness Gates", 1],
    ]);
    const pod = {
      metadata: { name: "web-0", creationTimestamp: ago(5 * M) },
      spec: { containers: [{ name: "a" }, { name: "b" }], nodeName: "node-1" },
      status: {
        phase: "Running",
        podIP: "10.0.0.7",
        containerStatuses: [
          {
            name: "a",
            ready: true,
            restartCount: 2,
            state: { running: {} },
            lastState: { terminated: { finishedAt: ago(90 * S) } },
          },
          { name: "b", ready: false, restartCount: 0, state: { waiting: { reason: "CrashLoopBackOff" } } },
        ],
      },
    };
    expect(printer.cells(pod, NOW)).toEqual([
      "web-0",
      "1/2",
      "CrashLoopBackOff",
      "2 (90s ago)",
      "5m",
      "10.0.0.7",
      "node-1",
      "<none>",
      "<none>",
    ]);
  });

  it("shows Terminating for a pod being deleted and Completed conditions for finished pods", () => {
    const printer = builtinPrinter("", "pods");
    const deleting = {
      metadata: { name: "p", creationTimestamp: ago(S), deletionTimestamp: ago(0) },
      spec: { containers: [{ name: "a" }] },
      status: { phase: "Running" },
    };
    expect(printer.cells(deleting, NOW)[2]).toBe("Terminating");
    const done = { metadata: { name: "p" }, spec: { containers: [] }, status: { phase: "Succeeded" } };
    expect(printer.conditions?.(done)).toEqual([
      { type: "Completed", status: "True", reason: "Succeeded", message: "The pod has completed successfully." },
    ]);
  });

  it("shows a pending pod's init progress", () => {
    const pod = {
      metadata: { name: "p", creationTimestamp: ago(S) },
      spec: { initContainers: [{ name: "i1" }, { name: "i2" }], containers: [{ name: "a" }] },
      status: {
        phase: "Pending",
        initContainerStatuses: [
          { name: "i1", state: { terminated: { exitCode: 0 } } },
          { name: "i2", state: { running: {} } },
        ],
      },
    };
    expect(builtinPrinter("", "pods").cells(pod, NOW)[2]).toBe("Init:1/2");
  });

  it("prints deployments as READY UP-TO-DATE AVAILABLE with containers, images and selector", () => {
    const printer = builtinPrinter("apps", "deployments");
    expect(printer.columns.filter((c) => c.priority === 0).map((c) => c.name)).toEqual([
      "Name",
      "Ready",
      "Up-to-date",
      "Available",
      "Age",
    ]);
    const d = {
      metadata: { name: "web", creationTimestamp: ago(3 * H) },
      spec: {
        replicas: 3,
        selector: {
          matchLabels: { app: "web" },
          matchExpressions: [{ key: "tier", operator: "In", values: ["b", "a"] }],
        },
        template: {
          spec: {
            containers: [
              { name: "nginx", image: "nginx:1" },
              { name: "side", image: "busybox" },
            ],
          },
        },
      },
      status: { readyReplicas: 2, updatedReplicas: 3, availableReplicas: 2 },
    };
    expect(printer.cells(d, NOW)).toEqual([
      "web",
      "2/3",
      3,
      2,
      "3h",
      "nginx,side",
      "nginx:1,busybox",
      "app=web,tier in (a,b)",
    ]);
  });

  it("counts data keys of configmaps and secrets and shows the namespace phase", () => {
    expect(
      builtinPrinter("", "configmaps").cells(
        { metadata: { name: "c", creationTimestamp: ago(10 * S) }, data: { a: "1" }, binaryData: { b: "" } },
        NOW,
      ),
    ).toEqual(["c", 2, "10s"]);
    expect(
      builtinPrinter("", "secrets").cells(
        { metadata: { name: "s", creationTimestamp: ago(10 * S) }, type: "Opaque", data: { a: "MQ==" } },
        NOW,
      ),
    ).toEqual(["s", "Opaque", 1, "10s"]);
    expect(
      builtinPrinter("", "namespaces").cells(
        { metadata: { name: "n", creationTimestamp: ago(D) }, status: { phase: "Terminating" } },
        NOW,
      ),
    ).toEqual(["n", "Terminating", "24h"]);
  });

  it("prints services with ports, external IPs and selector", () => {
    const svc = {
      metadata: { name: "web", creationTimestamp: ago(M) },
      spec: {
        type: "NodePort",
        clusterIP: "10.96.0.10",
        ports: [
          { port: 80, nodePort: 30080, protocol: "TCP" },
          { port: 53, protocol: "UDP" },
        ],
        selector: { app: "web" },
      },
    };
    expect(builtinPrinter("", "services").cells(svc, NOW)).toEqual([
      "web",
      "NodePort",
      "10.96.0.10",
      "<none>",
      "80:30080/TCP,53/UDP",
      "60s",
      "app=web",
    ]);
  });

  it("prints nodes with readiness, roles and node info", () => {
    const node = {
      metadata: { name: "n1", creationTimestamp: ago(H), labels: { "node-role.kubernetes.io/control-plane": "" } },
      spec: { unschedulable: true },
      status: {
        conditions: [{ type: "Ready", status: "True" }],
        addresses: [{ type: "InternalIP", address: "172.18.0.2" }],
        nodeInfo: { kubeletVersion: "v1.32.0" },
      },
    };
    expect(builtinPrinter("", "nodes").cells(node, NOW)).toEqual([
      "n1",
      "Ready,SchedulingDisabled",
      "control-plane",
      "60m",
      "v1.32.0",
      "172.18.0.2",
      "<none>",
      "<unknown>",
      "<unknown>",
      "<unknown>",
    ]);
  });

  it("prints core and events.k8s.io events with the same columns", () => {
    const core = {
      metadata: { name: "e1" },
      involvedObject: { kind: "Pod", name: "web-0" },
      reason: "Started",
      type: "Normal",
      message: "Started container ",
      source: { component: "kubelet", host: "n1" },
      firstTimestamp: ago(5 * M),
      lastTimestamp: ago(M),
      count: 3,
    };
    const printer = builtinPrinter("", "events");
    expect(printer.columns.filter((c) => c.priority === 0).map((c) => c.name)).toEqual([
      "Last Seen",
      "Type",
      "Reason",
      "Object",
      "Message",
    ]);
    expect(printer.cells(core, NOW)).toEqual([
      "60s",
      "Normal",
      "Started",
      "pod/web-0",
      "",
      "kubelet, n1",
      "Started container",
      "5m",
      3,
      "e1",
    ]);
    const v1 = {
      metadata: { name: "e2" },
      regarding: { kind: "ConfigMap", name: "c" },
      reason: "Synced",
      type: "Warning",
      note: "boom",
      eventTime: ago(2 * M),
      reportingController: "capstan",
      reportingInstance: "pod-1",
    };
    expect(builtinPrinter("events.k8s.io", "events").cells(v1, NOW)).toEqual([
      "2m",
      "Warning",
      "Synced",
      "configmap/c",
      "",
      "capstan, pod-1",
      "boom",
      "2m",
      1,
      "e2",
    ]);
  });

  it("prints role bindings with their subjects by kind", () => {
    const rb = {
      metadata: { name: "rb", creationTimestamp: ago(S) },
      roleRef: { kind: "ClusterRole", name: "view" },
      subjects: [
        { kind: "User", name: "alice" },
        { kind: "ServiceAccount", name: "op", namespace: "ops" },
        { kind: "Group", name: "devs" },
      ],
    };
    expect(builtinPrinter("rbac.authorization.k8s.io", "rolebindings").cells(rb, NOW)).toEqual([
      "rb",
      "ClusterRole/view",
      "1s",
      "alice",
      "devs",
      "ops/op",
    ]);
  });

  it("falls back to NAME and CREATED AT (RFC 3339) for kinds without a printer, such as CRDs", () => {
    const printer = builtinPrinter("apiextensions.k8s.io", "customresourcedefinitions");
    expect(printer).toBe(defaultPrinter);
    expect(printer.columns.map((c) => [c.name, c.type])).toEqual([
      ["Name", "string"],
      ["Created At", "date"],
    ]);
    expect(
      printer.cells({ metadata: { name: "x.example.com", creationTimestamp: "2026-01-01T00:00:00Z" } }, NOW),
    ).toEqual(["x.example.com", "2026-01-01T00:00:00Z"]);
  });

  it("renders label selectors with set-based requirements sorted by key", () => {
    expect(
      formatLabelSelector({
        matchLabels: { z: "1" },
        matchExpressions: [
          { key: "a", operator: "Exists" },
          { key: "m", operator: "DoesNotExist" },
          { key: "k", operator: "NotIn", values: ["y", "x"] },
        ],
      }),
    ).toBe("a,k notin (x,y),!m,z=1");
    expect(formatLabelSelector(undefined)).toBe("");
  });
});

describe("custom resource printer columns (apiextensions tableconvertor)", () => {
  const er = {
    metadata: { name: "usd", creationTimestamp: ago(2 * M) },
    spec: { currency: "USD", replicas: 2.7, tags: ["a", "b"], enabled: true },
    status: { rate: 1.25, fetchedAt: ago(30 * S), conditions: [{ type: "Ready", status: "True" }] },
  };

  it("adds an implicit Age column when the CRD declares none", () => {
    const printer = customResourcePrinter(undefined);
    expect(printer.columns.map((c) => [c.name, c.type])).toEqual([
      ["Name", "string"],
      ["Age", "date"],
    ]);
    expect(printer.cells(er, NOW)).toEqual(["usd", "2m"]);
  });

  it("evaluates each column's JSONPath and converts the value to the column type", () => {
    const printer = customResourcePrinter([
      { name: "Currency", type: "string", jsonPath: ".spec.currency" },
      { name: "Rate", type: "number", jsonPath: ".status.rate", description: "the rate" },
      { name: "Replicas", type: "integer", jsonPath: ".spec.replicas", priority: 1 },
      { name: "Enabled", type: "boolean", jsonPath: ".spec.enabled" },
      { name: "Tags", type: "string", jsonPath: ".spec.tags" },
      { name: "Ready", type: "string", jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
      { name: "Fetched", type: "date", jsonPath: ".status.fetchedAt" },
      { name: "Missing", type: "string", jsonPath: ".status.nothing" },
      { name: "Mistyped", type: "integer", jsonPath: ".spec.currency" },
    ]);
    expect(printer.columns[1]).toEqual({
      name: "Currency",
      type: "string",
      format: "",
      description: "Custom resource definition column (in JSONPath format): .spec.currency",
      priority: 0,
    });
    expect(printer.columns[2]?.description).toBe("the rate");
    expect(printer.columns[3]?.priority).toBe(1);
    expect(printer.cells(er, NOW)).toEqual(["usd", "USD", 1.25, 2, true, '["a","b"]', "True", "30s", null, null]);
  });

  it("refuses a column whose JSONPath does not parse, naming it", () => {
    expect(() => customResourcePrinter([{ name: "Bad", type: "string", jsonPath: ".spec[" }])).toThrow(
      'unrecognized column definition ".spec["',
    );
  });
});

describe("toTable (meta.k8s.io Table as kube-apiserver returns it)", () => {
  const configMaps: ServedResource = {
    group: "",
    version: "v1",
    kind: "ConfigMap",
    listKind: "ConfigMapList",
    plural: "configmaps",
    singular: "configmap",
    namespaced: true,
    shortNames: ["cm"],
    categories: [],
    verbs: [],
    subresources: {},
    generation: "none",
  };
  const cm = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "c", namespace: "default", resourceVersion: "42", creationTimestamp: "2026-01-10T11:59:00Z" },
    data: { a: "1" },
  };

  it("renders a list with the list's metadata and rows carrying PartialObjectMetadata by default", () => {
    const table = toTable(
      configMaps,
      [cm],
      { resourceVersion: "50", continue: "tok" },
      { includeObject: "Metadata", apiVersion: "meta.k8s.io/v1" },
      new Date(NOW),
    );
    expect(table).toEqual({
      kind: "Table",
      apiVersion: "meta.k8s.io/v1",
      metadata: { resourceVersion: "50", continue: "tok" },
      columnDefinitions: builtinPrinter("", "configmaps").columns,
      rows: [
        {
          cells: ["c", 1, "60s"],
          object: { kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: cm.metadata },
        },
      ],
    });
  });

  it("takes a single object's resourceVersion, the requested Table version, and honours includeObject and noHeaders", () => {
    const none = toTable(
      configMaps,
      [cm],
      {},
      { includeObject: "None", apiVersion: "meta.k8s.io/v1beta1", noHeaders: true },
      new Date(NOW),
    );
    expect(none["metadata"]).toEqual({ resourceVersion: "42" });
    expect(none["apiVersion"]).toBe("meta.k8s.io/v1beta1");
    expect(none["columnDefinitions"]).toBeNull();
    expect(none["rows"]).toEqual([{ cells: ["c", 1, "60s"], object: null }]);
    const full = toTable(
      configMaps,
      [cm],
      {},
      { includeObject: "Object", apiVersion: "meta.k8s.io/v1beta1" },
      new Date(NOW),
    );
    expect((full["rows"] as { object: unknown }[])[0]?.object).toBe(cm);
    const partial = toTable(
      configMaps,
      [cm],
      {},
      { includeObject: "Metadata", apiVersion: "meta.k8s.io/v1beta1" },
      new Date(NOW),
    );
    expect((partial["rows"] as { object: { apiVersion: string } }[])[0]?.object.apiVersion).toBe("meta.k8s.io/v1beta1");
  });

  it("uses a CRD version's printer columns, and the default convertor when a column cannot be parsed", () => {
    const custom: ServedResource = {
      ...configMaps,
      group: "example.com",
      kind: "Thing",
      plural: "things",
      custom: true,
      printerColumns: [{ name: "A", type: "string", jsonPath: ".spec.a" }],
    };
    const thing = { metadata: { name: "t", creationTimestamp: "2026-01-10T11:00:00Z" }, spec: { a: "x" } };
    const table = toTable(
      custom,
      [thing],
      { resourceVersion: "1" },
      { includeObject: "None", apiVersion: "meta.k8s.io/v1" },
      new Date(NOW),
    );
    expect((table["columnDefinitions"] as { name: string }[]).map((c) => c.name)).toEqual(["Name", "A"]);
    expect((table["rows"] as { cells: unknown[] }[])[0]?.cells).toEqual(["t", "x"]);
    const broken = { ...custom, printerColumns: [{ name: "B", type: "string", jsonPath: ".spec[" }] };
    const fallback = toTable(
      broken,
      [thing],
      { resourceVersion: "1" },
      { includeObject: "None", apiVersion: "meta.k8s.io/v1" },
      new Date(NOW),
    );
    expect((fallback["columnDefinitions"] as { name: string }[]).map((c) => c.name)).toEqual(["Name", "Created At"]);
  });
});
