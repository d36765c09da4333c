import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import type { ConfigMap as ConfigMapObject } from "kubernetes-types/core/v1.d.ts";
import { Type } from "typebox";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { KubeClient } from "../../packages/capstan/src/client/resource-client.ts";
import { ConfigMap } from "../../packages/capstan/src/resources/builtins.ts";
import { toCrd } from "../../packages/capstan/src/resources/crd.ts";
import { defineResource } from "../../packages/capstan/src/resources/define-resource.ts";
import { ensureCrds } from "../../packages/capstan/src/runtime/crd-registration.ts";
import {
  startTestCluster,
  type TestCluster,
  WaitForTimeoutError,
} from "../../packages/capstan-dev/src/testing/index.ts";

const exec = promisify(execFile);

const Gadget = defineResource({
  group: "testing.capstan.test",
  version: "v1",
  kind: "Gadget",
  scope: "Namespaced",
  spec: Type.Object({ size: Type.Integer() }),
});

function configMap(name: string, data?: Record<string, string>): ConfigMapObject {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "default" }, ...(data ? { data } : {}) };
}

/** A minimal operator: registers Gadget's CRD, then writes one ConfigMap per start and holds until stopped. */
function fakeOperator(name: string, behaviour: { fail?: Error; registerCrd?: boolean } = {}) {
  const starts: { signal: AbortSignal; options: Record<string, unknown> }[] = [];
  return {
    name,
    starts,
    requirements: () => ({ crds: behaviour.registerCrd ? [Gadget] : [] }),
    async start(options: { client: KubeClient; signal: AbortSignal; gracefulShutdownTimeout?: string }): Promise<void> {
      starts.push({ signal: options.signal, options });
      if (behaviour.registerCrd) await ensureCrds(options.client, [toCrd(Gadget)], { signal: options.signal });
      await options.client.resource(ConfigMap).create(configMap(`${name}-started`, { at: String(starts.length) }));
      if (behaviour.fail) throw behaviour.fail;
      if (options.signal.aborted) return;
      await new Promise<void>((resolve) => options.signal.addEventListener("abort", () => resolve(), { once: true }));
    },
  };
}

describe("startTestCluster: RBAC is on, as on a real cluster", () => {
  it("evaluates RBAC for other users while its own client stays admin", async () => {
    const cluster = await startTestCluster();
    try {
      const asSa = ["--as=system:serviceaccount:default:robot"];
      const denied = await cluster.kubectl(["auth", "can-i", "create", "configmaps", "-n", "default", ...asSa]);
      expect(denied.stdout.trim()).toBe("no");
      await cluster.kubectl(["create", "role", "cm-writer", "--verb=create", "--resource=configmaps", "-n", "default"]);
      await cluster.kubectl([
        "create",
        "rolebinding",
        "robot-cm",
        "--role=cm-writer",
        "--serviceaccount=default:robot",
        "-n",
        "default",
      ]);
      const allowed = await cluster.kubectl(["auth", "can-i", "create", "configmaps", "-n", "default", ...asSa]);
      expect(allowed.stdout.trim()).toBe("yes");
      await expect(
        cluster.client.resource(ConfigMap, "default").create({ metadata: { name: "admin-made" } }),
      ).resolves.toMatchObject({ metadata: { name: "admin-made" } });
    } finally {
      await cluster.stop();
    }
  });
});

describe("startTestCluster", () => {
  let cluster: TestCluster;
  beforeEach(async () => {
    cluster = await startTestCluster();
  });
  afterEach(async () => {
    await cluster.stop();
  });

  it("hands tests the devcluster's fault injection: an injected 500 reaches the client as an ApiError", async () => {
    cluster.faults.failNext(1, { code: 500, verbs: ["create"], resources: ["configmaps"] });
    const configMaps = cluster.client.resource(ConfigMap, "default");
    await expect(configMaps.create({ metadata: { name: "faulty" } })).rejects.toMatchObject({ code: 500 });
    // The fault was used up: the next create goes through.
    await expect(configMaps.create({ metadata: { name: "faulty" } })).resolves.toMatchObject({
      metadata: { name: "faulty" },
    });
  });

  it("serves HTTPS on a random port and runs the real kubectl against itself", async () => {
    expect(cluster.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(cluster.url).not.toMatch(/:6443$/);
    const applied = await cluster.kubectl(["apply", "-f", "-"], {
      stdin: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-kubectl\ndata:\n  k: v\n",
    });
    expect(applied).toMatchObject({ code: 0, stdout: "configmap/from-kubectl created\n" });
    const cm = await cluster.client.resource(ConfigMap).get("from-kubectl", { namespace: "default" });
    expect(cm.data).toEqual({ k: "v" });
    // The kubeconfig file works for a kubectl the test starts itself, too.
    const { stdout } = await exec(
      process.env.KUBECTL ?? "kubectl",
      ["--kubeconfig", cluster.kubeconfigPath, "get", "configmap", "-o", "name"],
      {
        env: { ...process.env, KUBECACHEDIR: join(dirname(cluster.kubeconfigPath), "own-cache") },
      },
    );
    expect(stdout).toContain("configmap/from-kubectl");
  });

  it("reports a failing kubectl command as a result with its exit code and message", async () => {
    const result = await cluster.kubectl(["get", "configmap", "absent"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('configmaps "absent" not found');
  });

  it("stop() ends kubectl commands still running before it resolves", async () => {
    let settled = false;
    const watching = cluster.kubectl(["get", "configmaps", "--watch"]).finally(() => {
      settled = true;
    });
    await cluster.stop();
    await Promise.resolve();
    expect(settled).toBe(true);
    expect((await watching).code).not.toBe(0);
  });

  it("waitFor resolves with the first version of the object that satisfies the predicate", async () => {
    const cms = cluster.client.resource(ConfigMap);
    const waiting = cluster.waitFor(ConfigMap, "default/rate", (cm) => cm.data?.rate === "2");
    const created = await cms.create(configMap("rate", { rate: "1" }));
    await cms.update({ ...created, data: { rate: "2" } });
    const found = await waiting;
    expect(found.data).toEqual({ rate: "2" });
  });

  it("waitFor resolves at once for an object that already matches, named without its namespace", async () => {
    await cluster.client.resource(ConfigMap).create(configMap("ready", { ok: "yes" }));
    const found = await cluster.waitFor(ConfigMap, "ready", (cm) => cm.data?.ok === "yes", { timeout: "2s" });
    expect(found.metadata?.name).toBe("ready");
  });

  it("waitFor fails after its timeout with the predicate and the object as last seen", async () => {
    await cluster.client.resource(ConfigMap).create(configMap("stuck", { rate: "1" }));
    const err = await cluster
      .waitFor(ConfigMap, "default/stuck", (cm) => cm.data?.rate === "2", { timeout: 300 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WaitForTimeoutError);
    const message = (err as Error).message;
    expect(message).toContain("timed out after 300 ms waiting for ConfigMap default/stuck");
    expect(message).toContain('cm.data?.rate === "2"');
    expect(message).toContain('"rate": "1"');
    expect(message).not.toContain("managedFields");
    expect((err as WaitForTimeoutError).lastSeen?.metadata?.name).toBe("stuck");
  });

  it("waitFor's timeout says when the object never existed", async () => {
    const err = await cluster
      .waitFor(ConfigMap, "default/ghost", () => true, { timeout: 200 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WaitForTimeoutError);
    expect((err as Error).message).toContain("it was never seen: it does not exist");
    expect((err as WaitForTimeoutError).lastSeen).toBeUndefined();
  });

  it("waitFor keeps waiting while the kind is not served yet, then sees its object", async () => {
    const waiting = cluster.waitFor(Gadget, "default/g1", (g) => g.spec.size === 3);
    await ensureCrds(cluster.client, [toCrd(Gadget)], { timeout: "10s" });
    await cluster.client
      .resource(Gadget)
      .create(Gadget.make({ metadata: { name: "g1", namespace: "default" }, spec: { size: 3 } }));
    expect((await waiting).spec.size).toBe(3);
  });

  it("waitFor refuses a namespace on a cluster-scoped kind", async () => {
    const Namespace = { group: "", version: "v1", kind: "Namespace", plural: "namespaces", namespaced: false };
    await expect(cluster.waitFor(Namespace, "default/default", () => true)).rejects.toThrow(/cluster-scoped/);
  });

  it("waitForDeletion resolves once the object is gone", async () => {
    const cms = cluster.client.resource(ConfigMap);
    await cms.create(configMap("doomed"));
    const waiting = cluster.waitForDeletion(ConfigMap, "default/doomed");
    await cms.delete("doomed", { namespace: "default" });
    await waiting;
    await expect(cms.get("doomed", { namespace: "default" })).rejects.toMatchObject({ code: 404 });
  });

  it("run resolves once the operator's CRDs are served, and stop() ends it", async () => {
    const op = fakeOperator("gadgets", { registerCrd: true });
    const running = await cluster.run(op);
    // Resolved: the CRD is served, so its objects can be created right away.
    await cluster.client
      .resource(Gadget)
      .create(Gadget.make({ metadata: { name: "g2", namespace: "default" }, spec: { size: 1 } }));
    await cluster.waitFor(ConfigMap, "default/gadgets-started", (cm) => cm.data?.at === "1");
    await running.stop();
    expect(op.starts[0]?.signal.aborted).toBe(true);
    await expect(running.done).resolves.toBeUndefined();
    // A test's operator drains for 5 s at most unless told otherwise (a runner's hooks time out at 30 s).
    expect(op.starts[0]?.options.gracefulShutdownTimeout).toBe("5s");
    const custom = fakeOperator("patient");
    await (await cluster.run(custom, { gracefulShutdownTimeout: "1s" })).stop();
    expect(custom.starts[0]?.options.gracefulShutdownTimeout).toBe("1s");
  });

  it("a failing operator makes waits reject with its error instead of timing out", async () => {
    const op = fakeOperator("broken", { fail: new Error("reconciler exploded") });
    const running = await cluster.run(op);
    const err = await cluster
      .waitFor(ConfigMap, "default/never", () => true, { timeout: "20s" })
      .catch((e: unknown) => e);
    expect(err).not.toBeInstanceOf(WaitForTimeoutError);
    expect((err as Error).message).toBe("operator broken failed: reconciler exploded");
    await expect(running.done).rejects.toThrow("reconciler exploded");
  });

  it("an operator that fails before its CRDs are served rejects run, and leaves later waits alone", async () => {
    const op = {
      name: "never-ready",
      requirements: () => ({ crds: [Gadget] }),
      start: async () => {
        throw new Error("cannot register");
      },
    };
    await expect(cluster.run(op)).rejects.toThrow("operator never-ready failed: cannot register");
    await cluster.client.resource(ConfigMap).create(configMap("after-failure"));
    const found = await cluster.waitFor(ConfigMap, "default/after-failure", () => true);
    expect(found.metadata?.name).toBe("after-failure");
  });

  it("stop() stops the operators it runs and removes the kubeconfig", async () => {
    const op = fakeOperator("stopped-with-cluster");
    await cluster.run(op);
    await cluster.waitFor(ConfigMap, "default/stopped-with-cluster-started", () => true);
    await cluster.stop();
    expect(op.starts[0]?.signal.aborted).toBe(true);
    expect(existsSync(cluster.kubeconfigPath)).toBe(false);
    await expect(cluster.run(fakeOperator("late"))).rejects.toThrow("the test cluster is stopped");
  });
});

describe("startTestCluster resources", () => {
  /** Handles and timers alive in this process, by type (sockets, servers, timeouts). */
  function activeResources(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const type of process.getActiveResourcesInfo()) counts[type] = (counts[type] ?? 0) + 1;
    return counts;
  }

  it("leaves no socket, server or timer behind after run, waitFor and stop", async () => {
    const before = activeResources();
    const cluster = await startTestCluster();
    const running = await cluster.run(fakeOperator("leak-check", { registerCrd: true }));
    await cluster.waitFor(ConfigMap, "default/leak-check-started", () => true);
    await cluster
      .waitFor(ConfigMap, "default/leak-check-started", (cm) => cm.data?.at === "never", { timeout: 100 })
      .catch(() => undefined);
    expect(activeResources().TCPServerWrap ?? 0).toBeGreaterThan(before.TCPServerWrap ?? 0);
    await running.stop();
    await cluster.stop();
    // Only what the cluster could hold: sockets, listeners, timers (file reads of the runner come and go).
    const held = (counts: Record<string, number>) =>
      Object.fromEntries(
        ["TCPSocketWrap", "TLSWrap", "TCPServerWrap", "Timeout"].map((t) => [
          t,
          Math.max(0, (counts[t] ?? 0) - (before[t] ?? 0)),
        ]),
      );
    // Closed sockets leave the list on the next turns of the event loop.
    let leftover = held(activeResources());
    for (let i = 0; i < 50 && Object.values(leftover).some((n) => n > 0); i++) {
      await new Promise((resolve) => setImmediate(resolve));
      leftover = held(activeResources());
    }
    expect(leftover).toEqual({ TCPSocketWrap: 0, TLSWrap: 0, TCPServerWrap: 0, Timeout: 0 });
  });
});
