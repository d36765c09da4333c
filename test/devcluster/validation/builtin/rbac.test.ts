/**
 * rbac.authorization.k8s.io validation as kube-apiserver 1.32 answers it: Roles' and ClusterRoles'
 * rules and aggregation, bindings' roleRef and subjects, the immutable roleRef, and the escalation
 * check answering before validation does.
 */
import { describe, expect, it } from "vitest";
import { fileFixture } from "../../../support/file-fixture.ts";
import { serviceAccountToken } from "../../rbac/support.ts";
import { type Response, startRawHttpCluster } from "../../support/http.ts";

const t = fileFixture(() => startRawHttpCluster({ kubelet: false }));

const RBAC = "/apis/rbac.authorization.k8s.io/v1";
const GROUP = "rbac.authorization.k8s.io";

type Reason = "FieldValueRequired" | "FieldValueInvalid" | "FieldValueNotSupported" | "FieldValueForbidden";
const cause = (reason: Reason, field: string, message: string) => ({ reason, message, field });

function expectInvalid(
  res: Response,
  kind: string,
  name: string,
  message: string,
  causes: ReturnType<typeof cause>[],
): void {
  expect(res.status).toBe(422);
  expect(res.body).toEqual({
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message,
    reason: "Invalid",
    details: { name, group: GROUP, kind, causes },
    code: 422,
  });
}

const PATH_SEGMENT_SLASH = "may not contain '/'";

describe("Roles and ClusterRoles", () => {
  it("refuses a rule without verbs, api groups or resources, each with kube-apiserver's words", async () => {
    const res = await t.request("POST", `${RBAC}/namespaces/default/roles`, {
      body: { metadata: { name: "empty-rule" }, rules: [{}] },
    });
    expectInvalid(
      res,
      "Role",
      "empty-rule",
      'Role.rbac.authorization.k8s.io "empty-rule" is invalid: [rules[0].verbs: Required value: verbs must contain at least one value, rules[0].apiGroups: Required value: resource rules must supply at least one api group, rules[0].resources: Required value: resource rules must supply at least one resource]',
      [
        cause("FieldValueRequired", "rules[0].verbs", "Required value: verbs must contain at least one value"),
        cause(
          "FieldValueRequired",
          "rules[0].apiGroups",
          "Required value: resource rules must supply at least one api group",
        ),
        cause(
          "FieldValueRequired",
          "rules[0].resources",
          "Required value: resource rules must supply at least one resource",
        ),
      ],
    );
  });

  it("refuses non-resource URLs in a Role, and beside resources, printing the URLs as Go's []string", async () => {
    const res = await t.request("POST", `${RBAC}/namespaces/default/roles`, {
      body: {
        metadata: { name: "urls" },
        rules: [
          { verbs: ["get"], nonResourceURLs: ["/healthz", "/version"] },
          { verbs: ["get"], apiGroups: [""], resources: ["pods"], nonResourceURLs: ["/x"] },
        ],
      },
    });
    expectInvalid(
      res,
      "Role",
      "urls",
      'Role.rbac.authorization.k8s.io "urls" is invalid: [rules[0].nonResourceURLs: Invalid value: []string{"/healthz", "/version"}: namespaced rules cannot apply to non-resource URLs, rules[1].nonResourceURLs: Invalid value: []string{"/x"}: namespaced rules cannot apply to non-resource URLs, rules[1].nonResourceURLs: Invalid value: []string{"/x"}: rules cannot apply to both regular resources and non-resource URLs]',
      [
        cause(
          "FieldValueInvalid",
          "rules[0].nonResourceURLs",
          'Invalid value: []string{"/healthz", "/version"}: namespaced rules cannot apply to non-resource URLs',
        ),
        cause(
          "FieldValueInvalid",
          "rules[1].nonResourceURLs",
          'Invalid value: []string{"/x"}: namespaced rules cannot apply to non-resource URLs',
        ),
        cause(
          "FieldValueInvalid",
          "rules[1].nonResourceURLs",
          'Invalid value: []string{"/x"}: rules cannot apply to both regular resources and non-resource URLs',
        ),
      ],
    );
  });

  it("accepts valid Roles and ClusterRoles unchanged, with names that are only URL-safe", async () => {
    const role = {
      metadata: { name: "system:pod-reader" },
      rules: [{ apiGroups: [""], resources: ["pods"], resourceNames: ["a"], verbs: ["get"] }],
    };
    const created = await t.request("POST", `${RBAC}/namespaces/default/roles`, { body: role });
    expect(created.status).toBe(201);
    expect(created.body.rules).toEqual(role.rules);
    const clusterRole = {
      metadata: { name: "Health_Checker" },
      rules: [{ nonResourceURLs: ["/healthz", "/healthz/*"], verbs: ["get"] }],
    };
    const cr = await t.request("POST", `${RBAC}/clusterroles`, { body: clusterRole });
    expect(cr.status).toBe(201);
    expect(cr.body.rules).toEqual(clusterRole.rules);
  });

  it("refuses a name with a slash with the path-segment rule", async () => {
    const res = await t.request("POST", `${RBAC}/namespaces/default/roles`, {
      body: { metadata: { name: "a%b" }, rules: [] },
    });
    expectInvalid(
      res,
      "Role",
      "a%b",
      `Role.rbac.authorization.k8s.io "a%b" is invalid: metadata.name: Invalid value: "a%b": may not contain '%'`,
      [cause("FieldValueInvalid", "metadata.name", `Invalid value: "a%b": may not contain '%'`)],
    );
  });

  it("refuses an aggregationRule without selectors, or with an invalid one", async () => {
    const none = await t.request("POST", `${RBAC}/clusterroles`, {
      body: { metadata: { name: "agg-none" }, aggregationRule: {} },
    });
    expectInvalid(
      none,
      "ClusterRole",
      "agg-none",
      'ClusterRole.rbac.authorization.k8s.io "agg-none" is invalid: aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil',
      [
        cause(
          "FieldValueRequired",
          "aggregationRule.clusterRoleSelectors",
          "Required value: at least one clusterRoleSelector required if aggregationRule is non-nil",
        ),
      ],
    );
    const bad = await t.request("POST", `${RBAC}/clusterroles`, {
      body: {
        metadata: { name: "agg-bad" },
        aggregationRule: {
          clusterRoleSelectors: [
            { matchLabels: { ok: "true" } },
            { matchExpressions: [{ key: "k", operator: "Has" }] },
          ],
        },
      },
    });
    expectInvalid(
      bad,
      "ClusterRole",
      "agg-bad",
      'ClusterRole.rbac.authorization.k8s.io "agg-bad" is invalid: [aggregationRule.clusterRoleSelectors[1].matchExpressions[0].operator: Invalid value: "Has": not a valid selector operator, aggregationRule.clusterRoleSelectors[1]: Invalid value: "null": invalid label selector.]',
      [
        cause(
          "FieldValueInvalid",
          "aggregationRule.clusterRoleSelectors[1].matchExpressions[0].operator",
          'Invalid value: "Has": not a valid selector operator',
        ),
        cause(
          "FieldValueInvalid",
          "aggregationRule.clusterRoleSelectors[1]",
          'Invalid value: "null": invalid label selector.',
        ),
      ],
    );
  });

  it("lists each error of an invalid update twice in the causes, as the strategy validates twice", async () => {
    const path = `${RBAC}/namespaces/default/roles`;
    const created = await t.request("POST", path, {
      body: { metadata: { name: "to-break" }, rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get"] }] },
    });
    expect(created.status).toBe(201);
    const res = await t.request("PUT", `${path}/to-break`, {
      body: { ...created.body, rules: [{ apiGroups: [""], resources: ["pods"] }] },
    });
    const missing = cause(
      "FieldValueRequired",
      "rules[0].verbs",
      "Required value: verbs must contain at least one value",
    );
    expectInvalid(
      res,
      "Role",
      "to-break",
      'Role.rbac.authorization.k8s.io "to-break" is invalid: rules[0].verbs: Required value: verbs must contain at least one value',
      [missing, missing],
    );
  });
});

describe("RoleBindings and ClusterRoleBindings", () => {
  it("defaults the roleRef's and Users' apiGroup, as the rbac/v1 scheme does, and keeps the rest", async () => {
    const res = await t.request("POST", `${RBAC}/namespaces/default/rolebindings`, {
      body: {
        metadata: { name: "defaults" },
        roleRef: { kind: "ClusterRole", name: "view" },
        subjects: [
          { kind: "User", name: "alice" },
          { kind: "Group", name: "devs" },
          { kind: "ServiceAccount", name: "default" },
        ],
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.roleRef).toEqual({ apiGroup: GROUP, kind: "ClusterRole", name: "view" });
    expect(res.body.subjects).toEqual([
      { kind: "User", name: "alice", apiGroup: GROUP },
      { kind: "Group", name: "devs", apiGroup: GROUP },
      { kind: "ServiceAccount", name: "default" },
    ]);
  });

  it("refuses a bad roleRef and bad subjects in kube-apiserver's order", async () => {
    const res = await t.request("POST", `${RBAC}/namespaces/default/rolebindings`, {
      body: {
        metadata: { name: "bad" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io/v1", kind: "Roles", name: "" },
        subjects: [
          { kind: "Robot", name: "r2" },
          { kind: "ServiceAccount", name: "Bad_Name", apiGroup: GROUP },
          { kind: "User", name: "", apiGroup: "example.com" },
        ],
      },
    });
    const subdomain =
      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
    expectInvalid(
      res,
      "RoleBinding",
      "bad",
      `RoleBinding.rbac.authorization.k8s.io "bad" is invalid: [roleRef.apiGroup: Unsupported value: "rbac.authorization.k8s.io/v1": supported values: "rbac.authorization.k8s.io", roleRef.kind: Unsupported value: "Roles": supported values: "Role", "ClusterRole", roleRef.name: Required value, subjects[0].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group", subjects[1].name: Invalid value: "Bad_Name": ${subdomain}, subjects[1].apiGroup: Unsupported value: "rbac.authorization.k8s.io": supported values: "", subjects[2].name: Required value, subjects[2].apiGroup: Unsupported value: "example.com": supported values: "rbac.authorization.k8s.io"]`,
      [
        cause(
          "FieldValueNotSupported",
          "roleRef.apiGroup",
          'Unsupported value: "rbac.authorization.k8s.io/v1": supported values: "rbac.authorization.k8s.io"',
        ),
        cause(
          "FieldValueNotSupported",
          "roleRef.kind",
          'Unsupported value: "Roles": supported values: "Role", "ClusterRole"',
        ),
        cause("FieldValueRequired", "roleRef.name", "Required value"),
        cause(
          "FieldValueNotSupported",
          "subjects[0].kind",
          'Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"',
        ),
        cause("FieldValueInvalid", "subjects[1].name", `Invalid value: "Bad_Name": ${subdomain}`),
        cause(
          "FieldValueNotSupported",
          "subjects[1].apiGroup",
          'Unsupported value: "rbac.authorization.k8s.io": supported values: ""',
        ),
        cause("FieldValueRequired", "subjects[2].name", "Required value"),
        cause(
          "FieldValueNotSupported",
          "subjects[2].apiGroup",
          'Unsupported value: "example.com": supported values: "rbac.authorization.k8s.io"',
        ),
      ],
    );
  });

  it("refuses a ClusterRoleBinding to a Role, or to a ServiceAccount without its namespace", async () => {
    const res = await t.request("POST", `${RBAC}/clusterrolebindings`, {
      body: {
        metadata: { name: "crb-bad" },
        roleRef: { apiGroup: GROUP, kind: "Role", name: "a/b" },
        subjects: [{ kind: "ServiceAccount", name: "default" }],
      },
    });
    expectInvalid(
      res,
      "ClusterRoleBinding",
      "crb-bad",
      `ClusterRoleBinding.rbac.authorization.k8s.io "crb-bad" is invalid: [roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole", roleRef.name: Invalid value: "a/b": ${PATH_SEGMENT_SLASH}, subjects[0].namespace: Required value]`,
      [
        cause("FieldValueNotSupported", "roleRef.kind", 'Unsupported value: "Role": supported values: "ClusterRole"'),
        cause("FieldValueInvalid", "roleRef.name", `Invalid value: "a/b": ${PATH_SEGMENT_SLASH}`),
        cause("FieldValueRequired", "subjects[0].namespace", "Required value"),
      ],
    );
  });

  it("refuses a change of roleRef, printing the new one as Go's rbac.RoleRef, and allows other changes", async () => {
    const path = `${RBAC}/clusterrolebindings`;
    const created = await t.request("POST", path, {
      body: {
        metadata: { name: "readers" },
        roleRef: { apiGroup: GROUP, kind: "ClusterRole", name: "view" },
        subjects: [{ kind: "ServiceAccount", name: "default", namespace: "default" }],
      },
    });
    expect(created.status).toBe(201);
    const moreSubjects = await t.request("PUT", `${path}/readers`, {
      body: { ...created.body, subjects: [...created.body.subjects, { kind: "Group", name: "devs" }] },
    });
    expect(moreSubjects.status).toBe(200);
    const res = await t.request("PUT", `${path}/readers`, {
      body: { ...moreSubjects.body, roleRef: { apiGroup: GROUP, kind: "ClusterRole", name: "edit" } },
    });
    const message =
      'roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"edit"}: cannot change roleRef';
    expectInvalid(
      res,
      "ClusterRoleBinding",
      "readers",
      `ClusterRoleBinding.rbac.authorization.k8s.io "readers" is invalid: ${message}`,
      [cause("FieldValueInvalid", "roleRef", message.slice("roleRef: ".length))],
    );
  });
});

describe("escalation and validation", () => {
  it("answers a user's escalating invalid Role with the escalation 403, a non-escalating one with the 422", async () => {
    const token = await serviceAccountToken(t.cluster, "esc-validation", "writer");
    const ns = `${RBAC}/namespaces/esc-validation`;
    await t.request("POST", `${ns}/roles`, {
      body: {
        metadata: { name: "role-writer" },
        rules: [
          { apiGroups: [GROUP], resources: ["roles"], verbs: ["create"] },
          { apiGroups: [""], resources: ["configmaps"], verbs: ["get"] },
        ],
      },
    });
    await t.request("POST", `${ns}/rolebindings`, {
      body: {
        metadata: { name: "role-writer" },
        roleRef: { apiGroup: GROUP, kind: "Role", name: "role-writer" },
        subjects: [{ kind: "ServiceAccount", name: "writer" }],
      },
    });
    const escalating = await t.request("POST", `${ns}/roles`, {
      token,
      body: {
        metadata: { name: "secrets" },
        rules: [
          { apiGroups: [""], resources: ["secrets"], verbs: ["get"] },
          { apiGroups: [""], resources: ["pods"] },
        ],
      },
    });
    expect(escalating.status).toBe(403);
    const invalidOnly = await t.request("POST", `${ns}/roles`, {
      token,
      body: { metadata: { name: "cms" }, rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }, {}] },
    });
    expect(invalidOnly.status).toBe(422);
    expect(invalidOnly.body.details.causes.map((c: { field: string }) => c.field)).toEqual([
      "rules[1].verbs",
      "rules[1].apiGroups",
      "rules[1].resources",
    ]);
  });
});
