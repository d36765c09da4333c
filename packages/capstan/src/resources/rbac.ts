/**
 * RBAC rules derived from what an operator says it does, instead of hand-written YAML (one seed
 * operator shipped `verbs: ["create, patch"]`, a single verb that matches nothing).
 *
 * Expected flow: the operator (or `capstan generate rbac`) lists its needs with the `needs.*`
 * constructors (`needs.watch(ExchangeRate)`, `needs.own(ConfigMap)`, `needs.events()`, ...);
 * `deriveRules` turns them into PolicyRules; `rbacManifests` wraps those in a ServiceAccount,
 * a (Cluster)Role and its binding.
 *
 * Guarantees:
 * - Every verb is one Kubernetes knows; anything else (a typo, `"create, patch"`) throws, naming it.
 * - Rules are merged and deduplicated: one rule per (API group, verb set, resourceNames), resources
 *   sorted, verbs in a fixed order (get, list, watch, create, update, patch, delete, ...), rules
 *   sorted by group then resources, so the output is stable and diffs stay small.
 * - `*` absorbs every other verb of the same resource, and a grant restricted to resourceNames
 *   loses the verbs an unrestricted grant of the same resource has already (and goes if none is left).
 *
 * Caveats: a Role cannot grant cluster-scoped resources (CRDs, namespaces, nodes); with
 * `scope: "Namespace"`, `rbacManifests` puts those in a separate ClusterRole.
 */
import type { ServiceAccount as ServiceAccountObject } from "kubernetes-types/core/v1.d.ts";
import type {
  ClusterRoleBinding as ClusterRoleBindingObject,
  ClusterRole as ClusterRoleObject,
  PolicyRule,
  RoleBinding as RoleBindingObject,
  Role as RoleObject,
} from "kubernetes-types/rbac/v1.d.ts";

export type { PolicyRule };

/** The verbs RBAC evaluates: the REST verbs plus the special ones some resources define. */
export const VERBS = [
  "get",
  "list",
  "watch",
  "create",
  "update",
  "patch",
  "delete",
  "deletecollection",
  "impersonate",
  "bind",
  "escalate",
  "approve",
  "sign",
  "use",
  "*",
] as const;

export type Verb = (typeof VERBS)[number];

/** What a need refers to: any `ResourceKind` (defineResource or built-in) fits. */
export interface KindRef {
  readonly group: string;
  readonly plural: string;
  readonly namespaced: boolean;
}

/** One thing the operator does with one kind. */
export interface PermissionNeed {
  kind: KindRef;
  verbs: readonly Verb[];
  /** Grant these subresources (`<plural>/status`) instead of the resource itself. */
  subresources?: readonly string[];
  /** Restrict to these object names (never applies to create, list or watch without a name). */
  resourceNames?: readonly string[];
}

const READ: readonly Verb[] = ["get", "list", "watch"];
const WRITE: readonly Verb[] = ["create", "update", "patch", "delete"];

const CORE_EVENTS: KindRef = { group: "", plural: "events", namespaced: true };
const LEASES: KindRef = { group: "coordination.k8s.io", plural: "leases", namespaced: true };
const CRDS: KindRef = { group: "apiextensions.k8s.io", plural: "customresourcedefinitions", namespaced: false };
const TOKEN_REVIEWS: KindRef = { group: "authentication.k8s.io", plural: "tokenreviews", namespaced: false };
const SUBJECT_ACCESS_REVIEWS: KindRef = {
  group: "authorization.k8s.io",
  plural: "subjectaccessreviews",
  namespaced: false,
};

/**
 * Constructors for the needs an operator has. Each returns a list; spread them into one.
 *
 * Each grants the verbs of the requests one piece of Capstan sends, no more: `watch` is what an
 * informer sends, `patch` what the handler engine sends, `apply` what `ctx.apply` sends, and so on
 * (`Operator.permissions()` composes them). What your own code sends through `api` / `ctx.client`
 * is yours to declare with the same constructors, `read`, `own` or `custom`.
 */
export const needs = {
  /** Watched kinds (informers: an initial list, then a watch): list, watch. */
  watch(kind: KindRef): PermissionNeed[] {
    return [{ kind, verbs: ["list", "watch"] }];
  },
  /** Reading objects yourself (`api.resource(kind).get(name)`, lists, watches): get, list, watch. */
  read(kind: KindRef): PermissionNeed[] {
    return [{ kind, verbs: READ }];
  },
  /**
   * Children your code manages through `api` / `ctx.client` (read, create, update, patch,
   * delete): get, list, watch, create, update, patch, delete. Not what `controller().owns(kind)`
   * derives: that is {@link needs.watch} plus {@link needs.apply}, what `ctx.apply` sends.
   */
  own(kind: KindRef): PermissionNeed[] {
    return [{ kind, verbs: [...READ, ...WRITE] }];
  },
  /**
   * Server-side apply (`ctx.apply`, `api.resource(kind).apply(...)`): patch, and create, which the
   * API server also checks when the apply creates the object.
   */
  apply(kind: KindRef): PermissionNeed[] {
    return [{ kind, verbs: ["create", "patch"] }];
  },
  /**
   * Patches of the objects themselves (merge, JSON, strategic): patch. What the handler engine
   * sends on a handled kind (finalizer, progress annotations, `ctx.patch` metadata and spec).
   */
  patch(kind: KindRef): PermissionNeed[] {
    return [{ kind, verbs: ["patch"] }];
  },
  /** Replacing the objects themselves (`api.resource(kind).update(obj)`, a PUT): update. */
  update(kind: KindRef): PermissionNeed[] {
    return [{ kind, verbs: ["update"] }];
  },
  /**
   * Patches of the status subresource (`ctx.patchStatus`, handler results, `ctx.patch.status`):
   * patch on `<plural>/status`. A PUT of the status (`updateStatus`) needs
   * `needs.custom(kind, ["update"], { subresources: ["status"] })`.
   */
  writeStatus(kind: KindRef): PermissionNeed[] {
    return [{ kind, verbs: ["patch"], subresources: ["status"] }];
  },
  /**
   * Setting `blockOwnerDeletion` owner references to objects of `kind` (what `adopt` does): clusters
   * with the OwnerReferencesPermissionEnforcement admission plugin demand update on `<plural>/finalizers`.
   */
  ownerReferencesTo(kind: KindRef): PermissionNeed[] {
    return [{ kind, verbs: ["update"], subresources: ["finalizers"] }];
  },
  /**
   * Posting core/v1 Events (the event recorder): create, and patch for a repeat, which bumps the
   * count of the Event already posted.
   */
  events(): PermissionNeed[] {
    return [{ kind: CORE_EVENTS, verbs: ["create", "patch"] }];
  },
  /**
   * Leader election with a coordination.k8s.io Lease (read, create the first time, renew and
   * release by update): get, create, update. Given the Lease's name, get and update are restricted
   * to it, so the operator cannot take over other components' Leases.
   */
  /**
   * What a sharded operator sends for its membership and coordination (runtime/sharding.ts): each
   * replica creates, renews (get, update) and finally deletes a Lease of its own, whose name holds
   * its member name and so is not known in advance; the coordinator lists and watches the ring's
   * Leases, reads one again before it reassigns that member's objects, deletes those of crashed
   * members, and takes its own Lease as leader election does. Patching the ring kinds' labels is
   * `needs.patch` of each kind (the operator adds it).
   */
  sharding(): PermissionNeed[] {
    return [{ kind: LEASES, verbs: ["get", "list", "watch", "create", "update", "delete"] }];
  },

  leaderElection(name?: string): PermissionNeed[] {
    if (name === undefined) return [{ kind: LEASES, verbs: ["get", "create", "update"] }];
    return [
      { kind: LEASES, verbs: ["create"] },
      { kind: LEASES, verbs: ["get", "update"], resourceNames: [name] },
    ];
  },
  /**
   * Registering CRDs at start-up (`ensureCrds`: read, create, or a dry-run update then an update):
   * get, create, update on customresourcedefinitions. Given the CRD names, get and update are
   * restricted to them (create cannot be: a create names no object when it is authorized), so the
   * operator cannot rewrite other CRDs of the cluster.
   */
  crdRegistration(names?: readonly string[]): PermissionNeed[] {
    if (names === undefined) return [{ kind: CRDS, verbs: ["get", "create", "update"] }];
    if (names.length === 0) return [];
    return [
      { kind: CRDS, verbs: ["create"] },
      { kind: CRDS, verbs: ["get", "update"], resourceNames: names },
    ];
  },
  /**
   * Authenticating and authorizing the scrapes of the secure metrics endpoint (the manager's
   * `metricsServer.secureServing`, runtime/metrics-auth.ts): create on tokenreviews and
   * subjectaccessreviews, controller-runtime's metrics-auth role.
   */
  delegatedAuth(): PermissionNeed[] {
    return [
      { kind: TOKEN_REVIEWS, verbs: ["create"] },
      { kind: SUBJECT_ACCESS_REVIEWS, verbs: ["create"] },
    ];
  },
  /** Anything else, spelled out. */
  custom(
    kind: KindRef,
    verbs: readonly Verb[],
    options: { subresources?: string[]; resourceNames?: string[] } = {},
  ): PermissionNeed[] {
    return [{ kind, verbs, ...options }];
  },
};

/** A verb that is not one of {@link VERBS}. */
export class InvalidVerbError extends Error {
  override readonly name = "InvalidVerbError";
}

/** Throws unless `verb` is a Kubernetes verb; the message says what was probably meant. */
export function checkVerb(verb: unknown, where: string): asserts verb is Verb {
  if (typeof verb === "string" && (VERBS as readonly string[]).includes(verb)) return;
  const shown = JSON.stringify(verb);
  if (typeof verb === "string" && /[,\s]/.test(verb.trim())) {
    const parts = verb.split(/[,\s]+/).filter((p) => p !== "");
    throw new InvalidVerbError(
      `${where}: verb ${shown} is not a verb but several in one string; write them as separate entries: ${JSON.stringify(parts)}`,
    );
  }
  throw new InvalidVerbError(`${where}: unknown verb ${shown}; RBAC verbs are ${VERBS.join(", ")}`);
}

const RESOURCE_NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

function describe(kind: KindRef): string {
  return kind.group === "" ? kind.plural : `${kind.plural}.${kind.group}`;
}

/**
 * Merges needs into sorted, deduplicated PolicyRules.
 * @throws InvalidVerbError for a verb Kubernetes does not know.
 */
export function deriveRules(all: readonly PermissionNeed[]): PolicyRule[] {
  // (group, resource, names) -> verbs
  const grants = new Map<string, { group: string; resource: string; names: string[]; verbs: Set<Verb> }>();
  for (const need of all) {
    const where = `permission need for ${describe(need.kind)}`;
    if (!RESOURCE_NAME.test(need.kind.plural))
      throw new Error(`${where}: resource "${need.kind.plural}" is not a lower-case resource name`);
    if (need.verbs.length === 0) throw new InvalidVerbError(`${where}: no verbs`);
    for (const verb of need.verbs) checkVerb(verb, where);
    const resources =
      need.subresources === undefined || need.subresources.length === 0
        ? [need.kind.plural]
        : need.subresources.map((sub) => {
            if (!/^[a-z]+$/.test(sub)) throw new Error(`${where}: subresource "${sub}" is not a subresource name`);
            return `${need.kind.plural}/${sub}`;
          });
    const names = [...new Set(need.resourceNames ?? [])].sort();
    for (const resource of resources) {
      const key = JSON.stringify([need.kind.group, resource, names]);
      let grant = grants.get(key);
      if (grant === undefined) {
        grant = { group: need.kind.group, resource, names, verbs: new Set() };
        grants.set(key, grant);
      }
      for (const verb of need.verbs) grant.verbs.add(verb);
    }
  }
  // (group, verbs, names) -> resources
  const rules = new Map<string, { group: string; verbs: Verb[]; names: string[]; resources: string[] }>();
  for (const grant of grants.values()) {
    const open = grant.names.length === 0 ? undefined : grants.get(JSON.stringify([grant.group, grant.resource, []]));
    const covered = (v: Verb) => open !== undefined && (open.verbs.has(v) || open.verbs.has("*"));
    const granted = grant.verbs.has("*") ? (["*"] as Verb[]) : VERBS.filter((v) => grant.verbs.has(v));
    const verbs = granted.filter((v) => !covered(v));
    if (verbs.length === 0) continue;
    const key = JSON.stringify([grant.group, verbs, grant.names]);
    const rule = rules.get(key) ?? { group: grant.group, verbs, names: grant.names, resources: [] };
    rule.resources.push(grant.resource);
    rules.set(key, rule);
  }
  return [...rules.values()]
    .map((r) => ({ ...r, resources: r.resources.sort() }))
    .sort(
      (a, b) =>
        compare(a.group, b.group) ||
        compare(a.resources.join(","), b.resources.join(",")) ||
        compare(a.verbs.join(","), b.verbs.join(",")) ||
        compare(a.names.join(","), b.names.join(",")),
    )
    .map((r) => {
      const rule: PolicyRule = { apiGroups: [r.group], resources: r.resources, verbs: r.verbs };
      if (r.names.length > 0) rule.resourceNames = r.names;
      return rule;
    });
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export interface RbacManifestOptions {
  /** Name of the ServiceAccount, role(s) and binding(s). */
  name: string;
  /** Namespace of the ServiceAccount (where the operator runs). */
  namespace: string;
  needs: readonly PermissionNeed[];
  /**
   * `"Cluster"` (default): one ClusterRole + ClusterRoleBinding, for operators watching all namespaces.
   * `"Namespace"`: a Role + RoleBinding in each of `namespaces` (default: the operator's own), plus a
   * ClusterRole + ClusterRoleBinding for the cluster-scoped needs, if any.
   */
  scope?: "Cluster" | "Namespace";
  namespaces?: readonly string[];
  labels?: Record<string, string>;
}

export type RbacManifest =
  | ServiceAccountObject
  | ClusterRoleObject
  | ClusterRoleBindingObject
  | RoleObject
  | RoleBindingObject;

const RBAC_API = "rbac.authorization.k8s.io/v1";

/** ServiceAccount, (Cluster)Role(s) and binding(s) granting exactly the derived rules. */
export function rbacManifests(options: RbacManifestOptions): RbacManifest[] {
  const { name, namespace } = options;
  const meta = (ns?: string) => ({
    name,
    ...(ns !== undefined ? { namespace: ns } : {}),
    ...(options.labels !== undefined ? { labels: { ...options.labels } } : {}),
  });
  const subject = { kind: "ServiceAccount", name, namespace };
  const out: RbacManifest[] = [{ apiVersion: "v1", kind: "ServiceAccount", metadata: meta(namespace) }];
  const clusterWide = (rules: PolicyRule[]) => {
    out.push({ apiVersion: RBAC_API, kind: "ClusterRole", metadata: meta(), rules });
    out.push({
      apiVersion: RBAC_API,
      kind: "ClusterRoleBinding",
      metadata: meta(),
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
      subjects: [subject],
    });
  };
  if ((options.scope ?? "Cluster") === "Cluster") {
    clusterWide(deriveRules(options.needs));
    return out;
  }
  const namespaced = deriveRules(options.needs.filter((n) => n.kind.namespaced));
  const clusterScoped = deriveRules(options.needs.filter((n) => !n.kind.namespaced));
  for (const ns of options.namespaces ?? [namespace]) {
    out.push({ apiVersion: RBAC_API, kind: "Role", metadata: meta(ns), rules: namespaced });
    out.push({
      apiVersion: RBAC_API,
      kind: "RoleBinding",
      metadata: meta(ns),
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
      subjects: [subject],
    });
  }
  if (clusterScoped.length > 0) clusterWide(clusterScoped);
  return out;
}

/** Name of the ClusterRole that may scrape an operator's secure metrics endpoint. */
export function metricsReaderRoleName(operator: string): string {
  return `${operator}-metrics-reader`;
}

/**
 * The `<operator>-metrics-reader` ClusterRole: `get` on the non-resource URL `/metrics`, what the
 * secure metrics endpoint's SubjectAccessReview asks (kubebuilder's `metrics-reader` role). Bind it
 * to Prometheus's ServiceAccount.
 */
export function metricsReaderRole(operator: string, labels?: Record<string, string>): ClusterRoleObject {
  return {
    apiVersion: RBAC_API,
    kind: "ClusterRole",
    metadata: { name: metricsReaderRoleName(operator), ...(labels !== undefined ? { labels: { ...labels } } : {}) },
    rules: [{ nonResourceURLs: ["/metrics"], verbs: ["get"] }],
  };
}
