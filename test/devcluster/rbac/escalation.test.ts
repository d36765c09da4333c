/** Escalation prevention on RBAC writes: grant only what you hold, unless you have `escalate` or `bind`. */

import { startTestCluster, type TestCluster } from "capstan-dev/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { http, RBAC_CLUSTER, serviceAccountToken } from "./support.ts";

let cluster: TestCluster;
let token: string;
const RBAC = "/apis/rbac.authorization.k8s.io/v1";
const USER =
  'user "system:serviceaccount:esc:sa" (groups=["system:serviceaccounts" "system:serviceaccounts:esc" "system:authenticated"])';

beforeAll(async () => {
  cluster = await startTestCluster(RBAC_CLUSTER);
  token = await serviceAccountToken(cluster, "esc", "sa");
  await http(cluster, "POST", `${RBAC}/namespaces/esc/roles`, {
    body: {
      metadata: { name: "rbac-writer" },
      rules: [
        {
          apiGroups: ["rbac.authorization.k8s.io"],
          resources: ["roles", "rolebindings"],
          verbs: ["create", "update", "get"],
        },
        { apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list"] },
      ],
    },
  });
  await http(cluster, "POST", `${RBAC}/namespaces/esc/rolebindings`, {
    body: {
      metadata: { name: "rbac-writer" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "rbac-writer" },
      subjects: [{ kind: "ServiceAccount", name: "sa" }],
    },
  });
});
afterAll(async () => {
  await cluster.stop();
});

const role = (name: string, rules: object[]) => ({ metadata: { name }, rules });

describe("RBAC escalation checks", () => {
  it("lets a user create a Role with rules it holds", async () => {
    const res = await http(cluster, "POST", `${RBAC}/namespaces/esc/roles`, {
      token,
      body: role("reader", [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }]),
    });
    expect(res.status).toBe(201);
  });

  it("refuses a Role granting more, listing the missing rights as kube-apiserver does", async () => {
    const res = await http(cluster, "POST", `${RBAC}/namespaces/esc/roles`, {
      token,
      body: role("too-much", [{ apiGroups: [""], resources: ["configmaps", "secrets"], verbs: ["get", "delete"] }]),
    });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: `roles.rbac.authorization.k8s.io "too-much" is forbidden: ${USER} is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["configmaps"], Verbs:["delete"]}\n{APIGroups:[""], Resources:["secrets"], Verbs:["get" "delete"]}`,
      reason: "Forbidden",
      details: { name: "too-much", group: "rbac.authorization.k8s.io", kind: "roles" },
      code: 403,
    });
  });

  it("refuses a binding to a role with rights the user lacks, and allows it with bind on that role", async () => {
    const binding = {
      metadata: { name: "sa-admin" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "admin" },
      subjects: [{ kind: "ServiceAccount", name: "sa" }],
    };
    const refused = await http(cluster, "POST", `${RBAC}/namespaces/esc/rolebindings`, { token, body: binding });
    expect(refused.status).toBe(403);
    expect(refused.body.message).toMatch(
      /^rolebindings\.rbac\.authorization\.k8s\.io "sa-admin" is forbidden: user "system:serviceaccount:esc:sa" .* is attempting to grant RBAC permissions not currently held:\n/,
    );
    await http(cluster, "POST", `${RBAC}/namespaces/esc/roles`, {
      body: role("bind-admin", [
        {
          apiGroups: ["rbac.authorization.k8s.io"],
          resources: ["clusterroles"],
          verbs: ["bind"],
          resourceNames: ["admin"],
        },
      ]),
    });
    await http(cluster, "POST", `${RBAC}/namespaces/esc/rolebindings`, {
      body: {
        metadata: { name: "bind-admin" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "bind-admin" },
        subjects: [{ kind: "ServiceAccount", name: "sa" }],
      },
    });
    const allowed = await http(cluster, "POST", `${RBAC}/namespaces/esc/rolebindings`, { token, body: binding });
    expect(allowed.status).toBe(201);
  });

  it("lets a user with escalate on roles grant anything in a Role", async () => {
    const t = await serviceAccountToken(cluster, "esc2", "sa");
    await http(cluster, "POST", `${RBAC}/namespaces/esc2/roles`, {
      body: role("escalator", [
        { apiGroups: ["rbac.authorization.k8s.io"], resources: ["roles"], verbs: ["create", "escalate"] },
      ]),
    });
    await http(cluster, "POST", `${RBAC}/namespaces/esc2/rolebindings`, {
      body: {
        metadata: { name: "escalator" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "escalator" },
        subjects: [{ kind: "ServiceAccount", name: "sa" }],
      },
    });
    const res = await http(cluster, "POST", `${RBAC}/namespaces/esc2/roles`, {
      token: t,
      body: role("everything", [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }]),
    });
    expect(res.status).toBe(201);
  });

  it("appends the errors met resolving the user's own rules", async () => {
    await http(cluster, "POST", `${RBAC}/namespaces/esc/rolebindings`, {
      body: {
        metadata: { name: "dangling" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "missing" },
        subjects: [{ kind: "ServiceAccount", name: "sa" }],
      },
    });
    const res = await http(cluster, "POST", `${RBAC}/namespaces/esc/roles`, {
      token,
      body: role("nodes", [{ apiGroups: [""], resources: ["nodes"], verbs: ["get"] }]),
    });
    expect(res.body.message).toBe(
      `roles.rbac.authorization.k8s.io "nodes" is forbidden: ${USER} is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["nodes"], Verbs:["get"]}; resolution errors: [role.rbac.authorization.k8s.io "missing" not found]`,
    );
    await http(cluster, "DELETE", `${RBAC}/namespaces/esc/rolebindings/dangling`);
  });

  it("leaves the admin and in-process callers unchecked", async () => {
    const res = await http(cluster, "POST", `${RBAC}/namespaces/esc/roles`, {
      body: role("admin-made", [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }]),
    });
    expect(res.status).toBe(201);
  });
});
