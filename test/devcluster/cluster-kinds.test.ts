/**
 * The kinds a 1.32 kube-apiserver serves for cluster components (pod templates, controller revisions,
 * HPAs in autoscaling/v2 and v1, CSRs with /status and /approval, runtime classes, CSI objects, volume
 * attachments, admission policies, flow control, component statuses): discovery entries, a create /
 * get / list / update / delete round trip with the scheme defaults, and each kind's strategy.
 */
import { describe, expect, it } from "vitest";
import { fileFixture } from "../support/file-fixture.ts";
import { startRawHttpCluster } from "./support/http.ts";

const t = fileFixture(() => startRawHttpCluster());

const NS = "/namespaces/default";
const podSpec = { containers: [{ name: "c", image: "busybox:1.36" }] };

interface KindCase {
  kind: string;
  apiVersion: string;
  /** Collection path. */
  path: string;
  body: Record<string, unknown>;
  /** What the stored object holds beyond the body (scheme defaults, create-time status). */
  expected?: Record<string, unknown>;
  /** A change an update makes, checked on the answer. */
  change: (obj: Record<string, unknown>) => void;
}

const CASES: KindCase[] = [
  {
    kind: "APIService",
    apiVersion: "apiregistration.k8s.io/v1",
    path: "/apis/apiregistration.k8s.io/v1/apiservices",
    body: {
      metadata: { name: "v1beta1.metrics.k8s.io" },
      spec: {
        group: "metrics.k8s.io",
        version: "v1beta1",
        service: { namespace: "kube-system", name: "metrics-server" },
        groupPriorityMinimum: 100,
        versionPriority: 100,
      },
    },
    expected: { spec: { service: { port: 443 } }, status: {} },
    change: (o) => {
      (o["spec"] as Record<string, unknown>)["insecureSkipTLSVerify"] = true;
    },
  },
  {
    kind: "PodTemplate",
    apiVersion: "v1",
    path: `/api/v1${NS}/podtemplates`,
    body: { metadata: { name: "tpl" }, template: { metadata: { labels: { app: "x" } }, spec: podSpec } },
    change: (o) => {
      (o["template"] as { metadata: { labels: Record<string, string> } }).metadata.labels["tier"] = "web";
    },
  },
  {
    kind: "ControllerRevision",
    apiVersion: "apps/v1",
    path: `/apis/apps/v1${NS}/controllerrevisions`,
    body: { metadata: { name: "rev-1" }, revision: 1, data: { spec: { template: { spec: podSpec } } } },
    change: (o) => {
      (o["metadata"] as Record<string, unknown>)["labels"] = { controller: "ds" };
    },
  },
  {
    kind: "RuntimeClass",
    apiVersion: "node.k8s.io/v1",
    path: "/apis/node.k8s.io/v1/runtimeclasses",
    body: { metadata: { name: "gvisor" }, handler: "runsc" },
    change: (o) => {
      o["overhead"] = { podFixed: { memory: "64Mi" } };
    },
  },
  {
    kind: "CSIDriver",
    apiVersion: "storage.k8s.io/v1",
    path: "/apis/storage.k8s.io/v1/csidrivers",
    body: { metadata: { name: "ebs.csi.aws.com" }, spec: {} },
    expected: {
      spec: {
        attachRequired: true,
        podInfoOnMount: false,
        storageCapacity: false,
        fsGroupPolicy: "ReadWriteOnceWithFSType",
        volumeLifecycleModes: ["Persistent"],
        requiresRepublish: false,
        seLinuxMount: false,
      },
    },
    change: (o) => {
      (o["spec"] as Record<string, unknown>)["podInfoOnMount"] = true;
    },
  },
  {
    kind: "CSINode",
    apiVersion: "storage.k8s.io/v1",
    path: "/apis/storage.k8s.io/v1/csinodes",
    body: { metadata: { name: "node-1" }, spec: { drivers: [{ name: "ebs.csi.aws.com", nodeID: "i-1" }] } },
    change: (o) => {
      (o["spec"] as { drivers: unknown[] }).drivers.push({ name: "efs.csi.aws.com", nodeID: "i-1" });
    },
  },
  {
    kind: "CSIStorageCapacity",
    apiVersion: "storage.k8s.io/v1",
    path: `/apis/storage.k8s.io/v1${NS}/csistoragecapacities`,
    body: { metadata: { name: "cap" }, storageClassName: "fast", capacity: "10Gi" },
    change: (o) => {
      o["capacity"] = "20Gi";
    },
  },
  {
    kind: "VolumeAttachment",
    apiVersion: "storage.k8s.io/v1",
    path: "/apis/storage.k8s.io/v1/volumeattachments",
    body: {
      metadata: { name: "va" },
      spec: { attacher: "ebs.csi.aws.com", nodeName: "node-1", source: { persistentVolumeName: "pv1" } },
      status: { attached: true },
    },
    // PrepareForCreate empties the status (attached has no omitempty).
    expected: { status: { attached: false } },
    change: (o) => {
      (o["metadata"] as Record<string, unknown>)["labels"] = { a: "b" };
    },
  },
  {
    kind: "ValidatingAdmissionPolicy",
    apiVersion: "admissionregistration.k8s.io/v1",
    path: "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
    body: {
      metadata: { name: "replicas" },
      spec: {
        matchConstraints: {
          resourceRules: [
            { apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["deployments"] },
          ],
        },
        validations: [{ expression: "object.spec.replicas <= 5" }],
      },
    },
    expected: {
      metadata: { generation: 1 },
      spec: {
        failurePolicy: "Fail",
        matchConstraints: { matchPolicy: "Equivalent", namespaceSelector: {}, objectSelector: {} },
      },
      status: {},
    },
    change: (o) => {
      (o["spec"] as { validations: unknown[] }).validations.push({ expression: "true" });
    },
  },
  {
    kind: "ValidatingAdmissionPolicyBinding",
    apiVersion: "admissionregistration.k8s.io/v1",
    path: "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings",
    body: {
      metadata: { name: "replicas" },
      spec: { policyName: "replicas", validationActions: ["Deny"], paramRef: { name: "limits", namespace: "default" } },
    },
    expected: { spec: { paramRef: { parameterNotFoundAction: "Deny" } } },
    change: (o) => {
      (o["spec"] as Record<string, unknown>)["validationActions"] = ["Warn"];
    },
  },
  {
    kind: "FlowSchema",
    apiVersion: "flowcontrol.apiserver.k8s.io/v1",
    path: "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas",
    body: { metadata: { name: "probes" }, spec: { priorityLevelConfiguration: { name: "exempt" } } },
    expected: { metadata: { generation: 1 }, spec: { matchingPrecedence: 1000 }, status: {} },
    change: (o) => {
      (o["spec"] as Record<string, unknown>)["matchingPrecedence"] = 500;
    },
  },
  {
    kind: "PriorityLevelConfiguration",
    apiVersion: "flowcontrol.apiserver.k8s.io/v1",
    path: "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations",
    body: {
      metadata: { name: "batch" },
      spec: { type: "Limited", limited: { limitResponse: { type: "Queue", queuing: {} } } },
    },
    expected: {
      spec: {
        limited: {
          nominalConcurrencyShares: 30,
          lendablePercent: 0,
          limitResponse: { queuing: { queues: 64, handSize: 8, queueLengthLimit: 50 } },
        },
      },
    },
    change: (o) => {
      (o["spec"] as { limited: Record<string, unknown> }).limited["nominalConcurrencyShares"] = 10;
    },
  },
];

describe("cluster component kinds over HTTP", () => {
  it.each(CASES)("$kind: create, get, list, update and delete", async (c) => {
    const created = await t.request("POST", c.path, { body: { apiVersion: c.apiVersion, kind: c.kind, ...c.body } });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ apiVersion: c.apiVersion, kind: c.kind, ...(c.expected ?? {}) });
    const name = created.body.metadata.name as string;

    const got = await t.request("GET", `${c.path}/${name}`);
    expect(got.body).toEqual(created.body);
    const list = await t.request("GET", c.path);
    expect(list.body.kind).toBe(`${c.kind}List`);
    expect(list.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toContain(name);

    const changed = structuredClone(got.body);
    c.change(changed);
    const updated = await t.request("PUT", `${c.path}/${name}`, { body: changed });
    expect(updated.status, updated.text).toBe(200);
    const { metadata: _m, ...changedRest } = changed;
    expect(updated.body).toMatchObject(changedRest);

    const deleted = await t.request("DELETE", `${c.path}/${name}`);
    expect(deleted.status, deleted.text).toBe(200);
    expect((await t.request("GET", `${c.path}/${name}`)).status).toBe(404);
  });
});

describe("discovery of the cluster component kinds", () => {
  const resources = async (gv: string) => {
    const res = await t.request("GET", gv === "v1" ? "/api/v1" : `/apis/${gv}`);
    expect(res.status, res.text).toBe(200);
    return res.body.resources as Array<Record<string, unknown> & { name: string }>;
  };
  const ALL = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];

  it("lists each kind with the singular name, scope, short names, categories and verbs of a 1.32 server", async () => {
    const entry = async (gv: string, name: string) => (await resources(gv)).find((r) => r.name === name);
    expect(await entry("v1", "podtemplates")).toEqual({
      name: "podtemplates",
      singularName: "podtemplate",
      namespaced: true,
      kind: "PodTemplate",
      verbs: ALL,
    });
    expect(await entry("v1", "componentstatuses")).toEqual({
      name: "componentstatuses",
      singularName: "componentstatus",
      namespaced: false,
      kind: "ComponentStatus",
      verbs: ["get", "list"],
      shortNames: ["cs"],
    });
    expect(await entry("apps/v1", "controllerrevisions")).toMatchObject({ namespaced: true, verbs: ALL });
    for (const gv of ["autoscaling/v2", "autoscaling/v1"]) {
      expect(await entry(gv, "horizontalpodautoscalers")).toMatchObject({
        singularName: "horizontalpodautoscaler",
        namespaced: true,
        shortNames: ["hpa"],
        categories: ["all"],
      });
    }
    expect(await entry("certificates.k8s.io/v1", "certificatesigningrequests")).toMatchObject({
      namespaced: false,
      shortNames: ["csr"],
    });
    expect(await entry("node.k8s.io/v1", "runtimeclasses")).toMatchObject({ namespaced: false });
    expect(await entry("storage.k8s.io/v1", "csistoragecapacities")).toMatchObject({ namespaced: true });
    expect(await entry("admissionregistration.k8s.io/v1", "validatingadmissionpolicies")).toMatchObject({
      namespaced: false,
      categories: ["api-extensions"],
    });
  });

  it("lists each group version's resources and subresources in path order, as the API installer does", async () => {
    expect((await resources("certificates.k8s.io/v1")).map((r) => [r.name, r.verbs])).toEqual([
      ["certificatesigningrequests", ALL],
      ["certificatesigningrequests/approval", ["get", "patch", "update"]],
      ["certificatesigningrequests/status", ["get", "patch", "update"]],
    ]);
    expect((await resources("storage.k8s.io/v1")).map((r) => r.name)).toEqual([
      "csidrivers",
      "csinodes",
      "csistoragecapacities",
      "storageclasses",
      "volumeattachments",
      "volumeattachments/status",
    ]);
    expect((await resources("apps/v1")).map((r) => r.name)).toEqual([
      "controllerrevisions",
      "daemonsets",
      "daemonsets/status",
      "deployments",
      "deployments/scale",
      "deployments/status",
      "replicasets",
      "replicasets/scale",
      "replicasets/status",
      "statefulsets",
      "statefulsets/scale",
      "statefulsets/status",
    ]);
    const core = (await resources("v1")).map((r) => r.name);
    expect(core.filter((n) => n.startsWith("pod") || n.startsWith("namespaces"))).toEqual([
      "namespaces",
      "namespaces/finalize",
      "namespaces/status",
      "pods",
      "pods/log",
      "pods/status",
      "podtemplates",
    ]);
    expect((await resources("v1")).find((r) => r.name === "pods/log")).toEqual({
      name: "pods/log",
      singularName: "",
      namespaced: true,
      kind: "Pod",
      verbs: ["get"],
    });
    expect((await resources("flowcontrol.apiserver.k8s.io/v1")).map((r) => r.name)).toEqual([
      "flowschemas",
      "flowschemas/status",
      "prioritylevelconfigurations",
      "prioritylevelconfigurations/status",
    ]);
  });

  it("/apis lists the aggregator's group, then the groups in priority order, autoscaling preferring v2", async () => {
    const res = await t.request("GET", "/apis");
    const groups = (res.body.groups as Array<{ name: string }>).map((g) => g.name);
    const builtin = [
      "apiregistration.k8s.io",
      "apps",
      "events.k8s.io",
      "authentication.k8s.io",
      "authorization.k8s.io",
      "autoscaling",
      "batch",
      "certificates.k8s.io",
      "networking.k8s.io",
      "policy",
      "rbac.authorization.k8s.io",
      "storage.k8s.io",
      "admissionregistration.k8s.io",
      "apiextensions.k8s.io",
      "scheduling.k8s.io",
      "coordination.k8s.io",
      "node.k8s.io",
      "discovery.k8s.io",
      "flowcontrol.apiserver.k8s.io",
    ];
    expect(groups.filter((g) => builtin.includes(g))).toEqual(builtin);
    const autoscaling = (res.body.groups as Array<{ name: string }>).find((g) => g.name === "autoscaling");
    expect(autoscaling).toMatchObject({
      versions: [
        { groupVersion: "autoscaling/v2", version: "v2" },
        { groupVersion: "autoscaling/v1", version: "v1" },
      ],
      preferredVersion: { groupVersion: "autoscaling/v2", version: "v2" },
    });
  });
});

describe("HorizontalPodAutoscalers in autoscaling/v2 and autoscaling/v1", () => {
  const v2 = `/apis/autoscaling/v2${NS}/horizontalpodautoscalers`;
  const v1 = `/apis/autoscaling/v1${NS}/horizontalpodautoscalers`;
  const target = { apiVersion: "apps/v1", kind: "Deployment", name: "web" };

  it("a v1 HPA is stored with its CPU target as a v2 metric, and v1 defaults to 80% CPU", async () => {
    const created = await t.request("POST", v1, {
      body: {
        metadata: { name: "cpu" },
        spec: { scaleTargetRef: target, maxReplicas: 5, targetCPUUtilizationPercentage: 60 },
      },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({
      apiVersion: "autoscaling/v1",
      spec: { minReplicas: 1, maxReplicas: 5, targetCPUUtilizationPercentage: 60 },
      status: { currentReplicas: 0, desiredReplicas: 0 },
    });
    expect(created.body.metadata.annotations).toBeUndefined();
    const asV2 = await t.request("GET", `${v2}/cpu`);
    expect(asV2.body.spec.metrics).toEqual([
      { type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 60 } } },
    ]);
    expect(asV2.body.status).toEqual({ desiredReplicas: 0 });

    const bare = await t.request("POST", v1, {
      body: { metadata: { name: "bare" }, spec: { scaleTargetRef: target, maxReplicas: 3 } },
    });
    expect(bare.body.spec.targetCPUUtilizationPercentage).toBe(80);
  });

  it("a v2 HPA's other metrics and status ride in v1 annotations, and a v1 update keeps them", async () => {
    const memory = {
      type: "Resource",
      resource: { name: "memory", target: { type: "AverageValue", averageValue: "500Mi" } },
    };
    const cpu = {
      type: "Resource",
      resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 70 } },
    };
    const created = await t.request("POST", v2, {
      body: { metadata: { name: "multi" }, spec: { scaleTargetRef: target, maxReplicas: 4, metrics: [memory, cpu] } },
    });
    expect(created.status, created.text).toBe(201);
    const conditions = [
      { type: "AbleToScale", status: "True", lastTransitionTime: "2026-01-01T00:00:00Z", reason: "ReadyForNewScale" },
    ];
    const status = await t.request("PATCH", `${v2}/multi/status`, {
      contentType: "application/merge-patch+json",
      body: {
        status: {
          currentReplicas: 2,
          desiredReplicas: 2,
          currentMetrics: [
            { type: "Resource", resource: { name: "cpu", current: { averageValue: "100m", averageUtilization: 40 } } },
          ],
          conditions,
        },
      },
    });
    expect(status.status, status.text).toBe(200);

    const asV1 = await t.request("GET", `${v1}/multi`);
    expect(asV1.body.spec).toEqual({
      scaleTargetRef: target,
      minReplicas: 1,
      maxReplicas: 4,
      targetCPUUtilizationPercentage: 70,
    });
    expect(asV1.body.status).toEqual({ currentReplicas: 2, desiredReplicas: 2, currentCPUUtilizationPercentage: 40 });
    const annotations = asV1.body.metadata.annotations;
    expect(JSON.parse(annotations["autoscaling.alpha.kubernetes.io/metrics"])).toEqual([
      { type: "Resource", resource: { name: "memory", targetAverageValue: "500Mi" } },
    ]);
    expect(JSON.parse(annotations["autoscaling.alpha.kubernetes.io/current-metrics"])).toEqual([
      { type: "Resource", resource: { name: "cpu", currentAverageUtilization: 40, currentAverageValue: "100m" } },
    ]);
    expect(JSON.parse(annotations["autoscaling.alpha.kubernetes.io/conditions"])).toEqual(conditions);

    // A v1 client changes maxReplicas and sends the annotations back: the memory metric survives.
    const updated = await t.request("PUT", `${v1}/multi`, {
      body: { ...asV1.body, spec: { ...asV1.body.spec, maxReplicas: 6 } },
    });
    expect(updated.status, updated.text).toBe(200);
    const after = await t.request("GET", `${v2}/multi`);
    expect(after.body.spec.maxReplicas).toBe(6);
    expect(after.body.spec.metrics).toEqual([memory, cpu]);
    expect(after.body.metadata.annotations).toBeUndefined();
  });

  it("v2 fills an HPA's behavior rules only when it has a behavior", async () => {
    const created = await t.request("POST", v2, {
      body: {
        metadata: { name: "behaved" },
        spec: { scaleTargetRef: target, maxReplicas: 2, behavior: { scaleDown: { stabilizationWindowSeconds: 60 } } },
      },
    });
    expect(created.body.spec.behavior).toEqual({
      scaleUp: {
        stabilizationWindowSeconds: 0,
        selectPolicy: "Max",
        policies: [
          { type: "Pods", value: 4, periodSeconds: 15 },
          { type: "Percent", value: 100, periodSeconds: 15 },
        ],
      },
      scaleDown: {
        stabilizationWindowSeconds: 60,
        selectPolicy: "Max",
        policies: [{ type: "Percent", value: 100, periodSeconds: 15 }],
      },
    });
    const plain = await t.request("POST", v2, {
      body: { metadata: { name: "plain" }, spec: { scaleTargetRef: target, maxReplicas: 2 } },
    });
    expect(plain.body.spec.behavior).toBeUndefined();
    expect(plain.body.spec.metrics).toEqual([
      { type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 80 } } },
    ]);
  });
});

describe("CertificateSigningRequests", () => {
  const path = "/apis/certificates.k8s.io/v1/certificatesigningrequests";
  const spec = { request: "LS0tLS1CRUdJTg==", signerName: "example.com/signer", usages: ["client auth"] };

  it("create records the requesting user (as a self review names it) over what the client sent, with an empty status", async () => {
    const created = await t.request("POST", path, {
      body: {
        metadata: { name: "csr-user" },
        spec: { ...spec, username: "mallory", uid: "m-1", groups: ["mallory-group"] },
        status: { certificate: "eA==" },
      },
    });
    expect(created.status, created.text).toBe(201);
    const review = await t.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", {
      body: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" },
    });
    const user = review.body.status.userInfo;
    expect(created.body.spec.username).toBe(user.username);
    expect(created.body.spec.groups).toEqual(user.groups);
    expect(created.body.spec.uid).toBeUndefined();
    expect(created.body.status).toEqual({});
  });

  it("spec is immutable; only /approval writes Approved, which /status keeps", async () => {
    await t.request("POST", path, { body: { metadata: { name: "csr-flow" }, spec } });
    const current = (await t.request("GET", `${path}/csr-flow`)).body;
    const edited = await t.request("PUT", `${path}/csr-flow`, {
      body: {
        ...current,
        metadata: { ...current.metadata, labels: { a: "b" } },
        spec: { ...current.spec, signerName: "other.io/x" },
      },
    });
    expect(edited.status, edited.text).toBe(200);
    expect(edited.body.spec.signerName).toBe("example.com/signer");
    expect(edited.body.metadata.labels).toEqual({ a: "b" });

    // A status write may not approve.
    const sneaky = await t.request("PUT", `${path}/csr-flow/status`, {
      body: { ...edited.body, status: { conditions: [{ type: "Approved", status: "True", reason: "Self" }] } },
    });
    expect(sneaky.status, sneaky.text).toBe(200);
    expect(sneaky.body.status.conditions).toBeUndefined();

    const approved = await t.request("PUT", `${path}/csr-flow/approval`, {
      body: {
        ...sneaky.body,
        spec: { ...sneaky.body.spec, usages: ["server auth"] },
        status: { conditions: [{ type: "Approved", reason: "Admin" }] },
      },
    });
    expect(approved.status, approved.text).toBe(200);
    expect(approved.body.spec.usages).toEqual(["client auth"]);
    const [condition] = approved.body.status.conditions;
    expect(condition).toMatchObject({ type: "Approved", status: "True", reason: "Admin" });
    expect(condition.lastUpdateTime).toMatch(/Z$/);
    expect(condition.lastTransitionTime).toBe(condition.lastUpdateTime);

    // The signer's status write adds the certificate; the approval stays.
    const issued = await t.request("PATCH", `${path}/csr-flow/status`, {
      contentType: "application/merge-patch+json",
      body: { status: { certificate: "Y2VydA==", conditions: [] } },
    });
    expect(issued.status, issued.text).toBe(200);
    expect(issued.body.status.certificate).toBe("Y2VydA==");
    expect(issued.body.status.conditions).toEqual([condition]);
  });
});

describe("componentstatuses", () => {
  const path = "/api/v1/componentstatuses";

  it("lists the scheduler, controller manager and etcd as healthy, and gets one by name", async () => {
    const list = await t.request("GET", path);
    expect(list.status, list.text).toBe(200);
    expect(list.body).toMatchObject({ kind: "ComponentStatusList", apiVersion: "v1", metadata: {} });
    expect(list.body.items.map((i: { metadata: { name: string } }) => i.metadata.name).sort()).toEqual([
      "controller-manager",
      "etcd-0",
      "scheduler",
    ]);
    const one = await t.request("GET", `${path}/scheduler`);
    expect(one.body).toEqual({
      kind: "ComponentStatus",
      apiVersion: "v1",
      metadata: { name: "scheduler", creationTimestamp: null },
      conditions: [{ type: "Healthy", status: "True", message: "ok" }],
    });
    const byName = await t.request("GET", `${path}?fieldSelector=metadata.name%3Detcd-0`);
    expect(byName.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual(["etcd-0"]);
    expect((await t.request("GET", `${path}/kubelet`)).status).toBe(404);
  });

  it("serves only get and list: writes have no route (405), watch is not supported", async () => {
    const create = await t.request("POST", path, { body: { metadata: { name: "x" } } });
    expect(create.status).toBe(405);
    expect(create.body.reason).toBe("MethodNotAllowed");
    expect((await t.request("DELETE", `${path}/scheduler`)).status).toBe(405);
    const watch = await t.request("GET", `${path}?watch=true`);
    expect(watch.status).toBe(405);
    expect(watch.body.message).toBe('watch is not supported on resources of kind "componentstatuses"');
  });
});

describe("one Kubernetes version", () => {
  it("/version, the kubelet's node and both OpenAPI documents say 1.32", async () => {
    const version = await t.request("GET", "/version");
    expect(version.body).toMatchObject({ major: "1", minor: "32", gitVersion: "v1.32.0-capstan" });
    // 1.32's version.Info has no emulation or compatibility fields (they came in 1.33).
    expect(Object.keys(version.body)).toEqual([
      "major",
      "minor",
      "gitVersion",
      "gitCommit",
      "gitTreeState",
      "buildDate",
      "goVersion",
      "compiler",
      "platform",
    ]);
    const v3 = await t.request("GET", "/openapi/v3/api/v1");
    expect(v3.body.info).toEqual({ title: "Kubernetes", version: "v1.32.0-capstan" });
    const v2 = await t.request("GET", "/openapi/v2", { accept: "application/json" });
    expect(v2.body.info).toEqual({ title: "Kubernetes", version: "v1.32.0-capstan" });
  });
});
