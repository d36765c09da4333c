/**
 * managedFields for every write the REST layer commits: what kube-apiserver's handlers do with
 * `scope.FieldManager` around create, update and patch (k8s.io/apiserver pkg/endpoints/handlers
 * create.go, update.go, patch.go), called by rest/object-store.ts once the next object is prepared.
 *
 * Expected flow: the HTTP handler names the writer (`managerOrUserAgent`: the `fieldManager` query
 * parameter, else the User-Agent's program name) and passes it in the write options; the store calls
 * {@link trackCreate} on a new object after defaulting, and {@link trackWrite} on the next version of an
 * existing one after the strategy prepared it (status reset, defaults, generation).
 *
 * Guarantees:
 * - Create, update, and JSON/merge/strategic patches record an `Update` entry for their manager (with
 *   `subresource` for writes through `/status` or `/finalize`); existing entries of that manager are
 *   extended, managers whose fields were all changed or removed by others disappear, more than ten
 *   Update managers fold into `ancient-changes` (field-manager.ts `trackUpdate`).
 * - Objects that exist without managedFields (written before tracking, or cleared by a client with
 *   `managedFields: []`) stay untracked on update until an apply gives their fields to
 *   `before-first-apply`, as kube-apiserver's skipNonAppliedManager does.
 * - Writes whose managedFields were computed upstream (server-side apply, the scale subresource) keep
 *   them as computed; a `/status` apply keeps them although the status strategy takes nothing else
 *   from the body's metadata.
 * - Never throws: like UpdateNoErrors, a failure clears managedFields rather than fail the write.
 *
 * Caveats: in-process writes without a writer (the devcluster's own controllers) are recorded under the
 * name {@link writingAs} set around them, else {@link IN_PROCESS_MANAGER}.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { nowRfc3339 } from "../machinery/timestamps.ts";
import { builtinPatchMeta, LOOSE, type TypeNode } from "../patch/patch-meta.ts";
import { groupVersion, type JsonObject, type ServedResource } from "../registry/served-resource.ts";
import { createdFieldsV1 } from "./created-fields.ts";
import { type KubeJson, statusResetFields, statusSubresourceResetFields, trackUpdate } from "./field-manager.ts";
import type { ManagedFieldsEntry } from "./managed-fields.ts";
import type { Json } from "./path-element.ts";
import { type StructuralSchema, typeFromStructuralSchema } from "./type-info.ts";

/** Who performs a write, as its managedFields entry names it. */
export interface WriteManager {
  /** managerOrUserAgent of the request: `kubectl-create`, `kubectl-edit`, `kubectl`, `capstan`... */
  manager: string;
  /** The subresource the write came through (`status`, `scale`, `finalize`): part of the manager identity. */
  subresource?: string;
  /** The write's managedFields were computed upstream (server-side apply, scale): keep them as they are. */
  computed?: boolean;
}

/**
 * The manager of writes made in process without a writer: the devcluster's server-side controllers
 * (garbage collector, Deployment and ReplicaSet controllers, kubelet...), most of which run inside
 * kube-controller-manager on a real cluster.
 */
export const IN_PROCESS_MANAGER = "kube-controller-manager";

/** buildManagerInfo's name for a request with neither `fieldManager` nor a User-Agent. */
const UNKNOWN_MANAGER = "unknown";

/** Who in-process writes without a writer are made by, set around a controller's work (writingAs). */
const inProcessWriter = new AsyncLocalStorage<string>();

/**
 * Runs `fn` (and everything it awaits) with in-process writes recorded under `manager`: the
 * devcluster's controllers name themselves as their real counterparts do (`kubelet`,
 * `kube-scheduler`, `kube-apiserver` for the CRD and bootstrap writes).
 */
export function writingAs<T>(manager: string, fn: () => T): T {
  return inProcessWriter.run(manager, fn);
}

function managerName(writer: WriteManager | undefined): string {
  if (!writer) return inProcessWriter.getStore() ?? IN_PROCESS_MANAGER;
  return writer.manager || UNKNOWN_MANAGER;
}

const typeCache = new WeakMap<ServedResource, TypeNode>();

/** The apply type tree of a served resource (its CRD schema, or the built-in table), built once per descriptor. */
export function managedTypeOf(served: ServedResource): TypeNode {
  let type = typeCache.get(served);
  if (!type) {
    type = served.custom
      ? typeFromStructuralSchema(served.schema as StructuralSchema | undefined)
      : (builtinPatchMeta(served.group, served.kind) ?? LOOSE);
    typeCache.set(served, type);
  }
  return type;
}

function metaOf(obj: JsonObject): Record<string, unknown> {
  const m = obj.metadata;
  if (m !== null && typeof m === "object" && !Array.isArray(m)) return m;
  const fresh: Record<string, unknown> = {};
  obj.metadata = fresh;
  return fresh;
}

/** `[]` or `[{}]`: a client asking for managedFields to be reset (isResetManagedFields). */
function isReset(v: unknown): boolean {
  if (!Array.isArray(v)) return false;
  if (v.length === 0) return true;
  return v.length === 1 && v[0] !== null && typeof v[0] === "object" && Object.keys(v[0] as object).length === 0;
}

/** Top-level reset fields of a write: `status` on a main resource with a status subresource, `spec` on `/status`. */
function resetFieldNames(served: ServedResource, subresource: string | undefined): string[] {
  if (subresource === "status") return ["spec"];
  if (subresource === undefined && served.subresources.status) return ["status"];
  return [];
}

/**
 * Records the creating manager in `obj` (changed in place: the store owns the object it creates).
 * A client may send managedFields on create; valid ones are taken as the starting point, as the real
 * server does.
 */
export function trackCreate(served: ServedResource, obj: JsonObject, writer: WriteManager | undefined): void {
  if (writer?.computed) return;
  const manager = managerName(writer);
  const meta = metaOf(obj);
  const sent = meta["managedFields"];
  const type = managedTypeOf(served);
  const apiVersion = groupVersion(served);
  if (sent === undefined || isReset(sent)) {
    delete meta["managedFields"];
    try {
      const fields = createdFieldsV1(obj as Record<string, Json>, type, resetFieldNames(served, writer?.subresource));
      if (fields) meta["managedFields"] = [createdEntry(manager, apiVersion, writer?.subresource, fields)];
    } catch {
      // UpdateNoErrors: no managedFields rather than a failed create.
    }
    return;
  }
  const tracked = trackUpdate(undefined, obj as KubeJson, {
    manager,
    type,
    apiVersion,
    kind: served.kind,
    ...(writer?.subresource ? { subresource: writer.subresource } : {}),
    ...(served.subresources.status ? { ignored: statusResetFields() } : {}),
  });
  const entries = (tracked.metadata as Record<string, unknown> | undefined)?.["managedFields"];
  if (entries === undefined) delete meta["managedFields"];
  else meta["managedFields"] = entries;
}

function createdEntry(
  manager: string,
  apiVersion: string,
  subresource: string | undefined,
  fieldsV1: Record<string, unknown>,
): ManagedFieldsEntry {
  const entry: ManagedFieldsEntry = {
    manager,
    operation: "Update",
    apiVersion,
    time: nowRfc3339(),
    fieldsType: "FieldsV1",
    fieldsV1,
  };
  if (subresource) entry.subresource = subresource;
  return entry;
}

/**
 * The next version of an existing object with its managedFields updated for `writer`. `target` is the
 * part of the object the write addresses; `input` is what the client sent (for a `/status` apply, its
 * computed managedFields). Returns `next` itself when nothing is tracked.
 */
export function trackWrite(
  served: ServedResource,
  old: JsonObject,
  next: JsonObject,
  input: JsonObject,
  target: "main" | "status" | "finalize" | "approval",
  writer: WriteManager | undefined,
): JsonObject {
  if (writer?.computed) {
    if (target !== "main") {
      const computed = (input.metadata as Record<string, unknown> | undefined)?.["managedFields"];
      const meta = metaOf(next);
      if (computed === undefined) delete meta["managedFields"];
      else meta["managedFields"] = computed;
    }
    return next;
  }
  const subresource = writer?.subresource ?? (target === "main" ? undefined : target);
  const reset = resetFieldNames(served, subresource);
  const ignored =
    reset[0] === "spec" ? statusSubresourceResetFields() : reset[0] === "status" ? statusResetFields() : undefined;
  return trackUpdate(old as KubeJson, next as KubeJson, {
    manager: managerName(writer),
    type: managedTypeOf(served),
    apiVersion: groupVersion(served),
    kind: served.kind,
    ...(subresource ? { subresource } : {}),
    ...(ignored ? { ignored } : {}),
  }) as JsonObject;
}
