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
import { ConfigMap } from "../../packages/capstan/src/resources/builtins.ts";
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

// A kind with two versions, converted by the operator (op.convert): v2 is typed (the hub), v1 is stored.
const Gadget = defineResource({
  group: "gadgets.container.training",
  kind: "Gadget",
  scope: "Namespaced",
  versions: [
    { name: "v2", spec: Type.Object({ position: Type.Optional(Type.String()) }) },
    { name: "v1", spec: Type.Object({ switchPosition: Type.Optional(Type.String()) }), storage: true },
  ],
});

/** An operator with a conversion and no admission handler; it also owns Machines, which it does not convert. */
function convertingOperator() {
  const gadgets = operator({ name: "gadgets" });
  gadgets.convert(Gadget, { v1: { toHub: (o) => o as never, fromHub: (hub) => hub as never } });
  gadgets.controller(Machine).reconcile(() => {});
  return gadgets;
}

type Crd = Doc & {
  spec: { group: string; conversion?: { strategy: string; webhook?: Record<string, unknown> } };
};

describe("capstan generate for an operator with conversions (op.convert)", () => {
  const gadgetsOptions = { namespace: "gadgets-system", leaderElect: false };

  it("writes the converted kind's CRD with conversion.strategy Webhook calling the operator's Service, its CA injected by cert-manager", () => {
    const crds = docs(generate("crds", convertingOperator(), "src/operator.ts", gadgetsOptions, project)) as Crd[];
    const gadget = crds.find((d) => d.metadata.name === Gadget.crdName);
    expect(gadget?.spec.conversion).toEqual({
      strategy: "Webhook",
      webhook: {
        clientConfig: {
          service: {
            name: "gadgets-webhook",
            namespace: "gadgets-system",
            path: "/convert-gadgets-container-training-gadget",
            port: 443,
          },
        },
        conversionReviewVersions: ["v1"],
      },
    });
    expect(gadget?.metadata.annotations).toEqual({
      "cert-manager.io/inject-ca-from": "gadgets-system/gadgets-serving-cert",
    });
    // The kind it does not convert keeps its CRD as it was.
    const machine = crds.find((d) => d.metadata.name === Machine.crdName);
    expect(machine?.spec.conversion).toBeUndefined();
    expect(machine?.metadata.annotations).toBeUndefined();
  });

  it("writes a given CA into the conversion's clientConfig instead of the annotation, and kubectl applies the CRD", async () => {
    const { caPem } = await createServingCertificates();
    const text = generate(
      "crds",
      convertingOperator(),
      "src/operator.ts",
      { ...gadgetsOptions, caBundle: caPem },
      project,
    );
    const gadget = (docs(text) as Crd[]).find((d) => d.metadata.name === Gadget.crdName);
    const webhook = gadget?.spec.conversion?.webhook as { clientConfig: { caBundle: string; service: unknown } };
    expect(Buffer.from(webhook.clientConfig.caBundle, "base64").toString("utf8")).toBe(caPem);
    expect(webhook.clientConfig.service).toMatchObject({ name: "gadgets-webhook", port: 443 });
    expect(gadget?.metadata.annotations).toBeUndefined();
    const applied = await cluster.kubectl(["apply", "-f", "-"], { stdin: text });
    expect(applied.stderr).toBe("");
    expect(applied.stdout).toContain(`customresourcedefinition.apiextensions.k8s.io/${Gadget.crdName} created`);
  });

  it("generates the Service and the serving certificate for conversions alone, with no webhook configuration", () => {
    const out = docs(generate("webhooks", convertingOperator(), "src/operator.ts", gadgetsOptions, project));
    expect(out.map((d) => `${d.kind}/${d.metadata.name}`)).toEqual([
      "Namespace/gadgets-system",
      "Issuer/gadgets-selfsigned-issuer",
      "Certificate/gadgets-serving-cert",
      "Service/gadgets-webhook",
    ]);
    expect(out.find((d) => d.kind === "Certificate")?.spec).toMatchObject({
      dnsNames: ["gadgets-webhook.gadgets-system.svc", "gadgets-webhook.gadgets-system.svc.cluster.local"],
    });
  });
});

describe("capstan generate --sharded --shard-admission", () => {
  const shardedOp = () => {
    const o = operator({ name: "useless" });
    o.controller(Machine)
      .owns(ConfigMap)
      .reconcile(async () => {});
    return o;
  };
  const sharded = { ...options, sharded: true, shardAdmission: true };

  it("writes one shard assignment webhook per ring kind and owned kind: CREATE only, unlabelled objects only, failing open fast", async () => {
    const { caPem } = await createServingCertificates();
    const text = generate("webhooks", shardedOp(), "src/operator.ts", { ...sharded, caBundle: caPem }, project);
    const out = docs(text);
    expect(out.map((d) => `${d.kind}/${d.metadata.name}`)).toEqual([
      "Namespace/useless-system",
      "Service/useless-webhook",
      "MutatingWebhookConfiguration/useless-mutating",
    ]);
    const mutating = out[2] as Doc & { webhooks: Record<string, unknown>[] };
    const selector = {
      matchExpressions: [
        { key: "shard.capstan.dev/useless", operator: "DoesNotExist" },
        { key: "drain.shard.capstan.dev/useless", operator: "DoesNotExist" },
      ],
    };
    const common = {
      admissionReviewVersions: ["v1"],
      failurePolicy: "Ignore",
      matchPolicy: "Equivalent",
      sideEffects: "None",
      timeoutSeconds: 2,
      reinvocationPolicy: "Never",
      objectSelector: selector,
    };
    expect(mutating.webhooks).toEqual([
      {
        ...common,
        name: "assign-shard.machines.useless.capstan.dev",
        clientConfig: {
          service: { name: "useless-webhook", namespace: "useless-system", port: 443, path: "/assign-shard-useless" },
          caBundle: Buffer.from(caPem).toString("base64"),
        },
        rules: [
          {
            apiGroups: [Machine.group],
            apiVersions: [Machine.version],
            operations: ["CREATE"],
            resources: ["machines"],
            scope: "Namespaced",
          },
        ],
      },
      {
        ...common,
        name: "assign-shard.configmaps.useless.capstan.dev",
        clientConfig: {
          service: { name: "useless-webhook", namespace: "useless-system", port: 443, path: "/assign-shard-useless" },
          caBundle: Buffer.from(caPem).toString("base64"),
        },
        rules: [
          {
            apiGroups: [""],
            apiVersions: ["v1"],
            operations: ["CREATE"],
            resources: ["configmaps"],
            scope: "Namespaced",
          },
        ],
      },
    ]);
    // The API server takes it as written (and defaults nothing away): a server-side dry run.
    const applied = await cluster.kubectl(["apply", "--dry-run=server", "-o", "json", "-f", "-"], { stdin: text });
    expect(applied.stderr).toBe("");
    const items = (JSON.parse(applied.stdout) as { items: (Doc & { webhooks?: Record<string, unknown>[] })[] }).items;
    const stored = items.find((d) => d.kind === "MutatingWebhookConfiguration");
    expect(stored?.webhooks?.map((w) => [w.name, w.failurePolicy, w.timeoutSeconds, w.objectSelector])).toEqual([
      ["assign-shard.machines.useless.capstan.dev", "Ignore", 2, selector],
      ["assign-shard.configmaps.useless.capstan.dev", "Ignore", 2, selector],
    ]);
  });

  it("serves the webhooks from the Deployment, which runs capstan run --sharded --shard-admission", () => {
    const all = docs(generate("deploy", shardedOp(), "src/operator.ts", sharded, project));
    const d = all.find((x) => x.kind === "Deployment") as unknown as Deployment;
    expect(d.spec?.template.spec?.containers[0]?.args).toEqual(
      expect.arrayContaining(["--sharded", "--shard-admission"]),
    );
    expect(d.spec?.template.spec?.containers[0]?.ports?.map((p) => p.name)).toContain("webhook");
  });

  it("writes no shard webhook without --shard-admission", () => {
    expect(() => generate("webhooks", shardedOp(), "src/operator.ts", { ...options, sharded: true }, project)).toThrow(
      "has no admission handlers",
    );
    const d = docs(generate("deploy", shardedOp(), "src/operator.ts", { ...options, sharded: true }, project)).find(
      (x) => x.kind === "Deployment",
    ) as unknown as Deployment;
    expect(d.spec?.template.spec?.containers[0]?.args).not.toContain("--shard-admission");
  });
});
