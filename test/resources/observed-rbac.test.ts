import { needs } from "capstan";
import { ConfigMap } from "capstan/core";
import {
  compareRbac,
  describeGrants,
  leastPrivilegeNeeds,
  type ObservedRequest,
  observedRules,
  type PolicyRule,
} from "capstan/resources";
import { describe, expect, it } from "vitest";

const req = (
  verb: string,
  resource: string,
  namespace = "",
  name = "",
  apiGroup = "",
  subresource = "",
): ObservedRequest => ({
  verb,
  apiGroup,
  resource,
  subresource,
  namespace,
  name,
});
const crd = (verb: string, name = "") => req(verb, "customresourcedefinitions", "", name, "apiextensions.k8s.io");

describe("observedRules", () => {
  it("groups requests by API group and resource, verbs in RBAC's order, cluster scope apart from each namespace", () => {
    const rules = observedRules([
      req("watch", "configmaps"),
      req("list", "configmaps"),
      req("create", "configmaps", "b", ""),
      req("get", "configmaps", "a", "x"),
      req("update", "configmaps", "a", "y"),
      req("get", "configmaps", "a", "z"),
      req("patch", "widgets", "a", "w", "example.com", "status"),
      req("create", "events", "a"),
      crd("get", "widgets.example.com"),
      { verb: "get", nonResourceURL: "/livez" },
      { verb: "get", nonResourceURL: "/api" },
    ]);
    expect(rules).toEqual({
      cluster: [
        { apiGroups: [""], resources: ["configmaps"], verbs: ["list", "watch"] },
        { apiGroups: ["apiextensions.k8s.io"], resources: ["customresourcedefinitions"], verbs: ["get"] },
        { nonResourceURLs: ["/api", "/livez"], verbs: ["get"] },
      ],
      namespaced: [
        {
          namespace: "a",
          rules: [
            { apiGroups: [""], resources: ["configmaps"], verbs: ["get", "update"] },
            { apiGroups: [""], resources: ["events"], verbs: ["create"] },
            { apiGroups: ["example.com"], resources: ["widgets/status"], verbs: ["patch"] },
          ],
        },
        { namespace: "b", rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["create"] }] },
      ],
    });
  });
});

describe("compareRbac", () => {
  const generated: PolicyRule[] = [
    { apiGroups: [""], resources: ["configmaps"], verbs: ["list", "watch", "create", "patch"] },
    { apiGroups: ["apiextensions.k8s.io"], resources: ["customresourcedefinitions"], verbs: ["create"] },
    {
      apiGroups: ["apiextensions.k8s.io"],
      resources: ["customresourcedefinitions"],
      verbs: ["get", "update"],
      resourceNames: ["widgets.example.com"],
    },
    { apiGroups: ["example.com"], resources: ["widgets/status"], verbs: ["patch"] },
  ];

  it("sorts the generated grants into used and never used, resourceNames and subresources as RBAC matches them", () => {
    const result = compareRbac(generated, {
      allowed: [
        req("list", "configmaps"),
        req("create", "configmaps", "a"),
        crd("get", "widgets.example.com"),
        req("patch", "widgets", "a", "w", "example.com", "status"),
        // Not the status subresource: no generated rule allows a patch of the widget itself.
        req("patch", "widgets", "a", "w", "example.com"),
      ],
      denied: [],
    });
    expect(describeGrants(result.used)).toEqual([
      "list,create configmaps",
      "get customresourcedefinitions.apiextensions.k8s.io [widgets.example.com]",
      "patch widgets/status.example.com",
    ]);
    expect(describeGrants(result.unused)).toEqual([
      "watch,patch configmaps",
      "create customresourcedefinitions.apiextensions.k8s.io",
      "update customresourcedefinitions.apiextensions.k8s.io [widgets.example.com]",
    ]);
    expect(result.missing).toEqual([req("patch", "widgets", "a", "w", "example.com")]);
  });

  it("does not let a name-restricted grant cover another name", () => {
    const result = compareRbac(generated, { allowed: [], denied: [crd("get", "gadgets.example.com")] });
    expect(result.used).toEqual([]);
    expect(result.missing).toEqual([crd("get", "gadgets.example.com")]);
  });

  it("counts a denied request a generated rule allows as a use: the test had taken the rule away", () => {
    const result = compareRbac(generated, { allowed: [], denied: [req("patch", "configmaps", "a", "c")] });
    expect(describeGrants(result.used)).toEqual(["patch configmaps"]);
    expect(result.missing).toEqual([]);
  });

  it("puts what every authenticated user may do (discovery, health, self-reviews) apart from what is missing", () => {
    const review = req("create", "selfsubjectaccessreviews", "", "", "authorization.k8s.io");
    const result = compareRbac(generated, {
      allowed: [{ verb: "get", nonResourceURL: "/livez" }, { verb: "get", nonResourceURL: "/apis/apps/v1" }, review],
      denied: [{ verb: "get", nonResourceURL: "/metrics" }],
    });
    expect(result.everyone).toEqual([
      { verb: "get", nonResourceURL: "/livez" },
      { verb: "get", nonResourceURL: "/apis/apps/v1" },
      review,
    ]);
    expect(result.missing).toEqual([{ verb: "get", nonResourceURL: "/metrics" }]);
  });

  it("matches wildcards as RBAC does", () => {
    const result = compareRbac(
      [
        { apiGroups: ["*"], resources: ["*/scale"], verbs: ["get"] },
        { apiGroups: [""], resources: ["*"], verbs: ["*"] },
        { nonResourceURLs: ["/metrics*"], verbs: ["get"] },
      ],
      {
        allowed: [
          req("get", "deployments", "a", "d", "apps", "scale"),
          req("delete", "pods", "a", "p"),
          { verb: "get", nonResourceURL: "/metrics/cadvisor" },
        ],
        denied: [req("get", "deployments", "a", "d", "apps")],
      },
    );
    expect(result.unused).toEqual([]);
    expect(result.missing).toEqual([req("get", "deployments", "a", "d", "apps")]);
  });
});

describe("leastPrivilegeNeeds", () => {
  it("keeps the declared verbs that were used, resourceNames kept, and adds a need per request none allows", () => {
    const declared = [
      ...needs.watch(ConfigMap),
      ...needs.apply(ConfigMap),
      ...needs.events(),
      ...needs.leaderElection("op-leader"),
    ];
    const kept = leastPrivilegeNeeds(declared, {
      allowed: [
        req("list", "configmaps"),
        req("watch", "configmaps"),
        req("create", "configmaps", "a"),
        req("get", "leases", "ops", "op-leader", "coordination.k8s.io"),
        req("create", "leases", "ops", "", "coordination.k8s.io"),
        { verb: "get", nonResourceURL: "/livez" },
      ],
      denied: [req("get", "secrets", "a", "s")],
    });
    const shown = kept.map((n) => ({ on: n.kind.plural, verbs: n.verbs, names: n.resourceNames }));
    expect(shown).toEqual([
      { on: "configmaps", verbs: ["list", "watch"], names: undefined },
      { on: "configmaps", verbs: ["create"], names: undefined },
      { on: "leases", verbs: ["create"], names: undefined },
      { on: "leases", verbs: ["get"], names: ["op-leader"] },
      { on: "secrets", verbs: ["get"], names: undefined },
    ]);
    expect(kept.at(-1)?.kind).toEqual({ group: "", plural: "secrets", namespaced: true });
  });
});
