/**
 * `capstan generate webhooks` (and `all`): the configurations of an operator's admission handlers
 * with exactly their rules, the Service, the serving certificate (cert-manager, or a given CA), and
 * the Deployment's webhook port and certificate volume.
 */
import { startTestCluster } from "capstan-dev/testing";
import type { Deployment } from "kubernetes-types/apps/v1.d.ts";
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { generate } from "../../packages/capstan/src/cli/generate.ts";
import { operator } from "../../packages/capstan/src/operator/index.ts";
import { defineResource } from "../../packages/capstan/src/resources/define-resource.ts";
import { createServingCertificates } from "../../packages/capstan-dev/src/devcluster/tls.ts";
import { fileFixture } from "../support/file-fixture.ts";

const project = new URL("fixtures/project", import.meta.url).pathname;

const Machine = defineResource({
  group: "useless.container.training",
  version: "v1alpha1",
  kind: "Machine",
  scope: "Namespaced",
  spec: Type.Object({ switchPosition: Type.String() }),
});

const op = operator({ name: "useless" });
op.on.validate(Machine, { operations: ["CREATE", "UPDATE", "DELETE"], timeout: "5s" }, function position() {});
op.on.mutate(
  Machine,
  { failurePolicy: "Ignore", namespaceSelector: { matchLabels: { team: "a" } }, reinvocationPolicy: "IfNeeded" },
  function createdBy() {},
);

type Doc = {
  kind: string;
  metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
} & Record<string, unknown>;
const docs = (text: string): Doc[] => parseAllDocuments(text).map((d) => d.toJS() as Doc);
const options = { namespace: "useless-system", leaderElect: false };

const cluster = fileFixture(() => startTestCluster());

describe("capstan generate webhooks", () => {
  it("writes each handler's configuration with its rules, a Service, and a cert-manager certificate injected as CA", () => {
    const out = docs(generate("webhooks", op, "src/operator.ts", options, project));
    expect(out.map((d) => `${d.kind}/${d.metadata.name}`)).toEqual([
      "Namespace/useless-system",
      "Issuer/useless-selfsigned-issuer",
      "Certificate/useless-serving-cert",
      "Service/useless-webhook",
      "MutatingWebhookConfiguration/useless-mutating",
      "ValidatingWebhookConfiguration/useless-validating",
    ]);
    const byKind = Object.fromEntries(out.map((d) => [d.kind, d]));
    expect(byKind.Certificate?.spec).toEqual({
      dnsNames: ["useless-webhook.useless-system.svc", "useless-webhook.useless-system.svc.cluster.local"],
      issuerRef: { kind: "Issuer", name: "useless-selfsigned-issuer" },
      secretName: "useless-webhook-server-cert",
    });
    expect(byKind.Service?.spec).toEqual({
      ports: [{ name: "webhook", port: 443, protocol: "TCP", targetPort: "webhook" }],
      selector: { "app.kubernetes.io/name": "useless" },
    });
    const validating = byKind.ValidatingWebhookConfiguration as Doc & { webhooks: Record<string, unknown>[] };
    expect(validating.metadata.annotations).toEqual({
      "cert-manager.io/inject-ca-from": "useless-system/useless-serving-cert",
    });
    expect(validating.webhooks).toEqual([
      {
        name: "position.machines.useless.capstan.dev",
        admissionReviewVersions: ["v1"],
        clientConfig: {
          service: {
            name: "useless-webhook",
            namespace: "useless-system",
            path: "/validate-useless-container-training-v1alpha1-machine-position",
            port: 443,
          },
        },
        rules: [
          {
            apiGroups: ["useless.container.training"],
            apiVersions: ["v1alpha1"],
            operations: ["CREATE", "UPDATE", "DELETE"],
            resources: ["machines"],
            scope: "Namespaced",
          },
        ],
        failurePolicy: "Fail",
        matchPolicy: "Equivalent",
        sideEffects: "None",
        timeoutSeconds: 5,
      },
    ]);
    const mutating = byKind.MutatingWebhookConfiguration as Doc & { webhooks: Record<string, unknown>[] };
    expect(mutating.webhooks[0]).toMatchObject({
      name: "createdby.machines.useless.capstan.dev",
      failurePolicy: "Ignore",
      timeoutSeconds: 10,
      namespaceSelector: { matchLabels: { team: "a" } },
      reinvocationPolicy: "IfNeeded",
      rules: [{ operations: ["CREATE", "UPDATE"] }],
    });
  });

  it("gives the Deployment the webhook port and the certificate Secret where the server reads it", () => {
    const out = docs(generate("all", op, "src/operator.ts", options, project));
    const deployment = out.find((d) => d.kind === "Deployment") as unknown as Deployment;
    const pod = deployment.spec?.template.spec;
    expect(pod?.containers[0]?.ports).toContainEqual({ name: "webhook", containerPort: 9443, protocol: "TCP" });
    expect(pod?.containers[0]?.volumeMounts).toContainEqual({
      name: "webhook-certs",
      mountPath: "/tmp/k8s-webhook-server/serving-certs",
      readOnly: true,
    });
    expect(pod?.volumes).toContainEqual({
      name: "webhook-certs",
      secret: { secretName: "useless-webhook-server-cert" },
    });
  });

  it("writes a given CA into the configurations instead of cert-manager objects, and kubectl applies them", async () => {
    const { caPem } = await createServingCertificates();
    const text = generate("webhooks", op, "src/operator.ts", { ...options, caBundle: caPem }, project);
    const out = docs(text);
    expect(out.map((d) => d.kind)).toEqual([
      "Namespace",
      "Service",
      "MutatingWebhookConfiguration",
      "ValidatingWebhookConfiguration",
    ]);
    const validating = out.at(-1) as Doc & { webhooks: { clientConfig: { caBundle: string } }[] };
    expect(Buffer.from(validating.webhooks[0]?.clientConfig.caBundle ?? "", "base64").toString("utf8")).toBe(caPem);
    expect(validating.metadata.annotations).toBeUndefined();
    const applied = await cluster.kubectl(["apply", "-f", "-"], { stdin: text });
    expect(applied.stderr).toBe("");
    expect(applied.stdout).toContain(
      "validatingwebhookconfiguration.admissionregistration.k8s.io/useless-validating created",
    );
    expect(applied.stdout).toContain(
      "mutatingwebhookconfiguration.admissionregistration.k8s.io/useless-mutating created",
    );
  });

  it("refuses to generate webhooks for an operator without admission handlers", () => {
    expect(() => generate("webhooks", operator({ name: "plain" }), "src/operator.ts", options, project)).toThrow(
      "operator plain has no admission handlers (op.on.validate, op.on.mutate)",
    );
  });
});
