/**
 * RBAC escalation prevention (pkg/registry/rbac/validation/rule.go `ConfirmNoEscalation`, and the
 * policy-based role and binding storages): writing a Role/ClusterRole needs the rules it grants, or the
 * `escalate` verb on it; writing a binding needs the rules of the role it refers to, or the `bind`
 * verb on that role. Members of system:masters and in-process callers are exempt.
 *
 * ## Expected flow
 * The authorization stage runs RBAC writes inside `requestUser.run(user, ...)`; the object store's
 * validator below finds the user there, checks, and throws the real 403
 * (`roles.rbac.authorization.k8s.io "x" is forbidden: user "u" (groups=["g"]) is attempting to grant
 * RBAC permissions not currently held:\n{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}`).
 *
 * ## Caveats
 * - An update is checked only when it changes what is granted (a Role's rules or aggregationRule, a
 *   binding's roleRef or subjects); the real server exempts only garbage-collection metadata changes.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { ApiError, failure } from "../machinery/status.ts";
import type { JsonObject, ServedResource } from "../registry/served-resource.ts";
import type { ObjectValidator } from "../rest/types.ts";
import type { AuthUser } from "./attributes.ts";
import { aggregate, type PolicyRule, type RbacAuthorizer, SYSTEM_MASTERS } from "./rbac-authorizer.ts";

const RBAC = "rbac.authorization.k8s.io";

/** The user of the HTTP request being served, for checks below the pipeline. Absent for in-process calls. */
export const requestUser = new AsyncLocalStorage<AuthUser>();

/** True for the requests whose writes the escalation validator checks. */
export function isRbacWrite(info: { apiGroup: string; verb: string }): boolean {
  return info.apiGroup === RBAC && (info.verb === "create" || info.verb === "update" || info.verb === "patch");
}

/** The object-store validator that refuses escalating RBAC writes. */
export function escalationValidator(authorizer: RbacAuthorizer): ObjectValidator {
  return (served, obj, old) => {
    if (served.group !== RBAC) return [];
    const user = requestUser.getStore();
    if (!user || user.groups.includes(SYSTEM_MASTERS)) return [];
    const namespace = String(obj.metadata?.["namespace"] ?? "");
    const name = String(obj.metadata?.["name"] ?? "");
    const allowedTo = (verb: string, resource: string, resourceName: string) =>
      authorizer.authorize({
        user,
        verb,
        isResourceRequest: true,
        path: "",
        apiGroup: RBAC,
        apiVersion: "v1",
        namespace,
        resource,
        subresource: "",
        name: resourceName,
      }).allowed;
    if (served.plural === "roles" || served.plural === "clusterroles") {
      if (old && same(obj, old, ["rules", "aggregationRule"])) return [];
      if (allowedTo("escalate", served.plural, name)) return [];
      if (obj["aggregationRule"]) {
        throw forbidden(served, name, "must have cluster-admin privileges to use the aggregationRule");
      }
      confirmNoEscalation(authorizer, served, user, namespace, name, rulesOf(obj));
      return [];
    }
    if (served.plural === "rolebindings" || served.plural === "clusterrolebindings") {
      if (old && same(obj, old, ["roleRef", "subjects"])) return [];
      const roleRef = (obj["roleRef"] ?? {}) as { kind?: string; name?: string };
      const roleResource = roleRef.kind === "ClusterRole" ? "clusterroles" : "roles";
      if (allowedTo("bind", roleResource, roleRef.name ?? "")) return [];
      const resolved = authorizer.roleReferenceRules(roleRef.kind ?? "", roleRef.name ?? "", namespace);
      if (resolved.error) throw forbidden(served, name, resolved.error);
      confirmNoEscalation(authorizer, served, user, namespace, name, resolved.rules);
      return [];
    }
    return [];
  };
}

function same(a: JsonObject, b: JsonObject, fields: string[]): boolean {
  return fields.every((f) => JSON.stringify(a[f] ?? null) === JSON.stringify(b[f] ?? null));
}

function rulesOf(obj: JsonObject): PolicyRule[] {
  return Array.isArray(obj["rules"]) ? (obj["rules"] as PolicyRule[]) : [];
}

function forbidden(served: ServedResource, name: string, why: string): ApiError {
  const qualified = `${served.plural}.${served.group}`;
  const subject = name === "" ? qualified : `${qualified} ${JSON.stringify(name)}`;
  return new ApiError(
    failure(403, "Forbidden", `${subject} is forbidden: ${why}`, { name, group: served.group, kind: served.plural }),
  );
}

function confirmNoEscalation(
  authorizer: RbacAuthorizer,
  served: ServedResource,
  user: AuthUser,
  namespace: string,
  name: string,
  rules: PolicyRule[],
): void {
  const owned = authorizer.rulesFor(user, namespace);
  const missing = uncovered(owned.rules, rules);
  if (missing.length === 0) return;
  const descriptions = [...new Set(compactRules(missing).map(compactString))].sort();
  let message = `user ${JSON.stringify(user.username)} (groups=${goQuoteList(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${descriptions.join("\n")}`;
  // RulesFor returns one aggregate error; `%v` of the one-element slice holding it adds the brackets.
  if (owned.errors.length > 0) message += `; resolution errors: [${aggregate(owned.errors)}]`;
  throw forbidden(served, name, message);
}

/** Go's `%q` of a []string: `["a" "b"]`. */
function goQuoteList(list: string[] | undefined): string {
  return `[${(list ?? []).map((s) => JSON.stringify(s)).join(" ")}]`;
}

/** BreakdownRule: one verb, group, resource (and name) or URL per rule. */
function breakdown(rule: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const group of rule.apiGroups ?? []) {
    for (const resource of rule.resources ?? []) {
      for (const verb of rule.verbs ?? []) {
        if ((rule.resourceNames ?? []).length > 0) {
          for (const resourceName of rule.resourceNames!) {
            out.push({ apiGroups: [group], resources: [resource], verbs: [verb], resourceNames: [resourceName] });
          }
        } else out.push({ apiGroups: [group], resources: [resource], verbs: [verb] });
      }
    }
  }
  for (const url of rule.nonResourceURLs ?? []) {
    for (const verb of rule.verbs ?? []) out.push({ nonResourceURLs: [url], verbs: [verb] });
  }
  return out;
}

/** Covers: the broken-down rules of `servant` that no owner rule covers. */
export function uncovered(owner: PolicyRule[], servant: PolicyRule[]): PolicyRule[] {
  const missing: PolicyRule[] = [];
  for (const sub of servant.flatMap(breakdown)) {
    if (!owner.some((rule) => ruleCovers(rule, sub))) missing.push(sub);
  }
  return missing;
}

function hasAll(set: string[] | undefined, wanted: string[] | undefined): boolean {
  return (wanted ?? []).every((w) => (set ?? []).includes(w));
}

function ruleCovers(owner: PolicyRule, sub: PolicyRule): boolean {
  const verbs = (owner.verbs ?? []).includes("*") || hasAll(owner.verbs, sub.verbs);
  const groups = (owner.apiGroups ?? []).includes("*") || hasAll(owner.apiGroups, sub.apiGroups);
  const resources = resourcesCover(owner.resources ?? [], sub.resources ?? []);
  const urls = (sub.nonResourceURLs ?? []).every((url) => (owner.nonResourceURLs ?? []).some((o) => urlCovers(o, url)));
  const ownerNames = owner.resourceNames ?? [];
  const subNames = sub.resourceNames ?? [];
  const names =
    subNames.length === 0 ? ownerNames.length === 0 : ownerNames.length === 0 || hasAll(ownerNames, subNames);
  return verbs && groups && resources && names && urls;
}

function resourcesCover(owner: string[], wanted: string[]): boolean {
  if (owner.includes("*") || hasAll(owner, wanted)) return true;
  return wanted.every((resource) => {
    if (owner.includes(resource)) return true;
    const slash = resource.indexOf("/");
    return slash >= 0 && owner.includes(`*/${resource.slice(slash + 1)}`);
  });
}

function urlCovers(owner: string, url: string): boolean {
  return owner === url || owner === "*" || (owner.endsWith("*") && url.startsWith(owner.slice(0, -1)));
}

/** CompactRules: single-group, single-resource rules merge their verbs. */
function compactRules(rules: PolicyRule[]): PolicyRule[] {
  const out: PolicyRule[] = [];
  const simple = new Map<string, PolicyRule>();
  for (const rule of rules) {
    const names = rule.resourceNames ?? [];
    const isSimple =
      names.length <= 1 &&
      (rule.nonResourceURLs ?? []).length === 0 &&
      (rule.apiGroups ?? []).length === 1 &&
      (rule.resources ?? []).length === 1;
    if (!isSimple) {
      out.push(rule);
      continue;
    }
    const key = JSON.stringify([rule.apiGroups![0], rule.resources![0], names[0] ?? null]);
    const existing = simple.get(key);
    if (existing) existing.verbs = [...(existing.verbs ?? []), ...(rule.verbs ?? [])];
    else simple.set(key, { ...rule, verbs: [...(rule.verbs ?? [])] });
  }
  return [...out, ...simple.values()];
}

/** CompactString: `{APIGroups:["apps"], Resources:["deployments"], Verbs:["get" "list"]}`. */
function compactString(rule: PolicyRule): string {
  const parts: string[] = [];
  if ((rule.apiGroups ?? []).length > 0) parts.push(`APIGroups:${goQuoteList(rule.apiGroups)}`);
  if ((rule.resources ?? []).length > 0) parts.push(`Resources:${goQuoteList(rule.resources)}`);
  if ((rule.nonResourceURLs ?? []).length > 0) parts.push(`NonResourceURLs:${goQuoteList(rule.nonResourceURLs)}`);
  if ((rule.resourceNames ?? []).length > 0) parts.push(`ResourceNames:${goQuoteList(rule.resourceNames)}`);
  if ((rule.verbs ?? []).length > 0) parts.push(`Verbs:${goQuoteList(rule.verbs)}`);
  return `{${parts.join(", ")}}`;
}
