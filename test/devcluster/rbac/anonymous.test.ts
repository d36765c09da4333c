/**
 * RBAC is on in every cluster, as on a real one, and authentication reads credentials as
 * kube-apiserver's does: a request without a bearer token is system:anonymous (group
 * system:unauthenticated), which the bootstrap policy lets read only the public-info paths; a bearer
 * token no authenticator accepts is 401, never anonymous; the admin token is in system:masters.
 * `rbac: false` is AlwaysAllow, under which kube-apiserver turns anonymous authentication off.
 */

import { startTestCluster, type TestCluster } from "capstan-dev/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { http, serviceAccountToken } from "./support.ts";

let cluster: TestCluster;
let saToken: string;

beforeAll(async () => {
  // No RBAC option at all: the default cluster is the one under test.
  cluster = await startTestCluster({ kubelet: false });
  saToken = await serviceAccountToken(cluster, "default", "unbound");
});
afterAll(async () => {
  await cluster.stop();
});

const forbidden = (message: string, details: Record<string, string> = {}) => ({
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Failure",
  message,
  reason: "Forbidden",
  details,
  code: 403,
});

const UNAUTHORIZED = {
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Failure",
  message: "Unauthorized",
  reason: "Unauthorized",
  code: 401,
};

/** system:public-info-viewer's paths (bound to system:authenticated and system:unauthenticated). */
const PUBLIC_INFO = ["/healthz", "/livez", "/readyz", "/version", "/version/"];
/** system:discovery's paths beyond those (bound to system:authenticated only). */
const DISCOVERY = ["/api", "/api/v1", "/apis", "/apis/apps/v1", "/openapi/v2", "/openapi/v3"];

describe("a request without a token is system:anonymous", () => {
  it("and RBAC refuses it a resource with the real 403", async () => {
    const res = await http(cluster, "GET", "/api/v1/namespaces/default/configmaps", { token: null });
    expect(res.status).toBe(403);
    expect(res.body).toEqual(
      forbidden(
        'configmaps is forbidden: User "system:anonymous" cannot list resource "configmaps" in API group "" in the namespace "default"',
        { kind: "configmaps" },
      ),
    );
  });

  it.each(PUBLIC_INFO)("may read %s (system:public-info-viewer)", async (path) => {
    const res = await http(cluster, "GET", path, { token: null });
    expect(res.status, res.text).toBe(200);
  });

  it("may not read a health check's sub-path, which the public-info role does not name", async () => {
    const res = await http(cluster, "GET", "/healthz/ping", { token: null });
    expect(res.body).toEqual(forbidden('forbidden: User "system:anonymous" cannot get path "/healthz/ping"'));
    expect((await http(cluster, "GET", "/healthz/ping")).status).toBe(200);
  });

  it.each(DISCOVERY)("may not read %s, discovery being for system:authenticated only", async (path) => {
    const res = await http(cluster, "GET", path, { token: null });
    expect(res.body).toEqual(forbidden(`forbidden: User "system:anonymous" cannot get path "${path}"`));
    const authenticated = await http(cluster, "GET", path, { token: saToken });
    expect(authenticated.status, authenticated.text).toBe(200);
  });

  it("is in system:unauthenticated only: a ClusterRoleBinding to that group lets it list", async () => {
    const RBAC = "/apis/rbac.authorization.k8s.io/v1";
    await http(cluster, "POST", `${RBAC}/clusterroles`, {
      body: {
        metadata: { name: "ns-lister" },
        rules: [{ apiGroups: [""], resources: ["namespaces"], verbs: ["list"] }],
      },
    });
    const bind = (name: string, group: string) =>
      http(cluster, "POST", `${RBAC}/clusterrolebindings`, {
        body: {
          metadata: { name },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "ns-lister" },
          subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: group }],
        },
      });
    // Granting system:authenticated does nothing for it...
    expect((await bind("authenticated-ns-lister", "system:authenticated")).status).toBe(201);
    expect((await http(cluster, "GET", "/api/v1/namespaces", { token: null })).status).toBe(403);
    // ...granting system:unauthenticated does, as on a real cluster.
    expect((await bind("unauthenticated-ns-lister", "system:unauthenticated")).status).toBe(201);
    expect((await http(cluster, "GET", "/api/v1/namespaces", { token: null })).status).toBe(200);
    for (const name of ["authenticated-ns-lister", "unauthenticated-ns-lister"]) {
      await http(cluster, "DELETE", `${RBAC}/clusterrolebindings/${name}`);
    }
    await http(cluster, "DELETE", `${RBAC}/clusterroles/ns-lister`);
  });
});

describe("the Authorization header, read as kube-apiserver's bearer-token authenticator reads it", () => {
  const CMS = "/api/v1/namespaces/default/configmaps";
  const withHeader = (authorization: string) =>
    http(cluster, "GET", CMS, { token: null, headers: { authorization } }).then((r) => r.status);

  it("a bearer token nobody issued is 401, never anonymous, even on a public path", async () => {
    for (const path of [CMS, "/healthz", "/version"]) {
      const res = await http(cluster, "GET", path, { token: "not-a-token" });
      expect(res.body, path).toEqual(UNAUTHORIZED);
    }
  });

  it("another scheme, `Bearer` alone, or a space too many before the token: no token, so anonymous (403)", async () => {
    const admin = cluster.server.token;
    expect(await withHeader("Basic YWRtaW46YWRtaW4=")).toBe(403);
    expect(await withHeader("Bearer")).toBe(403);
    expect(await withHeader(`Bearer  ${admin}`)).toBe(403);
    expect(await withHeader(`Bearer\t${admin}`)).toBe(403);
  });

  it("the token is the second space-separated part, in any case of the scheme; what follows is ignored", async () => {
    const admin = cluster.server.token;
    expect(await withHeader(`bEaReR ${admin}`)).toBe(200);
    expect(await withHeader(`Bearer ${admin} trailing words`)).toBe(200);
    expect(await withHeader(`Bearer not-a-token ${admin}`)).toBe(401);
  });
});

describe("the admin token", () => {
  it("is in system:masters, so RBAC allows it everything without a binding", async () => {
    const review = await http(cluster, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", {
      body: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" },
    });
    expect(review.body.status.userInfo).toEqual({
      username: "capstan-admin",
      groups: ["system:masters", "system:authenticated"],
    });
    // Without the cluster-admin binding system:masters still may: the group short-circuits RBAC.
    const RBAC = "/apis/rbac.authorization.k8s.io/v1";
    expect((await http(cluster, "DELETE", `${RBAC}/clusterrolebindings/cluster-admin`)).status).toBe(200);
    try {
      expect((await http(cluster, "GET", "/api/v1/namespaces/kube-system/secrets")).status).toBe(200);
      expect((await http(cluster, "GET", "/metrics-of-nothing")).status).toBe(404);
    } finally {
      const restored = await http(cluster, "POST", `${RBAC}/clusterrolebindings`, {
        body: {
          metadata: { name: "cluster-admin" },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
          subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "system:masters" }],
        },
      });
      expect(restored.status).toBe(201);
    }
  });
});

describe("rbac: false (AlwaysAllow, which no real cluster runs)", () => {
  it("turns anonymous authentication off, as kube-apiserver does under AlwaysAllow: no token is 401 everywhere", async () => {
    const allowAll = await startTestCluster({ kubelet: false, server: { rbac: false } });
    try {
      for (const path of ["/api/v1/namespaces/default/configmaps", "/healthz", "/version"]) {
        const res = await http(allowAll, "GET", path, { token: null });
        expect(res.body, path).toEqual(UNAUTHORIZED);
      }
      expect((await http(allowAll, "GET", "/api/v1/namespaces/default/configmaps")).status).toBe(200);
    } finally {
      await allowAll.stop();
    }
  });
});
