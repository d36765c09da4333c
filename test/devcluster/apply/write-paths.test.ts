import { describe, expect, it } from "vitest";
import { fileFixture } from "../../support/file-fixture.ts";
import { startRawHttpCluster } from "../support/http.ts";

// biome-ignore lint/suspicious/noExplicitAny: test assertions read arbitrary JSON
type Doc = any;

// REST semantics alone: no controllers writing status or scaling meanwhile.
const t = fileFixture(() => startRawHttpCluster({ builtinPlugins: false }));

const CMS = "/api/v1/namespaces/default/configmaps";
const DEPLOYS = "/apis/apps/v1/namespaces/default/deployments";
const SECRETS = "/api/v1/namespaces/default/secrets";
const MERGE = "application/merge-patch+json";
const JSON_PATCH = "application/json-patch+json";
const STRATEGIC = "application/strategic-merge-patch+json";
const APPLY = "application/apply-patch+yaml";

function managers(obj: Doc): [string, string, string | undefined][] {
  return (obj.metadata.managedFields ?? []).map((e: Doc) => [e.manager, e.operation, e.subresource]);
}

function entry(obj: Doc, manager: string, subresource?: string): Doc {
  return (obj.metadata.managedFields ?? []).find((e: Doc) => e.manager === manager && e.subresource === subresource);
}

function deployment(name: string): Doc {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "c", image: "nginx:1.27" }] } },
    },
  };
}

describe("managedFields of non-apply writes", () => {
  it("records create, update and each patch type under the fieldManager parameter", async () => {
    const created = await t.request("POST", `${CMS}?fieldManager=creator`, {
      body: { metadata: { name: "verbs" }, data: { a: "1" } },
    });
    expect(created.status).toBe(201);
    expect(entry(created.body, "creator")).toMatchObject({
      operation: "Update",
      apiVersion: "v1",
      fieldsType: "FieldsV1",
      fieldsV1: { "f:data": { ".": {}, "f:a": {} } },
    });
    const body = { ...created.body, data: { a: "1", b: "2" } };
    const updated = await t.request("PUT", `${CMS}/verbs?fieldManager=updater`, { body });
    expect(entry(updated.body, "updater").fieldsV1).toEqual({ "f:data": { "f:b": {} } });
    const merged = await t.request("PATCH", `${CMS}/verbs?fieldManager=merger`, {
      body: { data: { c: "3" } },
      contentType: MERGE,
    });
    const jsoned = await t.request("PATCH", `${CMS}/verbs?fieldManager=jsoner`, {
      body: [{ op: "add", path: "/data/d", value: "4" }],
      contentType: JSON_PATCH,
    });
    expect(entry(merged.body, "merger").fieldsV1).toEqual({ "f:data": { "f:c": {} } });
    const strategic = await t.request("PATCH", `${CMS}/verbs?fieldManager=strategist`, {
      body: { data: { a: "changed" } },
      contentType: STRATEGIC,
    });
    expect(entry(jsoned.body, "jsoner").fieldsV1).toEqual({ "f:data": { "f:d": {} } });
    // Changing a field takes it from its previous manager: the creator keeps only the `data` map itself.
    expect(entry(strategic.body, "strategist").fieldsV1).toEqual({ "f:data": { "f:a": {} } });
    expect(entry(strategic.body, "creator").fieldsV1).toEqual({ "f:data": {} });
    // Entries sort by operation, time (seconds), then manager name, compared bytewise as Go compares
    // strings (apimachinery's sortEncodedManagedFields); the writes may straddle a second.
    const entries: Doc[] = strategic.body.metadata.managedFields;
    expect(entries.map((e) => e.manager).sort()).toEqual(["creator", "jsoner", "merger", "strategist", "updater"]);
    const order = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
    const seconds = (e: Doc) => Math.floor(Date.parse(e.time) / 1000);
    const byRule = [...entries].sort(
      (a, b) => order(a.operation, b.operation) || seconds(a) - seconds(b) || order(a.manager, b.manager),
    );
    expect(entries.map((e) => e.manager)).toEqual(byRule.map((e) => e.manager));
  });

  it("names the manager after the User-Agent's program when no fieldManager is given", async () => {
    const created = await t.request("POST", CMS, { body: { metadata: { name: "agent" }, data: { a: "1" } } });
    // The test client is undici without a User-Agent: buildManagerInfo names such writers "unknown".
    expect(managers(created.body)).toEqual([["unknown", "Update", undefined]]);
  });

  it("conflicts an apply with the creating manager, by name", async () => {
    await t.request("POST", `${CMS}?fieldManager=kubectl-create`, {
      body: { metadata: { name: "contested" }, data: { a: "1" } },
    });
    const res = await t.request("PATCH", `${CMS}/contested?fieldManager=alice`, {
      raw: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: contested\ndata:\n  a: '2'\n",
      contentType: APPLY,
    });
    expect(res.status).toBe(409);
    expect(res.body.message).toBe('Apply failed with 1 conflict: conflict with "kubectl-create" using v1: .data.a');
    expect(res.body.details.causes).toEqual([
      { reason: "FieldManagerConflict", message: 'conflict with "kubectl-create" using v1', field: ".data.a" },
    ]);
  });

  it("refuses an invalid fieldManager on create and update with the options' 422", async () => {
    const long = await t.request("POST", `${CMS}?fieldManager=${"m".repeat(129)}`, {
      body: { metadata: { name: "long" } },
    });
    expect([long.status, long.body.message]).toEqual([
      422,
      'CreateOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes',
    ]);
    const created = await t.request("POST", CMS, { body: { metadata: { name: "bell" } } });
    const bell = await t.request("PUT", `${CMS}/bell?fieldManager=a%07b`, { body: created.body });
    expect([bell.status, bell.body.message]).toEqual([
      422,
      'UpdateOptions.meta.k8s.io "" is invalid: fieldManager: Invalid value: "a\\ab": invalid character U+0007 (at position 1)',
    ]);
  });

  it("does not change managedFields (nor the object) on a write that changes nothing", async () => {
    const created = await t.request("POST", `${CMS}?fieldManager=m`, {
      body: { metadata: { name: "noop" }, data: { a: "1" } },
    });
    const again = await t.request("PATCH", `${CMS}/noop?fieldManager=other`, {
      body: { data: { a: "1" } },
      contentType: MERGE,
    });
    expect(again.body.metadata.resourceVersion).toBe(created.body.metadata.resourceVersion);
    expect(managers(again.body)).toEqual([["m", "Update", undefined]]);
  });
});

describe("what the creator owns", () => {
  it("owns the scheme's defaults but not what create-time preparation adds (cluster IP, pod priority)", async () => {
    const svc = await t.request("POST", "/api/v1/namespaces/default/services?fieldManager=kubectl-create", {
      body: { metadata: { name: "svc" }, spec: { ports: [{ port: 80 }], selector: { app: "a" } } },
    });
    const svcSpec = entry(svc.body, "kubectl-create").fieldsV1["f:spec"];
    expect(svc.body.spec.clusterIP).toMatch(/^10\.96\./);
    expect(Object.keys(svcSpec).sort()).toEqual([
      ".",
      "f:internalTrafficPolicy",
      "f:ports",
      "f:selector",
      "f:sessionAffinity",
      "f:type",
    ]);
    const pod = await t.request("POST", "/api/v1/namespaces/default/pods?fieldManager=kubectl-run", {
      body: { metadata: { name: "p" }, spec: { containers: [{ name: "c", image: "nginx" }] } },
    });
    expect(pod.body.spec.priority).toBe(0);
    const podSpec = entry(pod.body, "kubectl-run").fieldsV1["f:spec"];
    expect(podSpec["f:enableServiceLinks"]).toEqual({});
    expect(podSpec["f:priority"]).toBeUndefined();
    expect(entry(pod.body, "kubectl-run").fieldsV1["f:status"]).toBeUndefined();
  });
});

describe("subresources", () => {
  it("records /status writes with subresource status and applies through /status without owning spec", async () => {
    await t.request("POST", `${DEPLOYS}?fieldManager=kubectl-create`, { body: deployment("st") });
    const put = await t.request("PATCH", `${DEPLOYS}/st/status?fieldManager=controller`, {
      body: { status: { replicas: 2 } },
      contentType: MERGE,
    });
    expect(entry(put.body, "controller", "status")).toMatchObject({
      operation: "Update",
      fieldsV1: { "f:status": { ".": {}, "f:replicas": {} } },
    });
    const applied = await t.request("PATCH", `${DEPLOYS}/st/status?fieldManager=status-applier&force=true`, {
      raw: "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: st\nstatus:\n  readyReplicas: 1\n  replicas: 3\n",
      contentType: APPLY,
    });
    expect(applied.status).toBe(200);
    expect(applied.body.status).toMatchObject({ readyReplicas: 1, replicas: 3 });
    expect(entry(applied.body, "status-applier", "status")).toMatchObject({
      operation: "Apply",
      fieldsV1: { "f:status": { "f:readyReplicas": {}, "f:replicas": {} } },
    });
    // force took .status.replicas from the controller, which keeps only the status map itself.
    expect(entry(applied.body, "controller", "status").fieldsV1).toEqual({ "f:status": {} });
    // The spec is a reset field of /status: an apply there neither owns nor changes it.
    const specOnStatus = await t.request("PATCH", `${DEPLOYS}/st/status?fieldManager=status-applier`, {
      raw: "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: st\nspec:\n  replicas: 9\nstatus:\n  readyReplicas: 1\n  replicas: 3\n",
      contentType: APPLY,
    });
    expect(specOnStatus.status).toBe(200);
    expect(specOnStatus.body.spec.replicas).toBe(2);
    expect(entry(specOnStatus.body, "status-applier", "status").fieldsV1["f:spec"]).toBeUndefined();
  });

  it("maps a /scale update onto the parent's replicas, taking them from their creator", async () => {
    await t.request("POST", `${DEPLOYS}?fieldManager=kubectl-create`, { body: deployment("sc") });
    const scaled = await t.request("PATCH", `${DEPLOYS}/sc/scale?fieldManager=scaler`, {
      body: { spec: { replicas: 4 } },
      contentType: MERGE,
    });
    expect(scaled.status).toBe(200);
    expect(scaled.body).toMatchObject({ kind: "Scale", spec: { replicas: 4 } });
    const d = (await t.request("GET", `${DEPLOYS}/sc`)).body;
    expect(d.spec.replicas).toBe(4);
    expect(entry(d, "scaler", "scale")).toEqual({
      manager: "scaler",
      operation: "Update",
      apiVersion: "apps/v1",
      fieldsType: "FieldsV1",
      fieldsV1: { "f:spec": { "f:replicas": {} } },
      subresource: "scale",
    });
    expect(entry(d, "kubectl-create").fieldsV1["f:spec"]["f:replicas"]).toBeUndefined();
  });

  it("applies through /scale with an autoscaling/v1 Scale, and conflicts with the parent's replicas owner", async () => {
    await t.request("POST", `${DEPLOYS}?fieldManager=kubectl-create`, { body: deployment("sa") });
    const scale = (n: number) =>
      `apiVersion: autoscaling/v1\nkind: Scale\nmetadata:\n  name: sa\nspec:\n  replicas: ${n}\n`;
    const conflict = await t.request("PATCH", `${DEPLOYS}/sa/scale?fieldManager=hpa`, {
      raw: scale(5),
      contentType: APPLY,
    });
    expect(conflict.status).toBe(409);
    expect(conflict.body.message).toBe(
      // The Scale's managers are decoded from entries rewritten to autoscaling/v1 (ScaleHandler.ToSubresource).
      'Apply failed with 1 conflict: conflict with "kubectl-create" using autoscaling/v1: .spec.replicas',
    );
    const forced = await t.request("PATCH", `${DEPLOYS}/sa/scale?fieldManager=hpa&force=true`, {
      raw: scale(5),
      contentType: APPLY,
    });
    expect(forced.status).toBe(200);
    const d = (await t.request("GET", `${DEPLOYS}/sa`)).body;
    expect(d.spec.replicas).toBe(5);
    expect(entry(d, "hpa", "scale")).toMatchObject({
      operation: "Apply",
      apiVersion: "apps/v1",
      fieldsV1: { "f:spec": { "f:replicas": {} } },
    });
    const wrongKind = await t.request("PATCH", `${DEPLOYS}/sa/scale?fieldManager=hpa`, {
      raw: "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: sa\nspec:\n  replicas: 1\n",
      contentType: APPLY,
    });
    expect([wrongKind.status, wrongKind.body.message]).toEqual([400, "invalid object type: apps/v1, Kind=Deployment"]);
  });
});

describe("the scheme's defaults on every write", () => {
  it("defaults the containers a merge patch replaces, as decoding does on a real server", async () => {
    await t.request("POST", DEPLOYS, { body: deployment("dm") });
    const res = await t.request("PATCH", `${DEPLOYS}/dm`, {
      body: { spec: { template: { spec: { containers: [{ name: "other", image: "busybox" }] } } } },
      contentType: MERGE,
    });
    expect(res.body.spec.template.spec.containers).toEqual([
      {
        name: "other",
        image: "busybox",
        imagePullPolicy: "Always",
        resources: {},
        terminationMessagePath: "/dev/termination-log",
        terminationMessagePolicy: "File",
      },
    ]);
  });

  it("defaults again what a JSON patch removes and what a PUT leaves out", async () => {
    await t.request("POST", DEPLOYS, { body: deployment("dj") });
    const removed = await t.request("PATCH", `${DEPLOYS}/dj`, {
      body: [
        { op: "remove", path: "/spec/strategy" },
        { op: "remove", path: "/spec/template/spec/dnsPolicy" },
      ],
      contentType: JSON_PATCH,
    });
    expect(removed.body.spec.strategy).toEqual({
      type: "RollingUpdate",
      rollingUpdate: { maxUnavailable: "25%", maxSurge: "25%" },
    });
    expect(removed.body.spec.template.spec.dnsPolicy).toBe("ClusterFirst");
    const secret = await t.request("POST", SECRETS, { body: { metadata: { name: "s" }, data: {} } });
    const { type: _type, ...untyped } = secret.body;
    const put = await t.request("PUT", `${SECRETS}/s`, { body: untyped });
    expect(put.body.type).toBe("Opaque");
  });

  it("defaults the containers an apply adds, without making the applier own the defaults", async () => {
    const yaml = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: da
spec:
  selector:
    matchLabels: {app: da}
  template:
    metadata:
      labels: {app: da}
    spec:
      containers:
      - name: app
        image: nginx:1.27
`;
    const res = await t.request("PATCH", `${DEPLOYS}/da?fieldManager=applier`, { raw: yaml, contentType: APPLY });
    expect(res.status).toBe(201);
    const c = res.body.spec.template.spec.containers[0];
    expect(c).toMatchObject({ imagePullPolicy: "IfNotPresent", terminationMessagePath: "/dev/termination-log" });
    expect(res.body.spec.replicas).toBe(1);
    const owned = entry(res.body, "applier").fieldsV1;
    expect(owned["f:spec"]["f:replicas"]).toBeUndefined();
    expect(owned["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"app"}']).toEqual({
      ".": {},
      "f:image": {},
      "f:name": {},
    });
  });

  it("keeps a namespace's name label, which SetDefaults_Namespace puts back", async () => {
    await t.request("POST", "/api/v1/namespaces", { body: { metadata: { name: "labelled" } } });
    const res = await t.request("PATCH", "/api/v1/namespaces/labelled", {
      body: { metadata: { labels: { "kubernetes.io/metadata.name": null, team: "a" } } },
      contentType: MERGE,
    });
    expect(res.body.metadata.labels).toEqual({ "kubernetes.io/metadata.name": "labelled", team: "a" });
  });
});
