/**
 * The CEL parts of admission on the embedded API server, driven with the real kubectl: a
 * ValidatingAdmissionPolicy applied from YAML denies (kubectl prints the policy's message) or warns
 * (kubectl prints `Warning:`), and a webhook's matchConditions decide whether it is called.
 */
import { startTestCluster } from "capstan-dev/testing";
import { describe, expect, it } from "vitest";
import { fileFixture } from "../../support/file-fixture.ts";

const cluster = fileFixture(() => startTestCluster());

const POLICY = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: colour-required
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
      - apiGroups: [""]
        apiVersions: ["v1"]
        operations: ["CREATE", "UPDATE"]
        resources: ["configmaps"]
  validations:
    - expression: "has(object.data) && 'colour' in object.data"
      messageExpression: "'configmap ' + object.metadata.name + ' needs a colour'"
      reason: Forbidden
`;

const binding = (name: string, namespace: string, action: string) => `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: ${name}
spec:
  policyName: colour-required
  validationActions: [${action}]
  matchResources:
    namespaceSelector:
      matchLabels:
        kubernetes.io/metadata.name: ${namespace}
`;

describe("ValidatingAdmissionPolicy with kubectl", () => {
  it("denies with the policy's message under Deny, and warns under Warn", async () => {
    for (const ns of ["strict", "lenient", "free"])
      expect((await cluster.kubectl(["create", "namespace", ns])).code).toBe(0);
    const applied = await cluster.kubectl(["apply", "-f", "-"], {
      stdin: [POLICY, binding("colour-deny", "strict", "Deny"), binding("colour-warn", "lenient", "Warn")].join(
        "\n---\n",
      ),
    });
    expect(applied.stderr).toBe("");
    expect(applied.code).toBe(0);

    const denied = await cluster.kubectl(["create", "configmap", "plain", "-n", "strict"]);
    expect(denied.code).not.toBe(0);
    expect(denied.stderr).toBe(
      `error: failed to create configmap: configmaps "plain" is forbidden: ValidatingAdmissionPolicy 'colour-required' with binding 'colour-deny' denied request: configmap plain needs a colour\n`,
    );
    expect(
      (await cluster.kubectl(["create", "configmap", "red", "-n", "strict", "--from-literal=colour=red"])).code,
    ).toBe(0);

    const warned = await cluster.kubectl(["create", "configmap", "plain", "-n", "lenient"]);
    expect(warned.code).toBe(0);
    expect(warned.stderr).toBe(
      "Warning: Validation failed for ValidatingAdmissionPolicy 'colour-required' with binding 'colour-warn': configmap plain needs a colour\n",
    );

    const free = await cluster.kubectl(["create", "configmap", "plain", "-n", "free"]);
    expect(free.code).toBe(0);
    expect(free.stderr).toBe("");
  });
});

describe("webhook matchConditions", () => {
  /** A validating webhook nobody serves (port 1 refuses), called only when its matchConditions hold. */
  const webhook = (expression: string, failurePolicy: string) => ({
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingWebhookConfiguration",
    metadata: { name: "nobody-home" },
    webhooks: [
      {
        name: "nobody.home.example.com",
        admissionReviewVersions: ["v1"],
        sideEffects: "None",
        failurePolicy,
        clientConfig: { url: "https://127.0.0.1:1/validate" },
        namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "conditional" } },
        rules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["configmaps"] }],
        matchConditions: [
          { name: "not-exempt", expression: "!('exempt' in object.metadata.labels)" },
          { name: "chosen", expression },
        ],
      },
    ],
  });

  it("calls the webhook only when every condition holds, and fails or skips on a condition's error by failurePolicy", async () => {
    expect((await cluster.kubectl(["create", "namespace", "conditional"])).code).toBe(0);
    const apply = (expression: string, failurePolicy = "Fail") =>
      cluster.kubectl(["apply", "-f", "-"], { stdin: JSON.stringify(webhook(expression, failurePolicy)) });
    const create = (name: string, labels: Record<string, string>) =>
      cluster.kubectl(["apply", "-n", "conditional", "-f", "-"], {
        stdin: JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, labels } }),
      });
    expect((await apply("object.metadata.labels.call == 'yes'")).code).toBe(0);

    // A false condition skips the webhook: the write goes through although nobody serves it.
    expect((await create("exempted", { exempt: "", call: "yes" })).code).toBe(0);
    expect((await create("unchosen", { call: "no" })).code).toBe(0);

    // All true: the webhook is called, and cannot be.
    const called = await create("chosen", { call: "yes" });
    expect(called.code).not.toBe(0);
    expect(called.stderr).toContain('Internal error occurred: failed calling webhook "nobody.home.example.com"');

    // A condition's evaluation error fails the write under Fail (403)...
    expect((await apply("object.metadata.labels.missing == 'yes'")).code).toBe(0);
    const failed = await create("broken", { call: "yes" });
    expect(failed.code).not.toBe(0);
    expect(failed.stderr).toContain(
      `configmaps "broken" is forbidden: expression 'object.metadata.labels.missing == 'yes'' resulted in error: no such key: missing`,
    );
    // ...and skips the webhook under Ignore.
    expect((await apply("object.metadata.labels.missing == 'yes'", "Ignore")).code).toBe(0);
    expect((await create("ignored", { call: "yes" })).code).toBe(0);
  });
});
