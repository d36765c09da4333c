/**
 * RBAC evaluation over the stored Roles, ClusterRoles, RoleBindings and ClusterRoleBindings, as
 * plugin/pkg/auth/authorizer/rbac (rbac.go) and pkg/registry/rbac/validation (rule_resolver.go) do it.
 *
 * ## Expected flow
 * `authorize(attributes)`: members of `system:masters` are allowed outright (kube-apiserver's
 * privileged-group authorizer runs before RBAC). Otherwise every ClusterRoleBinding, then every
 * RoleBinding of the request's namespace, whose subjects include the user is visited; the rules of its
 * role are matched one by one and the first match allows, naming its source in the reason
 * (`RBAC: allowed by ClusterRoleBinding "x" of ClusterRole "y" to User "z"`).
 *
 * ## Guarantees
 * - Deny by default: a request no rule matches is denied. A binding to a missing role is skipped and
 *   its error (`clusterrole.rbac.authorization.k8s.io "x" not found`) becomes the denial's reason, as
 *   the real authorizer reports it.
 * - Decisions read the store at the moment of the request: a binding created or deleted is in effect
 *   for the next request (no informer lag, unlike a real server's few milliseconds). Parsed policy is
 *   cached only while the storage revision stays the same, so a cached answer is never stale.
 *
 * ## Caveats
 * - A ClusterRole with an `aggregationRule` is evaluated with the rules of the ClusterRoles its
 *   selectors match (recursively: admin includes edit includes view), at evaluation time; a real cluster's aggregation controller writes those rules into
 *   the object instead (reading the aggregated role here shows its own `rules` only).
 */
import type { InProcessApi, ResourceRef } from "../in-process-api.ts";
import type { JsonObject } from "../registry/served-resource.ts";
import { type LabelRequirement, matchesLabels } from "../rest/label-selector.ts";
import type { Attributes, AuthUser } from "./attributes.ts";

const RBAC_GROUP = "rbac.authorization.k8s.io";
const ROLES: ResourceRef = { group: RBAC_GROUP, version: "v1", plural: "roles" };
const CLUSTER_ROLES: ResourceRef = { group: RBAC_GROUP, version: "v1", plural: "clusterroles" };
const ROLE_BINDINGS: ResourceRef = { group: RBAC_GROUP, version: "v1", plural: "rolebindings" };
const CLUSTER_ROLE_BINDINGS: ResourceRef = { group: RBAC_GROUP, version: "v1", plural: "clusterrolebindings" };

/** The group whose members may do anything (kube-apiserver's `--authorization-mode` privileged group). */
export const SYSTEM_MASTERS = "system:masters";

export interface PolicyRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

interface Subject {
  kind?: string;
  name?: string;
  namespace?: string;
}

interface Binding extends JsonObject {
  subjects?: Subject[];
  roleRef?: { kind?: string; name?: string };
}

export interface Decision {
  allowed: boolean;
  /** Why (allowed: the matching binding; denied: binding resolution errors, or ""). */
  reason: string;
}

/** The rules that apply to a user in a namespace, and the errors met resolving them. */
export interface ResolvedRules {
  rules: PolicyRule[];
  errors: string[];
}

/** `system:serviceaccount:<ns>:<name>`, the username of a ServiceAccount. */
export function serviceAccountUsername(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}

/** Splits a ServiceAccount username into namespace and name, or undefined when it is not one. */
export function splitServiceAccountUsername(username: string): { namespace: string; name: string } | undefined {
  const prefix = "system:serviceaccount:";
  if (!username.startsWith(prefix)) return undefined;
  const parts = username.slice(prefix.length).split(":");
  if (parts.length !== 2 || parts[0] === "" || parts[1] === "") return undefined;
  return { namespace: parts[0]!, name: parts[1]! };
}

/** True when one rule allows the request (RuleAllows). */
export function ruleAllows(attributes: Attributes, rule: PolicyRule): boolean {
  if (!verbMatches(rule, attributes.verb)) return false;
  if (!attributes.isResourceRequest) return nonResourceUrlMatches(rule, attributes.path);
  const combined =
    attributes.subresource === "" ? attributes.resource : `${attributes.resource}/${attributes.subresource}`;
  return (
    has(rule.apiGroups, attributes.apiGroup, true) &&
    resourceMatches(rule, combined, attributes.subresource) &&
    resourceNameMatches(rule, attributes.name)
  );
}

function has(list: string[] | undefined, value: string, wildcard: boolean): boolean {
  if (!list) return false;
  for (const item of list) if (item === value || (wildcard && item === "*")) return true;
  return false;
}

function verbMatches(rule: PolicyRule, verb: string): boolean {
  return has(rule.verbs, verb, true);
}

function resourceMatches(rule: PolicyRule, combined: string, subresource: string): boolean {
  for (const resource of rule.resources ?? []) {
    if (resource === "*" || resource === combined) return true;
    // `*/scale` matches the scale subresource of every resource.
    if (subresource !== "" && resource === `*/${subresource}`) return true;
  }
  return false;
}

function resourceNameMatches(rule: PolicyRule, name: string): boolean {
  const names = rule.resourceNames ?? [];
  return names.length === 0 || names.includes(name);
}

function nonResourceUrlMatches(rule: PolicyRule, path: string): boolean {
  for (const url of rule.nonResourceURLs ?? []) {
    if (url === "*" || url === path) return true;
    if (url.endsWith("*") && path.startsWith(url.slice(0, -1))) return true;
  }
  return false;
}

/** RBAC over the in-process API's RBAC objects. */
export class RbacAuthorizer {
  /** Parsed bindings and roles, valid while the storage revision is unchanged (reads do not move it). */
  private cache: PolicyCache = emptyCache(-1);

  constructor(private readonly api: InProcessApi) {}

  /** The cache for the current revision: any write anywhere empties it, so it can never be stale. */
  private fresh(): PolicyCache {
    const revision = this.api.store.storage.currentRevision();
    if (this.cache.revision !== revision) this.cache = emptyCache(revision);
    return this.cache;
  }

  private clusterRoleBindings(): Binding[] {
    const cache = this.fresh();
    cache.clusterRoleBindings ??= this.api.list(CLUSTER_ROLE_BINDINGS).items as Binding[];
    return cache.clusterRoleBindings;
  }

  private roleBindings(namespace: string): Binding[] {
    const cache = this.fresh();
    let bindings = cache.roleBindings.get(namespace);
    if (!bindings) {
      bindings = this.api.list(ROLE_BINDINGS, namespace).items as Binding[];
      cache.roleBindings.set(namespace, bindings);
    }
    return bindings;
  }

  private role(ref: ResourceRef, namespace: string, name: string): JsonObject | undefined {
    const cache = this.fresh();
    const key = `${ref.plural}/${namespace}/${name}`;
    if (!cache.roles.has(key)) cache.roles.set(key, this.api.tryGet(ref, namespace, name));
    return cache.roles.get(key);
  }

  private allClusterRoles(): JsonObject[] {
    const cache = this.fresh();
    cache.clusterRoles ??= this.api.list(CLUSTER_ROLES).items;
    return cache.clusterRoles;
  }

  /** The decision for one request. */
  authorize(attributes: Attributes): Decision {
    if (attributes.user.groups.includes(SYSTEM_MASTERS)) return { allowed: true, reason: "" };
    const errors: string[] = [];
    let reason = "";
    this.visitRules(attributes.user, attributes.namespace, (source, rules, error) => {
      if (error) {
        errors.push(error);
        return true;
      }
      for (const rule of rules) {
        if (ruleAllows(attributes, rule)) {
          reason = `RBAC: allowed by ${source}`;
          return false;
        }
      }
      return true;
    });
    if (reason !== "") return { allowed: true, reason };
    return { allowed: false, reason: errors.length === 0 ? "" : `RBAC: ${aggregate(errors)}` };
  }

  /** Every rule that applies to `user` in `namespace` ("" for cluster-wide rules only). */
  rulesFor(user: AuthUser, namespace: string): ResolvedRules {
    if (user.groups.includes(SYSTEM_MASTERS)) {
      return {
        rules: [
          { verbs: ["*"], apiGroups: ["*"], resources: ["*"] },
          { verbs: ["*"], nonResourceURLs: ["*"] },
        ],
        errors: [],
      };
    }
    const out: ResolvedRules = { rules: [], errors: [] };
    this.visitRules(user, namespace, (_source, rules, error) => {
      if (error) out.errors.push(error);
      else out.rules.push(...rules);
      return true;
    });
    return out;
  }

  /** VisitRulesFor: cluster bindings first, then the namespace's bindings; `visit` returns false to stop. */
  private visitRules(
    user: AuthUser,
    namespace: string,
    visit: (source: string, rules: PolicyRule[], error?: string) => boolean,
  ): void {
    for (const binding of this.clusterRoleBindings()) {
      const subject = appliesTo(user, binding.subjects, "");
      if (!subject) continue;
      const roleRef = binding.roleRef ?? {};
      const resolved = this.roleRules(roleRef.kind ?? "", roleRef.name ?? "", "");
      const source = `ClusterRoleBinding ${quote(nameOf(binding))} of ${roleRef.kind} ${quote(roleRef.name ?? "")} to ${describeSubject(subject, "")}`;
      if (!visit(source, resolved.rules, resolved.error)) return;
    }
    if (namespace === "") return;
    for (const binding of this.roleBindings(namespace)) {
      const subject = appliesTo(user, binding.subjects, namespace);
      if (!subject) continue;
      const roleRef = binding.roleRef ?? {};
      const resolved = this.roleRules(roleRef.kind ?? "", roleRef.name ?? "", namespace);
      const source = `RoleBinding ${quote(`${nameOf(binding)}/${namespace}`)} of ${roleRef.kind} ${quote(roleRef.name ?? "")} to ${describeSubject(subject, namespace)}`;
      if (!visit(source, resolved.rules, resolved.error)) return;
    }
  }

  /** The rules of a binding's role reference (in `namespace` for a Role), or the lister's not-found error. */
  roleReferenceRules(kind: string, name: string, namespace: string): { rules: PolicyRule[]; error?: string } {
    return this.roleRules(kind, name, namespace);
  }

  /** The rules of a role reference, or the lister's not-found error. */
  private roleRules(kind: string, name: string, namespace: string): { rules: PolicyRule[]; error?: string } {
    if (kind === "Role") {
      const role = this.role(ROLES, namespace, name);
      if (!role) return { rules: [], error: `role.${RBAC_GROUP} ${quote(name)} not found` };
      return { rules: rulesOf(role) };
    }
    if (kind === "ClusterRole") {
      const role = this.role(CLUSTER_ROLES, "", name);
      if (!role) return { rules: [], error: `clusterrole.${RBAC_GROUP} ${quote(name)} not found` };
      return { rules: this.withAggregation(role) };
    }
    return { rules: [], error: `unsupported role reference kind: ${quote(kind)}` };
  }

  /**
   * A ClusterRole's rules with those of the ClusterRoles its aggregationRule selects, themselves
   * aggregated (admin selects edit, which selects view): what the aggregation controller would have
   * written into it. `visiting` breaks selection cycles.
   */
  private withAggregation(role: JsonObject, visiting = new Set<string>()): PolicyRule[] {
    const selectors = ((role["aggregationRule"] as { clusterRoleSelectors?: unknown[] } | undefined)
      ?.clusterRoleSelectors ?? []) as LabelSelectorJson[];
    if (selectors.length === 0) return rulesOf(role);
    visiting.add(nameOf(role));
    const rules = [...rulesOf(role)];
    for (const other of this.allClusterRoles()) {
      if (visiting.has(nameOf(other))) continue;
      const labels = (other.metadata?.["labels"] ?? {}) as Record<string, string>;
      if (!selectors.some((s) => matchesLabels(requirementsOf(s), labels))) continue;
      rules.push(...this.withAggregation(other, visiting));
    }
    visiting.delete(nameOf(role));
    return rules;
  }
}

interface PolicyCache {
  revision: number;
  clusterRoleBindings?: Binding[];
  roleBindings: Map<string, Binding[]>;
  /** `plural/namespace/name` -> the role, or undefined when it does not exist. */
  roles: Map<string, JsonObject | undefined>;
  clusterRoles?: JsonObject[];
}

function emptyCache(revision: number): PolicyCache {
  return { revision, roleBindings: new Map(), roles: new Map() };
}

interface LabelSelectorJson {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

const SELECTOR_OPERATORS: Record<string, LabelRequirement["op"]> = {
  In: "in",
  NotIn: "notin",
  Exists: "exists",
  DoesNotExist: "!",
};

function requirementsOf(selector: LabelSelectorJson): LabelRequirement[] {
  const out: LabelRequirement[] = [];
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) out.push({ key, op: "=", values: [value] });
  for (const e of selector.matchExpressions ?? []) {
    // An unknown operator matches nothing, as an invalid selector selects nothing.
    out.push({
      key: e.key,
      op: SELECTOR_OPERATORS[e.operator] ?? "in",
      values: SELECTOR_OPERATORS[e.operator] ? (e.values ?? []) : [],
    });
  }
  return out;
}

function rulesOf(role: JsonObject): PolicyRule[] {
  const rules = role["rules"];
  return Array.isArray(rules) ? (rules as PolicyRule[]) : [];
}

function nameOf(obj: JsonObject): string {
  return String(obj.metadata?.["name"] ?? "");
}

/** The first subject that is this user (appliesToUser), or undefined. */
function appliesTo(user: AuthUser, subjects: Subject[] | undefined, bindingNamespace: string): Subject | undefined {
  for (const subject of subjects ?? []) {
    switch (subject.kind) {
      case "User":
        if (user.username === subject.name) return subject;
        break;
      case "Group":
        if (subject.name !== undefined && user.groups.includes(subject.name)) return subject;
        break;
      case "ServiceAccount": {
        const namespace = subject.namespace || bindingNamespace;
        if (namespace !== "" && user.username === serviceAccountUsername(namespace, subject.name ?? "")) return subject;
        break;
      }
    }
  }
  return undefined;
}

function describeSubject(subject: Subject, bindingNamespace: string): string {
  if (subject.kind === "ServiceAccount") {
    return `${subject.kind} ${quote(`${subject.name}/${subject.namespace || bindingNamespace}`)}`;
  }
  return `${subject.kind} ${quote(subject.name ?? "")}`;
}

function quote(s: string): string {
  return JSON.stringify(s);
}

/** utilerrors.NewAggregate's message: one error as is, several in brackets. */
export function aggregate(errors: string[]): string {
  return errors.length === 1 ? errors[0]! : `[${errors.join(", ")}]`;
}
