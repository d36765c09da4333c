/**
 * What admission webhooks see of a create, in kube-apiserver's order (handlers/create.go, then
 * registry store.go Create): mutating admission runs on the decoded body, before store.Create
 * generates a name from generateName, fills in uid and creationTimestamp
 * (FillObjectMetaSystemFields) and sets generation 1 (the strategy's PrepareForCreate); validating
 * admission runs after, on the prepared object, and is told the generated name.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type RawHttpCluster, startRawHttpCluster } from "../support/http.ts";
import { type RecordingWebhooks, startRecordingWebhooks } from "./support/recording-webhooks.ts";

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

/** A namespace of its own where CREATEs of `resources` go to /mutate, then /validate. */
async function namespaceWithWebhooks(apiGroup: string, resources: string): Promise<string> {
  const ns = `create-order-${++seq}`;
  expect((await t.request("POST", "/api/v1/namespaces", { body: { metadata: { name: ns } } })).status).toBe(201);
  const webhook = (path: string) => ({
    name: `${path.slice(1)}.${ns}.capstan.test`,
    admissionReviewVersions: ["v1"],
    sideEffects: "None",
    clientConfig: { url: `${hooks.url}${path}`, caBundle: hooks.caBundle },
    rules: [{ apiGroups: [apiGroup], apiVersions: ["v1"], operations: ["CREATE"], resources: [resources] }],
    namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": ns } },
  });
  for (const [plural, path] of [
    ["mutatingwebhookconfigurations", "/mutate"],
    ["validatingwebhookconfigurations", "/validate"],
  ] as const) {
    const res = await t.request("POST", `/apis/admissionregistration.k8s.io/v1/${plural}`, {
      body: { metadata: { name: ns }, webhooks: [webhook(path)] },
    });
    expect(res.status, res.text).toBe(201);
  }
  return ns;
}

describe("a create as admission webhooks see it", () => {
  it("reaches mutating webhooks without uid, creationTimestamp or a generated name; validating ones with them", async () => {
    const ns = await namespaceWithWebhooks("", "configmaps");
    const res = await t.request("POST", `/api/v1/namespaces/${ns}/configmaps`, {
      body: { apiVersion: "v1", kind: "ConfigMap", metadata: { generateName: "gen-" }, data: { a: "1" } },
    });
    expect(res.status, res.text).toBe(201);
    const stored = res.body.metadata;
    expect(stored.name).toMatch(/^gen-[a-z0-9]{5}$/);

    const [mutating] = hooks.requestsTo("/mutate");
    expect(mutating.name).toBeUndefined();
    expect(mutating.object.metadata).toMatchObject({ generateName: "gen-", namespace: ns });
    for (const field of ["name", "uid", "creationTimestamp"])
      expect(mutating.object.metadata).not.toHaveProperty(field);

    const [validating] = hooks.requestsTo("/validate");
    expect(validating.name).toBe(stored.name);
    expect(validating.object.metadata).toMatchObject({
      name: stored.name,
      generateName: "gen-",
      uid: stored.uid,
      creationTimestamp: stored.creationTimestamp,
    });
  });

  it("reaches mutating webhooks with the generation the client sent, validating ones with generation 1", async () => {
    const ns = await namespaceWithWebhooks("apps", "deployments");
    const labels = { app: "web" };
    const res = await t.request("POST", `/apis/apps/v1/namespaces/${ns}/deployments`, {
      body: {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "web", generation: 7 },
        spec: {
          selector: { matchLabels: labels },
          template: { metadata: { labels }, spec: { containers: [{ name: "web", image: "nginx" }] } },
        },
      },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body.metadata.generation).toBe(1);
    const [mutating] = hooks.requestsTo("/mutate");
    expect(mutating.object.metadata.generation).toBe(7);
    expect(mutating.object.metadata).not.toHaveProperty("uid");
    const [validating] = hooks.requestsTo("/validate");
    expect(validating.object.metadata).toMatchObject({ generation: 1, uid: res.body.metadata.uid });
  });
});
