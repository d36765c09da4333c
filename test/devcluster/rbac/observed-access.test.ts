/**
 * The devcluster records, per user, the distinct authorization attributes of the requests RBAC
 * decided: a set (repeats once), allowed apart from denied, the admin (system:masters) not at all.
 * `GET /capstan/access` serves it to the admin only; `DELETE` forgets it.
 */
import { startTestCluster, type TestCluster } from "capstan-dev/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { http, RBAC_CLUSTER, serviceAccountToken } from "./support.ts";

const USER = "system:serviceaccount:shop:clerk";
let cluster: TestCluster;
let clerk: string;

beforeAll(async () => {
  cluster = await startTestCluster(RBAC_CLUSTER);
  clerk = await serviceAccountToken(cluster, "shop", "clerk");
  await http(cluster, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/shop/roles", {
    body: {
      metadata: { name: "clerk" },
      rules: [
        { apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list", "patch"] },
        { apiGroups: [""], resources: ["serviceaccounts"], verbs: ["impersonate"] },
      ],
    },
  });
  await http(cluster, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/shop/rolebindings", {
    body: {
      metadata: { name: "clerk" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "clerk" },
      subjects: [{ kind: "ServiceAccount", name: "clerk" }],
    },
  });
  await http(cluster, "POST", "/api/v1/namespaces/shop/configmaps", { body: { metadata: { name: "c" } } });
});
afterAll(() => cluster.stop());
beforeEach(async () => {
  expect((await http(cluster, "DELETE", "/capstan/access")).status).toBe(200);
});

const resource = (verb: string, name = "", extra: Partial<Record<string, string>> = {}) => ({
  verb,
  apiGroup: "",
  resource: "configmaps",
  subresource: "",
  namespace: "shop",
  name,
  ...extra,
});

describe("the access recorder", () => {
  it("keeps each distinct request once per user, allowed apart from denied, and the admin's not at all", async () => {
    for (let i = 0; i < 3; i++) {
      expect((await http(cluster, "GET", "/api/v1/namespaces/shop/configmaps/c", { token: clerk })).status).toBe(200);
    }
    expect((await http(cluster, "GET", "/api/v1/namespaces/shop/configmaps", { token: clerk })).status).toBe(200);
    const denied = await http(cluster, "DELETE", "/api/v1/namespaces/shop/configmaps/c", { token: clerk });
    expect(denied.status).toBe(403);
    expect((await http(cluster, "GET", "/livez", { token: clerk })).status).toBe(200);
    await http(cluster, "GET", "/api/v1/namespaces/shop/secrets"); // the admin

    const report = await http(cluster, "GET", "/capstan/access");
    expect(report.status).toBe(200);
    expect(report.body).toEqual({
      kind: "CapstanObservedAccess",
      users: [
        {
          user: USER,
          allowed: [resource("get", "c"), resource("list"), { verb: "get", nonResourceURL: "/livez" }],
          denied: [resource("delete", "c")],
        },
      ],
    });
    expect((await cluster.observedAccess(USER)).allowed).toHaveLength(3);
  });

  it("records the create a creating server-side apply is checked for, and impersonation's checks", async () => {
    const apply = await http(cluster, "PATCH", "/api/v1/namespaces/shop/configmaps/fresh?fieldManager=t", {
      token: clerk,
      headers: { "content-type": "application/apply-patch+yaml" },
      body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "fresh" } },
    });
    expect(apply.status).toBe(403);
    const as = await http(cluster, "GET", "/api/v1/namespaces/shop/configmaps/c", {
      token: clerk,
      headers: { "Impersonate-User": "system:serviceaccount:shop:clerk" },
    });
    expect(as.status).toBe(200);
    const access = await cluster.observedAccess(USER);
    expect(access.allowed).toEqual([
      resource("patch", "fresh"),
      resource("impersonate", "clerk", { resource: "serviceaccounts" }),
      resource("get", "c"),
    ]);
    expect(access.denied).toEqual([resource("create", "fresh")]);
  });

  it("answers only the admin, filters by ?user=, and forgets with DELETE", async () => {
    await http(cluster, "GET", "/api/v1/namespaces/shop/configmaps/c", { token: clerk });
    await http(cluster, "GET", "/api/v1/namespaces/shop/configmaps/c", { token: null });
    const forbidden = await http(cluster, "GET", "/capstan/access", { token: clerk });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.message).toBe(`forbidden: User "${USER}" cannot get path "/capstan/access"`);

    const all = await http(cluster, "GET", "/capstan/access");
    expect(all.body.users.map((u: { user: string }) => u.user)).toEqual(["system:anonymous", USER]);
    const one = await http(cluster, "GET", `/capstan/access?user=${encodeURIComponent(USER)}`);
    expect(one.body.users.map((u: { user: string }) => u.user)).toEqual([USER]);

    await http(cluster, "DELETE", `/capstan/access?user=${encodeURIComponent(USER)}`);
    const left = await http(cluster, "GET", "/capstan/access");
    expect(left.body.users.map((u: { user: string }) => u.user)).toEqual(["system:anonymous"]);
  });
});
