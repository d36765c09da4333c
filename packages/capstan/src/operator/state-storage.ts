/**
 * Where an operator keeps its handler state (progress.ts) on objects of one kind:
 *
 * - `status`: in `status.capstan.<operator>`, for kinds defined with `defineResource` that have a
 *   status (their generated CRD declares the field, so pruning keeps it). A handler's status
 *   result, its progress record or the last handled configuration then go to the API server in
 *   one status write: a create handler that sets status costs one write, not two.
 * - `annotations`: `<operator>.capstan.dev/<entry>`, for every other kind (built-in kinds have
 *   strict status schemas; a CRD from elsewhere may prune unknown status fields).
 *
 * A CRD in the cluster may be older than the code (installed before the field existed): a status
 * write whose answer lacks the state is detected and the kind falls back to annotations.
 */
import type { KubeObject, ResourceKind } from "../client/types.ts";
import { STATUS_STATE_FIELD } from "../resources/crd.ts";
import { isCustomResource } from "../resources/define-resource.ts";
import type { OperatorNames } from "./naming.ts";
import { type StateEntries, statusState } from "./progress.ts";

export type StateStorage = "status" | "annotations";

/** `status` when the kind's schema (from `defineResource`) declares `status.capstan`. */
export function stateStorageFor(kind: ResourceKind): StateStorage {
  if (!isCustomResource(kind)) return "annotations";
  const version = kind.crd.spec.versions.find((v) => v.name === kind.version);
  const status = version?.schema?.openAPIV3Schema?.properties?.status;
  const declared = status?.properties?.[STATUS_STATE_FIELD] !== undefined;
  return declared && version?.subresources?.status !== undefined ? "status" : "annotations";
}

/** The `metadata.annotations` merge-patch fragment writing `entries`. */
export function stateAnnotations(names: OperatorNames, entries: StateEntries): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const [key, value] of Object.entries(entries)) out[`${names.prefix}/${key}`] = value;
  return out;
}

/** The status merge-patch fragment writing `entries`. */
export function stateStatus(names: OperatorNames, entries: StateEntries): Record<string, unknown> {
  return { [STATUS_STATE_FIELD]: { [names.operator]: entries } };
}

/** Whether `obj`, as a status write answered it, holds the values of `entries` in its status. */
export function statusHolds(obj: KubeObject, names: OperatorNames, entries: StateEntries): boolean {
  const stored = statusState(obj, names);
  return Object.entries(entries).every(([key, value]) => value === null || stored[key] === value);
}

/**
 * Annotation fragment removing those of `entries` that `obj` still has as annotations: entries
 * written to status leave where an earlier version of the operator kept them.
 */
export function leftoverAnnotations(
  obj: KubeObject,
  names: OperatorNames,
  entries: StateEntries,
): Record<string, null> {
  const out: Record<string, null> = {};
  const annotations = obj.metadata?.annotations ?? {};
  for (const key of Object.keys(entries)) {
    const annotation = `${names.prefix}/${key}`;
    if (Object.hasOwn(annotations, annotation)) out[annotation] = null;
  }
  return out;
}
