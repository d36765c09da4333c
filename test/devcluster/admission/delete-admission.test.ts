/**
 * The embedded API server admits DELETE requests as kube-apiserver does
 * (registry/rest/delete.go AdmissionToValidateObjectDeleteFunc, called by store.go Delete before the
 * object is marked or removed): mutating and validating webhooks and ValidatingAdmissionPolicies
 * whose rules say DELETE see no object, the stored object as oldObject, the client's DeleteOptions
 * and the requester; a denial fails the delete and nothing is deleted.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { configMap, type RawHttpCluster, startRawHttpCluster } from "../support/http.ts";
import { type RecordingWebhooks, startRecordingWebhooks } from "./support/recording-webhooks.ts";

const API = "/apis/admissionregistration.k8s.io/v1";
const CONFIGMAPS = { group: "", version: "v1", plural: "configmaps" };

let t: RawHttpCluster;
let hooks: RecordingWebhooks;
beforeAll(async () => {
  [t, hooks] = await Promise.all([startRawHttpCluster(), startRecordingWebhooks()]);
});
afterAll(async () => {
  await hooks?.stop();
  await t?.stop();
});
beforeEach(() => hooks.reset());

let seq = 0;
async function namespace(): Promise<string> {
  const name = `del-${++seq}`;
  expect((await t.request("POST", "/api/v1/namespaces", { body: { metadata: { name } } })).status).toBe(201);
  return name;
}

type Webhook = Record<string, unknown>;

/** A webhook on `ns`'s ConfigMaps for `operations`, calling `path` of the recording server. */
function webhook(ns: string, path: string, operations: string[], extra: Webhook = {}): Webhook {
  return {
    name: `${path.slice(1)}.capstan.test`,
    admissionReviewVersions: ["v1"],
    sideEffects: "None",
    clientConfig: { url: `${hooks.url}${path}`, caBundle: hooks.caBundle },
    rules: [{ apiGroups: [""], apiVersions: ["v1"], operations, resources: ["configmaps"] }],
    namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": ns } },
    ...extra,
  };
}

/** Stores a configuration of `kind` (validating or mutating) named after `ns`; returns its path for deleting it. */
async function configuration(kind: "validating" | "mutating", ns: string, webhooks: Webhook[]): Promise<string> {
  const plural = `${kind}webhookconfigurations`;
  const res = await t.request("POST", `${API}/${plural}`, { body: { metadata: { name: `${ns}-${kind}` }, webhooks } });
  expect(res.status, res.text).toBe(201);
  return `${API}/${plural}/${ns}-${kind}`;
}

async function createConfigMap(ns: string, name: string, labels: Record<string, string> = {}) {
  const res = await t.request("POST", `/api/v1/namespaces/${ns}/configmaps`, {
    body: configMap(name, { k: "v" }, { labels }),
  });
  expect(res.status, res.text).toBe(201);
  return res.body as { metadata: { uid: string; resourceVersion: string } };
}

const exists = async (ns: string, name: string) =>
  (await t.request("GET", `/api/v1/namespaces/${ns}/configmaps/${name}`)).status === 200;

/** Denies the deletion of objects labelled protected=yes, as an operator guarding them would. */
const guard = (request: { oldObject?: { metadata?: { labels?: Record<string, string> } } }) =>
  request.oldObject?.metadata?.labels?.["protected"] === "yes"
    ? { allowed: false, status: { code: 403, reason: "Forbidden", message: "it is protected" } }
    : {};

describe("DELETE admission by webhooks", () => {
  it("sends a DELETE's review: no object, the stored object as oldObject, the client's DeleteOptions and the requester", async () => {
    const ns = await namespace();
    await configuration("validating", ns, [webhook(ns, "/seen", ["DELETE"])]);
    const stored = await createConfigMap(ns, "doomed", { tier: "web" });
    const res = await t.request("DELETE", `/api/v1/namespaces/${ns}/configmaps/doomed`, {
      body: {
        kind: "DeleteOptions",
        apiVersion: "v1",
        gracePeriodSeconds: 5,
        preconditions: { uid: stored.metadata.uid },
        propagationPolicy: "Background",
      },
      // system:masters: allowed to delete, whoever it is.
      headers: { "Impersonate-User": "alice", "Impersonate-Group": "system:masters" },
    });
    expect(res.status, res.text).toBe(200);
    const [request, ...more] = hooks.requestsTo("/seen");
    expect(more).toEqual([]);
    expect(request).toMatchObject({
      kind: { group: "", version: "v1", kind: "ConfigMap" },
      resource: { group: "", version: "v1", resource: "configmaps" },
      name: "doomed",
      namespace: ns,
      operation: "DELETE",
      userInfo: { username: "alice", groups: expect.arrayContaining(["system:masters"]) },
      object: null,
      oldObject: { metadata: { name: "doomed", uid: stored.metadata.uid, labels: { tier: "web" } }, data: { k: "v" } },
      dryRun: false,
    });
    expect(request.options).toEqual({
      apiVersion: "meta.k8s.io/v1",
      kind: "DeleteOptions",
      gracePeriodSeconds: 5,
      preconditions: { uid: stored.metadata.uid },
      propagationPolicy: "Background",
    });
    // Creates are not sent to a webhook whose rules say DELETE only.
    expect(hooks.calls.map((c) => c.request.operation)).toEqual(["DELETE"]);
  });

  it("fails a denied DELETE with the webhook's Status and deletes nothing; a collection delete admits each object", async () => {
    const ns = await namespace();
    await configuration("validating", ns, [webhook(ns, "/guard", ["DELETE"])]);
    hooks.answer("/guard", guard);
    await createConfigMap(ns, "kept", { protected: "yes" });
    await createConfigMap(ns, "free");

    const denied = await t.request("DELETE", `/api/v1/namespaces/${ns}/configmaps/kept`);
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({
      kind: "Status",
      status: "Failure",
      reason: "Forbidden",
      code: 403,
      message: 'admission webhook "guard.capstan.test" denied the request: it is protected',
    });
    expect(await exists(ns, "kept")).toBe(true);

    const collection = await t.request("DELETE", `/api/v1/namespaces/${ns}/configmaps`);
    expect(collection.status).toBe(403);
    expect(collection.body.message).toBe('admission webhook "guard.capstan.test" denied the request: it is protected');
    expect(await exists(ns, "kept")).toBe(true);
    // Each object of the collection went to the webhook, with no name: the handler's attributes have none.
    const collected = hooks.requestsTo("/guard").slice(1);
    expect(collected.map((r) => [r.name, r.oldObject.metadata.name])).toContainEqual([undefined, "kept"]);
    expect(collected.every((r) => r.operation === "DELETE" && r.namespace === ns)).toBe(true);
  });

  it("admits a dry-run DELETE with dryRun true (query or body) and keeps the object; a webhook with side effects is a 400", async () => {
    const ns = await namespace();
    const config = await configuration("validating", ns, [webhook(ns, "/dry", ["DELETE"])]);
    await createConfigMap(ns, "tried");
    const byQuery = await t.request("DELETE", `/api/v1/namespaces/${ns}/configmaps/tried?dryRun=All`);
    expect(byQuery.status, byQuery.text).toBe(200);
    // kubectl delete --dry-run=server sends it in the body.
    const byBody = await t.request("DELETE", `/api/v1/namespaces/${ns}/configmaps/tried`, {
      body: { kind: "DeleteOptions", apiVersion: "v1", dryRun: ["All"] },
    });
    expect(byBody.status, byBody.text).toBe(200);
    expect(await exists(ns, "tried")).toBe(true);
    expect(hooks.requestsTo("/dry").map((r) => [r.dryRun, r.options.dryRun])).toEqual([
      [true, ["All"]],
      [true, ["All"]],
    ]);

    expect((await t.request("DELETE", config)).status).toBe(200);
    await configuration("validating", ns, [webhook(ns, "/dry", ["DELETE"], { sideEffects: "Some" })]);
    const refused = await t.request("DELETE", `/api/v1/namespaces/${ns}/configmaps/tried?dryRun=All`);
    expect(refused.status).toBe(400);
    expect(refused.body.message).toBe('admission webhook "dry.capstan.test" does not support dry run');
    expect(await exists(ns, "tried")).toBe(true);
  });

  it("selects by objectSelector on the stored object's labels", async () => {
    const ns = await namespace();
    await configuration("validating", ns, [
      webhook(ns, "/labelled", ["DELETE"], { objectSelector: { matchLabels: { watched: "yes" } } }),
    ]);
    await createConfigMap(ns, "watched", { watched: "yes" });
    await createConfigMap(ns, "ignored");
    expect((await t.request("DELETE", `/api/v1/namespaces/${ns}/configmaps/watched`)).status).toBe(200);
    expect((await t.request("DELETE", `/api/v1/namespaces/${ns}/configmaps/ignored`)).status).toBe(200);
    expect(hooks.requestsTo("/labelled").map((r) => r.oldObject.metadata.name)).toEqual(["watched"]);
  });

  it("calls mutating webhooks on DELETE: they may deny, and a patch fails the delete as kube-apiserver refuses it", async () => {
    const ns = await namespace();
    await configuration("mutating", ns, [webhook(ns, "/mutating", ["DELETE"], { reinvocationPolicy: "IfNeeded" })]);
    await createConfigMap(ns, "patched");
    await createConfigMap(ns, "guarded", { protected: "yes" });
    await createConfigMap(ns, "plain");
    hooks.answer("/mutating", (request) => {
      if (request.oldObject.metadata.name === "patched") return { patch: [{ op: "add", path: "/data/x", value: "y" }] };
      if (request.oldObject.metadata.name === "plain") return { patch: [] };
      return guard(request);
    });

    const patched = await t.request("DELETE", `/api/v1/namespaces/${ns}/configmaps/patched`);
    expect(patched.status).toBe(500);
    expect(patched.body.message).toBe(
      'Internal error occurred: admission webhook "mutating.capstan.test" attempted to modify the object, which is not supported for this operation',
    );
    expect(await exists(ns, "patched")).toBe(true);
    const guarded = await t.request("DELETE", `/api/v1/namespaces/${ns}/configmaps/guarded`);
    expect(guarded.status).toBe(403);
    expect(await exists(ns, "guarded")).toBe(true);
    expect((await t.request("DELETE", `/api/v1/namespaces/${ns}/configmaps/plain`)).status).toBe(200);
    expect(hooks.requestsTo("/mutating").map((r) => [r.operation, r.object, r.oldObject.metadata.name])).toEqual([
      ["DELETE", null, "patched"],
      ["DELETE", null, "guarded"],
      ["DELETE", null, "plain"],
    ]);
  });

  it("passes a webhook's warnings on DELETE as Warning headers", async () => {
    const ns = await namespace();
    await configuration("validating", ns, [webhook(ns, "/warns", ["DELETE"])]);
    hooks.answer("/warns", () => ({ warnings: ["deleting a config map"] }));
    await createConfigMap(ns, "warned");
    const res = await t.request("DELETE", `/api/v1/namespaces/${ns}/configmaps/warned`);
    expect(res.status).toBe(200);
    expect(res.headers["warning"]).toBe('299 - "deleting a config map"');
  });

  it("admits in-process deletes (the server's controllers) with no user, as writes, and skips admission only where told", async () => {
    const ns = await namespace();
    await configuration("validating", ns, [webhook(ns, "/guard", ["DELETE"])]);
    hooks.answer("/guard", guard);
    await createConfigMap(ns, "kept", { protected: "yes" });
    const { api } = t.server.internals;
    await expect(api.delete(CONFIGMAPS, ns, "kept")).rejects.toMatchObject({
      code: 403,
      message: 'admission webhook "guard.capstan.test" denied the request: it is protected',
    });
    expect(hooks.requestsTo("/guard")[0].userInfo).toEqual({ username: "" });
    expect(await exists(ns, "kept")).toBe(true);
    // The CRD finalizer's way: straight through the storage.
    await api.delete(CONFIGMAPS, ns, "kept", { skipAdmission: true });
    expect(await exists(ns, "kept")).toBe(false);
    expect(hooks.requestsTo("/guard")).toHaveLength(1);
  });

  it("does not let a DELETE body set the server's own options", async () => {
    const ns = await namespace();
    await configuration("validating", ns, [webhook(ns, "/guard", ["DELETE"])]);
    hooks.answer("/guard", guard);
    await createConfigMap(ns, "kept", { protected: "yes" });
    const res = await t.request("DELETE", `/api/v1/namespaces/${ns}/configmaps/kept`, {
      body: { kind: "DeleteOptions", apiVersion: "v1", skipAdmission: true, requester: { username: "root" } },
    });
    expect(res.status).toBe(403);
    expect(await exists(ns, "kept")).toBe(true);
  });
});

describe("DELETE admission by ValidatingAdmissionPolicies", () => {
  it("denies a DELETE with the policy's message, reading oldObject and the request's DeleteOptions", async () => {
    const ns = await namespace();
    const policy = {
      metadata: { name: `${ns}-keep` },
      spec: {
        matchConstraints: {
          resourceRules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["DELETE"], resources: ["configmaps"] }],
        },
        validations: [
          {
            expression: "object == null && request.options.kind == 'DeleteOptions'",
            message: "a DELETE has no object",
          },
          {
            expression: "!has(oldObject.metadata.labels) || !('keep' in oldObject.metadata.labels)",
            messageExpression: "'configmap ' + oldObject.metadata.name + ' is kept'",
            reason: "Forbidden",
          },
        ],
      },
    };
    expect((await t.request("POST", `${API}/validatingadmissionpolicies`, { body: policy })).status).toBe(201);
    const binding = {
      metadata: { name: `${ns}-keep-binding` },
      spec: {
        policyName: `${ns}-keep`,
        validationActions: ["Deny"],
        matchResources: { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": ns } } },
      },
    };
    expect((await t.request("POST", `${API}/validatingadmissionpolicybindings`, { body: binding })).status).toBe(201);
    await createConfigMap(ns, "precious", { keep: "true" });
    await createConfigMap(ns, "disposable");

    const denied = await t.request("DELETE", `/api/v1/namespaces/${ns}/configmaps/precious`);
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({
      reason: "Forbidden",
      message: `configmaps "precious" is forbidden: ValidatingAdmissionPolicy '${ns}-keep' with binding '${ns}-keep-binding' denied request: configmap precious is kept`,
    });
    expect(await exists(ns, "precious")).toBe(true);
    expect((await t.request("DELETE", `/api/v1/namespaces/${ns}/configmaps/disposable`)).status).toBe(200);
    expect(await exists(ns, "disposable")).toBe(false);
  });
});
