/**
 * The kubeconfig backend on a cluster it shares: what `cluster.kubectl` creates, what a test writes
 * into namespaces that are not its own, and CRDs used by two test files at once. CI has no real
 * cluster, so the cluster is `capstan apiserver` in a child process (the built dist: `npm run build`
 * first), reached only through the kubeconfig file it wrote, as kubeconfig-backend.test.ts does.
 */
import { isNotFound } from "capstan";
import { ClusterRole, ConfigMap, CustomResourceDefinition, Namespace, ServiceAccount } from "capstan/core";
import { RUN_LABEL, STARTED_LABEL, startTestCluster, type TestCluster, waitForDeletion } from "capstan-dev/testing";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { operator } from "../../packages/capstan/src/operator/index.ts";
import { CRD_USER_PREFIX } from "../../packages/capstan-dev/src/testing/backends/crd-users.ts";
import { kubectlCreations } from "../../packages/capstan-dev/src/testing/backends/kubectl-creations.ts";
import { Machine, machineCrd } from "../operator/support/cluster.ts";
import { externalCluster } from "./support/external-cluster.ts";

const external = externalCluster("capstan-kubeconfig-sharing-");

const onCluster = () => startTestCluster({ backend: "kubeconfig", kubeconfig: { path: external.kubeconfig } });
const CRD_NAME = machineCrd.metadata?.name ?? "";

async function exists(get: () => Promise<unknown>): Promise<boolean> {
  try {
    await get();
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

describe("reading what a kubectl command created", () => {
  const log = (lines: string[]) =>
    lines.map((l) => `I1127 13:48:03.191080   21606 round_trippers.go:560] ${l}`).join("\n");
  const host = "https://127.0.0.1:6443";

  it("names the objects an apply created from the GET answered 404 before each POST, not the ones it configured", () => {
    const { creations } = kubectlCreations(
      "configmap/old configured\nconfigmap/new created\nnamespace/shop created\n",
      log([
        `GET ${host}/api/v1/namespaces/default/configmaps/old 200 OK in 2 milliseconds`,
        `PATCH ${host}/api/v1/namespaces/default/configmaps/old?fieldManager=kubectl-client-side-apply 200 OK in 2 milliseconds`,
        `GET ${host}/api/v1/namespaces/default/configmaps/new 404 Not Found in 2 milliseconds`,
        `POST ${host}/api/v1/namespaces/default/configmaps?fieldManager=kubectl-client-side-apply 201 Created in 4 milliseconds`,
        `GET ${host}/api/v1/namespaces/shop 404 Not Found in 1 milliseconds`,
        `POST ${host}/api/v1/namespaces?fieldManager=kubectl-client-side-apply 201 Created in 2 milliseconds`,
      ]),
    );
    expect(creations).toEqual([
      { collection: "/api/v1/namespaces/default/configmaps", name: "new", namespace: "default" },
      { collection: "/api/v1/namespaces", name: "shop" },
    ]);
  });

  it("pairs a create's POST with its `created`, `exposed` or -o name line of the same type, in order", () => {
    const post = (path: string) => `POST ${host}${path}?fieldManager=kubectl-create 201 Created in 7 milliseconds`;
    expect(
      kubectlCreations("deployment.apps/web created\n", log([post("/apis/apps/v1/namespaces/ns1/deployments")]))
        .creations,
    ).toEqual([{ collection: "/apis/apps/v1/namespaces/ns1/deployments", name: "web", namespace: "ns1" }]);
    expect(kubectlCreations("service/web exposed\n", log([post("/api/v1/namespaces/ns1/services")])).creations).toEqual(
      [{ collection: "/api/v1/namespaces/ns1/services", name: "web", namespace: "ns1" }],
    );
    expect(
      kubectlCreations(
        "clusterrole.rbac.authorization.k8s.io/reader\nnetworkpolicy.networking.k8s.io/deny\n",
        log([
          post("/apis/rbac.authorization.k8s.io/v1/clusterroles"),
          post("/apis/networking.k8s.io/v1/namespaces/ns1/networkpolicies"),
        ]),
      ).creations,
    ).toEqual([
      { collection: "/apis/rbac.authorization.k8s.io/v1/clusterroles", name: "reader" },
      { collection: "/apis/networking.k8s.io/v1/namespaces/ns1/networkpolicies", name: "deny", namespace: "ns1" },
    ]);
  });

  it("counts a server-side apply's PATCH answered 201, and neither dry runs, reviews nor tokens", () => {
    const { creations } = kubectlCreations(
      "configmap/a serverside-applied\n",
      log([
        `PATCH ${host}/api/v1/namespaces/ns1/configmaps/a?fieldManager=kubectl 201 Created in 3 milliseconds`,
        `POST ${host}/api/v1/namespaces/ns1/configmaps?dryRun=All 201 Created in 3 milliseconds`,
        `POST ${host}/apis/authorization.k8s.io/v1/selfsubjectaccessreviews 201 Created in 1 milliseconds`,
        `POST ${host}/api/v1/namespaces/ns1/serviceaccounts/sa/token 201 Created in 1 milliseconds`,
      ]),
    );
    expect(creations).toEqual([{ collection: "/api/v1/namespaces/ns1/configmaps", name: "a", namespace: "ns1" }]);
  });

  it("reads the structured request log of later kubectl versions too", () => {
    const { creations } = kubectlCreations(
      "configmap/b created\n",
      `I0101 10:00:00.000000    1 round_trippers.go:632] "Response" verb="POST" url="${host}/api/v1/namespaces/ns1/configmaps?fieldManager=kubectl-create" status="201 Created" milliseconds=3\n`,
    );
    expect(creations).toEqual([{ collection: "/api/v1/namespaces/ns1/configmaps", name: "b", namespace: "ns1" }]);
  });
});

describe("the kubeconfig backend on a shared cluster", () => {
  it("deletes at stop() what its kubectl commands created, in every namespace, and leaves what existed before", async () => {
    await external.admin.resource(ConfigMap, "default").create({ metadata: { name: "before" }, data: { v: "1" } });
    const cluster = await onCluster();
    const id = (await external.admin.resource(Namespace).get(cluster.namespace)).metadata?.labels?.[RUN_LABEL] ?? "";
    const shop = `shop-${id}`;
    try {
      const manifests = [
        { apiVersion: "v1", kind: "Namespace", metadata: { name: shop } },
        { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "in-shop", namespace: shop } },
        { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `applied-${id}`, namespace: "default" } },
        { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "before", namespace: "default" }, data: { v: "1" } },
        {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "ClusterRole",
          metadata: { name: `reader-${id}` },
          rules: [],
        },
      ]
        .map((m) => stringify(m))
        .join("---\n");
      const applied = await cluster.kubectl(["apply", "-f", "-"], { stdin: manifests });
      expect(applied.code, applied.stderr).toBe(0);
      // The request log kubectl was asked for is not what the test reads.
      expect(applied.stderr).not.toMatch(/round_trippers|loader\.go/);
      expect(applied.stdout).toContain("configmap/before configured");
      const created = await cluster.kubectl(["create", "configmap", `made-${id}`, "-n", "default", "-o", "name"]);
      expect(created.stdout.trim()).toBe(`configmap/made-${id}`);
      const deployed = await cluster.kubectl(["create", "deployment", `web-${id}`, "--image=nginx", "-n", "default"]);
      expect(deployed.code, deployed.stderr).toBe(0);
      const exposed = await cluster.kubectl(["expose", "deployment", `web-${id}`, "--port=80", "-n", "default"]);
      expect(exposed.stdout.trim()).toBe(`service/web-${id} exposed`);
      // A cluster-scoped object kubectl created carries the run's labels, for the sweep after a crash.
      expect((await external.admin.resource(ClusterRole).get(`reader-${id}`)).metadata?.labels?.[RUN_LABEL]).toBe(id);
    } finally {
      await cluster.stop();
    }
    const gone = [
      () => external.admin.resource(Namespace).get(shop),
      () => external.admin.resource(ConfigMap, "default").get(`applied-${id}`),
      () => external.admin.resource(ConfigMap, "default").get(`made-${id}`),
      () => external.admin.request("GET", `/apis/apps/v1/namespaces/default/deployments/web-${id}`),
      () => external.admin.request("GET", `/api/v1/namespaces/default/services/web-${id}`),
      () => external.admin.resource(ClusterRole).get(`reader-${id}`),
    ];
    for (const get of gone) expect(await exists(get)).toBe(false);
    const before = await external.admin.resource(ConfigMap, "default").get("before");
    expect(before.metadata?.deletionTimestamp).toBeUndefined();
    await external.admin.resource(ConfigMap, "default").delete("before");
  });

  it("deletes at stop() the objects its clients wrote into namespaces it does not own, and leaves theirs", async () => {
    await external.admin.resource(Namespace).create({ metadata: { name: "someones" } });
    await external.admin.resource(ServiceAccount, "someones").create({ metadata: { name: "theirs" } });
    const cluster = await onCluster();
    try {
      await cluster.client.resource(ConfigMap, "default").create({ metadata: { name: "written-by-test" } });
      await cluster.client.resource(ServiceAccount, "someones").create({ metadata: { name: "ours" } });
      // In the run's own namespace: goes with it, not deleted one by one.
      await cluster.client.resource(ConfigMap, cluster.namespace).create({ metadata: { name: "own" } });
    } finally {
      await cluster.stop();
    }
    expect(await exists(() => external.admin.resource(ConfigMap, "default").get("written-by-test"))).toBe(false);
    expect(await exists(() => external.admin.resource(ServiceAccount, "someones").get("ours"))).toBe(false);
    expect(await exists(() => external.admin.resource(ServiceAccount, "someones").get("theirs"))).toBe(true);
    await external.admin.resource(Namespace).delete("someones");
  });

  it("keeps a CRD two TestClusters use until the last one stops, whichever created it", async () => {
    const first = await startTestCluster({
      backend: "kubeconfig",
      kubeconfig: { path: external.kubeconfig },
      crds: [machineCrd],
    });
    let second: TestCluster | undefined;
    try {
      second = await onCluster();
      const op = operator({ name: "second-user" });
      op.on.create(Machine, async () => undefined);
      await second.run(op); // finds the CRD the first cluster created, and uses it
      const users = Object.keys(
        (await external.admin.resource(CustomResourceDefinition).get(CRD_NAME)).metadata?.labels ?? {},
      );
      expect(users.filter((k) => k.startsWith(CRD_USER_PREFIX))).toHaveLength(2);

      await first.stop(); // the creator leaves first
      const crd = await external.admin.resource(CustomResourceDefinition).get(CRD_NAME);
      expect(crd.metadata?.deletionTimestamp).toBeUndefined();
      await second.client
        .resource(Machine, second.namespace)
        .create(Machine.make({ metadata: { name: "still-served" }, spec: { switchPosition: "up" } }));
    } finally {
      await first.stop();
      await second?.stop();
    }
    // The last user deletes it: a test run created it.
    expect(await exists(() => external.admin.resource(CustomResourceDefinition).get(CRD_NAME))).toBe(false);
  });

  it("does not count the user label of a run that crashed over an hour ago, and the sweep removes it", async () => {
    const now = Math.floor(Date.now() / 1000);
    const crashed = String(now - 2 * 3600);
    // A CRD a crashed run created and used, and a pre-existing one a crashed run used.
    await external.admin.resource(CustomResourceDefinition).create({
      ...machineCrd,
      metadata: {
        ...machineCrd.metadata,
        labels: { [RUN_LABEL]: "dead0000", [STARTED_LABEL]: crashed, [`${CRD_USER_PREFIX}dead0000`]: crashed },
      },
    });
    const cluster = await onCluster();
    try {
      await waitForDeletion(external.admin, CustomResourceDefinition, CRD_NAME);
    } finally {
      await cluster.stop();
    }
    await external.admin.resource(CustomResourceDefinition).create({
      ...machineCrd,
      metadata: { ...machineCrd.metadata, labels: { [`${CRD_USER_PREFIX}dead0001`]: crashed } },
    });
    try {
      const again = await startTestCluster({
        backend: "kubeconfig",
        kubeconfig: { path: external.kubeconfig },
        crds: [machineCrd],
      });
      const labels = (await external.admin.resource(CustomResourceDefinition).get(CRD_NAME)).metadata?.labels ?? {};
      expect(labels[`${CRD_USER_PREFIX}dead0001`]).toBeUndefined();
      await again.stop();
      // Not created by a test run: it stays, without the run's label.
      const kept = await external.admin.resource(CustomResourceDefinition).get(CRD_NAME);
      expect(kept.metadata?.deletionTimestamp).toBeUndefined();
      expect(Object.keys(kept.metadata?.labels ?? {}).filter((k) => k.startsWith(CRD_USER_PREFIX))).toEqual([]);
    } finally {
      await external.admin.resource(CustomResourceDefinition).delete(CRD_NAME);
      await waitForDeletion(external.admin, CustomResourceDefinition, CRD_NAME);
    }
  });
});
