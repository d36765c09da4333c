import { describe, expect, it } from "vitest";
import {
  type RuleAttributes,
  ruleMatches,
  type WebhookRule,
} from "../../../packages/capstan-dev/src/devcluster/admission/webhook-rules.ts";

const pod: RuleAttributes = {
  operation: "CREATE",
  resource: { group: "", version: "v1", resource: "pods" },
  subresource: "",
  namespace: "ns",
};
const rule = (extra: Partial<WebhookRule> = {}): WebhookRule => ({
  apiGroups: [""],
  apiVersions: ["v1"],
  operations: ["CREATE"],
  resources: ["pods"],
  ...extra,
});

describe("webhook rules, as kube-apiserver matches them", () => {
  it("needs the operation, group, version and resource to match, each exactly or by *", () => {
    expect(ruleMatches(rule(), pod)).toBe(true);
    expect(ruleMatches(rule({ operations: ["UPDATE"] }), pod)).toBe(false);
    expect(ruleMatches(rule({ operations: ["*"] }), { ...pod, operation: "DELETE" })).toBe(true);
    expect(ruleMatches(rule({ apiGroups: ["apps"] }), pod)).toBe(false);
    expect(ruleMatches(rule({ apiGroups: ["*"], apiVersions: ["*"], resources: ["*"] }), pod)).toBe(true);
    expect(ruleMatches(rule({ apiVersions: ["v1beta1"] }), pod)).toBe(false);
    expect(ruleMatches(rule({ resources: ["services"] }), pod)).toBe(false);
    expect(ruleMatches(rule({ operations: [] }), pod)).toBe(false);
  });

  it("matches subresources only when named: pods/status, pods/*, */status", () => {
    const status = { ...pod, operation: "UPDATE" as const, subresource: "status" };
    expect(ruleMatches(rule({ operations: ["UPDATE"] }), status)).toBe(false);
    expect(ruleMatches(rule({ operations: ["UPDATE"], resources: ["pods/status"] }), status)).toBe(true);
    expect(ruleMatches(rule({ operations: ["UPDATE"], resources: ["pods/*"] }), status)).toBe(true);
    expect(ruleMatches(rule({ operations: ["UPDATE"], resources: ["*/status"] }), status)).toBe(true);
    expect(ruleMatches(rule({ operations: ["UPDATE"], resources: ["*/scale"] }), status)).toBe(false);
    // "pods/*" also covers the pod itself (an empty subresource matches "*").
    expect(ruleMatches(rule({ resources: ["pods/*"] }), pod)).toBe(true);
  });

  it("scopes: Namespaced needs a namespace, Cluster none; namespace objects are cluster-scoped", () => {
    const namespace: RuleAttributes = {
      operation: "CREATE",
      resource: { group: "", version: "v1", resource: "namespaces" },
      subresource: "",
      namespace: "new-ns",
    };
    const nsRule = rule({ resources: ["namespaces"] });
    expect(ruleMatches({ ...nsRule, scope: "Namespaced" }, namespace)).toBe(false);
    expect(ruleMatches({ ...nsRule, scope: "Cluster" }, namespace)).toBe(true);
    expect(ruleMatches(rule({ scope: "Namespaced" }), pod)).toBe(true);
    expect(ruleMatches(rule({ scope: "Cluster" }), pod)).toBe(false);
    expect(ruleMatches(rule({ scope: "*" }), pod)).toBe(true);
    expect(
      ruleMatches(rule({ scope: "Cluster", resources: ["nodes"] }), {
        ...pod,
        resource: { group: "", version: "v1", resource: "nodes" },
        namespace: "",
      }),
    ).toBe(true);
  });
});
