/**
 * The kubeconfig backend of `startTestCluster`: an existing cluster, reached only through a
 * kubeconfig file. CI has no real cluster, so the cluster here is `capstan apiserver` in a child
 * process (the built dist: `npm run build` first), as a user would point the backend at kind or a
 * staging cluster; the backend is given nothing but the kubeconfig file that process wrote.
 */
import { fileURLToPath } from "node:url";
import type { ResourceKind } from "capstan";
import { isNotFound } from "capstan";
import {
  ClusterRole,
  ClusterRoleBinding,
  ConfigMap,
  CustomResourceDefinition,
  MutatingWebhookConfiguration,
  Namespace,
  ValidatingWebhookConfiguration,
} from "capstan/core";
import {
  CapabilityError,
  missingCapability,
  RUN_LABEL,
  STARTED_LABEL,
  startTestCluster,
  type TestCluster,
  waitForDeletion,
} from "capstan-dev/testing";
import { describe, expect, it } from "vitest";
import { operator } from "../../packages/capstan/src/operator/index.ts";
import { AdmissionDenied } from "../../packages/capstan/src/webhooks/admission.ts";
import { selectBackend } from "../../packages/capstan-dev/src/testing/backends/backend-selection.ts";
import { Machine, machineCrd } from "../operator/support/cluster.ts";
import { externalCluster } from "./support/external-cluster.ts";

const GUITAR_OPERATOR = fileURLToPath(new URL("../../examples/guitar/operator.ts", import.meta.url));

const external = externalCluster("capstan-kubeconfig-backend-");

const onCluster = () => startTestCluster({ backend: "kubeconfig", kubeconfig: { path: external.kubeconfig } });

/** Names of the objects of `kind` labelled with the run `id`. */
async function labelled(kind: ResourceKind, id: string): Promise<string[]> {
  const list = await external.admin.resource(kind).list({ labelSelector: `${RUN_LABEL}=${id}` });
  return list.items.map((o) => o.metadata?.name ?? "");
}

async function runId(cluster: TestCluster): Promise<string> {
  const ns = await external.admin.resource(Namespace).get(cluster.namespace);
  return ns.metadata?.labels?.[RUN_LABEL] ?? "";
}

describe("choosing the backend", () => {
  it("takes the option first, then CAPSTAN_TEST_BACKEND, then the embedded server", () => {
    expect(selectBackend(undefined, {})).toBe("embedded");
    expect(selectBackend(undefined, { CAPSTAN_TEST_BACKEND: "" })).toBe("embedded");
    expect(selectBackend(undefined, { CAPSTAN_TEST_BACKEND: "kubeconfig" })).toBe("kubeconfig");
    expect(selectBackend("embedded", { CAPSTAN_TEST_BACKEND: "kubeconfig" })).toBe("embedded");
  });

  it("refuses any unknown name, naming the supported backends", async () => {
    expect(() => selectBackend(undefined, { CAPSTAN_TEST_BACKEND: "kind" })).toThrow(
      'CAPSTAN_TEST_BACKEND is "kind", which is not a supported test backend; supported: embedded, kubeconfig, envtest',
    );
    expect(() => selectBackend("kind", {})).toThrow(
      'the backend option is "kind", which is not a supported test backend; supported: embedded, kubeconfig, envtest',
    );
    await expect(startTestCluster({ backend: "kind" as "embedded" })).rejects.toThrow(
      "supported: embedded, kubeconfig, envtest",
    );
  });

  it("needs a kubeconfig for the kubeconfig backend and says where to give it", async () => {
    const saved = process.env.CAPSTAN_TEST_KUBECONFIG;
    delete process.env.CAPSTAN_TEST_KUBECONFIG;
    try {
      await expect(startTestCluster({ backend: "kubeconfig" })).rejects.toThrow(
        "the kubeconfig backend needs a cluster: set CAPSTAN_TEST_KUBECONFIG",
      );
    } finally {
      if (saved !== undefined) process.env.CAPSTAN_TEST_KUBECONFIG = saved;
    }
    await expect(
      startTestCluster({ backend: "kubeconfig", kubeconfig: { path: external.kubeconfig, context: "nope" } }),
    ).rejects.toThrow(`the kubeconfig ${external.kubeconfig} has no context "nope"`);
  });

  it("runs on the cluster of CAPSTAN_TEST_KUBECONFIG when CAPSTAN_TEST_BACKEND=kubeconfig", async () => {
    const saved = { backend: process.env.CAPSTAN_TEST_BACKEND, path: process.env.CAPSTAN_TEST_KUBECONFIG };
    process.env.CAPSTAN_TEST_BACKEND = "kubeconfig";
    process.env.CAPSTAN_TEST_KUBECONFIG = external.kubeconfig;
    let cluster: TestCluster | undefined;
    try {
      cluster = await startTestCluster();
      expect(cluster.capabilities.backend).toBe("kubeconfig");
      expect(cluster.url).toBe(external.apiserver.url);
      expect(cluster.waitTimeout).toBe("30000ms");
    } finally {
      await cluster?.stop();
      for (const [name, value] of [
        ["CAPSTAN_TEST_BACKEND", saved.backend],
        ["CAPSTAN_TEST_KUBECONFIG", saved.path],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });
});

describe("the kubeconfig backend", () => {
  it("gives each TestCluster its own labelled namespace, kubectl's and waitFor's default; two do not see each other's objects", async () => {
    const a = await onCluster();
    const b = await onCluster();
    try {
      expect(a.namespace).toMatch(/^capstan-test-[0-9a-f]{8}$/);
      expect(b.namespace).not.toBe(a.namespace);
      const ns = await external.admin.resource(Namespace).get(a.namespace);
      expect(ns.metadata?.labels?.[RUN_LABEL]).toBe(a.namespace.slice("capstan-test-".length));
      expect(Number(ns.metadata?.labels?.[STARTED_LABEL])).toBeCloseTo(Date.now() / 1000, -2);

      await a.client.resource(ConfigMap, a.namespace).create({ metadata: { name: "mine" }, data: { owner: "a" } });
      expect((await external.admin.resource(ConfigMap, a.namespace).get("mine")).data).toEqual({ owner: "a" });
      await expect(b.client.resource(ConfigMap, b.namespace).get("mine")).rejects.toSatisfy(isNotFound);
      expect((await a.kubectl(["get", "configmap", "mine", "-o", "name"])).stdout.trim()).toBe("configmap/mine");
      expect((await b.kubectl(["get", "configmaps", "-o", "name"])).stdout).not.toContain("configmap/mine");
      await a.waitFor(ConfigMap, "mine", (cm) => cm.data?.owner === "a");
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it("deletes at stop() what the run created: its namespaces, its CRDs, webhook configurations, generated RBAC", async () => {
    const cluster = await startTestCluster({
      backend: "kubeconfig",
      kubeconfig: { path: external.kubeconfig },
      crds: [machineCrd],
    });
    let id = "";
    try {
      id = await runId(cluster);
      const op = operator({ name: `teardown-${id}` });
      op.on.validate(Machine, function anything({ obj }) {
        if (obj.spec.switchPosition === "sideways") throw new AdmissionDenied("no");
      });
      await cluster.run(op);
      const rbac = await cluster.generatedRbac(GUITAR_OPERATOR, { namespace: `guitar-${id}` });
      await rbac.apply();
      await cluster.serviceAccount(`elsewhere-${id}/someone`);

      expect((await labelled(Namespace, id)).sort()).toEqual(
        [cluster.namespace, `elsewhere-${id}`, `guitar-${id}`].sort(),
      );
      expect(await labelled(CustomResourceDefinition, id)).toEqual([machineCrd.metadata?.name]);
      expect(await labelled(ValidatingWebhookConfiguration, id)).toEqual([`teardown-${id}-validating`]);
      expect(await labelled(ClusterRole, id)).not.toEqual([]);
      expect(await labelled(ClusterRoleBinding, id)).not.toEqual([]);
    } finally {
      await cluster.stop();
    }
    for (const kind of [
      Namespace,
      CustomResourceDefinition,
      ValidatingWebhookConfiguration,
      MutatingWebhookConfiguration,
      ClusterRole,
      ClusterRoleBinding,
    ]) {
      expect(await labelled(kind, id), kind.kind).toEqual([]);
    }
    await expect(
      external.admin.resource(CustomResourceDefinition).get(machineCrd.metadata?.name ?? ""),
    ).rejects.toSatisfy(isNotFound);
  });

  it("leaves a CRD that existed before the run, whether given in crds or registered by an operator", async () => {
    const crdName = machineCrd.metadata?.name ?? "";
    await external.admin.resource(CustomResourceDefinition).create(machineCrd);
    try {
      const cluster = await startTestCluster({
        backend: "kubeconfig",
        kubeconfig: { path: external.kubeconfig },
        crds: [machineCrd],
      });
      try {
        const op = operator({ name: "keeps-crds" });
        op.on.create(Machine, async () => undefined);
        await cluster.run(op); // registers (updates) the Machine CRD it found
        await cluster.client
          .resource(Machine, cluster.namespace)
          .create(Machine.make({ metadata: { name: "m" }, spec: { switchPosition: "up" } }));
      } finally {
        await cluster.stop();
      }
      const crd = await external.admin.resource(CustomResourceDefinition).get(crdName);
      expect(crd.metadata?.deletionTimestamp).toBeUndefined();
    } finally {
      await external.admin.resource(CustomResourceDefinition).delete(crdName);
      await waitForDeletion(external.admin, CustomResourceDefinition, crdName);
    }
  });

  it("sweeps at start the namespace of a run that crashed over an hour ago, and leaves a younger run's", async () => {
    const now = Math.floor(Date.now() / 1000);
    const run = (name: string, started: number) =>
      external.admin.resource(Namespace).create({
        metadata: { name, labels: { [RUN_LABEL]: name.slice(-8), [STARTED_LABEL]: String(started) } },
      });
    await run("capstan-test-dead0000", now - 2 * 3600);
    await run("capstan-test-alive000", now - 60);
    const cluster = await onCluster();
    try {
      await waitForDeletion(external.admin, Namespace, "capstan-test-dead0000");
      const alive = await external.admin.resource(Namespace).get("capstan-test-alive000");
      expect(alive.metadata?.deletionTimestamp).toBeUndefined();
    } finally {
      await cluster.stop();
      await external.admin.resource(Namespace).delete("capstan-test-alive000");
    }
  });

  it("says which backend lacks fault injection, the server's internals and the simulated kubelet", async () => {
    const cluster = await onCluster();
    try {
      expect(cluster.capabilities).toEqual({
        backend: "kubeconfig",
        faults: false,
        compaction: false,
        serverInternals: false,
        simulatedKubelet: false,
        serverOptions: false,
        garbageCollection: true,
        namespaceDeletion: true,
        observedAccess: false,
        // Asked of the cluster: the server in the child process runs with --no-kubelet, so no Node.
        runningPods: false,
        reasons: { runningPods: "the cluster has no Node, so pods stay Pending" },
        ownCluster: false,
      });
      expect(() => cluster.faults).toThrow(CapabilityError);
      expect(() => cluster.faults).toThrow(
        "fault injection (cluster.faults) is not available on the kubeconfig backend: only the embedded backend has it",
      );
      expect(() => cluster.server).toThrow(
        "the API server's internals (cluster.server) is not available on the kubeconfig backend",
      );
      expect(() => cluster.kubelet).toThrow(
        "the simulated kubelet (cluster.kubelet) is not available on the kubeconfig backend",
      );
    } finally {
      await cluster.stop();
    }
    await expect(
      startTestCluster({
        backend: "kubeconfig",
        kubeconfig: { path: external.kubeconfig },
        server: { kubelet: false },
      }),
    ).rejects.toThrow(CapabilityError);
    expect(missingCapability("faults", "kubeconfig")).toBe(
      "needs fault injection (cluster.faults), which the kubeconfig backend lacks: only the embedded backend has it",
    );
    expect(missingCapability("faults", "embedded")).toBeUndefined();
  });
});

describe("the embedded backend", () => {
  it("is the default, with the default namespace, every capability and the usual wait timeout", async () => {
    const cluster = await startTestCluster({ backend: "embedded", kubelet: false });
    try {
      expect(cluster.namespace).toBe("default");
      expect(cluster.waitTimeout).toBe("10000ms");
      // Every one but running pods, which the kubelet this cluster was started without would run.
      const { runningPods, reasons, ...others } = cluster.capabilities;
      expect(Object.values(others).every((v) => v !== false)).toBe(true);
      expect(runningPods).toBe(false);
      expect(reasons).toEqual({ runningPods: "the cluster was started with kubelet: false" });
      expect(cluster.kubelet).toBeUndefined();
      expect(cluster.faults).toBeDefined();
    } finally {
      await cluster.stop();
    }
  });

  const reason = missingCapability("faults");
  it("lets a test that needs faults skip with a reason on other backends", (ctx) => {
    ctx.skip(reason !== undefined, reason);
    expect(reason).toBeUndefined();
  });
});
