/**
 * Server-side apply under RBAC: applying to an object that does not exist creates it, and
 * kube-apiserver's patch handler then also authorizes `create` on that name, so `patch` alone
 * updates existing objects but creates none.
 */

import { startTestCluster, type TestCluster } from "capstan-dev/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { http, RBAC_CLUSTER, serviceAccountToken } from "./support.ts";

let cluster: TestCluster;
let patcher: string;
let creator: string;

async function grant(name: string, verbs: string[]): Promise<void> {
  await http(cluster, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/shop/roles", {
    body: { metadata: { name }, rules: [{ apiGroups: [""], resources: ["configmaps"], verbs }] },
  });
  await http(cluster, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/shop/rolebindings", {
    body: {
      metadata: { name },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
      subjects: [{ kind: "ServiceAccount", name }],
    },
  });
}

/** PATCH with the apply content type, as `kubectl apply --server-side` and client.apply send it. */
function apply(token: string, name: string, data: Record<string, string>) {
  // force: the admin's create owns `data.a` (an Update manager); taking it over is not the point here.
  return http(cluster, "PATCH", `/api/v1/namespaces/shop/configmaps/${name}?fieldManager=test&force=true`, {
    token,
    headers: { "content-type": "application/apply-patch+yaml" },
    body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data },
  });
}

beforeAll(async () => {
  cluster = await startTestCluster(RBAC_CLUSTER);
  patcher = await serviceAccountToken(cluster, "shop", "patcher");
  creator = await serviceAccountToken(cluster, "shop", "creator");
  await grant("patcher", ["patch"]);
  await grant("creator", ["patch", "create"]);
  await http(cluster, "POST", "/api/v1/namespaces/shop/configmaps", {
    body: { metadata: { name: "existing" }, data: { a: "1" } },
  });
});
afterAll(() => cluster.stop());

describe("server-side apply under RBAC", () => {
  it("with patch only, updates an existing object", async () => {
    const res = await apply(patcher, "existing", { a: "2" });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ a: "2" });
  });

  it("with patch only, cannot create: 403 for create on that name, and nothing is created", async () => {
    const res = await apply(patcher, "fresh", { a: "1" });
    expect(res.status).toBe(403);
    expect(res.body.message).toBe(
      'configmaps "fresh" is forbidden: User "system:serviceaccount:shop:patcher" cannot create resource "configmaps" in API group "" in the namespace "shop"',
    );
    const get = await http(cluster, "GET", "/api/v1/namespaces/shop/configmaps/fresh");
    expect(get.status).toBe(404);
  });

  it("with patch and create, creates it", async () => {
    const res = await apply(creator, "fresh", { a: "1" });
    expect(res.status).toBe(201);
  });
});
