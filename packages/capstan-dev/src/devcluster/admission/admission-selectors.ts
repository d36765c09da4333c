/**
 * The label selectors of webhooks and policies (`namespaceSelector`, `objectSelector`), as
 * k8s.io/apiserver pkg/admission/plugin/webhook/predicates/{namespace,object} apply them:
 *
 * - an empty selector matches everything;
 * - a namespaceSelector never selects out a cluster-scoped object other than a namespace; a
 *   namespace is matched by its own labels; a namespaced object by its namespace's labels;
 * - an objectSelector matches when the object's labels or the old object's labels match.
 */
import type { JsonObject } from "../registry/served-resource.ts";
import { type LabelSelector, selectorMatches } from "../rest/label-selector.ts";
import type { AdmissionRequestInfo } from "../rest/types.ts";
import type { Storage } from "../storage/storage.ts";

/** Whether the request is for a core/v1 Namespace (whose requests carry its own name as namespace). */
export function isNamespaceRequest(info: AdmissionRequestInfo): boolean {
  return info.served.group === "" && info.served.plural === "namespaces";
}

/** The namespace rules and selectors see: `""` outside one, a namespace's own name for a namespace. */
export function admissionNamespace(info: AdmissionRequestInfo): string {
  if (info.served.namespaced) return info.namespace;
  return isNamespaceRequest(info) ? info.name : "";
}

/** The stored namespace `name`, or undefined. */
export function storedNamespace(storage: Storage, name: string): JsonObject | undefined {
  // Namespaces are cluster-scoped: their key is their name.
  const stored = storage.get("/namespaces", name);
  return stored === undefined ? undefined : (JSON.parse(stored.data) as JsonObject);
}

export function namespaceSelectorMatches(
  storage: Storage,
  selector: LabelSelector | undefined,
  info: AdmissionRequestInfo,
  obj: JsonObject | undefined,
): boolean {
  if (selector === undefined || isEmptySelector(selector)) return true;
  const namespace = admissionNamespace(info);
  if (namespace === "") return true;
  const labels = isNamespaceRequest(info) ? labelsOf(obj) : labelsOf(storedNamespace(storage, namespace));
  return selectorMatches(selector, labels);
}

export function objectSelectorMatches(
  selector: LabelSelector | undefined,
  obj: JsonObject | undefined,
  old: JsonObject | undefined,
): boolean {
  if (selector === undefined || isEmptySelector(selector)) return true;
  return (
    (obj !== undefined && selectorMatches(selector, labelsOf(obj))) ||
    (old !== undefined && selectorMatches(selector, labelsOf(old)))
  );
}

function isEmptySelector(selector: LabelSelector): boolean {
  return Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0;
}

export function labelsOf(obj: JsonObject | undefined): Record<string, string> {
  return ((obj?.metadata as { labels?: Record<string, string> } | undefined)?.labels ?? {}) as Record<string, string>;
}
