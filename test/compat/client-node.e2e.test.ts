/**
 * @kubernetes/client-node (the official JavaScript client) against the embedded API server: its typed
 * APIs, `Watch` and `makeInformer`, used as its README shows.
 */
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  makeInformer,
  PatchStrategy,
  setHeaderOptions,
  type V1ConfigMap,
  Watch,
} from "@kubernetes/client-node";
import { startTestCluster, type TestCluster, waitUntil } from "capstan-dev/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let cluster: TestCluster;
let kc: KubeConfig;

beforeAll(async () => {
  cluster = await startTestCluster();
  kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfigPath);
  const ns = await cluster.kubectl(["create", "namespace", "client-node"]);
  expect(ns.code, ns.stderr).toBe(0);
});
afterAll(() => cluster?.stop());

const namespace = "client-node";

function configMap(name: string, data: Record<string, string> = {}): V1ConfigMap {
  return { metadata: { name }, data };
}

describe("@kubernetes/client-node", () => {
  it("creates, reads, lists, patches, replaces and deletes with the typed API", async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const created = await core.createNamespacedConfigMap({ namespace, body: configMap("typed", { a: "1" }) });
    expect(created.metadata?.creationTimestamp).toBeInstanceOf(Date);
    expect(created.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);

    const read = await core.readNamespacedConfigMap({ namespace, name: "typed" });
    expect(read.data).toEqual({ a: "1" });
    const list = await core.listNamespacedConfigMap({ namespace, labelSelector: "" });
    expect(list.items.map((cm) => cm.metadata?.name)).toContain("typed");

    const patched = await core.patchNamespacedConfigMap(
      { namespace, name: "typed", body: { data: { b: "2" } } },
      setHeaderOptions("Content-Type", PatchStrategy.StrategicMergePatch),
    );
    expect(patched.data).toEqual({ a: "1", b: "2" });
    const jsonPatched = await core.patchNamespacedConfigMap(
      { namespace, name: "typed", body: [{ op: "remove", path: "/data/a" }] },
      setHeaderOptions("Content-Type", PatchStrategy.JsonPatch),
    );
    expect(jsonPatched.data).toEqual({ b: "2" });

    const replaced = await core.replaceNamespacedConfigMap({
      namespace,
      name: "typed",
      body: { ...jsonPatched, data: { c: "3" } },
    });
    expect(replaced.data).toEqual({ c: "3" });
    // A replace with the resourceVersion it already replaced is stale: 409, as ApiException's code.
    await expect(
      core.replaceNamespacedConfigMap({ namespace, name: "typed", body: { ...jsonPatched, data: { d: "4" } } }),
    ).rejects.toMatchObject({ code: 409 });

    await core.deleteNamespacedConfigMap({ namespace, name: "typed" });
    await expect(core.readNamespacedConfigMap({ namespace, name: "typed" })).rejects.toMatchObject({ code: 404 });
  });

  it("creates a Deployment whose ReplicaSet and pods the server's controllers make", async () => {
    const apps = kc.makeApiClient(AppsV1Api);
    await apps.createNamespacedDeployment({
      namespace,
      body: {
        metadata: { name: "web" },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: "web" } },
          template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "web", image: "nginx" }] } },
        },
      },
    });
    const ready = await waitUntil(
      async () => {
        const d = await apps.readNamespacedDeployment({ namespace, name: "web" });
        return d.status?.readyReplicas === 2 ? d : undefined;
      },
      { timeout: "20s" },
    );
    // client-node turns the conditions' times into Dates: they must be RFC 3339 as the real server writes them.
    const conditions = ready.status?.conditions ?? [];
    expect(conditions.map((c) => c.type).sort()).toEqual(["Available", "Progressing"]);
    for (const c of conditions) expect(Number.isNaN(c.lastUpdateTime?.getTime())).toBe(false);
    const sets = await apps.listNamespacedReplicaSet({ namespace, labelSelector: "app=web" });
    expect(sets.items.map((rs) => rs.metadata?.ownerReferences?.[0]?.name)).toEqual(["web"]);
  });

  it("watches with Watch: events in order, then the server's end of the stream", async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const listed = await core.listNamespacedConfigMap({ namespace });
    const events: string[] = [];
    let done!: (err: unknown) => void;
    const ended = new Promise((resolve) => (done = resolve));
    const controller = await new Watch(kc).watch(
      `/api/v1/namespaces/${namespace}/configmaps`,
      { resourceVersion: listed.metadata?.resourceVersion, allowWatchBookmarks: true, timeoutSeconds: 2 },
      (phase, obj) => events.push(`${phase} ${obj.metadata?.name ?? ""}`),
      (err) => done(err),
    );
    try {
      await core.createNamespacedConfigMap({ namespace, body: configMap("watched") });
      await core.deleteNamespacedConfigMap({ namespace, name: "watched" });
      expect(await ended).toBeNull();
      expect(events.filter((e) => !e.startsWith("BOOKMARK"))).toEqual(["ADDED watched", "DELETED watched"]);
    } finally {
      controller.abort();
    }
  });

  it("keeps an informer's cache in step with adds, updates and deletes", async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const informer = makeInformer(kc, `/api/v1/namespaces/${namespace}/configmaps`, () =>
      core.listNamespacedConfigMap({ namespace }),
    );
    const seen: string[] = [];
    informer.on("add", (cm) => seen.push(`add ${cm.metadata?.name}`));
    informer.on("update", (cm) => seen.push(`update ${cm.metadata?.name} ${cm.data?.v}`));
    informer.on("delete", (cm) => seen.push(`delete ${cm.metadata?.name}`));
    await informer.start();
    try {
      await core.createNamespacedConfigMap({ namespace, body: configMap("informed", { v: "1" }) });
      await core.patchNamespacedConfigMap(
        { namespace, name: "informed", body: { data: { v: "2" } } },
        setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
      );
      await waitUntil(() => informer.get("informed", namespace)?.data?.v === "2");
      await core.deleteNamespacedConfigMap({ namespace, name: "informed" });
      await waitUntil(() => seen.includes("delete informed"));
      expect(seen.filter((s) => s.includes("informed"))).toEqual([
        "add informed",
        "update informed 2",
        "delete informed",
      ]);
      expect(informer.get("informed", namespace)).toBeUndefined();
    } finally {
      await informer.stop();
    }
  });

  it("works custom objects of a CRD through CustomObjectsApi", async () => {
    const crd = await cluster.kubectl(["apply", "-f", "-"], {
      stdin: `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: { name: widgets.compat.example.com }
spec:
  group: compat.example.com
  scope: Namespaced
  names: { plural: widgets, singular: widget, kind: Widget }
  versions:
    - name: v1
      served: true
      storage: true
      subresources: { status: {} }
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec: { type: object, properties: { size: { type: integer } } }
            status: { type: object, properties: { ready: { type: boolean } } }
`,
    });
    expect(crd.code, crd.stderr).toBe(0);
    await cluster.kubectl(["wait", "--for=condition=Established", "crd/widgets.compat.example.com"]);
    const custom = kc.makeApiClient(CustomObjectsApi);
    const ref = { group: "compat.example.com", version: "v1", namespace, plural: "widgets" };
    const created = await waitUntil(
      () =>
        custom.createNamespacedCustomObject({
          ...ref,
          body: { apiVersion: "compat.example.com/v1", kind: "Widget", metadata: { name: "w" }, spec: { size: 1 } },
        }),
      { timeout: "10s" },
    );
    expect(created.metadata.generation).toBe(1);
    const status = await custom.patchNamespacedCustomObjectStatus(
      { ...ref, name: "w", body: { status: { ready: true } } },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    );
    expect([status.status, status.metadata.generation]).toEqual([{ ready: true }, 1]);
    const list = await custom.listNamespacedCustomObject(ref);
    expect(list.items.map((w: { kind: string }) => w.kind)).toEqual(["Widget"]);
  });
});
