import type { Logger } from "pino";
import { Type } from "typebox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KubeClient } from "../../packages/capstan/src/client/resource-client.ts";
import { operator } from "../../packages/capstan/src/operator/index.ts";
import { ConfigMap } from "../../packages/capstan/src/resources/builtins.ts";
import { toCrd } from "../../packages/capstan/src/resources/crd.ts";
import { defineResource } from "../../packages/capstan/src/resources/define-resource.ts";
import { ensureCrds } from "../../packages/capstan/src/runtime/crd-registration.ts";
import { startTestCluster, type TestCluster } from "../../packages/capstan-dev/src/testing/index.ts";

/** Lists ConfigMaps in `default` once, logging the outcome, then holds until stopped. */
const lister = {
  name: "lister",
  async start(options: { client: KubeClient; signal: AbortSignal; logger: Logger }): Promise<void> {
    try {
      const list = await options.client.resource(ConfigMap, "default").list();
      options.logger.info({ count: list.items.length }, "listed configmaps");
    } catch (err) {
      options.logger.error({ err }, "list failed");
    }
    if (options.signal.aborted) return;
    await new Promise<void>((resolve) => options.signal.addEventListener("abort", () => resolve(), { once: true }));
  },
};

describe("startTestCluster: operators run as ServiceAccounts", () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await startTestCluster();
  });
  afterAll(() => cluster.stop());

  it("serviceAccount creates the namespace and account and authenticates as it", async () => {
    const sa = await cluster.serviceAccount("robots/lister");
    expect(sa.username).toBe("system:serviceaccount:robots:lister");
    const who = await sa.client.request<{ status: { userInfo: { username: string } } }>(
      "POST",
      "/apis/authentication.k8s.io/v1/selfsubjectreviews",
      { body: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" } },
    );
    expect(who.status.userInfo.username).toBe(sa.username);
    const viaKubectl = await cluster.kubectl([
      "--kubeconfig",
      sa.kubeconfigPath,
      "auth",
      "whoami",
      "-o",
      "jsonpath={.status.userInfo.username}",
    ]);
    expect(viaKubectl.stdout).toBe(sa.username);
  });

  it("runs an operator with the account's client and keeps the 403 it logged", async () => {
    const sa = await cluster.serviceAccount("robots/unbound");
    const running = await cluster.run(lister, { client: sa.client });
    await expect.poll(() => running.logs.find((r) => r.msg === "list failed")).toBeDefined();
    const failure = running.logs.find((r) => r.msg === "list failed") as { level: number; err: { message: string } };
    expect(failure.level).toBe(50);
    expect(failure.err.message).toContain(
      'configmaps is forbidden: User "system:serviceaccount:robots:unbound" cannot list resource "configmaps" in API group "" in the namespace "default"',
    );
    await running.stop();
  });

  it("the same operator succeeds once a role grants what it needs", async () => {
    const sa = await cluster.serviceAccount("robots/reader");
    await cluster.kubectl(["create", "clusterrole", "cm-reader", "--verb=list", "--resource=configmaps"]);
    await cluster.kubectl([
      "create",
      "clusterrolebinding",
      "reader-cm",
      "--clusterrole=cm-reader",
      "--serviceaccount=robots:reader",
    ]);
    const running = await cluster.run(lister, { client: sa.client });
    await expect.poll(() => running.logs.some((r) => r.msg === "listed configmaps")).toBe(true);
    expect(running.logs.some((r) => r.msg === "list failed")).toBe(false);
    await running.stop();
  });

  it("runs the capstan CLI against the cluster", async () => {
    const result = await cluster.capstan(["generate", "crds", "test/cli/fixtures/widget-operator.ts"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("kind: CustomResourceDefinition");
  });

  it("applies the RBAC capstan generate prints, whole or with a permission taken away", async () => {
    const rbac = await cluster.generatedRbac("test/cli/fixtures/widget-operator.ts", { namespace: "ops" });
    expect(rbac.serviceAccount).toBe("ops/widgets");
    expect(rbac.rules.some((r) => r.resources.includes("configmaps") && r.verbs.includes("create"))).toBe(true);
    const canCreate = async (kubeconfig: string) =>
      (
        await cluster.kubectl(["--kubeconfig", kubeconfig, "auth", "can-i", "create", "configmaps", "-n", "default"])
      ).stdout.trim();

    const sa = await rbac.apply();
    expect(sa.username).toBe("system:serviceaccount:ops:widgets");
    expect(await canCreate(sa.kubeconfigPath)).toBe("yes");

    const withoutCreate = await rbac.apply((rule) =>
      rule.resources.includes("configmaps") ? { ...rule, verbs: rule.verbs.filter((v) => v !== "create") } : rule,
    );
    expect(await canCreate(withoutCreate.kubeconfigPath)).toBe("no");
  });
});

describe("serviceAccount without RBAC", () => {
  it("says a cluster started with server: { rbac: false } issues no tokens", async () => {
    const cluster = await startTestCluster({ kubelet: false, server: { rbac: false } });
    try {
      await expect(cluster.serviceAccount("a/b")).rejects.toThrow(/rbac: false/);
      await expect(cluster.serviceAccount("nonsense")).rejects.toThrow(/"<namespace>\/<name>"/);
    } finally {
      await cluster.stop();
    }
  });
});

describe("run waits for the operator's own CRD registration", () => {
  it("rejects with the operator's 403 when its CRDs were already served by someone else", async () => {
    const cluster = await startTestCluster({ kubelet: false });
    try {
      const Widget = defineResource({
        group: "registration.capstan.test",
        version: "v1",
        kind: "Widget",
        scope: "Namespaced",
        spec: Type.Object({ size: Type.Integer() }),
      });
      await ensureCrds(cluster.client, [toCrd(Widget)]); // served before the operator starts
      const op = operator({ name: "widgets" });
      op.on.create(Widget, async () => undefined);
      const sa = await cluster.serviceAccount("ops/nobody"); // bound to nothing: its CRD GET is a 403
      await expect(cluster.run(op, { client: sa.client })).rejects.toThrow(
        `operator widgets failed: customresourcedefinitions.apiextensions.k8s.io "widgets.registration.capstan.test" is forbidden: User "system:serviceaccount:ops:nobody" cannot get resource "customresourcedefinitions"`,
      );
    } finally {
      await cluster.stop();
    }
  });
});
