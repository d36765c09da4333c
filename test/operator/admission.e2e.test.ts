/**
 * `op.on.validate` and `op.on.mutate`: served over HTTPS by the operator's webhook server while it
 * runs, at paths and under names a webhook configuration can be generated from.
 */
import { request } from "node:https";
import { startTestCluster } from "capstan-dev/testing";
import { describe, expect, it } from "vitest";
import { operator } from "../../packages/capstan/src/operator/index.ts";
import { RuntimeMetrics } from "../../packages/capstan/src/runtime/metrics.ts";
import { AdmissionDenied } from "../../packages/capstan/src/webhooks/admission.ts";
import { applyJsonPatch, decodeJsonPatch } from "../../packages/capstan-dev/src/devcluster/patch/json-patch.ts";
import { createServingCertificates } from "../../packages/capstan-dev/src/devcluster/tls.ts";
import { fileFixture } from "../support/file-fixture.ts";
import { Machine, type MachineObject, machineCrd, namespace, run } from "./support/cluster.ts";

const cluster = fileFixture(() => startTestCluster({ crds: [machineCrd] }));

function review(port: number, ca: string, path: string, object: MachineObject) {
  const body = JSON.stringify({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: "u-1",
      kind: { group: "useless.capstan.test", version: "v1alpha1", kind: "Machine" },
      resource: { group: "useless.capstan.test", version: "v1alpha1", resource: "machines" },
      namespace: "ns",
      name: object.metadata.name,
      operation: "CREATE",
      userInfo: { username: "alice" },
      object,
    },
  });
  return new Promise<{ status: number; response: Record<string, unknown> }>((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path,
        method: "POST",
        ca,
        agent: false,
        headers: { "content-type": "application/json" },
      },
      (res) => {
        let text = "";
        res.on("data", (c: Buffer) => {
          text += c.toString("utf8");
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, response: JSON.parse(text).response }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const machine = (switchPosition: string): MachineObject =>
  Machine.make({ metadata: { name: "m", namespace: "ns" }, spec: { switchPosition } });

describe("admission handlers of an operator", () => {
  it("serves validate and mutate handlers while the operator runs, typed by their kind", async () => {
    const certs = await createServingCertificates();
    const op = operator({ name: "useless" });
    op.on.validate(Machine, async function position({ obj }) {
      if (!["up", "down"].includes(obj.spec.switchPosition)) {
        throw new AdmissionDenied(`switchPosition must be up or down, not "${obj.spec.switchPosition}"`);
      }
    });
    op.on.mutate(Machine, { failurePolicy: "Ignore" }, async function createdBy({ obj, userInfo }) {
      obj.metadata.annotations = {
        ...obj.metadata.annotations,
        "useless.container.training/created-by": userInfo.username ?? "",
      };
    });
    expect(op.webhooks().map((w) => [w.type, w.path, w.name, w.options.failurePolicy])).toEqual([
      [
        "validating",
        "/validate-useless-capstan-test-v1alpha1-machine-position",
        "position.machines.useless.capstan.dev",
        undefined,
      ],
      [
        "mutating",
        "/mutate-useless-capstan-test-v1alpha1-machine-createdby",
        "createdby.machines.useless.capstan.dev",
        "Ignore",
      ],
    ]);
    const [validating, mutating] = op.webhooks().map((w) => w.path) as [string, string];

    const metrics = new RuntimeMetrics();
    const running = await run(op, cluster, {
      metrics,
      healthProbePort: 0,
      bindHost: "127.0.0.1",
      webhookServer: { port: 0, host: "127.0.0.1", tls: { cert: certs.certPem, key: certs.keyPem } },
    });
    const port = op.webhookPort as number;
    try {
      expect((await review(port, certs.caPem, validating, machine("up"))).response).toEqual({
        uid: "u-1",
        allowed: true,
      });
      expect((await review(port, certs.caPem, validating, machine("sideways"))).response).toMatchObject({
        allowed: false,
        status: { code: 403, message: 'switchPosition must be up or down, not "sideways"' },
      });
      const mutated = (await review(port, certs.caPem, mutating, machine("up"))).response as { patch: string };
      const patch = JSON.parse(Buffer.from(mutated.patch, "base64").toString("utf8"));
      expect(applyJsonPatch(machine("up"), decodeJsonPatch(patch))).toMatchObject({
        metadata: { annotations: { "useless.container.training/created-by": "alice" } },
      });
      // Ready only while the webhook server serves (controller-runtime's StartedChecker).
      const ready = await fetch(`http://127.0.0.1:${op.endpoints.healthProbe}/readyz?verbose`);
      expect(await ready.text()).toContain("[+]webhook ok");
      // controller-runtime's webhook metrics, labelled by path.
      const scrape = await metrics.text();
      expect(scrape).toContain(`controller_runtime_webhook_requests_total{code="200",webhook="${validating}"} 2`);
      expect(scrape).toContain(`controller_runtime_webhook_requests_total{code="200",webhook="${mutating}"} 1`);
      expect(scrape).toContain(`controller_runtime_webhook_latency_seconds_count{webhook="${validating}"} 2`);
      expect(scrape).toContain(`controller_runtime_webhook_requests_in_flight{webhook="${validating}"} 0`);
    } finally {
      await running.stop();
    }
    // Stopped with the operator: nothing listens any more.
    await expect(review(port, certs.caPem, validating, machine("up"))).rejects.toThrow(/ECONNREFUSED/);
  });

  it("is served and registered by cluster.run(op), so the API server calls it on writes", async () => {
    await namespace(cluster, "checked");
    const op = operator({ name: "checked" });
    op.on.validate(Machine, function position({ obj }) {
      if (obj.spec.switchPosition !== "up") throw new AdmissionDenied("only up");
    });
    const running = await cluster.run(op);
    try {
      const machines = cluster.client.resource(Machine, "checked");
      const refused = await machines
        .create(Machine.make({ metadata: { name: "m" }, spec: { switchPosition: "down" } }))
        .catch((err: { code: number; message: string }) => err);
      expect(refused).toMatchObject({
        code: 403,
        message: 'admission webhook "position.machines.checked.capstan.dev" denied the request: only up',
      });
      await machines.create(Machine.make({ metadata: { name: "m" }, spec: { switchPosition: "up" } }));
    } finally {
      await running.stop();
    }
  });

  it("registers its own configurations with managedWebhooks, and deletes the one it no longer has handlers for", async () => {
    await namespace(cluster, "managed");
    const certs = await createServingCertificates();
    const tls = { cert: certs.certPem, key: certs.keyPem };
    const caBundle = Buffer.from(certs.caPem).toString("base64");
    const configs = (kind: string) =>
      cluster.client.resource({
        group: "admissionregistration.k8s.io",
        version: "v1",
        kind,
        plural: `${kind.toLowerCase()}s`,
        namespaced: false,
      });
    const first = operator({ name: "managed" });
    first.on.validate(Machine, function position({ obj }) {
      if (obj.spec.switchPosition !== "up") throw new AdmissionDenied("only up");
    });
    first.on.mutate(Machine, function noop() {});
    const running = await run(first, cluster, {
      webhookServer: { port: 0, host: "127.0.0.1", tls },
      managedWebhooks: { url: "https://127.0.0.1:{port}", caBundle },
    });
    try {
      const validating = await configs("ValidatingWebhookConfiguration").get("managed-validating");
      expect(validating).toMatchObject({
        webhooks: [
          {
            name: "position.machines.managed.capstan.dev",
            clientConfig: {
              url: `https://127.0.0.1:${first.webhookPort}/validate-useless-capstan-test-v1alpha1-machine-position`,
              caBundle,
            },
          },
        ],
      });
      const refused = await cluster.client
        .resource(Machine, "managed")
        .create(Machine.make({ metadata: { name: "m" }, spec: { switchPosition: "down" } }))
        .catch((err: { message: string }) => err.message);
      expect(refused).toBe('admission webhook "position.machines.managed.capstan.dev" denied the request: only up');
    } finally {
      await running.stop();
    }
    // The next run has only the mutating handler: the validating configuration goes.
    const second = operator({ name: "managed" });
    second.on.mutate(Machine, function noop() {});
    const again = await run(second, cluster, {
      webhookServer: { port: 0, host: "127.0.0.1", tls },
      managedWebhooks: { url: "https://127.0.0.1:{port}", caBundle },
    });
    try {
      await expect(configs("ValidatingWebhookConfiguration").get("managed-validating")).rejects.toMatchObject({
        code: 404,
      });
      const mutating = await configs("MutatingWebhookConfiguration").get("managed-mutating");
      expect(JSON.stringify(mutating)).toContain(`https://127.0.0.1:${second.webhookPort}/mutate-`);
    } finally {
      await again.stop();
      await configs("MutatingWebhookConfiguration").delete("managed-mutating");
    }
  });

  it("runs controller-runtime-style validator and defaulter objects, asking only for their operations", async () => {
    await namespace(cluster, "typed");
    const op = operator({ name: "typed" });
    const seen: string[] = [];
    op.validator(Machine, {
      validateCreate(obj) {
        seen.push(`create ${obj.metadata.name}`);
        if (obj.spec.switchPosition === "sideways") throw new AdmissionDenied("sideways is not a position");
        return obj.spec.switchPosition === "up" ? ["up will be switched off"] : undefined;
      },
      validateUpdate(oldObj, obj) {
        seen.push(`update ${oldObj.spec.switchPosition} -> ${obj.spec.switchPosition}`);
        if (oldObj.spec.switchPosition === "down" && obj.spec.switchPosition === "up") {
          throw new AdmissionDenied("a switch that is down stays down");
        }
      },
    });
    op.defaulter(Machine, {
      default(obj) {
        obj.spec.switchPosition ??= "down";
      },
    });
    expect(op.webhooks().map((w) => [w.type, w.id, w.options.operations])).toEqual([
      ["validating", "validator", ["CREATE", "UPDATE"]],
      ["mutating", "defaulter", undefined],
    ]);
    const running = await cluster.run(op);
    try {
      const machines = cluster.client.resource(Machine, "typed");
      const defaulted = await machines.create(Machine.make({ metadata: { name: "d" }, spec: {} as never }));
      expect(defaulted.spec.switchPosition).toBe("down");
      const refused = await machines
        .create(Machine.make({ metadata: { name: "s" }, spec: { switchPosition: "sideways" } }))
        .catch((err: { message: string }) => err.message);
      expect(refused).toBe(
        'admission webhook "validator.machines.typed.capstan.dev" denied the request: sideways is not a position',
      );
      const kubectl = await cluster.kubectl(["create", "-n", "typed", "-f", "-"], {
        stdin: JSON.stringify(Machine.make({ metadata: { name: "u" }, spec: { switchPosition: "up" } })),
      });
      expect(kubectl).toMatchObject({ code: 0, stderr: "Warning: up will be switched off\n" });
      const flip = await cluster.kubectl([
        "patch",
        "machine",
        "d",
        "-n",
        "typed",
        "--type=merge",
        "-p",
        '{"spec":{"switchPosition":"up"}}',
      ]);
      expect(flip.stderr).toContain(
        'admission webhook "validator.machines.typed.capstan.dev" denied the request: a switch that is down stays down',
      );
      expect(seen).toEqual(["create d", "create s", "create u", "update down -> up"]);
    } finally {
      await running.stop();
    }
    expect(() => operator({ name: "empty" }).validator(Machine, {})).toThrow(
      "a validator needs at least one of validateCreate, validateUpdate, validateDelete",
    );
  });

  it("refuses two handlers of one kind with one id, and a timeout the API server would not accept", () => {
    const op = operator({ name: "strict" });
    op.on.validate(Machine, { id: "check" }, () => {});
    expect(() => op.on.validate(Machine, { id: "check" }, () => {})).toThrow(
      /two validate handlers share the id "check"/,
    );
    op.on.mutate(Machine, { id: "check" }, () => {});
    expect(() => op.on.validate(Machine, { id: "slow", timeout: "45s" }, () => {})).toThrow(
      /timeout must be from 1 s to 30 s/,
    );
  });
});
