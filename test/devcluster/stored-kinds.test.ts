/**
 * The built-in kinds the devcluster serves as stored objects, with no controller acting on them
 * (StatefulSets, Jobs, Ingresses, PVCs...): discovery, create/get/list/watch over HTTP with the
 * scheme's defaults and create-time preparation, generation and the status subresource.
 */

import { startTestCluster, type TestCluster } from "capstan-dev/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fileFixture } from "../support/file-fixture.ts";
import { http, RBAC_CLUSTER } from "./rbac/support.ts";
import { startRawHttpCluster } from "./support/http.ts";

const t = fileFixture(() => startRawHttpCluster());

const podTemplate = (labels: Record<string, string>, restartPolicy?: string) => ({
  metadata: { labels },
  spec: { containers: [{ name: "c", image: "busybox:1.36" }], ...(restartPolicy ? { restartPolicy } : {}) },
});

/** The pod-template defaults every workload's template gets (as a Deployment's does). */
const templateDefaults = {
  spec: {
    dnsPolicy: "ClusterFirst",
    schedulerName: "default-scheduler",
    terminationGracePeriodSeconds: 30,
    containers: [{ imagePullPolicy: "IfNotPresent", terminationMessagePath: "/dev/termination-log" }],
  },
};

interface KindCase {
  /** Collection path. */
  path: string;
  kind: string;
  apiVersion: string;
  body: Record<string, unknown>;
  /** What the stored object must contain beyond the body (scheme defaults, create-time fields). */
  expected: Record<string, unknown>;
  generation?: number;
}

const NS = "/namespaces/default";
const CASES: KindCase[] = [
  {
    path: `/apis/apps/v1${NS}/statefulsets`,
    kind: "StatefulSet",
    apiVersion: "apps/v1",
    body: {
      metadata: { name: "db" },
      spec: { serviceName: "db", selector: { matchLabels: { app: "db" } }, template: podTemplate({ app: "db" }) },
    },
    expected: {
      spec: {
        replicas: 1,
        podManagementPolicy: "OrderedReady",
        revisionHistoryLimit: 10,
        updateStrategy: { type: "RollingUpdate", rollingUpdate: { partition: 0 } },
        persistentVolumeClaimRetentionPolicy: { whenDeleted: "Retain", whenScaled: "Retain" },
        template: templateDefaults,
      },
      // The counters Go writes without omitempty, zero until a client writes status.
      status: { replicas: 0, availableReplicas: 0 },
    },
    generation: 1,
  },
  {
    path: `/apis/apps/v1${NS}/daemonsets`,
    kind: "DaemonSet",
    apiVersion: "apps/v1",
    body: {
      metadata: { name: "agent" },
      spec: { selector: { matchLabels: { app: "agent" } }, template: podTemplate({ app: "agent" }) },
    },
    expected: {
      metadata: { annotations: { "deprecated.daemonset.template.generation": "1" } },
      spec: {
        revisionHistoryLimit: 10,
        updateStrategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
        template: templateDefaults,
      },
      status: { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 },
    },
    generation: 1,
  },
  {
    path: `/apis/batch/v1${NS}/jobs`,
    kind: "Job",
    apiVersion: "batch/v1",
    body: { metadata: { name: "backup" }, spec: { template: podTemplate({ app: "backup" }, "Never") } },
    expected: {
      spec: {
        parallelism: 1,
        completions: 1,
        backoffLimit: 6,
        completionMode: "NonIndexed",
        suspend: false,
        podReplacementPolicy: "TerminatingOrFailed",
        template: templateDefaults,
      },
      // The template's labels, copied by SetDefaults_Job onto a job that has none.
      metadata: { labels: { app: "backup" } },
    },
    generation: 1,
  },
  {
    path: `/apis/batch/v1${NS}/cronjobs`,
    kind: "CronJob",
    apiVersion: "batch/v1",
    body: {
      metadata: { name: "nightly" },
      spec: { schedule: "0 3 * * *", jobTemplate: { spec: { template: podTemplate({}, "OnFailure") } } },
    },
    expected: {
      spec: {
        concurrencyPolicy: "Allow",
        suspend: false,
        successfulJobsHistoryLimit: 3,
        failedJobsHistoryLimit: 1,
        jobTemplate: { spec: { template: templateDefaults } },
      },
    },
    generation: 1,
  },
  {
    path: `/apis/networking.k8s.io/v1${NS}/ingresses`,
    kind: "Ingress",
    apiVersion: "networking.k8s.io/v1",
    body: {
      metadata: { name: "web" },
      spec: { defaultBackend: { service: { name: "web", port: { number: 80 } } } },
    },
    expected: { status: { loadBalancer: {} } },
    generation: 1,
  },
  {
    path: "/apis/networking.k8s.io/v1/ingressclasses",
    kind: "IngressClass",
    apiVersion: "networking.k8s.io/v1",
    body: { metadata: { name: "nginx" }, spec: { controller: "k8s.io/ingress-nginx" } },
    expected: {},
    generation: 1,
  },
  {
    path: `/apis/networking.k8s.io/v1${NS}/networkpolicies`,
    kind: "NetworkPolicy",
    apiVersion: "networking.k8s.io/v1",
    body: {
      metadata: { name: "deny" },
      spec: { podSelector: {}, egress: [{ ports: [{ port: 53 }] }] },
    },
    expected: { spec: { policyTypes: ["Ingress", "Egress"], egress: [{ ports: [{ port: 53, protocol: "TCP" }] }] } },
    generation: 1,
  },
  {
    path: `/api/v1${NS}/persistentvolumeclaims`,
    kind: "PersistentVolumeClaim",
    apiVersion: "v1",
    body: {
      metadata: { name: "data" },
      spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
    },
    expected: { spec: { volumeMode: "Filesystem" }, status: { phase: "Pending" } },
  },
  {
    path: "/api/v1/persistentvolumes",
    kind: "PersistentVolume",
    apiVersion: "v1",
    body: {
      metadata: { name: "pv1" },
      spec: { capacity: { storage: "1Gi" }, accessModes: ["ReadWriteOnce"], hostPath: { path: "/data" } },
    },
    expected: {
      spec: { persistentVolumeReclaimPolicy: "Retain", volumeMode: "Filesystem" },
      status: { phase: "Pending", lastPhaseTransitionTime: expect.stringMatching(/Z$/) },
    },
  },
  {
    path: `/api/v1${NS}/endpoints`,
    kind: "Endpoints",
    apiVersion: "v1",
    body: { metadata: { name: "ext" }, subsets: [{ addresses: [{ ip: "10.0.0.1" }], ports: [{ port: 5432 }] }] },
    expected: { subsets: [{ ports: [{ port: 5432, protocol: "TCP" }] }] },
  },
  {
    path: `/api/v1${NS}/replicationcontrollers`,
    kind: "ReplicationController",
    apiVersion: "v1",
    body: { metadata: { name: "legacy" }, spec: { template: podTemplate({ app: "legacy" }) } },
    expected: {
      metadata: { labels: { app: "legacy" } },
      spec: { replicas: 1, selector: { app: "legacy" }, template: templateDefaults },
      status: { replicas: 0 },
    },
    generation: 1,
  },
  {
    path: `/api/v1${NS}/limitranges`,
    kind: "LimitRange",
    apiVersion: "v1",
    body: {
      metadata: { name: "limits" },
      spec: { limits: [{ type: "Container", max: { cpu: "2" }, min: { memory: "64Mi" } }] },
    },
    expected: { spec: { limits: [{ default: { cpu: "2" }, defaultRequest: { cpu: "2", memory: "64Mi" } }] } },
  },
  {
    path: `/api/v1${NS}/resourcequotas`,
    kind: "ResourceQuota",
    apiVersion: "v1",
    body: { metadata: { name: "quota" }, spec: { hard: { pods: "10" } } },
    expected: {},
  },
  {
    path: `/apis/policy/v1${NS}/poddisruptionbudgets`,
    kind: "PodDisruptionBudget",
    apiVersion: "policy/v1",
    body: { metadata: { name: "db" }, spec: { minAvailable: 1, selector: { matchLabels: { app: "db" } } } },
    expected: { status: { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 } },
    generation: 1,
  },
  {
    path: `/apis/discovery.k8s.io/v1${NS}/endpointslices`,
    kind: "EndpointSlice",
    apiVersion: "discovery.k8s.io/v1",
    body: {
      metadata: { name: "ext-1" },
      addressType: "IPv4",
      endpoints: [{ addresses: ["10.0.0.1"] }],
      ports: [{ port: 5432 }],
    },
    expected: { ports: [{ port: 5432, name: "", protocol: "TCP" }] },
    generation: 1,
  },
  {
    path: "/apis/storage.k8s.io/v1/storageclasses",
    kind: "StorageClass",
    apiVersion: "storage.k8s.io/v1",
    body: { metadata: { name: "fast" }, provisioner: "example.com/fast" },
    expected: { reclaimPolicy: "Delete", volumeBindingMode: "Immediate" },
  },
  {
    path: "/apis/scheduling.k8s.io/v1/priorityclasses",
    kind: "PriorityClass",
    apiVersion: "scheduling.k8s.io/v1",
    body: { metadata: { name: "high" }, value: 1000 },
    expected: { preemptionPolicy: "PreemptLowerPriority" },
  },
];

describe("stored built-in kinds over HTTP", () => {
  it.each(CASES)("$kind: create, get, list and watch give the defaulted object", async (c) => {
    const list0 = await t.request("GET", c.path);
    expect(list0.status, list0.text).toBe(200);
    expect(list0.body.kind).toBe(`${c.kind}List`);
    const w = await t.watch(`${c.path}?watch=true&resourceVersion=${list0.body.metadata.resourceVersion}`);
    const created = await t.request("POST", c.path, { body: { apiVersion: c.apiVersion, kind: c.kind, ...c.body } });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ apiVersion: c.apiVersion, kind: c.kind, ...c.expected });
    expect(created.body.metadata.generation).toBe(c.generation);

    const name = created.body.metadata.name as string;
    const got = await t.request("GET", `${c.path}/${name}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(created.body);

    const list = await t.request("GET", c.path);
    expect(list.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toContain(name);

    const event = await w.next();
    expect(event?.type).toBe("ADDED");
    expect(event?.object).toEqual(created.body);
    w.close();
  });

  it("a new pod's qosClass follows its resources, requests defaulted from limits (PrepareForCreate)", async () => {
    const pod = (name: string, resources: Record<string, unknown>) =>
      t.request("POST", `/api/v1${NS}/pods`, {
        body: { metadata: { name }, spec: { containers: [{ name: "c", image: "busybox:1.36", resources }] } },
      });
    const guaranteed = await pod("qos-g", { limits: { cpu: "1", memory: "1Gi" } });
    expect(guaranteed.status, guaranteed.text).toBe(201);
    expect(guaranteed.body.spec.containers[0].resources.requests).toEqual({ cpu: "1", memory: "1Gi" });
    expect(guaranteed.body.status.qosClass).toBe("Guaranteed");
    expect((await pod("qos-b", { requests: { memory: "64Mi" } })).body.status.qosClass).toBe("Burstable");
    expect((await pod("qos-e", {})).body.status.qosClass).toBe("BestEffort");
  });

  it("a new ReplicaSet's status holds replicas: 0 (no omitempty), a new Deployment's status nothing", async () => {
    const template = podTemplate({ app: "zero" });
    const rs = await t.request("POST", `/apis/apps/v1${NS}/replicasets`, {
      body: { metadata: { name: "zero" }, spec: { replicas: 0, selector: { matchLabels: { app: "zero" } }, template } },
    });
    expect(rs.status, rs.text).toBe(201);
    expect(rs.body.status).toEqual({ replicas: 0 });
    const deploy = await t.request("POST", `/apis/apps/v1${NS}/deployments`, {
      body: { metadata: { name: "zero" }, spec: { replicas: 0, selector: { matchLabels: { app: "zero" } }, template } },
    });
    expect(deploy.status, deploy.text).toBe(201);
    expect(deploy.body.status ?? {}).toEqual({});
  });

  it("generates a job's selector and pod labels from its UID, unless manualSelector is set", async () => {
    const jobs = `/apis/batch/v1${NS}/jobs`;
    const auto = await t.request("POST", jobs, {
      body: { metadata: { name: "gen" }, spec: { template: podTemplate({}, "Never") } },
    });
    expect(auto.status, auto.text).toBe(201);
    const uid = auto.body.metadata.uid;
    expect(auto.body.spec.selector).toEqual({ matchLabels: { "batch.kubernetes.io/controller-uid": uid } });
    const labels = {
      "batch.kubernetes.io/controller-uid": uid,
      "batch.kubernetes.io/job-name": "gen",
      "controller-uid": uid,
      "job-name": "gen",
    };
    expect(auto.body.spec.template.metadata.labels).toEqual(labels);
    expect(auto.body.metadata.labels).toEqual(labels);

    const manual = await t.request("POST", jobs, {
      body: {
        metadata: { name: "manual" },
        spec: {
          manualSelector: true,
          selector: { matchLabels: { app: "m" } },
          template: podTemplate({ app: "m" }, "Never"),
        },
      },
    });
    expect(manual.status, manual.text).toBe(201);
    expect(manual.body.spec.selector).toEqual({ matchLabels: { app: "m" } });
    expect(manual.body.spec.template.metadata.labels).toEqual({ app: "m" });
  });

  it("StatefulSet: generation follows spec changes, status is written only through /status", async () => {
    const path = `/apis/apps/v1${NS}/statefulsets`;
    const created = await t.request("POST", path, {
      body: {
        metadata: { name: "gen-sts" },
        spec: { serviceName: "s", selector: { matchLabels: { app: "s" } }, template: podTemplate({ app: "s" }) },
        status: { replicas: 5 },
      },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body.status).toEqual({ replicas: 0, availableReplicas: 0 });

    // A label change and a status written on the main resource: no generation bump, status ignored.
    const relabeled = await t.request("PATCH", `${path}/gen-sts`, {
      body: { metadata: { labels: { tier: "db" } }, status: { replicas: 5 } },
      contentType: "application/merge-patch+json",
    });
    expect(relabeled.status, relabeled.text).toBe(200);
    expect(relabeled.body.metadata.generation).toBe(1);
    expect(relabeled.body.status).toEqual({ replicas: 0, availableReplicas: 0 });

    const scaled = await t.request("PATCH", `${path}/gen-sts`, {
      body: { spec: { replicas: 3 } },
      contentType: "application/merge-patch+json",
    });
    expect(scaled.body.metadata.generation).toBe(2);

    const status = await t.request("PATCH", `${path}/gen-sts/status`, {
      body: { spec: { replicas: 9 }, status: { replicas: 3, readyReplicas: 2, observedGeneration: 2 } },
      contentType: "application/merge-patch+json",
    });
    expect(status.status, status.text).toBe(200);
    expect(status.body.status).toEqual({ replicas: 3, availableReplicas: 0, readyReplicas: 2, observedGeneration: 2 });
    expect(status.body.spec.replicas).toBe(3);
    expect(status.body.metadata.generation).toBe(2);

    const scale = await t.request("GET", `${path}/gen-sts/scale`);
    expect(scale.body).toMatchObject({
      kind: "Scale",
      apiVersion: "autoscaling/v1",
      spec: { replicas: 3 },
      status: { replicas: 3, selector: "app=s" },
    });
  });

  it("Job: generation follows spec changes, status is written only through /status", async () => {
    const path = `/apis/batch/v1${NS}/jobs`;
    const created = await t.request("POST", path, {
      body: { metadata: { name: "gen-job" }, spec: { template: podTemplate({}, "Never") } },
    });
    expect(created.status, created.text).toBe(201);
    const suspended = await t.request("PATCH", `${path}/gen-job`, {
      body: { spec: { suspend: true }, status: { active: 1 } },
      contentType: "application/merge-patch+json",
    });
    expect(suspended.status, suspended.text).toBe(200);
    expect(suspended.body.metadata.generation).toBe(2);
    expect(suspended.body.status).toBeUndefined();

    const done = {
      succeeded: 1,
      startTime: "2024-01-01T00:00:00Z",
      completionTime: "2024-01-01T00:01:00Z",
      conditions: [{ type: "Complete", status: "True" }],
    };
    const status = await t.request("PUT", `${path}/gen-job/status`, {
      body: { ...suspended.body, spec: { ...suspended.body.spec, parallelism: 4 }, status: done },
    });
    expect(status.status, status.text).toBe(200);
    // JobCondition's times are values (metav1.Time, not pointers): Go prints them, null when unset.
    expect(status.body.status).toEqual({
      ...done,
      conditions: [{ type: "Complete", status: "True", lastProbeTime: null, lastTransitionTime: null }],
    });
    expect(status.body.spec.parallelism).toBe(1);
    expect(status.body.metadata.generation).toBe(2);

    const bySucceeded = await t.request("GET", `${path}?fieldSelector=status.successful%3D1`);
    expect(bySucceeded.body.items.map((j: { metadata: { name: string } }) => j.metadata.name)).toEqual(["gen-job"]);
  });

  it("discovery lists each new kind with its real short names, categories, scope and subresources", async () => {
    const resources = async (gv: string) => {
      const res = await t.request("GET", gv === "v1" ? "/api/v1" : `/apis/${gv}`);
      expect(res.status).toBe(200);
      return new Map(res.body.resources.map((r: { name: string }) => [r.name, r]));
    };
    const apps = await resources("apps/v1");
    expect(apps.get("statefulsets")).toMatchObject({
      singularName: "statefulset",
      namespaced: true,
      kind: "StatefulSet",
      shortNames: ["sts"],
      categories: ["all"],
      verbs: ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
    });
    expect(apps.get("statefulsets/scale")).toMatchObject({ group: "autoscaling", version: "v1", kind: "Scale" });
    expect(apps.has("statefulsets/status")).toBe(true);
    expect(apps.get("daemonsets")).toMatchObject({ shortNames: ["ds"], categories: ["all"] });
    expect(apps.has("daemonsets/scale")).toBe(false);

    const batch = await resources("batch/v1");
    expect(batch.get("jobs")).toMatchObject({ singularName: "job", categories: ["all"] });
    expect((batch.get("jobs") as { shortNames?: string[] }).shortNames).toBeUndefined();
    expect(batch.get("cronjobs")).toMatchObject({ shortNames: ["cj"], categories: ["all"] });
    expect([...batch.keys()].sort()).toEqual(["cronjobs", "cronjobs/status", "jobs", "jobs/status"]);

    const core = await resources("v1");
    expect(core.get("persistentvolumes")).toMatchObject({ namespaced: false, shortNames: ["pv"] });
    expect(core.get("endpoints")).toMatchObject({ singularName: "endpoints", shortNames: ["ep"] });
    expect(core.get("replicationcontrollers")).toMatchObject({ shortNames: ["rc"], categories: ["all"] });
    expect(core.has("replicationcontrollers/scale")).toBe(true);
    expect(core.has("limitranges/status")).toBe(false);
    expect(core.has("resourcequotas/status")).toBe(true);

    const networking = await resources("networking.k8s.io/v1");
    expect([...networking.keys()].sort()).toEqual([
      "ingressclasses",
      "ingresses",
      "ingresses/status",
      "networkpolicies",
    ]);
    expect(networking.get("ingressclasses")).toMatchObject({ namespaced: false });
    expect((await resources("policy/v1")).get("poddisruptionbudgets")).toMatchObject({ shortNames: ["pdb"] });
    expect((await resources("storage.k8s.io/v1")).get("storageclasses")).toMatchObject({
      namespaced: false,
      shortNames: ["sc"],
    });
    expect((await resources("scheduling.k8s.io/v1")).get("priorityclasses")).toMatchObject({
      namespaced: false,
      shortNames: ["pc"],
    });
    expect((await resources("discovery.k8s.io/v1")).get("endpointslices")).toMatchObject({ namespaced: true });
  });
});

describe("stored built-in kinds under RBAC", () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await startTestCluster(RBAC_CLUSTER);
  });
  afterAll(async () => {
    await cluster.stop();
  });

  it("the bootstrap view role lists jobs and statefulsets but cannot create a job", async () => {
    const binding = await http(cluster, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings", {
      body: {
        metadata: { name: "viewer" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "view" },
        subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "viewer" }],
      },
    });
    expect(binding.status, binding.text).toBe(201);
    const as = { "impersonate-user": "viewer" };
    const jobs = await http(cluster, "GET", "/apis/batch/v1/namespaces/default/jobs", { headers: as });
    expect(jobs.status, jobs.text).toBe(200);
    const sts = await http(cluster, "GET", "/apis/apps/v1/namespaces/default/statefulsets", { headers: as });
    expect(sts.status, sts.text).toBe(200);
    const create = await http(cluster, "POST", "/apis/batch/v1/namespaces/default/jobs", {
      headers: as,
      body: { metadata: { name: "nope" }, spec: { template: podTemplate({}, "Never") } },
    });
    expect(create.status).toBe(403);
  });
});
