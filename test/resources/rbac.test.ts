import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { ConfigMap, Namespace, Pod } from "../../packages/capstan/src/resources/builtins.ts";
import { defineResource } from "../../packages/capstan/src/resources/define-resource.ts";
import {
  checkVerb,
  deriveRules,
  InvalidVerbError,
  needs,
  rbacManifests,
  type Verb,
} from "../../packages/capstan/src/resources/rbac.ts";

const ExchangeRate = defineResource({
  group: "operators.example.com",
  version: "v1",
  kind: "ExchangeRate",
  scope: "Namespaced",
  spec: Type.Object({ currency: Type.String() }),
  status: Type.Object({ rate: Type.Optional(Type.Number()) }),
});

/** What the seed exchangerates operator needs: its CRD, its kind, ConfigMaps it owns, Events. */
const exchangeRateNeeds = [
  ...needs.crdRegistration(),
  ...needs.watch(ExchangeRate),
  ...needs.writeStatus(ExchangeRate),
  ...needs.own(ConfigMap),
  ...needs.events(),
  ...needs.leaderElection(),
];

describe("deriveRules", () => {
  it("derives the exchangerates operator's rules, merged and sorted", () => {
    expect(deriveRules(exchangeRateNeeds)).toEqual([
      {
        apiGroups: [""],
        resources: ["configmaps"],
        verbs: ["get", "list", "watch", "create", "update", "patch", "delete"],
      },
      { apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] },
      {
        apiGroups: ["apiextensions.k8s.io"],
        resources: ["customresourcedefinitions"],
        verbs: ["get", "create", "update"],
      },
      { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "create", "update"] },
      { apiGroups: ["operators.example.com"], resources: ["exchangerates"], verbs: ["list", "watch"] },
      { apiGroups: ["operators.example.com"], resources: ["exchangerates/status"], verbs: ["patch"] },
    ]);
  });

  it("grants each helper the verbs of the requests its piece of Capstan sends", () => {
    const verbs = (list: ReturnType<typeof needs.watch>) => deriveRules(list).map((r) => [r.resources, r.verbs]);
    expect(verbs(needs.watch(Pod))).toEqual([[["pods"], ["list", "watch"]]]);
    expect(verbs(needs.read(Pod))).toEqual([[["pods"], ["get", "list", "watch"]]]);
    expect(verbs(needs.apply(ConfigMap))).toEqual([[["configmaps"], ["create", "patch"]]]);
    expect(verbs(needs.patch(ConfigMap))).toEqual([[["configmaps"], ["patch"]]]);
    expect(verbs(needs.update(ConfigMap))).toEqual([[["configmaps"], ["update"]]]);
    expect(verbs(needs.writeStatus(ExchangeRate))).toEqual([[["exchangerates/status"], ["patch"]]]);
    // Only core/v1 Events: the recorder never posts events.k8s.io/v1 ones.
    expect(deriveRules(needs.events())).toEqual([
      { apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] },
    ]);
  });

  it("restricts CRD registration's get and update to the named CRDs, leaving create unrestricted", () => {
    expect(deriveRules(needs.crdRegistration(["b.example.com", "a.example.com"]))).toEqual([
      { apiGroups: ["apiextensions.k8s.io"], resources: ["customresourcedefinitions"], verbs: ["create"] },
      {
        apiGroups: ["apiextensions.k8s.io"],
        resources: ["customresourcedefinitions"],
        verbs: ["get", "update"],
        resourceNames: ["a.example.com", "b.example.com"],
      },
    ]);
    expect(needs.crdRegistration([])).toEqual([]);
  });

  it("restricts leader election's get and update to the named Lease", () => {
    expect(deriveRules(needs.leaderElection("op-leader"))).toEqual([
      { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["create"] },
      {
        apiGroups: ["coordination.k8s.io"],
        resources: ["leases"],
        verbs: ["get", "update"],
        resourceNames: ["op-leader"],
      },
    ]);
  });

  it("drops the verbs of a name-restricted grant that an unrestricted grant of the resource has", () => {
    const crd = { group: "apiextensions.k8s.io", plural: "customresourcedefinitions", namespaced: false };
    expect(deriveRules([...needs.crdRegistration(["a.example.com"]), ...needs.read(crd)])).toEqual([
      {
        apiGroups: ["apiextensions.k8s.io"],
        resources: ["customresourcedefinitions"],
        verbs: ["get", "list", "watch", "create"],
      },
      {
        apiGroups: ["apiextensions.k8s.io"],
        resources: ["customresourcedefinitions"],
        verbs: ["update"],
        resourceNames: ["a.example.com"],
      },
    ]);
    expect(deriveRules([...needs.custom(Pod, ["get"], { resourceNames: ["p"] }), ...needs.custom(Pod, ["*"])])).toEqual(
      [{ apiGroups: [""], resources: ["pods"], verbs: ["*"] }],
    );
    // A restricted `*` goes under an unrestricted `*`, and stays next to an unrestricted grant of fewer verbs.
    expect(deriveRules([...needs.custom(Pod, ["*"], { resourceNames: ["p"] }), ...needs.custom(Pod, ["*"])])).toEqual([
      { apiGroups: [""], resources: ["pods"], verbs: ["*"] },
    ]);
    expect(deriveRules([...needs.custom(Pod, ["*"], { resourceNames: ["p"] }), ...needs.custom(Pod, ["get"])])).toEqual(
      [
        { apiGroups: [""], resources: ["pods"], verbs: ["*"], resourceNames: ["p"] },
        { apiGroups: [""], resources: ["pods"], verbs: ["get"] },
      ],
    );
  });

  it("deduplicates repeated needs and unions the verbs of one resource", () => {
    const rules = deriveRules([...needs.watch(Pod), ...needs.watch(Pod), ...needs.custom(Pod, ["delete", "get"])]);
    expect(rules).toEqual([{ apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch", "delete"] }]);
  });

  it("merges resources of one group that need the same verbs into one rule", () => {
    const rules = deriveRules([...needs.watch(Pod), ...needs.watch(ConfigMap), ...needs.watch(Namespace)]);
    expect(rules).toEqual([
      { apiGroups: [""], resources: ["configmaps", "namespaces", "pods"], verbs: ["list", "watch"] },
    ]);
  });

  it("lets * absorb the other verbs of a resource", () => {
    expect(deriveRules([...needs.watch(Pod), ...needs.custom(Pod, ["*"])])).toEqual([
      { apiGroups: [""], resources: ["pods"], verbs: ["*"] },
    ]);
  });

  it("keeps rules restricted to resource names apart from unrestricted ones", () => {
    const rules = deriveRules([
      ...needs.custom(ConfigMap, ["get", "update"], { resourceNames: ["b", "a", "a"] }),
      ...needs.watch(ConfigMap),
    ]);
    expect(rules).toEqual([
      { apiGroups: [""], resources: ["configmaps"], verbs: ["get", "update"], resourceNames: ["a", "b"] },
      { apiGroups: [""], resources: ["configmaps"], verbs: ["list", "watch"] },
    ]);
  });

  it("grants patch on the objects for the handler engine's writes, merged with watch", () => {
    expect(deriveRules([...needs.watch(ExchangeRate), ...needs.patch(ExchangeRate)])).toEqual([
      { apiGroups: ["operators.example.com"], resources: ["exchangerates"], verbs: ["list", "watch", "patch"] },
    ]);
  });

  it("grants finalizers for owner references with blockOwnerDeletion", () => {
    expect(deriveRules(needs.ownerReferencesTo(ExchangeRate))).toEqual([
      { apiGroups: ["operators.example.com"], resources: ["exchangerates/finalizers"], verbs: ["update"] },
    ]);
  });

  it('makes the seed\'s verbs: ["create, patch"] impossible', () => {
    const seedRule = { kind: ConfigMap, verbs: ["create, patch"] as unknown as Verb[] };
    expect(() => deriveRules([seedRule])).toThrow(InvalidVerbError);
    expect(() => deriveRules([seedRule])).toThrow(
      'permission need for configmaps: verb "create, patch" is not a verb but several in one string; write them as separate entries: ["create","patch"]',
    );
  });

  it("refuses unknown verbs and empty verb lists", () => {
    expect(() => checkVerb("fetch", "here")).toThrow(
      'here: unknown verb "fetch"; RBAC verbs are get, list, watch, create',
    );
    expect(() => checkVerb("GET", "here")).toThrow(InvalidVerbError);
    expect(() => deriveRules([{ kind: Pod, verbs: [] }])).toThrow("permission need for pods: no verbs");
  });
});

describe("rbacManifests", () => {
  it("writes a ServiceAccount, ClusterRole and ClusterRoleBinding for a cluster-wide operator", () => {
    const manifests = rbacManifests({ name: "exchangerates", namespace: "ops", needs: exchangeRateNeeds });
    expect(manifests.map((m) => `${m.kind}/${m.metadata?.namespace ?? ""}/${m.metadata?.name}`)).toEqual([
      "ServiceAccount/ops/exchangerates",
      "ClusterRole//exchangerates",
      "ClusterRoleBinding//exchangerates",
    ]);
    expect(manifests[1]).toMatchObject({
      apiVersion: "rbac.authorization.k8s.io/v1",
      rules: deriveRules(exchangeRateNeeds),
    });
    expect(manifests[2]).toEqual({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "exchangerates" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "exchangerates" },
      subjects: [{ kind: "ServiceAccount", name: "exchangerates", namespace: "ops" }],
    });
  });

  it("puts namespaced rules in Roles per namespace and cluster-scoped ones (CRDs) in a ClusterRole", () => {
    const manifests = rbacManifests({
      name: "er",
      namespace: "ops",
      needs: exchangeRateNeeds,
      scope: "Namespace",
      namespaces: ["team-a", "team-b"],
      labels: { app: "er" },
    });
    expect(manifests.map((m) => `${m.kind}/${m.metadata?.namespace ?? ""}`)).toEqual([
      "ServiceAccount/ops",
      "Role/team-a",
      "RoleBinding/team-a",
      "Role/team-b",
      "RoleBinding/team-b",
      "ClusterRole/",
      "ClusterRoleBinding/",
    ]);
    const role = manifests[1] as { rules: { resources: string[] }[] };
    expect(role.rules.flatMap((r) => r.resources)).not.toContain("customresourcedefinitions");
    const clusterRole = manifests[5] as { rules: unknown[] };
    expect(clusterRole.rules).toEqual([
      {
        apiGroups: ["apiextensions.k8s.io"],
        resources: ["customresourcedefinitions"],
        verbs: ["get", "create", "update"],
      },
    ]);
    expect(manifests.every((m) => m.metadata?.labels?.app === "er")).toBe(true);
  });

  it("writes no ClusterRole in namespace scope when nothing cluster-scoped is needed", () => {
    const manifests = rbacManifests({ name: "x", namespace: "ops", needs: needs.own(ConfigMap), scope: "Namespace" });
    expect(manifests.map((m) => m.kind)).toEqual(["ServiceAccount", "Role", "RoleBinding"]);
  });
});
