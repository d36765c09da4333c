/**
 * The default ClusterRoles and ClusterRoleBindings kube-apiserver creates at start-up
 * (plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go) that operators and kubectl rely on:
 * cluster-admin for system:masters, discovery, basic-user (access reviews), public-info-viewer,
 * auth-delegator (unbound: TokenReview and SubjectAccessReview for delegating components), and the
 * aggregated admin/edit/view user-facing roles with their `system:aggregate-to-*` parts.
 *
 * ## Guarantees
 * - Created once when the server starts with RBAC; an object of the same name that already exists
 *   (persistent storage, a restart) is left as it is.
 * - Every object carries the `kubernetes.io/bootstrapping: rbac-defaults` label and the
 *   `rbac.authorization.kubernetes.io/autoupdate: "true"` annotation, as the real ones do.
 *
 * ## Caveats
 * - admin/edit/view are created with the aggregated rules of the bootstrap parts; ClusterRoles labelled
 *   `aggregate-to-*` later are not written into them (the authorizer still includes them).
 * - The aggregate-to-* rules cover the groups of the bootstrap policy, the stored kinds included
 *   (StatefulSets, Jobs, CronJobs, Ingresses, PVCs, PDBs, EndpointSlices...); the few it names that this
 *   devcluster does not serve (HPAs, ControllerRevisions, pods/exec...) are harmless.
 */
import type { InProcessApi } from "../in-process-api.ts";
import type { JsonObject } from "../registry/served-resource.ts";
import type { PolicyRule } from "./rbac-authorizer.ts";

const READ = ["get", "list", "watch"];
const WRITE = ["create", "delete", "deletecollection", "patch", "update"];
const RBAC = "rbac.authorization.k8s.io";

function rule(verbs: string[], apiGroups: string[], resources: string[]): PolicyRule {
  return { verbs, apiGroups, resources };
}

function urls(verbs: string[], nonResourceURLs: string[]): PolicyRule {
  return { verbs, nonResourceURLs };
}

interface RoleSpec {
  name: string;
  rules?: PolicyRule[];
  labels?: Record<string, string>;
  aggregateFrom?: string;
}

const aggregateTo = (role: string) => ({ [`rbac.authorization.k8s.io/aggregate-to-${role}`]: "true" });

const CLUSTER_ROLES: RoleSpec[] = [
  { name: "cluster-admin", rules: [rule(["*"], ["*"], ["*"]), urls(["*"], ["*"])] },
  {
    name: "system:discovery",
    rules: [
      urls(
        ["get"],
        [
          "/api",
          "/api/*",
          "/apis",
          "/apis/*",
          "/healthz",
          "/livez",
          "/openapi",
          "/openapi/*",
          "/readyz",
          "/version",
          "/version/",
        ],
      ),
    ],
  },
  {
    name: "system:basic-user",
    rules: [
      rule(["create"], ["authorization.k8s.io"], ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]),
      rule(["create"], ["authentication.k8s.io"], ["selfsubjectreviews"]),
    ],
  },
  {
    name: "system:public-info-viewer",
    rules: [urls(["get"], ["/healthz", "/livez", "/readyz", "/version", "/version/"])],
  },
  {
    name: "system:auth-delegator",
    rules: [
      rule(["create"], ["authentication.k8s.io"], ["tokenreviews"]),
      rule(["create"], ["authorization.k8s.io"], ["subjectaccessreviews"]),
    ],
  },
  { name: "admin", aggregateFrom: "admin" },
  { name: "edit", aggregateFrom: "edit", labels: aggregateTo("admin") },
  { name: "view", aggregateFrom: "view", labels: aggregateTo("edit") },
  {
    name: "system:aggregate-to-admin",
    labels: aggregateTo("admin"),
    rules: [
      rule(["create"], ["authorization.k8s.io"], ["localsubjectaccessreviews"]),
      rule([...READ, ...WRITE], [RBAC], ["rolebindings", "roles"]),
    ],
  },
  {
    name: "system:aggregate-to-edit",
    labels: aggregateTo("edit"),
    rules: [
      rule(READ, [""], ["pods/attach", "pods/exec", "pods/portforward", "pods/proxy", "secrets", "services/proxy"]),
      rule(["impersonate"], [""], ["serviceaccounts"]),
      rule(WRITE, [""], ["pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy"]),
      rule(["create"], [""], ["pods/eviction"]),
      rule(
        WRITE,
        [""],
        [
          "configmaps",
          "persistentvolumeclaims",
          "replicationcontrollers",
          "replicationcontrollers/scale",
          "secrets",
          "serviceaccounts",
          "services",
          "services/proxy",
        ],
      ),
      rule(["create"], [""], ["serviceaccounts/token"]),
      rule(
        WRITE,
        ["apps"],
        [
          "daemonsets",
          "deployments",
          "deployments/rollback",
          "deployments/scale",
          "replicasets",
          "replicasets/scale",
          "statefulsets",
          "statefulsets/scale",
        ],
      ),
      rule(WRITE, ["autoscaling"], ["horizontalpodautoscalers"]),
      rule(WRITE, ["batch"], ["cronjobs", "jobs"]),
      rule(WRITE, ["policy"], ["poddisruptionbudgets"]),
      rule(WRITE, ["networking.k8s.io"], ["ingresses", "networkpolicies"]),
    ],
  },
  {
    name: "system:aggregate-to-view",
    labels: aggregateTo("view"),
    rules: [
      rule(
        READ,
        [""],
        [
          "configmaps",
          "endpoints",
          "persistentvolumeclaims",
          "persistentvolumeclaims/status",
          "pods",
          "replicationcontrollers",
          "replicationcontrollers/scale",
          "serviceaccounts",
          "services",
          "services/status",
        ],
      ),
      rule(
        READ,
        [""],
        [
          "bindings",
          "events",
          "limitranges",
          "namespaces/status",
          "pods/log",
          "pods/status",
          "replicationcontrollers/status",
          "resourcequotas",
          "resourcequotas/status",
        ],
      ),
      rule(READ, [""], ["namespaces"]),
      rule(READ, ["discovery.k8s.io"], ["endpointslices"]),
      rule(
        READ,
        ["apps"],
        [
          "controllerrevisions",
          "daemonsets",
          "daemonsets/status",
          "deployments",
          "deployments/scale",
          "deployments/status",
          "replicasets",
          "replicasets/scale",
          "replicasets/status",
          "statefulsets",
          "statefulsets/scale",
          "statefulsets/status",
        ],
      ),
      rule(READ, ["autoscaling"], ["horizontalpodautoscalers", "horizontalpodautoscalers/status"]),
      rule(READ, ["batch"], ["cronjobs", "cronjobs/status", "jobs", "jobs/status"]),
      rule(READ, ["policy"], ["poddisruptionbudgets", "poddisruptionbudgets/status"]),
      rule(READ, ["networking.k8s.io"], ["ingresses", "ingresses/status", "networkpolicies"]),
    ],
  },
];

/** ClusterRoleBinding name (= role name) -> subject groups. */
const CLUSTER_ROLE_BINDINGS: [string, string[]][] = [
  ["cluster-admin", ["system:masters"]],
  ["system:discovery", ["system:authenticated"]],
  ["system:basic-user", ["system:authenticated"]],
  ["system:public-info-viewer", ["system:authenticated", "system:unauthenticated"]],
];

const BOOTSTRAP_META = {
  labels: { "kubernetes.io/bootstrapping": "rbac-defaults" },
  annotations: { "rbac.authorization.kubernetes.io/autoupdate": "true" },
};

/** The bootstrap ClusterRoles, as objects. */
export function bootstrapClusterRoles(): JsonObject[] {
  return CLUSTER_ROLES.map((spec) => {
    const role: JsonObject = {
      apiVersion: `${RBAC}/v1`,
      kind: "ClusterRole",
      metadata: {
        name: spec.name,
        labels: { ...BOOTSTRAP_META.labels, ...spec.labels },
        annotations: { ...BOOTSTRAP_META.annotations },
      },
    };
    if (spec.aggregateFrom) {
      role["aggregationRule"] = { clusterRoleSelectors: [{ matchLabels: aggregateTo(spec.aggregateFrom) }] };
    }
    role["rules"] = spec.aggregateFrom ? aggregatedRules(spec.aggregateFrom) : (spec.rules ?? []);
    return role;
  });
}

/**
 * The rules the aggregation controller writes into an aggregated bootstrap role at start-up: those of
 * every bootstrap role labelled `aggregate-to-<target>`, aggregated in turn (edit carries view's).
 */
function aggregatedRules(target: string): PolicyRule[] {
  const label = Object.keys(aggregateTo(target))[0]!;
  const rules: PolicyRule[] = [];
  for (const spec of CLUSTER_ROLES) {
    if (spec.labels?.[label] !== "true") continue;
    rules.push(...(spec.aggregateFrom ? aggregatedRules(spec.aggregateFrom) : (spec.rules ?? [])));
  }
  return rules;
}

/** The bootstrap ClusterRoleBindings, as objects. */
export function bootstrapClusterRoleBindings(): JsonObject[] {
  return CLUSTER_ROLE_BINDINGS.map(([name, groups]) => ({
    apiVersion: `${RBAC}/v1`,
    kind: "ClusterRoleBinding",
    metadata: { name, labels: { ...BOOTSTRAP_META.labels }, annotations: { ...BOOTSTRAP_META.annotations } },
    roleRef: { apiGroup: RBAC, kind: "ClusterRole", name },
    subjects: groups.map((group) => ({ apiGroup: RBAC, kind: "Group", name: group })),
  }));
}

/** Creates the bootstrap policy objects that do not exist yet. */
export async function ensureBootstrapPolicy(api: InProcessApi): Promise<void> {
  const roles = { group: RBAC, version: "v1", plural: "clusterroles" };
  const bindings = { group: RBAC, version: "v1", plural: "clusterrolebindings" };
  for (const role of bootstrapClusterRoles()) {
    if (!api.tryGet(roles, "", String(role.metadata!["name"]))) await api.create(roles, "", role);
  }
  for (const binding of bootstrapClusterRoleBindings()) {
    if (!api.tryGet(bindings, "", String(binding.metadata!["name"]))) await api.create(bindings, "", binding);
  }
}
