/**
 * The NamespaceLifecycle admission plugin's refusals of a create (apiserver
 * admission/plugin/namespace/lifecycle/admission.go), run before anything else of the create: into a
 * namespace that does not exist, the namespace's 404; into one being terminated, a 403 Forbidden
 * (admission.NewForbidden) with a `NamespaceTerminating` cause on `metadata.namespace`. It applies to
 * every create in a namespace, subresource creates too (a TokenRequest), but for
 * localsubjectaccessreviews, which never look at the namespace.
 */
import { forbidden, type GroupResource, notFound } from "../machinery/status.ts";
import type { JsonObject } from "../registry/served-resource.ts";
import type { Storage, StoredObject } from "../storage/storage.ts";

/**
 * Throws the plugin's refusal of creating `body` as `resource` in `namespace`. `name` is the
 * request's (a subresource's parent); without one, the body names the object as
 * admission.NewForbidden's extractResourceName does.
 */
export function refuseCreateInNamespace(
  storage: Storage,
  resource: GroupResource,
  namespace: string,
  body: JsonObject | undefined,
  name?: string,
): void {
  const ns = storage.get("/namespaces", namespace);
  if (!ns) throw notFound({ group: "", resource: "namespaces" }, namespace);
  if (!namespaceTerminating(storage, ns)) return;
  throw forbidden(
    resource,
    name || admissionName(body),
    `unable to create new content in namespace ${namespace} because it is being terminated`,
    [
      {
        reason: "NamespaceTerminating",
        message: `namespace ${namespace} is being terminated`,
        field: "metadata.namespace",
      },
    ],
  );
}

/**
 * The name admission.NewForbidden gives an object being created (extractResourceName): its name, else
 * its generateName (no name is generated yet), else "Unknown".
 */
function admissionName(body: JsonObject | undefined): string {
  const meta = (body?.metadata ?? {}) as { name?: unknown; generateName?: unknown };
  if (typeof meta.name === "string" && meta.name !== "") return meta.name;
  if (typeof meta.generateName === "string" && meta.generateName !== "") return meta.generateName;
  return "Unknown";
}

/**
 * Whether a stored namespace is terminating, cached per storage, namespace and revision (every
 * namespaced create asks; storage reads may hand out a new StoredObject each time, so identity cannot be
 * the key). One entry per namespace ever seen by that storage.
 */
const terminatingCache = new WeakMap<Storage, Map<string, { rev: number; terminating: boolean }>>();

function namespaceTerminating(storage: Storage, ns: StoredObject): boolean {
  let byName = terminatingCache.get(storage);
  if (!byName) {
    byName = new Map();
    terminatingCache.set(storage, byName);
  }
  const cached = byName.get(ns.key);
  if (cached?.rev === ns.rev) return cached.terminating;
  const parsedNs = JSON.parse(ns.data) as { metadata?: { deletionTimestamp?: string }; status?: { phase?: string } };
  const terminating = Boolean(parsedNs.metadata?.deletionTimestamp) || parsedNs.status?.phase === "Terminating";
  byName.set(ns.key, { rev: ns.rev, terminating });
  return terminating;
}
