/** RBAC rule matching (RuleAllows) and the wording of Forbidden messages, without a server. */
import { describe, expect, it } from "vitest";
import {
  type Attributes,
  forbiddenError,
  forbiddenMessage,
} from "../../../packages/capstan-dev/src/devcluster/auth/attributes.ts";
import {
  ruleAllows,
  splitServiceAccountUsername,
} from "../../../packages/capstan-dev/src/devcluster/auth/rbac-authorizer.ts";

const user = { username: "alice", groups: ["system:authenticated"] };

function resource(verb: string, apiGroup: string, resourceName: string, extra: Partial<Attributes> = {}): Attributes {
  return {
    user,
    verb,
    isResourceRequest: true,
    path: "",
    apiGroup,
    apiVersion: "v1",
    namespace: "ns",
    resource: resourceName,
    subresource: "",
    name: "",
    ...extra,
  };
}

function path(verb: string, p: string): Attributes {
  return { ...resource(verb, "", ""), isResourceRequest: false, path: p, namespace: "" };
}

describe("ruleAllows", () => {
  it("needs verb, group and resource to match, with * as a wildcard for each", () => {
    const rule = { verbs: ["get"], apiGroups: ["apps"], resources: ["deployments"] };
    expect(ruleAllows(resource("get", "apps", "deployments"), rule)).toBe(true);
    expect(ruleAllows(resource("list", "apps", "deployments"), rule)).toBe(false);
    expect(ruleAllows(resource("get", "", "deployments"), rule)).toBe(false);
    expect(ruleAllows(resource("get", "apps", "replicasets"), rule)).toBe(false);
    expect(ruleAllows(resource("watch", "x.io", "things"), { verbs: ["*"], apiGroups: ["*"], resources: ["*"] })).toBe(
      true,
    );
  });

  it("matches a subresource only as resource/subresource or */subresource", () => {
    const scale = resource("update", "apps", "deployments", { subresource: "scale" });
    expect(ruleAllows(scale, { verbs: ["update"], apiGroups: ["apps"], resources: ["deployments"] })).toBe(false);
    expect(ruleAllows(scale, { verbs: ["update"], apiGroups: ["apps"], resources: ["deployments/scale"] })).toBe(true);
    expect(ruleAllows(scale, { verbs: ["update"], apiGroups: ["apps"], resources: ["*/scale"] })).toBe(true);
    expect(ruleAllows(scale, { verbs: ["update"], apiGroups: ["apps"], resources: ["*/status"] })).toBe(false);
  });

  it("limits a rule with resourceNames to those names (a list, with no name, is not allowed)", () => {
    const rule = { verbs: ["get", "list"], apiGroups: [""], resources: ["configmaps"], resourceNames: ["a"] };
    expect(ruleAllows(resource("get", "", "configmaps", { name: "a" }), rule)).toBe(true);
    expect(ruleAllows(resource("get", "", "configmaps", { name: "b" }), rule)).toBe(false);
    expect(ruleAllows(resource("list", "", "configmaps"), rule)).toBe(false);
  });

  it("matches non-resource URLs exactly or by a trailing * prefix, never by resource rules", () => {
    const rule = { verbs: ["get"], nonResourceURLs: ["/apis/*", "/version"] };
    expect(ruleAllows(path("get", "/apis/apps/v1"), rule)).toBe(true);
    expect(ruleAllows(path("get", "/version"), rule)).toBe(true);
    expect(ruleAllows(path("get", "/version/x"), rule)).toBe(false);
    expect(ruleAllows(path("post", "/version"), rule)).toBe(false);
    expect(ruleAllows(path("get", "/api"), { verbs: ["*"], apiGroups: ["*"], resources: ["*"] })).toBe(false);
  });
});

describe("Forbidden wording", () => {
  it("quotes the user and names resource, group and scope as kube-apiserver does", () => {
    expect(forbiddenMessage(resource("delete", "apps", "deployments", { namespace: "" }))).toBe(
      'User "alice" cannot delete resource "deployments" in API group "apps" at the cluster scope',
    );
    expect(forbiddenMessage(path("get", "/logs"))).toBe('User "alice" cannot get path "/logs"');
  });

  it("escapes markup in the message, as the real server's sanitizer does", () => {
    const err = forbiddenError({ ...resource("get", "", "pods"), user: { username: "<b>&", groups: [] } });
    expect(err.status.message).toBe(
      'pods is forbidden: User "&lt;b&gt;&amp;" cannot get resource "pods" in API group "" in the namespace "ns"',
    );
  });
});

describe("ServiceAccount usernames", () => {
  it("split into namespace and name only when both are present", () => {
    expect(splitServiceAccountUsername("system:serviceaccount:ns:sa")).toEqual({ namespace: "ns", name: "sa" });
    expect(splitServiceAccountUsername("system:serviceaccount:ns")).toBeUndefined();
    expect(splitServiceAccountUsername("system:serviceaccount:a:b:c")).toBeUndefined();
    expect(splitServiceAccountUsername("alice")).toBeUndefined();
  });
});
