import { describe, expect, it } from "vitest";
import { fileFixture } from "../support/file-fixture.ts";
import { configMap, startRawHttpCluster } from "./support/http.ts";

// REST semantics alone: no controllers writing meanwhile.
const t = fileFixture(() => startRawHttpCluster({ builtinPlugins: false }));

const CMS = "/api/v1/namespaces/default/configmaps";

describe("create", () => {
  it("fills uid, creationTimestamp and resourceVersion, and answers 201 with the stored object", async () => {
    const res = await t.request("POST", CMS, { body: configMap("created", { a: "1" }) });
    expect(res.status).toBe(201);
    const meta = res.body.metadata;
    expect(meta.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(meta.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(meta.resourceVersion).toMatch(/^\d+$/);
    expect(meta.namespace).toBe("default");
    expect(meta.generation).toBeUndefined();
    const got = await t.request("GET", `${CMS}/created`);
    expect(got.body).toEqual(res.body);
  });

  it("names objects from generateName with a 5-character random suffix", async () => {
    const res = await t.request("POST", CMS, { body: { metadata: { generateName: "gen-" }, data: {} } });
    expect(res.status).toBe(201);
    expect(res.body.metadata.name).toMatch(/^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(res.body.kind).toBe("ConfigMap");
    expect(res.body.apiVersion).toBe("v1");
  });

  it("answers a second create of the same name with 409 AlreadyExists", async () => {
    await t.request("POST", CMS, { body: configMap("dup") });
    const res = await t.request("POST", CMS, { body: configMap("dup") });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: 'configmaps "dup" already exists',
      reason: "AlreadyExists",
      details: { name: "dup", kind: "configmaps" },
      code: 409,
    });
  });

  it("rejects an invalid name with 422 Invalid naming metadata.name", async () => {
    const res = await t.request("POST", CMS, { body: configMap("Bad_Name") });
    expect(res.status).toBe(422);
    expect(res.body.reason).toBe("Invalid");
    expect(res.body.message).toMatch(
      /^ConfigMap "Bad_Name" is invalid: metadata\.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/,
    );
    expect(res.body.details.causes[0].field).toBe("metadata.name");
    expect(res.body.details.kind).toBe("ConfigMap");
  });

  it("requires a name or generateName", async () => {
    const res = await t.request("POST", CMS, { body: { data: {} } });
    expect(res.status).toBe(422);
    expect(res.body.details.causes[0].field).toBe("metadata.name");
  });

  it("refuses creates into a missing namespace with 404 namespaces not found", async () => {
    const res = await t.request("POST", "/api/v1/namespaces/nowhere/configmaps", { body: configMap("x") });
    expect(res.status).toBe(404);
    expect(res.body.message).toBe('namespaces "nowhere" not found');
    expect(res.body.details).toEqual({ name: "nowhere", kind: "namespaces" });
  });

  it("refuses creates into a terminating namespace with 403 Forbidden", async () => {
    // A finalizer of its own keeps the namespace Terminating while the namespace controller empties it.
    await t.request("POST", "/api/v1/namespaces", {
      body: { metadata: { name: "doomed", finalizers: ["example.com/hold"] } },
    });
    const del = await t.request("DELETE", "/api/v1/namespaces/doomed");
    expect(del.status).toBe(200);
    expect(del.body.status.phase).toBe("Terminating");
    expect(del.body.metadata.deletionTimestamp).toBeDefined();
    const res = await t.request("POST", "/api/v1/namespaces/doomed/configmaps", { body: configMap("late") });
    expect(res.status).toBe(403);
    expect(res.body.reason).toBe("Forbidden");
    expect(res.body.message).toBe(
      'configmaps "late" is forbidden: unable to create new content in namespace doomed because it is being terminated',
    );
  });

  it("rejects a body whose namespace differs from the URL's with 400", async () => {
    const res = await t.request("POST", CMS, { body: configMap("x", {}, { namespace: "kube-system" }) });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe(
      "the namespace of the provided object does not match the namespace sent on the request",
    );
  });

  it("accepts YAML bodies and answers malformed YAML with 400", async () => {
    const ok = await t.request("POST", CMS, {
      raw: "metadata:\n  name: from-yaml\ndata:\n  k: v\n",
      contentType: "application/yaml",
    });
    expect(ok.status).toBe(201);
    expect(ok.body.data).toEqual({ k: "v" });
    const bad = await t.request("POST", CMS, { raw: "metadata: [unclosed\n", contentType: "application/yaml" });
    expect(bad.status).toBe(400);
    expect(bad.body.reason).toBe("BadRequest");
  });

  it("answers an unsupported content type with 415", async () => {
    const res = await t.request("POST", CMS, { raw: "x", contentType: "text/plain" });
    expect(res.status).toBe(415);
    expect(res.body.reason).toBe("UnsupportedMediaType");
  });

  it("defaults pods to phase Pending and namespaces to Active with the kubernetes finalizer", async () => {
    const pod = await t.request("POST", "/api/v1/namespaces/default/pods", {
      body: {
        metadata: { name: "p" },
        spec: { containers: [{ name: "c", image: "nginx:1.27" }] },
        status: { phase: "Running" },
      },
    });
    expect(pod.status).toBe(201);
    expect(pod.body.status.phase).toBe("Pending");
    expect(pod.body.spec.restartPolicy).toBe("Always");
    const ns = await t.request("POST", "/api/v1/namespaces", { body: { metadata: { name: "fresh" } } });
    expect(ns.body.status.phase).toBe("Active");
    expect(ns.body.spec.finalizers).toEqual(["kubernetes"]);
    expect(ns.body.metadata.labels["kubernetes.io/metadata.name"]).toBe("fresh");
  });
});

describe("update", () => {
  it("gives every write a new, strictly greater resourceVersion", async () => {
    const created = await t.request("POST", CMS, { body: configMap("u1", { a: "1" }) });
    const obj = created.body;
    obj.data = { a: "2" };
    const updated = await t.request("PUT", `${CMS}/u1`, { body: obj });
    expect(updated.status).toBe(200);
    expect(Number(updated.body.metadata.resourceVersion)).toBeGreaterThan(Number(obj.metadata.resourceVersion));
    expect(updated.body.data).toEqual({ a: "2" });
  });

  it("answers a stale resourceVersion with 409 Conflict and the real message", async () => {
    const created = await t.request("POST", CMS, { body: configMap("x", { a: "1" }) });
    const stale = structuredClone(created.body);
    created.body.data = { a: "2" };
    expect((await t.request("PUT", `${CMS}/x`, { body: created.body })).status).toBe(200);
    stale.data = { a: "3" };
    const res = await t.request("PUT", `${CMS}/x`, { body: stale });
    expect(res.status).toBe(409);
    expect(res.body.reason).toBe("Conflict");
    expect(res.body.message).toBe(
      'Operation cannot be fulfilled on configmaps "x": the object has been modified; please apply your changes to the latest version and try again',
    );
    expect(res.body.details).toEqual({ name: "x", kind: "configmaps" });
  });

  it("does not write when nothing changed (same resourceVersion back)", async () => {
    const created = await t.request("POST", CMS, { body: configMap("noop", { a: "1" }) });
    const again = await t.request("PUT", `${CMS}/noop`, { body: created.body });
    expect(again.status).toBe(200);
    expect(again.body.metadata.resourceVersion).toBe(created.body.metadata.resourceVersion);
  });

  it("keeps uid and creationTimestamp, and rejects a changed uid as immutable", async () => {
    const created = await t.request("POST", CMS, { body: configMap("imm") });
    const body = structuredClone(created.body);
    delete body.metadata.uid;
    body.metadata.creationTimestamp = "2000-01-01T00:00:00Z";
    body.data = { b: "1" };
    const res = await t.request("PUT", `${CMS}/imm`, { body });
    expect(res.body.metadata.uid).toBe(created.body.metadata.uid);
    expect(res.body.metadata.creationTimestamp).toBe(created.body.metadata.creationTimestamp);
    // A PUT's uid is a precondition (409, preconditions.test.ts); a patch reaches the immutability check.
    const bad = await t.request("PATCH", `${CMS}/imm`, {
      body: { metadata: { uid: "00000000-0000-0000-0000-000000000000" } },
      contentType: "application/merge-patch+json",
    });
    expect(bad.status).toBe(422);
    expect(bad.body.details.causes).toContainEqual(expect.objectContaining({ field: "metadata.uid" }));
  });

  it("answers 400 when the body's name differs from the URL's and 404 for a missing object", async () => {
    const created = await t.request("POST", CMS, { body: configMap("named") });
    const res = await t.request("PUT", `${CMS}/other`, { body: created.body });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe("the name of the object (named) does not match the name on the URL (other)");
    const missing = await t.request("PUT", `${CMS}/ghost`, { body: configMap("ghost") });
    expect(missing.status).toBe(404);
    expect(missing.body.message).toBe('configmaps "ghost" not found');
  });
});

describe("get", () => {
  it("answers a missing object with 404 NotFound naming the group-qualified resource", async () => {
    const res = await t.request("GET", "/apis/apps/v1/namespaces/default/deployments/missing");
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: 'deployments.apps "missing" not found',
      reason: "NotFound",
      details: { name: "missing", group: "apps", kind: "deployments" },
      code: 404,
    });
  });
});
