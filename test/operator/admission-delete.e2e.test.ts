/**
 * Admission as kube-apiserver calls it, end to end with an operator and the real kubectl: an
 * operator's `op.on.validate(Kind, { operations: ["DELETE"] }, fn)` served and registered by
 * `cluster.run(op)` refuses `kubectl delete` of a protected object, a ValidatingAdmissionPolicy
 * with `operations: [DELETE]` refuses one with its message, and mutating handlers with
 * `reinvocationPolicy: IfNeeded` are called again after a later handler changed the object.
 */

import { startTestCluster } from "capstan-dev/testing";
import { describe, expect, it } from "vitest";
import { operator } from "../../packages/capstan/src/operator/index.ts";
import { type AdmissionContext, AdmissionDenied } from "../../packages/capstan/src/webhooks/admission.ts";
import { fileFixture } from "../support/file-fixture.ts";
import { Machine, type MachineObject, machineCrd, namespace } from "./support/cluster.ts";

const cluster = fileFixture(() => startTestCluster({ crds: [machineCrd] }));

const machineYaml = (name: string, labels: Record<string, string> = {}) =>
  JSON.stringify(Machine.make({ metadata: { name, labels }, spec: { switchPosition: "up" } }));

describe("admission of DELETE and reinvocation, with an operator and kubectl", () => {
  it("refuses kubectl delete of a protected object with the handler's message and keeps it", async () => {
    const ns = await namespace(cluster, "guarded");
    const seen: Pick<AdmissionContext<MachineObject>, "operation" | "obj" | "oldObj" | "userInfo">[] = [];
    const op = operator({ name: "guard" });
    op.on.validate(Machine, { operations: ["DELETE"] }, function protect({ operation, obj, oldObj, userInfo }) {
      seen.push({ operation, obj, oldObj, userInfo });
      if (obj.metadata.labels?.["protected"] === "yes") {
        throw new AdmissionDenied(`machine ${obj.metadata.name} is protected`);
      }
    });
    const running = await cluster.run(op);
    try {
      const created = await cluster.kubectl(["create", "-n", ns, "-f", "-"], {
        stdin: `${machineYaml("precious", { protected: "yes" })}\n${machineYaml("spare")}`,
      });
      expect(created.stderr).toBe("");
      expect(seen).toEqual([]); // creates are not the handler's

      const denied = await cluster.kubectl(["delete", "machines.useless.capstan.test", "precious", "-n", ns]);
      expect(denied.code).not.toBe(0);
      expect(denied.stderr).toBe(
        'Error from server (Forbidden): admission webhook "protect.machines.guard.capstan.dev" denied the request: machine precious is protected\n',
      );
      const still = await cluster.kubectl(["get", "machines.useless.capstan.test", "precious", "-n", ns, "-o", "name"]);
      expect(still.stdout).toBe("machine.useless.capstan.test/precious\n");
      // The handler got the stored object as obj and oldObj, and kubectl's user.
      expect(seen[0]).toMatchObject({
        operation: "DELETE",
        obj: { metadata: { name: "precious", labels: { protected: "yes" } } },
        oldObj: { metadata: { name: "precious" } },
        userInfo: { username: "capstan-admin" },
      });

      const dry = await cluster.kubectl([
        "delete",
        "machines.useless.capstan.test",
        "spare",
        "-n",
        ns,
        "--dry-run=server",
      ]);
      expect(dry.code, dry.stderr).toBe(0);
      expect((await cluster.client.resource(Machine, ns).get("spare")).metadata.name).toBe("spare");
      const deleted = await cluster.kubectl(["delete", "machines.useless.capstan.test", "spare", "-n", ns]);
      expect(deleted.stdout).toBe('machine.useless.capstan.test "spare" deleted\n');
      expect(seen.map((s) => [s.obj.metadata.name, s.oldObj?.metadata.name])).toEqual([
        ["precious", "precious"],
        ["spare", "spare"],
        ["spare", "spare"],
      ]);
    } finally {
      await running.stop();
    }
    // Without the operator (its configuration removed) the object can go.
    const gone = await cluster.kubectl(["delete", "machines.useless.capstan.test", "precious", "-n", ns]);
    expect(gone.code, gone.stderr).toBe(0);
  });

  it("refuses kubectl delete with a ValidatingAdmissionPolicy's message when its rules say DELETE", async () => {
    const ns = await namespace(cluster, "kept-by-policy");
    const manifests = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: keep-labelled
spec:
  matchConstraints:
    resourceRules:
      - apiGroups: [""]
        apiVersions: ["v1"]
        operations: ["DELETE"]
        resources: ["configmaps"]
  validations:
    - expression: "!has(oldObject.metadata.labels) || !('keep' in oldObject.metadata.labels)"
      messageExpression: "'configmap ' + oldObject.metadata.name + ' is labelled keep'"
      reason: Forbidden
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: keep-labelled-${ns}
spec:
  policyName: keep-labelled
  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchLabels:
        kubernetes.io/metadata.name: ${ns}
`;
    expect((await cluster.kubectl(["apply", "-f", "-"], { stdin: manifests })).code).toBe(0);
    try {
      expect((await cluster.kubectl(["create", "configmap", "precious", "-n", ns])).code).toBe(0);
      expect((await cluster.kubectl(["label", "configmap", "precious", "keep=yes", "-n", ns])).code).toBe(0);
      expect((await cluster.kubectl(["create", "configmap", "spare", "-n", ns])).code).toBe(0);

      const denied = await cluster.kubectl(["delete", "configmap", "precious", "-n", ns]);
      expect(denied.stderr).toBe(
        `Error from server (Forbidden): configmaps "precious" is forbidden: ValidatingAdmissionPolicy 'keep-labelled' with binding 'keep-labelled-${ns}' denied request: configmap precious is labelled keep\n`,
      );
      expect((await cluster.kubectl(["get", "configmap", "precious", "-n", ns, "-o", "name"])).stdout).toBe(
        "configmap/precious\n",
      );
      expect((await cluster.kubectl(["delete", "configmap", "spare", "-n", ns])).code).toBe(0);
    } finally {
      await cluster.kubectl(["delete", "-f", "-"], { stdin: manifests });
    }
  });

  it("calls an IfNeeded mutating handler again after a later handler changed the object", async () => {
    const ns = await namespace(cluster, "reinvoked");
    const calls: string[] = [];
    const op = operator({ name: "painter" });
    // Registered in this order, so called in this order (one configuration, webhooks in order).
    op.on.mutate(Machine, { reinvocationPolicy: "IfNeeded" }, function primer({ obj }) {
      calls.push("primer");
      obj.metadata.annotations = { ...obj.metadata.annotations, primed: "yes" };
    });
    op.on.mutate(Machine, function painter({ obj }) {
      calls.push("painter");
      obj.metadata.annotations = { ...obj.metadata.annotations, painted: "yes" };
    });
    const running = await cluster.run(op);
    try {
      const created = await cluster.kubectl(["create", "-n", ns, "-f", "-"], { stdin: machineYaml("m") });
      expect(created.stderr).toBe("");
      expect(calls).toEqual(["primer", "painter", "primer"]);
      expect((await cluster.client.resource(Machine, ns).get("m")).metadata.annotations).toEqual({
        primed: "yes",
        painted: "yes",
      });
    } finally {
      await running.stop();
    }
  });
});
