/**
 * Webhook configurations and admission policies are stored with admissionregistration/v1's scheme
 * defaults (pkg/apis/admissionregistration/v1/defaults.go and its generated SetObjectDefaults_*), as
 * kube-apiserver stores them: a GET shows what the webhooks will be called with.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RawHttpCluster, startRawHttpCluster } from "../support/http.ts";

const GROUP = "/apis/admissionregistration.k8s.io/v1";

let t: RawHttpCluster;
beforeAll(async () => {
  t = await startRawHttpCluster();
});
afterAll(async () => {
  await t?.stop();
});

/** A webhook with only what validation requires, calling a Service without a port. */
const bareWebhook = (name: string) => ({
  name,
  sideEffects: "None",
  admissionReviewVersions: ["v1"],
  clientConfig: { service: { namespace: "ops", name: "hooks" } },
  rules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["configmaps"] }],
});

const webhookDefaults = {
  failurePolicy: "Fail",
  matchPolicy: "Equivalent",
  namespaceSelector: {},
  objectSelector: {},
  timeoutSeconds: 10,
  clientConfig: { service: { namespace: "ops", name: "hooks", port: 443 } },
  rules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["configmaps"], scope: "*" }],
};

describe("admissionregistration/v1 defaults", () => {
  it("stores a validating webhook with failurePolicy, matchPolicy, selectors, timeout, port and rule scope", async () => {
    const created = await t.request("POST", `${GROUP}/validatingwebhookconfigurations`, {
      body: { metadata: { name: "validating-defaults" }, webhooks: [bareWebhook("v.capstan.test")] },
    });
    expect(created.status, created.text).toBe(201);
    const got = await t.request("GET", `${GROUP}/validatingwebhookconfigurations/validating-defaults`);
    expect(got.body.webhooks).toEqual([{ ...bareWebhook("v.capstan.test"), ...webhookDefaults }]);
    expect(got.body.webhooks[0]).not.toHaveProperty("reinvocationPolicy");
  });

  it("stores a mutating webhook with reinvocationPolicy Never too, and defaults again on update", async () => {
    const created = await t.request("POST", `${GROUP}/mutatingwebhookconfigurations`, {
      body: { metadata: { name: "mutating-defaults" }, webhooks: [bareWebhook("m.capstan.test")] },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body.webhooks).toEqual([
      { ...bareWebhook("m.capstan.test"), ...webhookDefaults, reinvocationPolicy: "Never" },
    ]);
    // A PUT leaving the defaulted fields out gets them again; its own timeout is kept.
    const updated = await t.request("PUT", `${GROUP}/mutatingwebhookconfigurations/mutating-defaults`, {
      body: {
        metadata: { name: "mutating-defaults", resourceVersion: created.body.metadata.resourceVersion },
        webhooks: [{ ...bareWebhook("m.capstan.test"), timeoutSeconds: 5 }],
      },
    });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body.webhooks[0]).toMatchObject({
      failurePolicy: "Fail",
      reinvocationPolicy: "Never",
      timeoutSeconds: 5,
    });
    expect(updated.body.metadata.generation).toBe(2);
  });

  it("gives an admission policy's and binding's rules the scope *", async () => {
    const rule = { apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["configmaps"] };
    const policy = await t.request("POST", `${GROUP}/validatingadmissionpolicies`, {
      body: {
        metadata: { name: "scoped" },
        spec: {
          matchConstraints: { resourceRules: [rule], excludeResourceRules: [rule] },
          validations: [{ expression: "true" }],
        },
      },
    });
    expect(policy.status, policy.text).toBe(201);
    expect(policy.body.spec.matchConstraints.resourceRules).toEqual([{ ...rule, scope: "*" }]);
    expect(policy.body.spec.matchConstraints.excludeResourceRules).toEqual([{ ...rule, scope: "*" }]);
    const binding = await t.request("POST", `${GROUP}/validatingadmissionpolicybindings`, {
      body: {
        metadata: { name: "scoped" },
        spec: { policyName: "scoped", validationActions: ["Deny"], matchResources: { resourceRules: [rule] } },
      },
    });
    expect(binding.status, binding.text).toBe(201);
    expect(binding.body.spec.matchResources.resourceRules).toEqual([{ ...rule, scope: "*" }]);
  });
});
