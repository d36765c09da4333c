/**
 * The attributes of one write as admission sees them (admission.Attributes): what webhooks are sent
 * in their AdmissionReview, and what policies' and matchConditions' CEL reads as `request`,
 * `object` and `oldObject`.
 */
import type { JsonObject, ServedResource } from "../registry/served-resource.ts";
import type { AdmissionRequestInfo } from "../rest/types.ts";
import type { AdmissionAttributes } from "./webhook-call.ts";

/**
 * The attributes of the write `info` with the object `obj` (undefined for DELETE) and the stored `old`,
 * both in the version of `as` (the resource a webhook's rules matched; `info.served` when absent);
 * the request's own kind and resource are what the client addressed.
 */
export function admissionAttributes(
  info: AdmissionRequestInfo,
  obj: JsonObject | undefined,
  old: JsonObject | undefined,
  as: ServedResource = info.served,
): AdmissionAttributes {
  const requested = info.requested ?? info.served;
  const requester = info.options.requester;
  const object = obj === undefined ? null : withoutPlaceholders(obj, info.operation);
  return {
    kind: kindOf(as),
    resource: resourceOf(as),
    subResource: info.subresource,
    requestKind: kindOf(requested),
    requestResource: resourceOf(requested),
    requestSubResource: info.subresource,
    name: info.name,
    namespace: info.served.namespaced ? info.namespace : "",
    operation: info.operation,
    userInfo:
      requester === undefined
        ? { username: "" }
        : { username: requester.username, groups: requester.groups, ...(requester.uid ? { uid: requester.uid } : {}) },
    object,
    oldObject: old ?? null,
    dryRun: info.options.dryRun === true,
    options: operationOptions(info),
  };
}

function kindOf(served: ServedResource): AdmissionAttributes["kind"] {
  return { group: served.group, version: served.version, kind: served.kind };
}

function resourceOf(served: ServedResource): AdmissionAttributes["resource"] {
  return { group: served.group, version: served.version, resource: served.plural };
}

/** The request's CreateOptions, UpdateOptions or DeleteOptions, as the review's `options` carries them. */
function operationOptions(info: AdmissionRequestInfo): Record<string, unknown> {
  const dryRun = info.options.dryRun ? { dryRun: ["All"] } : {};
  if (info.operation === "DELETE") {
    // What the client sent (metav1.DeleteOptions' fields, in its order), as the handler passes it on.
    const sent = info.deleteOptions ?? {};
    return {
      apiVersion: "meta.k8s.io/v1",
      kind: "DeleteOptions",
      ...(sent.gracePeriodSeconds !== undefined ? { gracePeriodSeconds: sent.gracePeriodSeconds } : {}),
      ...(sent.preconditions !== undefined ? { preconditions: sent.preconditions } : {}),
      ...(sent.orphanDependents !== undefined ? { orphanDependents: sent.orphanDependents } : {}),
      ...(sent.propagationPolicy !== undefined ? { propagationPolicy: sent.propagationPolicy } : {}),
      ...dryRun,
    };
  }
  return {
    apiVersion: "meta.k8s.io/v1",
    kind: info.operation === "CREATE" ? "CreateOptions" : "UpdateOptions",
    ...dryRun,
    ...(info.options.fieldManager?.manager ? { fieldManager: info.options.fieldManager.manager } : {}),
  };
}

/** The store holds a created object's resourceVersion place as `""`; admission sees none. */
function withoutPlaceholders(obj: JsonObject, operation: string): JsonObject {
  const meta = obj.metadata as Record<string, unknown> | undefined;
  if (operation !== "CREATE" || meta?.resourceVersion !== "") return obj;
  const { resourceVersion: _, ...rest } = meta;
  return { ...obj, metadata: rest };
}
