/**
 * managedFields across the `scale` subresource, as k8s.io/apimachinery managedfields ScaleHandler and
 * the Deployment/ReplicaSet/custom-resource scale storage use it: a write to `/scale` runs the field
 * manager on the autoscaling/v1 Scale object, whose managedFields are derived from the parent's, then
 * maps the result back onto the parent's replicas field.
 *
 * Expected flow (endpoints/resource-handler.ts, inside the GuaranteedUpdate of the parent):
 * `scaleForWrite(served, parent)` -> the Scale with its managedFields -> apply (patch-types.ts, with
 * subresource `scale`) or update/patch + {@link trackScaleUpdate} -> {@link parentAfterScale} -> the
 * parent to store, written with its managedFields as computed.
 *
 * Guarantees (ToSubresource / ToParent):
 * - On the Scale, every parent manager owning the replicas field owns `.spec.replicas`, at
 *   `autoscaling/v1`, keeping its operation, subresource and time.
 * - Back on the parent, a manager that no longer owns the Scale's replicas loses the parent's replicas
 *   field (its entry disappears when that was all it owned); a manager that took `.spec.replicas` on the
 *   Scale owns the parent's replicas field at the parent's apiVersion, with subresource `scale` in its
 *   identity. Its entry carries the time the parent had for it (none for a new manager), as upstream.
 *
 * Caveats: every parent entry maps through the served version's replicas path; the real handler keeps
 * a path per version and drops entries of unknown versions (no difference while one version is served,
 * or while all versions share the path, as CRD versions without conversion do here).
 */

import { DEDUCED, type TypeNode } from "../patch/patch-meta.ts";
import { readScale, writeScale } from "../registry/scale.ts";
import { groupVersion, type JsonObject, type ServedResource } from "../registry/served-resource.ts";
import { trackUpdate } from "./field-manager.ts";
import { FieldSet } from "./field-set.ts";
import {
  decodeManagedFields,
  encodeManagedFields,
  type Managed,
  type ManagedFieldsEntry,
  ManagedFieldsError,
} from "./managed-fields.ts";
import type { Path } from "./path-element.ts";

/** The Scale's group/version. */
export const SCALE_API_VERSION = "autoscaling/v1";
/** The Scale's type: untyped maps, as its spec and status are plain structs without list semantics. */
export const SCALE_TYPE: TypeNode = DEDUCED;

const REPLICAS_IN_SCALE: Path = [{ field: "spec" }, { field: "replicas" }];

function replicasPathOf(served: ServedResource): Path {
  const jsonPath = served.subresources.scale?.specReplicasPath ?? ".spec.replicas";
  return jsonPath
    .replace(/^\./, "")
    .split(".")
    .map((field) => ({ field }));
}

function entriesOf(obj: JsonObject): ManagedFieldsEntry[] | undefined {
  const entries = (obj.metadata as Record<string, unknown> | undefined)?.["managedFields"];
  return Array.isArray(entries) ? (entries as ManagedFieldsEntry[]) : undefined;
}

function setEntries(obj: JsonObject, entries: ManagedFieldsEntry[] | undefined): void {
  const meta = { ...((obj.metadata as Record<string, unknown> | undefined) ?? {}) };
  if (entries) meta["managedFields"] = entries;
  else delete meta["managedFields"];
  obj.metadata = meta;
}

function decode(entries: ManagedFieldsEntry[] | undefined): Managed | undefined {
  try {
    return decodeManagedFields(entries);
  } catch (err) {
    if (err instanceof ManagedFieldsError) return undefined;
    throw err;
  }
}

/** ToSubresource: the parent's Scale, with the managers of its replicas field. */
export function scaleForWrite(served: ServedResource, parent: JsonObject): JsonObject {
  const scale = readScale(served, parent);
  const managed = decode(entriesOf(parent));
  if (!managed) return scale;
  const path = replicasPathOf(served);
  const out: Managed = { fields: new Map(), times: new Map() };
  for (const [id, vs] of managed.fields) {
    if (!vs.set.has(path)) continue;
    out.fields.set(id, { set: FieldSet.of(REPLICAS_IN_SCALE), apiVersion: SCALE_API_VERSION, applied: vs.applied });
    out.times.set(id, managed.times.get(id));
  }
  setEntries(scale, encodeManagedFields(out));
  return scale;
}

/** A non-apply write of the Scale (update, merge or JSON patch): `manager` with subresource `scale`. */
export function trackScaleUpdate(before: JsonObject, after: JsonObject, manager: string): JsonObject {
  return trackUpdate(before, after, {
    manager,
    type: SCALE_TYPE,
    apiVersion: SCALE_API_VERSION,
    kind: "Scale",
    subresource: "scale",
  }) as JsonObject;
}

/** ToParent: the parent with the Scale's replicas written back and the managers mapped onto it. */
export function parentAfterScale(served: ServedResource, parent: JsonObject, scale: JsonObject): JsonObject {
  const next = writeScale(served, parent, scale);
  const parentManaged = decode(entriesOf(parent));
  const scaleManaged = decode(entriesOf(scale));
  if (!parentManaged || !scaleManaged) {
    setEntries(next, entriesOf(parent));
    return next;
  }
  const path = replicasPathOf(served);
  const parentVersion = groupVersion(served);
  const scaleFields = new Map(scaleManaged.fields);
  const out: Managed = { fields: new Map(), times: new Map() };
  for (const [id, vs] of parentManaged.fields) {
    if (!vs.set.has(path)) {
      out.fields.set(id, vs);
      out.times.set(id, parentManaged.times.get(id));
    } else if (!scaleFields.has(id)) {
      // The Scale write took the replicas from this manager.
      const rest = vs.set.difference(FieldSet.of(path));
      if (!rest.isEmpty()) {
        out.fields.set(id, { ...vs, set: rest });
        out.times.set(id, parentManaged.times.get(id));
      }
    } else {
      out.fields.set(id, vs);
      out.times.set(id, parentManaged.times.get(id));
      scaleFields.delete(id);
    }
  }
  for (const [id, vs] of scaleFields) {
    if (!vs.set.has(REPLICAS_IN_SCALE)) continue;
    out.fields.set(id, { set: FieldSet.of(path), apiVersion: parentVersion, applied: vs.applied });
    out.times.set(id, parentManaged.times.get(id));
  }
  setEntries(next, encodeManagedFields(out));
  return next;
}
