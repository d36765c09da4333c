/**
 * A policy's `matchConstraints` and a binding's `matchResources` (admissionregistration/v1
 * MatchResources), as k8s.io/apiserver pkg/admission/plugin/policy/matching decides them, in its order:
 * namespaceSelector, objectSelector, then `excludeResourceRules` (any match leaves the request out),
 * then `resourceRules` (none given matches every resource). A rule with `resourceNames` matches only
 * requests for those names.
 *
 * Caveat: `matchPolicy: Equivalent` (the default) matches any version of the request's resource, as the
 * webhooks here do; the real server asks which resources are equivalent (a group's renames, too).
 */
import type { JsonObject } from "../registry/served-resource.ts";
import type { LabelSelector } from "../rest/label-selector.ts";
import type { AdmissionRequestInfo } from "../rest/types.ts";
import type { Storage } from "../storage/storage.ts";
import { admissionNamespace, namespaceSelectorMatches, objectSelectorMatches } from "./admission-selectors.ts";
import { type RuleAttributes, ruleMatches, type WebhookRule } from "./webhook-rules.ts";

/** admissionregistration/v1 NamedRuleWithOperations. */
export interface NamedRule extends WebhookRule {
  resourceNames?: readonly string[];
}

/** admissionregistration/v1 MatchResources. */
export interface MatchResources {
  namespaceSelector?: LabelSelector | null;
  objectSelector?: LabelSelector | null;
  resourceRules?: readonly NamedRule[];
  excludeResourceRules?: readonly NamedRule[];
  matchPolicy?: string;
}

/** One write, with what matching reads from the cluster (the namespace's labels). */
export interface MatchedRequest {
  info: AdmissionRequestInfo;
  obj: JsonObject | undefined;
  old: JsonObject | undefined;
  storage: Storage;
}

/** Whether `match` selects the request. */
export function matchResourcesMatch(match: MatchResources, request: MatchedRequest): boolean {
  const { info, obj, old, storage } = request;
  if (!namespaceSelectorMatches(storage, match.namespaceSelector ?? undefined, info, obj)) return false;
  if (!objectSelectorMatches(match.objectSelector ?? undefined, obj, old)) return false;
  const attrs: RuleAttributes = {
    operation: info.operation,
    resource: { group: info.served.group, version: info.served.version, resource: info.served.plural },
    subresource: info.subresource,
    namespace: admissionNamespace(info),
  };
  const exact = match.matchPolicy === "Exact";
  if (rulesMatch(match.excludeResourceRules, attrs, info.name, exact)) return false;
  const rules = match.resourceRules ?? [];
  return rules.length === 0 || rulesMatch(rules, attrs, info.name, exact);
}

function rulesMatch(
  rules: readonly NamedRule[] | undefined,
  attrs: RuleAttributes,
  name: string,
  exact: boolean,
): boolean {
  return (rules ?? []).some((rule) => {
    const versioned = exact ? rule : { ...rule, apiVersions: ["*"] };
    if (!ruleMatches(versioned, attrs)) return false;
    const names = rule.resourceNames ?? [];
    return names.length === 0 || names.includes(name);
  });
}
