/**
 * Whether a webhook's rule covers a request, as kube-apiserver's rules matcher decides it
 * (k8s.io/apiserver pkg/admission/plugin/webhook/predicates/rules): scope, operation, group,
 * version and resource must all match.
 *
 * - `*` matches any group, version, operation (`*` is OperationAll) or resource; in `resources`,
 *   `pods/*` is every subresource of pods, `* /status` (without the space) every status
 *   subresource, and `pods` alone only the pods themselves (an empty subresource).
 * - `scope: Namespaced` matches requests in a namespace; `Cluster` matches requests outside
 *   one, and namespace objects themselves (which are cluster-scoped, yet their requests carry
 *   their own name as namespace); `*` or no scope matches both.
 *
 * The request's resource is the one the webhook is called for: with `matchPolicy: Equivalent`
 * the caller matches again with the equivalent resource; this module only compares.
 */

/** admissionregistration/v1 RuleWithOperations. */
export interface WebhookRule {
  apiGroups?: readonly string[];
  apiVersions?: readonly string[];
  operations?: readonly string[];
  resources?: readonly string[];
  scope?: string;
}

/** What a rule is matched against. */
export interface RuleAttributes {
  operation: "CREATE" | "UPDATE" | "DELETE" | "CONNECT";
  resource: { group: string; version: string; resource: string };
  /** `""` for the object itself. */
  subresource: string;
  /** `""` outside a namespace; for a namespace object, its own name. */
  namespace: string;
}

/** Whether `rule` covers a request with `attrs`. */
export function ruleMatches(rule: WebhookRule, attrs: RuleAttributes): boolean {
  return (
    scopeMatches(rule.scope, attrs) &&
    (rule.operations ?? []).some((op) => op === "*" || op === attrs.operation) &&
    exactOrWildcard(rule.apiGroups, attrs.resource.group) &&
    exactOrWildcard(rule.apiVersions, attrs.resource.version) &&
    resourceMatches(rule.resources, attrs)
  );
}

function exactOrWildcard(items: readonly string[] | undefined, requested: string): boolean {
  return (items ?? []).some((item) => item === "*" || item === requested);
}

function isNamespaceResource(attrs: RuleAttributes): boolean {
  const r = attrs.resource;
  return r.group === "" && r.version === "v1" && r.resource === "namespaces";
}

function scopeMatches(scope: string | undefined, attrs: RuleAttributes): boolean {
  if (scope === undefined || scope === "*") return true;
  if (scope === "Namespaced") return !isNamespaceResource(attrs) && attrs.namespace !== "";
  if (scope === "Cluster") return isNamespaceResource(attrs) || attrs.namespace === "";
  return false;
}

function resourceMatches(resources: readonly string[] | undefined, attrs: RuleAttributes): boolean {
  for (const entry of resources ?? []) {
    const slash = entry.indexOf("/");
    const res = slash < 0 ? entry : entry.slice(0, slash);
    const sub = slash < 0 ? "" : entry.slice(slash + 1);
    if ((res === "*" || res === attrs.resource.resource) && (sub === "*" || sub === attrs.subresource)) return true;
  }
  return false;
}
