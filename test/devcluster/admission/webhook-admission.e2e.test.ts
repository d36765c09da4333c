/**
 * The embedded API server calls admission webhooks on writes, as kube-apiserver does: an operator's
 * `op.on.validate`/`op.on.mutate` handlers, registered by URL with the CA of `cluster.run(op)`,
 * deny and mutate creates and updates that kubectl and the typed client send.
 */
import { startTestCluster } from "capstan-dev/testing";
import { describe, expect, it } from "vitest";
import { isApiError } from "../../../packages/capstan/src/client/errors.ts";
import { operator } from "../../../packages/capstan/src/operator/index.ts";
import { AdmissionDenied } from "../../../packages/capstan/src/webhooks/admission.ts";
import { createServingCertificates } from "../../../packages/capstan-dev/src/devcluster/tls.ts";
import { Machine, machineCrd } from "../../operator/support/cluster.ts";
import { fileFixture } from "../../support/file-fixture.ts";

const cluster = fileFixture(() => startTestCluster({ crds: [machineCrd] }));

const NS = { group: "", version: "v1", kind: "Namespace", plural: "namespaces", namespaced: false } as const;

/** The operator of these tests: a validating and a mutating handler on Machines. */
function uselessOperator() {
  const op = operator({ name: "useless" });
  op.on.validate(Machine, function position({ obj }) {
    if (!["up", "down"].includes(obj.spec.switchPosition)) {
      throw new AdmissionDenied(`switchPosition must be up or down, not "${obj.spec.switchPosition}"`);
    }
  });
  op.on.mutate(Machine, function createdBy({ obj, userInfo, operation, warn }) {
    if (operation !== "CREATE") return;
    warn("recording who created it");
    obj.metadata.annotations = {
      ...obj.metadata.annotations,
      "useless.container.training/created-by": userInfo.username ?? "",
    };
  });
  return op;
}

/** Runs the operator with a server of its own and registers its handlers by hand under `failurePolicy`. */
async function withWebhooks(failurePolicy: "Fail" | "Ignore") {
  const op = uselessOperator();
  const certs = await createServingCertificates();
  const running = await cluster.run(op, {
    webhookServer: { port: 0, host: "127.0.0.1", tls: { cert: certs.certPem, key: certs.keyPem } },
  });
  expect(running.webhookCa).toBeUndefined(); // given a server, run registers nothing
  const caBundle = Buffer.from(certs.caPem).toString("base64");
  const hooks = op.webhooks();
  const config = (type: "validating" | "mutating") => ({
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: type === "validating" ? "ValidatingWebhookConfiguration" : "MutatingWebhookConfiguration",
    metadata: { name: `useless-${type}-${failurePolicy.toLowerCase()}` },
    webhooks: hooks
      .filter((w) => w.type === type)
      .map((w) => ({
        name: w.name,
        admissionReviewVersions: ["v1"],
        sideEffects: "None",
        failurePolicy,
        clientConfig: { url: `https://127.0.0.1:${op.webhookPort}${w.path}`, caBundle },
        rules: [
          {
            apiGroups: [Machine.group],
            apiVersions: [Machine.version],
            operations: ["CREATE", "UPDATE"],
            resources: [Machine.plural],
            scope: "Namespaced",
          },
        ],
      })),
  });
  const manifests = [config("mutating"), config("validating")];
  const applied = await cluster.kubectl(["apply", "-f", "-"], {
    stdin: manifests.map((m) => JSON.stringify(m)).join("\n"),
  });
  expect(applied.stderr).toBe("");
  return {
    running,
    remove: () => cluster.kubectl(["delete", "-f", "-"], { stdin: manifests.map((m) => JSON.stringify(m)).join("\n") }),
  };
}

describe("admission webhooks on the embedded API server", () => {
  it("denies with the webhook's message, mutates with its patch and passes its warnings, for kubectl and the client", async () => {
    await cluster.client.resource(NS).create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "hooked" } });
    // cluster.run registers the handlers' configurations by URL while the operator runs.
    const running = await cluster.run(uselessOperator());
    const listed = await cluster.kubectl([
      "get",
      "validatingwebhookconfigurations,mutatingwebhookconfigurations",
      "-o",
      "name",
    ]);
    expect(listed.stdout.split("\n").filter(Boolean).sort()).toEqual([
      "mutatingwebhookconfiguration.admissionregistration.k8s.io/useless-mutating",
      "validatingwebhookconfiguration.admissionregistration.k8s.io/useless-validating",
    ]);
    try {
      const denied = await cluster.kubectl(["apply", "-n", "hooked", "-f", "-"], {
        stdin: JSON.stringify(Machine.make({ metadata: { name: "bad" }, spec: { switchPosition: "sideways" } })),
      });
      expect(denied.code).not.toBe(0);
      expect(denied.stderr).toContain(
        'admission webhook "position.machines.useless.capstan.dev" denied the request: switchPosition must be up or down, not "sideways"',
      );

      const created = await cluster.kubectl(["create", "-n", "hooked", "-f", "-"], {
        stdin: JSON.stringify(Machine.make({ metadata: { name: "good" }, spec: { switchPosition: "up" } })),
      });
      expect(created.stderr).toBe("Warning: recording who created it\n");
      const machines = cluster.client.resource(Machine, "hooked");
      expect((await machines.get("good")).metadata.annotations).toEqual({
        "useless.container.training/created-by": "capstan-admin",
      });

      // An update is validated too (the mutating handler leaves updates alone).
      const error = await machines
        .patch("good", { spec: { switchPosition: "left" } }, { type: "merge" })
        .catch((e) => e);
      expect(isApiError(error)).toBe(true);
      expect(error.code).toBe(403);
      expect(error.message).toContain('denied the request: switchPosition must be up or down, not "left"');
      expect((await machines.get("good")).spec.switchPosition).toBe("up");
    } finally {
      await running.stop();
    }
    // ...and removes them when it stops: writes are admitted without the operator again.
    const after = await cluster.kubectl([
      "get",
      "validatingwebhookconfigurations,mutatingwebhookconfigurations",
      "-o",
      "name",
    ]);
    expect(after.stdout).toBe("");
    await cluster.client
      .resource(Machine, "hooked")
      .create(Machine.make({ metadata: { name: "free" }, spec: { switchPosition: "sideways" } }));
  });

  it("fails writes while a webhook cannot be called under failurePolicy Fail, and lets them through under Ignore", async () => {
    await cluster.client
      .resource(NS)
      .create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "unreachable" } });
    const machines = cluster.client.resource(Machine, "unreachable");
    for (const policy of ["Fail", "Ignore"] as const) {
      const { running, remove } = await withWebhooks(policy);
      await running.stop(); // the webhook server goes with the operator
      try {
        const name = `m-${policy.toLowerCase()}`;
        const result = await machines
          .create(Machine.make({ metadata: { name }, spec: { switchPosition: "sideways" } }))
          .then(
            () => "created",
            (e: { code: number; message: string }) => e,
          );
        if (policy === "Ignore") {
          expect(result).toBe("created");
        } else {
          expect(result).toMatchObject({ code: 500 });
          expect((result as { message: string }).message).toMatch(
            /^Internal error occurred: failed calling webhook "createdby.machines.useless.capstan.dev": failed to call webhook: Post "https:\/\/127\.0\.0\.1:\d+\/mutate-useless-capstan-test-v1alpha1-machine-createdby\?timeout=10s": dial tcp 127\.0\.0\.1:\d+: connect: connection refused$/,
          );
        }
      } finally {
        await remove();
      }
    }
  });
});
