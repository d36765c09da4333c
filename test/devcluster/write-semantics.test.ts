import { describe, expect, it } from "vitest";
import { fileFixture } from "../support/file-fixture.ts";
import { configMap, startRawHttpCluster } from "./support/http.ts";

// REST semantics alone: no controllers (kubelet, deployment controller) writing status meanwhile.
const t = fileFixture(() => startRawHttpCluster({ builtinPlugins: false }));

const CMS = "/api/v1/namespaces/default/configmaps";
const DEPLOYS = "/apis/apps/v1/namespaces/default/deployments";
const JSON_PATCH = "application/json-patch+json";
const MERGE_PATCH = "application/merge-patch+json";

function deployment(name: string, replicas = 1): object {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "c", image: "nginx:1.27" }] } },
    },
    status: { replicas: 7 },
  };
}

describe("patch", () => {
  it("applies a merge patch (null deletes a key)", async () => {
    await t.request("POST", CMS, { body: configMap("mp", { a: "1", b: "2" }) });
    const res = await t.request("PATCH", `${CMS}/mp`, {
      body: { data: { a: null, c: "3" } },
      contentType: MERGE_PATCH,
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ b: "2", c: "3" });
  });

  it("applies a JSON patch, and fails it as a whole when a test op fails", async () => {
    await t.request("POST", CMS, { body: configMap("jp", { a: "1" }) });
    const ok = await t.request("PATCH", `${CMS}/jp`, {
      body: [
        { op: "test", path: "/data/a", value: "1" },
        { op: "replace", path: "/data/a", value: "2" },
        { op: "add", path: "/metadata/labels", value: { x: "y" } },
      ],
      contentType: JSON_PATCH,
    });
    expect(ok.status).toBe(200);
    expect(ok.body.data).toEqual({ a: "2" });
    expect(ok.body.metadata.labels).toEqual({ x: "y" });
    const failed = await t.request("PATCH", `${CMS}/jp`, {
      body: [
        { op: "replace", path: "/data/a", value: "3" },
        { op: "test", path: "/data/a", value: "1" },
      ],
      contentType: JSON_PATCH,
    });
    expect(failed.status).toBe(422);
    // patch.go drops the library's message (NewGenericServerResponse without it): patch/json-patch.test.ts.
    expect(failed.body.message).toBe("the server rejected our request due to an error in our request");
    expect((await t.request("GET", `${CMS}/jp`)).body.data).toEqual({ a: "2" });
  });

  it("answers an unknown patch content type with 415 listing the accepted ones", async () => {
    await t.request("POST", CMS, { body: configMap("pt") });
    const res = await t.request("PATCH", `${CMS}/pt`, { body: {}, contentType: "application/json" });
    expect(res.status).toBe(415);
    expect(res.body.reason).toBe("UnsupportedMediaType");
    expect(res.body.message).toBe(
      "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml",
    );
  });

  it("answers a patch pinning a stale resourceVersion with 409 Conflict", async () => {
    const created = await t.request("POST", CMS, { body: configMap("pin", { a: "1" }) });
    const rv = created.body.metadata.resourceVersion;
    await t.request("PATCH", `${CMS}/pin`, { body: { data: { a: "2" } }, contentType: MERGE_PATCH });
    const res = await t.request("PATCH", `${CMS}/pin`, {
      body: { metadata: { resourceVersion: rv }, data: { a: "3" } },
      contentType: MERGE_PATCH,
    });
    expect(res.status).toBe(409);
    expect(res.body.reason).toBe("Conflict");
  });

  it("answers a patch of a missing object with 404 and malformed patch JSON with 400", async () => {
    expect((await t.request("PATCH", `${CMS}/nope`, { body: {}, contentType: MERGE_PATCH })).status).toBe(404);
    await t.request("POST", CMS, { body: configMap("badpatch") });
    const res = await t.request("PATCH", `${CMS}/badpatch`, { raw: "{nope", contentType: MERGE_PATCH });
    expect(res.status).toBe(400);
  });
});

describe("status subresource and generation", () => {
  it("starts generation at 1, ignores status on create, bumps generation on spec changes only", async () => {
    const created = await t.request("POST", DEPLOYS, { body: deployment("web") });
    expect(created.status).toBe(201);
    expect(created.body.metadata.generation).toBe(1);
    expect(created.body.status).toBeUndefined();
    expect(created.body.spec.strategy.type).toBe("RollingUpdate");
    const labelled = await t.request("PATCH", `${DEPLOYS}/web`, {
      body: { metadata: { labels: { l: "1" } } },
      contentType: MERGE_PATCH,
    });
    expect(labelled.body.metadata.generation).toBe(1);
    const scaled = await t.request("PATCH", `${DEPLOYS}/web`, {
      body: { spec: { replicas: 3 } },
      contentType: MERGE_PATCH,
    });
    expect(scaled.body.metadata.generation).toBe(2);
  });

  it("main-resource writes ignore status; /status writes ignore spec and never bump generation", async () => {
    await t.request("POST", DEPLOYS, { body: deployment("split") });
    const statusWrite = await t.request("PATCH", `${DEPLOYS}/split/status`, {
      body: { spec: { replicas: 9 }, status: { replicas: 1, observedGeneration: 1 } },
      contentType: MERGE_PATCH,
    });
    expect(statusWrite.status).toBe(200);
    expect(statusWrite.body.status).toEqual({ replicas: 1, observedGeneration: 1 });
    expect(statusWrite.body.spec.replicas).toBe(1);
    expect(statusWrite.body.metadata.generation).toBe(1);
    const mainWrite = await t.request("PATCH", `${DEPLOYS}/split`, {
      body: { status: { replicas: 5 } },
      contentType: MERGE_PATCH,
    });
    expect(mainWrite.body.status).toEqual({ replicas: 1, observedGeneration: 1 });
    const put = statusWrite.body;
    put.status = { replicas: 2 };
    const putStatus = await t.request("PUT", `${DEPLOYS}/split/status`, { body: put });
    expect(putStatus.status).toBe(200);
    expect(putStatus.body.status).toEqual({ replicas: 2 });
  });

  it("serves the scale subresource as an autoscaling/v1 Scale and writes replicas through it", async () => {
    await t.request("POST", DEPLOYS, { body: deployment("scaled", 2) });
    const scale = await t.request("GET", `${DEPLOYS}/scaled/scale`);
    expect(scale.body).toMatchObject({
      kind: "Scale",
      apiVersion: "autoscaling/v1",
      metadata: { name: "scaled", namespace: "default" },
      spec: { replicas: 2 },
      status: { replicas: 0, selector: "app=scaled" },
    });
    const patched = await t.request("PATCH", `${DEPLOYS}/scaled/scale`, {
      body: { spec: { replicas: 4 } },
      contentType: MERGE_PATCH,
    });
    expect(patched.body.spec.replicas).toBe(4);
    const deploy = await t.request("GET", `${DEPLOYS}/scaled`);
    expect(deploy.body.spec.replicas).toBe(4);
    expect(deploy.body.metadata.generation).toBe(2);
  });

  it("answers subresources a kind does not have with 404", async () => {
    await t.request("POST", CMS, { body: configMap("nosub") });
    expect((await t.request("GET", `${CMS}/nosub/status`)).status).toBe(404);
    expect((await t.request("GET", `${CMS}/nosub/scale`)).status).toBe(404);
  });
});

describe("delete", () => {
  it("deletes at once and answers a Success Status with the uid for kinds without returnDeletedObject", async () => {
    const created = await t.request("POST", CMS, { body: configMap("gone") });
    const res = await t.request("DELETE", `${CMS}/gone`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Success",
      details: { name: "gone", kind: "configmaps", uid: created.body.metadata.uid },
    });
    expect((await t.request("GET", `${CMS}/gone`)).status).toBe(404);
    expect((await t.request("DELETE", `${CMS}/gone`)).status).toBe(404);
  });

  it("answers pods with the deleted object", async () => {
    await t.request("POST", "/api/v1/namespaces/default/pods", {
      body: { metadata: { name: "dp" }, spec: { containers: [{ name: "c", image: "x:1" }] } },
    });
    const res = await t.request("DELETE", "/api/v1/namespaces/default/pods/dp");
    expect(res.status).toBe(200);
    expect(res.body.kind).toBe("Pod");
    expect(res.body.metadata.name).toBe("dp");
  });

  it("with finalizers sets deletionTimestamp and keeps the object; removing the last finalizer deletes it", async () => {
    const w = await t.watch(`${CMS}?watch=true&fieldSelector=metadata.name%3Dheld`);
    await t.request("POST", CMS, { body: configMap("held", {}, { finalizers: ["example.com/hold"] }) });
    const del = await t.request("DELETE", `${CMS}/held`);
    expect(del.status).toBe(200);
    expect(del.body.kind).toBe("ConfigMap");
    expect(del.body.metadata.deletionTimestamp).toBeDefined();
    expect(del.body.metadata.deletionGracePeriodSeconds).toBe(0);
    expect((await t.request("GET", `${CMS}/held`)).status).toBe(200);
    const again = await t.request("DELETE", `${CMS}/held`);
    expect(again.status).toBe(200);
    expect(again.body.metadata.resourceVersion).toBe(del.body.metadata.resourceVersion);
    const add = await t.request("PATCH", `${CMS}/held`, {
      body: [{ op: "add", path: "/metadata/finalizers/-", value: "example.com/new" }],
      contentType: JSON_PATCH,
    });
    expect(add.status).toBe(422);
    const released = await t.request("PATCH", `${CMS}/held`, {
      body: { metadata: { finalizers: null } },
      contentType: MERGE_PATCH,
    });
    expect(released.status).toBe(200);
    expect((await t.request("GET", `${CMS}/held`)).status).toBe(404);
    const types = [];
    for (let i = 0; i < 3; i++) types.push((await w.next())?.type);
    expect(types).toEqual(["ADDED", "MODIFIED", "DELETED"]);
    w.close();
  });

  it("bumps generation when deletion starts on a kind with generation", async () => {
    await t.request("POST", DEPLOYS, {
      body: { ...deployment("fin"), metadata: { name: "fin", finalizers: ["x/y"] } },
    });
    const del = await t.request("DELETE", `${DEPLOYS}/fin`);
    expect(del.body.metadata.generation).toBe(2);
  });

  it("adds the orphan or foregroundDeletion finalizer for those propagation policies", async () => {
    await t.request("POST", CMS, { body: configMap("orph") });
    const orphan = await t.request("DELETE", `${CMS}/orph`, { body: { propagationPolicy: "Orphan" } });
    expect(orphan.body.metadata.finalizers).toEqual(["orphan"]);
    await t.request("POST", CMS, { body: configMap("fg") });
    const fg = await t.request("DELETE", `${CMS}/fg?propagationPolicy=Foreground`);
    expect(fg.body.metadata.finalizers).toEqual(["foregroundDeletion"]);
    const bad = await t.request("DELETE", `${CMS}/fg?propagationPolicy=Sometimes`);
    expect(bad.status).toBe(422);
  });

  it("checks uid and resourceVersion preconditions with 409 Conflict", async () => {
    const created = await t.request("POST", CMS, { body: configMap("pre") });
    const uid = await t.request("DELETE", `${CMS}/pre`, { body: { preconditions: { uid: "not-the-uid" } } });
    expect(uid.status).toBe(409);
    expect(uid.body.message).toBe(
      `Operation cannot be fulfilled on ConfigMap "pre": the UID in the precondition (not-the-uid) does not match the UID in record (${created.body.metadata.uid}). The object might have been deleted and then recreated`,
    );
    const rv = await t.request("DELETE", `${CMS}/pre`, { body: { preconditions: { resourceVersion: "1" } } });
    expect(rv.status).toBe(409);
    const ok = await t.request("DELETE", `${CMS}/pre`, {
      body: {
        preconditions: { uid: created.body.metadata.uid, resourceVersion: created.body.metadata.resourceVersion },
      },
    });
    expect(ok.status).toBe(200);
  });

  it("deletes pods bound to a node gracefully, keeping them until a zero grace period", async () => {
    await t.request("POST", "/api/v1/namespaces/default/pods", {
      body: { metadata: { name: "bound" }, spec: { nodeName: "n1", containers: [{ name: "c", image: "x:1" }] } },
    });
    const graceful = await t.request("DELETE", "/api/v1/namespaces/default/pods/bound");
    expect(graceful.body.metadata.deletionGracePeriodSeconds).toBe(30);
    expect((await t.request("GET", "/api/v1/namespaces/default/pods/bound")).status).toBe(200);
    const now = await t.request("DELETE", "/api/v1/namespaces/default/pods/bound?gracePeriodSeconds=0");
    expect(now.status).toBe(200);
    expect((await t.request("GET", "/api/v1/namespaces/default/pods/bound")).status).toBe(404);
  });

  it("deletecollection deletes what the selector matches and answers with the List", async () => {
    await t.request("POST", "/api/v1/namespaces", { body: { metadata: { name: "dc" } } });
    const base = "/api/v1/namespaces/dc/configmaps";
    await t.request("POST", base, { body: configMap("k1", {}, { labels: { del: "yes" } }) });
    await t.request("POST", base, { body: configMap("k2", {}, { labels: { del: "yes" } }) });
    await t.request("POST", base, { body: configMap("keep") });
    const res = await t.request("DELETE", `${base}?labelSelector=del%3Dyes`);
    expect(res.status).toBe(200);
    expect(res.body.kind).toBe("ConfigMapList");
    expect(res.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual(["k1", "k2"]);
    const left = await t.request("GET", base);
    expect(left.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual(["keep"]);
  });
});

describe("graceful deletion", () => {
  const PODS = "/api/v1/namespaces/default/pods";
  const pod = (name: string) => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name },
    // Scheduled: the pod strategy deletes unscheduled pods at once, whatever the grace period.
    spec: { nodeName: "node-1", containers: [{ name: "c", image: "nginx" }] },
  });

  it("keeps a pod in its grace period through status writes, and deletes it once deleted with grace 0", async () => {
    await t.request("POST", PODS, { body: pod("graceful") });
    const marked = await t.request("DELETE", `${PODS}/graceful`, { body: { gracePeriodSeconds: 30 } });
    expect(marked.status).toBe(200);
    expect(marked.body.metadata.deletionTimestamp).toBeDefined();
    expect(marked.body.metadata.deletionGracePeriodSeconds).toBe(30);

    // A kubelet reporting status while the pod terminates must not delete it (ShouldDeleteDuringUpdate).
    const status = await t.request("PATCH", `${PODS}/graceful/status`, {
      body: { status: { phase: "Succeeded" } },
      contentType: MERGE_PATCH,
    });
    expect(status.status).toBe(200);
    expect((await t.request("GET", `${PODS}/graceful`)).body.status.phase).toBe("Succeeded");

    const gone = await t.request("DELETE", `${PODS}/graceful`, { body: { gracePeriodSeconds: 0 } });
    expect(gone.status).toBe(200);
    expect((await t.request("GET", `${PODS}/graceful`)).status).toBe(404);
  });
});
