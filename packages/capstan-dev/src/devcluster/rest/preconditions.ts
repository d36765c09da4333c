/**
 * uid and resourceVersion preconditions, worded where kube-apiserver 1.32 checks them:
 * - a DELETE's `preconditions` by rest.BeforeDelete (registry/rest/delete.go), which names the
 *   object by its kind ("Operation cannot be fulfilled on ConfigMap ...");
 * - an update's `metadata.uid` by the storage's Preconditions.Check (storage/interfaces.go, asked by
 *   DefaultUpdatedObjectInfo), whose StorageError carries the etcd key (storage/errors.go).
 */
import { conflict } from "../machinery/status.ts";
import type { ServedResource } from "../registry/served-resource.ts";

/** rest.BeforeDelete's early check of DeleteOptions.preconditions against the stored object. */
export function checkDeletePreconditions(
  served: ServedResource,
  name: string,
  meta: { uid?: string; resourceVersion?: string },
  pre: { uid?: string; resourceVersion?: string } | undefined,
): void {
  // NewConflict with schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}; null is an unset precondition.
  const byKind = { group: served.group, resource: served.kind };
  if (pre?.uid != null && pre.uid !== (meta.uid ?? "")) {
    throw conflict(
      byKind,
      name,
      `the UID in the precondition (${pre.uid}) does not match the UID in record (${meta.uid ?? ""}). The object might have been deleted and then recreated`,
    );
  }
  if (pre?.resourceVersion != null && pre.resourceVersion !== (meta.resourceVersion ?? "")) {
    throw conflict(
      byKind,
      name,
      `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${meta.resourceVersion ?? ""}). The object might have been modified`,
    );
  }
}

/** The storage's UID precondition of an update whose body names a uid (InterpretUpdateError's Conflict). */
export function checkUpdateUid(
  served: ServedResource,
  namespace: string,
  name: string,
  wanted: string,
  actual: string,
): void {
  if (wanted === actual) return;
  const key = etcdKey(served, namespace, name);
  throw conflict(
    { group: served.group, resource: served.plural },
    name,
    `StorageError: invalid object, Code: 4, Key: ${key}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: ${wanted}, UID in object meta: ${actual}`,
  );
}

/** Built-in resources kube-apiserver keeps under another etcd prefix (storage's SpecialDefaultResourcePrefixes). */
const SPECIAL_PREFIXES: Record<string, string> = {
  "/replicationcontrollers": "controllers",
  "/endpoints": "services/endpoints",
  "/nodes": "minions",
  "/services": "services/specs",
  "extensions/ingresses": "ingress",
  "networking.k8s.io/ingresses": "ingress",
};

/** Groups whose servers key their storage by group and resource (apiextensions, the aggregator, CRDs). */
const GROUP_KEYED = new Set(["apiextensions.k8s.io", "apiregistration.k8s.io"]);

/** The etcd key kube-apiserver stores an object under, with its default `/registry` prefix. */
export function etcdKey(served: ServedResource, namespace: string, name: string): string {
  const stored = served.conversion?.storage ?? served;
  const prefix =
    stored.custom || GROUP_KEYED.has(stored.group)
      ? `${stored.group}/${stored.plural}`
      : (SPECIAL_PREFIXES[`${stored.group}/${stored.plural}`] ?? stored.plural);
  return stored.namespaced ? `/registry/${prefix}/${namespace}/${name}` : `/registry/${prefix}/${name}`;
}

/** The uid of a stored object. */
export function storedUid(data: string): string {
  const meta = (JSON.parse(data) as { metadata?: { uid?: unknown } }).metadata;
  return typeof meta?.uid === "string" ? meta.uid : "";
}
