/**
 * RBAC over HTTP: ServiceAccount tokens from TokenRequest, Role/ClusterRole evaluation with the real
 * 403 bodies, impersonation checked with the `impersonate` verb, and the self-subject reviews.
 */

import { startTestCluster, type TestCluster } from "capstan-dev/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { http, RBAC_CLUSTER, serviceAccountToken } from "./support.ts";

let cluster: TestCluster;
let token: string;
const SA = "system:serviceaccount:team:robot";

beforeAll(async () => {
  cluster = await startTestCluster(RBAC_CLUSTER);
  token = await serviceAccountToken(cluster, "team", "robot");
  await http(cluster, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/team/roles", {
    body: {
      metadata: { name: "cm-writer" },
      rules: [
        { apiGroups: [""], resources: ["configmaps"], verbs: ["create", "list"] },
        { apiGroups: [""], resources: ["configmaps"], verbs: ["get", "update"], resourceNames: ["allowed"] },
        { apiGroups: ["apps"], resources: ["deployments/scale"], verbs: ["get"] },
      ],
    },
  });
  await http(cluster, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/team/rolebindings", {
    body: {
      metadata: { name: "robot-cm-writer" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "cm-writer" },
      subjects: [{ kind: "ServiceAccount", name: "robot" }],
    },
  });
});
afterAll(async () => {
  await cluster.stop();
});

const forbidden = (message: string, details: Record<string, string>) => ({
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Failure",
  message,
  reason: "Forbidden",
  details,
  code: 403,
});

describe("ServiceAccount bound to a Role", () => {
  it("does exactly what the Role allows: create and list configmaps in its namespace", async () => {
    const created = await http(cluster, "POST", "/api/v1/namespaces/team/configmaps", {
      token,
      body: { metadata: { name: "allowed" }, data: { a: "1" } },
    });
    expect(created.status).toBe(201);
    expect((await http(cluster, "GET", "/api/v1/namespaces/team/configmaps", { token })).status).toBe(200);
    expect((await http(cluster, "GET", "/api/v1/namespaces/team/configmaps/allowed", { token })).status).toBe(200);
  });

  it("answers a denied create with the real 403 Status", async () => {
    const res = await http(cluster, "POST", "/api/v1/namespaces/other/configmaps", {
      token,
      body: { metadata: { name: "x" } },
    });
    expect(res.status).toBe(403);
    expect(res.body).toEqual(
      forbidden(
        `configmaps is forbidden: User "${SA}" cannot create resource "configmaps" in API group "" in the namespace "other"`,
        { kind: "configmaps" },
      ),
    );
  });

  it("limits get and update to the resourceNames of the rule, naming the object in the 403", async () => {
    await http(cluster, "POST", "/api/v1/namespaces/team/configmaps", { body: { metadata: { name: "secret-ish" } } });
    const res = await http(cluster, "GET", "/api/v1/namespaces/team/configmaps/secret-ish", { token });
    expect(res.status).toBe(403);
    expect(res.body).toEqual(
      forbidden(
        `configmaps "secret-ish" is forbidden: User "${SA}" cannot get resource "configmaps" in API group "" in the namespace "team"`,
        { name: "secret-ish", kind: "configmaps" },
      ),
    );
  });

  it("authorizes a watch as watch, not list", async () => {
    const res = await http(cluster, "GET", "/api/v1/namespaces/team/configmaps?watch=true&timeoutSeconds=1", { token });
    expect(res.status).toBe(403);
    expect(res.body.message).toBe(
      `configmaps is forbidden: User "${SA}" cannot watch resource "configmaps" in API group "" in the namespace "team"`,
    );
  });

  it("words a cluster-scoped denial 'at the cluster scope'", async () => {
    const res = await http(cluster, "GET", "/api/v1/namespaces", { token });
    expect(res.body).toEqual(
      forbidden(
        `namespaces is forbidden: User "${SA}" cannot list resource "namespaces" in API group "" at the cluster scope`,
        { kind: "namespaces" },
      ),
    );
  });

  it("names subresources as resource/subresource in the message and the group in details", async () => {
    const res = await http(cluster, "PUT", "/apis/apps/v1/namespaces/team/deployments/web/scale", {
      token,
      body: { spec: { replicas: 2 } },
    });
    expect(res.body).toEqual(
      forbidden(
        `deployments.apps "web" is forbidden: User "${SA}" cannot update resource "deployments/scale" in API group "apps" in the namespace "team"`,
        { name: "web", group: "apps", kind: "deployments" },
      ),
    );
  });

  it("answers a denied non-resource URL with the path form", async () => {
    const res = await http(cluster, "GET", "/metrics", { token });
    expect(res.body).toEqual(forbidden(`forbidden: User "${SA}" cannot get path "/metrics"`, {}));
  });

  it("treats a token-less request as system:anonymous: public paths open, the rest 403; a bad token is 401", async () => {
    expect((await http(cluster, "GET", "/version", { token: null })).status).toBe(200);
    const api = await http(cluster, "GET", "/api", { token: null });
    expect(api.body).toEqual(forbidden('forbidden: User "system:anonymous" cannot get path "/api"', {}));
    expect((await http(cluster, "GET", "/api", { token: "not-a-token" })).status).toBe(401);
  });

  it("can read discovery through the bootstrap system:discovery binding", async () => {
    expect((await http(cluster, "GET", "/api", { token })).status).toBe(200);
    expect((await http(cluster, "GET", "/apis", { token })).status).toBe(200);
    expect((await http(cluster, "GET", "/api/v1", { token })).status).toBe(200);
  });
});

describe("bindings and roles", () => {
  it("reports a binding to a missing role as the denial's RBAC reason", async () => {
    const t = await serviceAccountToken(cluster, "dangling", "sa");
    await http(cluster, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/dangling/rolebindings", {
      body: {
        metadata: { name: "b" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "missing" },
        subjects: [{ kind: "ServiceAccount", name: "sa", namespace: "dangling" }],
      },
    });
    const res = await http(cluster, "GET", "/api/v1/namespaces/dangling/pods", { token: t });
    expect(res.body.message).toBe(
      'pods is forbidden: User "system:serviceaccount:dangling:sa" cannot list resource "pods" in API group "" in the namespace "dangling": RBAC: role.rbac.authorization.k8s.io "missing" not found',
    );
  });

  it("applies a ClusterRole bound by a RoleBinding only in that namespace, and the aggregated view role", async () => {
    const t = await serviceAccountToken(cluster, "viewers", "v");
    await http(cluster, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/viewers/rolebindings", {
      body: {
        metadata: { name: "view" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "view" },
        subjects: [{ kind: "Group", name: "system:serviceaccounts:viewers" }],
      },
    });
    expect((await http(cluster, "GET", "/apis/apps/v1/namespaces/viewers/deployments", { token: t })).status).toBe(200);
    expect((await http(cluster, "GET", "/apis/apps/v1/namespaces/team/deployments", { token: t })).status).toBe(403);
    const write = await http(cluster, "POST", "/api/v1/namespaces/viewers/configmaps", {
      token: t,
      body: { metadata: { name: "c" } },
    });
    expect(write.status).toBe(403);
  });

  it("revokes on the next request when a binding is deleted, and grants again when it is re-created", async () => {
    const t = await serviceAccountToken(cluster, "revoke", "sa");
    const binding = {
      metadata: { name: "edit" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "edit" },
      subjects: [{ kind: "ServiceAccount", name: "sa", namespace: "revoke" }],
    };
    const bindings = "/apis/rbac.authorization.k8s.io/v1/namespaces/revoke/rolebindings";
    const list = () => http(cluster, "GET", "/api/v1/namespaces/revoke/secrets", { token: t });
    await http(cluster, "POST", bindings, { body: binding });
    expect((await list()).status).toBe(200);
    await http(cluster, "DELETE", `${bindings}/edit`);
    expect((await list()).status).toBe(403);
    await http(cluster, "POST", bindings, { body: binding });
    expect((await list()).status).toBe(200);
  });

  it("aggregates ClusterRoles transitively: admin includes edit, which includes view", async () => {
    const t = await serviceAccountToken(cluster, "admins", "a");
    await http(cluster, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/admins/rolebindings", {
      body: {
        metadata: { name: "admin" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "admin" },
        subjects: [{ kind: "ServiceAccount", name: "a", namespace: "admins" }],
      },
    });
    expect((await http(cluster, "GET", "/api/v1/namespaces/admins/pods", { token: t })).status).toBe(200);
    const write = await http(cluster, "POST", "/api/v1/namespaces/admins/configmaps", {
      token: t,
      body: { metadata: { name: "c" } },
    });
    expect(write.status).toBe(201);
    expect(
      (await http(cluster, "GET", "/apis/rbac.authorization.k8s.io/v1/namespaces/admins/roles", { token: t })).status,
    ).toBe(200);
  });

  it("creates view/edit/admin with their aggregated rules written in, as the aggregation controller would", async () => {
    const view = await http(cluster, "GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/view");
    expect(view.body.rules).toContainEqual({
      verbs: ["get", "list", "watch"],
      apiGroups: [""],
      resources: ["namespaces"],
    });
    const admin = await http(cluster, "GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/admin");
    expect(admin.body.rules).toEqual(expect.arrayContaining(view.body.rules));
  });

  it("extends admin with a ClusterRole labelled aggregate-to-view created later (through edit and view)", async () => {
    const t = await serviceAccountToken(cluster, "crd-admins", "a");
    await http(cluster, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/crd-admins/rolebindings", {
      body: {
        metadata: { name: "admin" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "admin" },
        subjects: [{ kind: "ServiceAccount", name: "a", namespace: "crd-admins" }],
      },
    });
    const path = "/api/v1/namespaces/crd-admins/podtemplates";
    expect((await http(cluster, "GET", path, { token: t })).status).toBe(403);
    await http(cluster, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", {
      body: {
        metadata: { name: "podtemplates-view", labels: { "rbac.authorization.k8s.io/aggregate-to-view": "true" } },
        rules: [{ apiGroups: [""], resources: ["podtemplates"], verbs: ["list"] }],
      },
    });
    expect((await http(cluster, "GET", path, { token: t })).status).not.toBe(403);
  });

  it("matches */scale rules against every resource's scale subresource", async () => {
    const t = await serviceAccountToken(cluster, "scalers", "s");
    await http(cluster, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", {
      body: { metadata: { name: "scaler" }, rules: [{ apiGroups: ["*"], resources: ["*/scale"], verbs: ["get"] }] },
    });
    await http(cluster, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
      body: {
        metadata: { name: "scaler" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "scaler" },
        subjects: [{ kind: "ServiceAccount", name: "s", namespace: "scalers" }],
      },
    });
    const scale = await http(cluster, "GET", "/apis/apps/v1/namespaces/scalers/deployments/none/scale", { token: t });
    expect(scale.status).toBe(404);
    const plain = await http(cluster, "GET", "/apis/apps/v1/namespaces/scalers/deployments/none", { token: t });
    expect(plain.status).toBe(403);
  });
});

describe("ServiceAccount tokens", () => {
  it("authenticate with the ServiceAccount's username and groups (SelfSubjectReview)", async () => {
    const res = await http(cluster, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", {
      token,
      body: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" },
    });
    expect(res.status).toBe(201);
    expect(res.body.status.userInfo.username).toBe(SA);
    expect(res.body.status.userInfo.groups).toEqual([
      "system:serviceaccounts",
      "system:serviceaccounts:team",
      "system:authenticated",
    ]);
  });

  it("stop working once their ServiceAccount is deleted", async () => {
    const t = await serviceAccountToken(cluster, "gone", "sa");
    expect((await http(cluster, "GET", "/api", { token: t })).status).toBe(200);
    await http(cluster, "DELETE", "/api/v1/namespaces/gone/serviceaccounts/sa");
    expect((await http(cluster, "GET", "/api", { token: t })).status).toBe(401);
  });

  it("are refused when tampered with", async () => {
    const [header, payload, signature] = token.split(".");
    const claims = JSON.parse(Buffer.from(payload!, "base64url").toString());
    claims.sub = "system:serviceaccount:kube-system:admin";
    const forged = `${header}.${Buffer.from(JSON.stringify(claims)).toString("base64url")}.${signature}`;
    expect((await http(cluster, "GET", "/api", { token: forged })).status).toBe(401);
  });

  it("TokenRequest refuses a lifetime under 10 minutes and a missing ServiceAccount", async () => {
    const short = await http(cluster, "POST", "/api/v1/namespaces/team/serviceaccounts/robot/token", {
      body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 60 } },
    });
    expect(short.status).toBe(422);
    expect(short.body.message).toBe(
      'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes',
    );
    const missing = await http(cluster, "POST", "/api/v1/namespaces/team/serviceaccounts/nobody/token", {
      body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: {} },
    });
    expect(missing.status).toBe(404);
    expect(missing.body.message).toBe('serviceaccounts "nobody" not found');
  });

  it("cannot request tokens for other ServiceAccounts without create on serviceaccounts/token", async () => {
    const res = await http(cluster, "POST", "/api/v1/namespaces/team/serviceaccounts/robot/token", {
      token,
      body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: {} },
    });
    expect(res.body.message).toBe(
      `serviceaccounts "robot" is forbidden: User "${SA}" cannot create resource "serviceaccounts/token" in API group "" in the namespace "team"`,
    );
  });
});

describe("impersonation", () => {
  it("lets the admin act as a ServiceAccount, with its RBAC", async () => {
    const res = await http(cluster, "POST", "/api/v1/namespaces/other/configmaps", {
      headers: { "impersonate-user": SA },
      body: { metadata: { name: "x" } },
    });
    expect(res.status).toBe(403);
    expect(res.body.message).toContain(`User "${SA}" cannot create resource "configmaps"`);
  });

  it("checks the impersonate verb on users for the requesting user", async () => {
    const res = await http(cluster, "GET", "/api", { token, headers: { "impersonate-user": "bob" } });
    expect(res.body).toEqual(
      forbidden(
        `users "bob" is forbidden: User "${SA}" cannot impersonate resource "users" in API group "" at the cluster scope`,
        { name: "bob", kind: "users" },
      ),
    );
  });

  it("checks serviceaccounts in their namespace, and userextras in authentication.k8s.io", async () => {
    const sa = await http(cluster, "GET", "/api", {
      token,
      headers: { "impersonate-user": "system:serviceaccount:x:y" },
    });
    expect(sa.body.message).toBe(
      `serviceaccounts "y" is forbidden: User "${SA}" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "x"`,
    );
    await http(cluster, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", {
      body: {
        metadata: { name: "impersonate-bob" },
        rules: [{ apiGroups: [""], resources: ["users"], verbs: ["impersonate"], resourceNames: ["bob"] }],
      },
    });
    await http(cluster, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
      body: {
        metadata: { name: "robot-impersonates-bob" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "impersonate-bob" },
        subjects: [{ kind: "ServiceAccount", name: "robot", namespace: "team" }],
      },
    });
    const extra = await http(cluster, "GET", "/api", {
      token,
      headers: { "impersonate-user": "bob", "impersonate-extra-scopes": "view" },
    });
    expect(extra.body.message).toBe(
      `userextras.authentication.k8s.io "view" is forbidden: User "${SA}" cannot impersonate resource "userextras/scopes" in API group "authentication.k8s.io" at the cluster scope`,
    );
    const asBob = await http(cluster, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", {
      token,
      headers: { "impersonate-user": "bob" },
      body: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" },
    });
    expect(asBob.body.status.userInfo).toEqual({ username: "bob", groups: ["system:authenticated"] });
  });

  it("refuses groups without a user", async () => {
    const res = await http(cluster, "GET", "/api", { headers: { "impersonate-group": "system:masters" } });
    expect(res.status).toBe(500);
  });
});

describe("access reviews", () => {
  it("SelfSubjectAccessReview answers for the requesting user, with the allowing binding as reason", async () => {
    const ask = (resourceAttributes: object) =>
      http(cluster, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", {
        token,
        body: { apiVersion: "authorization.k8s.io/v1", kind: "SelfSubjectAccessReview", spec: { resourceAttributes } },
      });
    const yes = await ask({ namespace: "team", verb: "create", resource: "configmaps" });
    expect(yes.status).toBe(201);
    expect(yes.body.status).toEqual({
      allowed: true,
      reason: `RBAC: allowed by RoleBinding "robot-cm-writer/team" of Role "cm-writer" to ServiceAccount "robot/team"`,
    });
    const no = await ask({ namespace: "team", verb: "delete", resource: "configmaps" });
    expect(no.body.status).toEqual({ allowed: false });
  });

  it("SelfSubjectAccessReview without attributes, or with both kinds, is 422 with 1.32's wording", async () => {
    const review = (spec: object) =>
      http(cluster, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", {
        token,
        body: { apiVersion: "authorization.k8s.io/v1", kind: "SelfSubjectAccessReview", spec },
      });
    const none = await review({});
    expect(none.status).toBe(422);
    // ValidateSelfSubjectAccessReviewSpec passes the nil nonResourceAttributes, which 1.32 prints as "null".
    expect(none.body.message).toBe(
      'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified',
    );
    const both = await review({
      resourceAttributes: { verb: "get" },
      nonResourceAttributes: { path: "/x", verb: "get" },
    });
    expect(both.status).toBe(422);
    expect(both.body.message).toBe(
      'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.nonResourceAttributes: Invalid value: authorization.NonResourceAttributes{Path:"/x", Verb:"get"}: cannot be specified in combination with resourceAttributes',
    );
  });

  it("the review resources are in discovery", async () => {
    const res = await http(cluster, "GET", "/apis/authorization.k8s.io/v1", { token });
    const names = res.body.resources.map((r: { name: string }) => r.name);
    expect(names).toEqual(expect.arrayContaining(["selfsubjectaccessreviews", "selfsubjectrulesreviews"]));
  });
});
