/**
 * The field manager: server-side apply and managedFields tracking for every write, composed as
 * kube-apiserver composes it (k8s.io/apimachinery managedfields/internal NewDefaultFieldManager):
 * version check -> last-applied upgrade/sync (manager "kubectl") -> before-first-apply -> cap of update
 * managers -> manager identity -> timestamps -> strip metadata -> ownership (updater.ts).
 *
 * Expected flow (request path):
 * - PATCH with `application/apply-patch+yaml`: decode the body, then
 *   `applyConfiguration(live | undefined, body, { manager: fieldManager, force, type, apiVersion, kind })`;
 *   store `result.object` (when `result.changed`, or when only managedFields moved) or answer the
 *   thrown {@link ApplyError}'s `status()`.
 * - create / update / other patches: `trackUpdate(live | undefined, next, { manager, type, apiVersion })`
 *   before storing `next`. It never throws.
 *
 * Guarantees:
 * - The returned objects carry `metadata.managedFields` encoded and sorted as the real server does;
 *   the field is removed when no manager owns anything.
 * - Apply without force fails with 409 and the real message/causes when it would change fields other
 *   managers own; `force` moves their ownership to the applier. A manager's fields it stops applying
 *   are removed unless someone else owns them.
 * - Objects that were written without managedFields (not created through this module) get a
 *   `before-first-apply` Update manager for all their fields on their first apply; plain updates of
 *   such objects do not start tracking (as kube-apiserver).
 * - `kubectl` (the manager name kubectl uses for `apply --server-side`) may take over fields still
 *   matching its client-side last-applied-configuration without conflicts, and keeps that annotation
 *   in sync when the object has it.
 *
 * Assumptions: `live` is the stored object (any version: apiVersion is rewritten by the caller); the
 * type tree describes the served version.
 *
 * Caveats: the request path decides reset fields (`ignored`, e.g. `status` for the main resource of a
 * kind with a status subresource) and must still run its own validation, defaulting and status wiping.
 */
import type { TypeNode } from "../patch/patch-meta.ts";
import { goJSON } from "../validation/go-format.ts";
import { ApplyConflictError, type ApplyError, applyBadRequest, applyInternal } from "./errors.ts";
import { FieldSet } from "./field-set.ts";
import {
  decodeManagedFields,
  encodeManagedFields,
  formatManagedTime,
  type Managed,
  type ManagedFieldsEntry,
  ManagedFieldsError,
  managerIdentifier,
} from "./managed-fields.ts";
import type { Json, Path } from "./path-element.ts";
import { compareTyped, jsonEqual, TypedValueError, toFieldSet, validateTyped } from "./typed.ts";
import { applyOwnership, ConflictsError, updateOwnership } from "./updater.ts";

export type { ApplyError };

/** A Kubernetes object as decoded JSON. */
export type KubeJson = Record<string, unknown> & { metadata?: Record<string, unknown> };

/** The annotation client-side `kubectl apply` keeps its last configuration in. */
export const LAST_APPLIED_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration";

/** The manager that receives ownership of existing fields on the first apply to an untracked object. */
export const BEFORE_FIRST_APPLY_MANAGER = "before-first-apply";

/** Update managers kept per object before the oldest are merged into `ancient-changes` (DefaultMaxUpdateManagers). */
export const MAX_UPDATE_MANAGERS = 10;
const ANCIENT_CHANGES_MANAGER = "ancient-changes";

/** ValidateAnnotationsSize's limit: last-applied is dropped rather than exceed it (TotalAnnotationSizeLimitB). */
const TOTAL_ANNOTATION_SIZE_LIMIT_BYTES = 256 * 1024;

/** The manager name used for the in-flight operation (managedFieldsUpdater's `current-operation`). */
const CURRENT_OPERATION = "current-operation";

/** Top-level fields nobody owns (stripMetaManager). */
export const STRIPPED_TOP_FIELDS: readonly string[] = ["apiVersion", "kind"];
/** metadata fields nobody owns (stripMetaManager); `metadata` itself is not owned either. */
export const STRIPPED_METADATA_FIELDS: readonly string[] = [
  "name",
  "namespace",
  "creationTimestamp",
  "selfLink",
  "uid",
  "clusterName",
  "generation",
  "managedFields",
  "resourceVersion",
];

/** Top-level and metadata fields nobody owns, as a field set. */
const STRIPPED = FieldSet.of(
  ...STRIPPED_TOP_FIELDS.map((f): Path => [{ field: f }]),
  [{ field: "metadata" }],
  ...STRIPPED_METADATA_FIELDS.map((f): Path => [{ field: "metadata" }, { field: f }]),
);

/** What every field-manager call needs to know about the target resource. */
export interface FieldManagerTarget {
  /** Type tree of the kind (patch-meta.ts `builtinPatchMeta`, or type-info.ts for custom resources). */
  type: TypeNode;
  /** apiVersion of the request (`apps/v1`). */
  apiVersion: string;
  kind: string;
  /** `status`/`scale` for subresource writes (part of the manager identity). */
  subresource?: string;
  /** Reset fields: never owned, never conflicting (e.g. `status` on the main resource). */
  ignored?: FieldSet;
  /** Clock for managedFields timestamps (tests pin it). */
  now?: () => Date;
}

export interface ApplyOptions extends FieldManagerTarget {
  /** The `fieldManager` query parameter. */
  manager: string;
  /** The `force` query parameter. */
  force?: boolean;
}

export interface ApplyResult {
  /** The object to store, with managedFields. */
  object: KubeJson;
  /** False when neither the object nor its managedFields changed (the server then skips the write). */
  changed: boolean;
}

function clone<T>(v: T): T {
  return structuredClone(v);
}

function metadataOf(obj: KubeJson): Record<string, unknown> {
  const m = obj.metadata;
  return m !== null && typeof m === "object" && !Array.isArray(m) ? m : {};
}

/**
 * The object without metadata.managedFields, as the typed walks see it. Shallow: the walks never mutate
 * their inputs, and results are deep-copied before anything edits them.
 */
function withoutManagedFields(obj: KubeJson): KubeJson {
  const meta = obj.metadata;
  if (!meta || typeof meta !== "object" || !("managedFields" in meta)) return obj;
  const { managedFields: _dropped, ...rest } = meta as Record<string, unknown>;
  return { ...obj, metadata: rest };
}

function setManagedFields(obj: KubeJson, entries: ManagedFieldsEntry[] | undefined): void {
  if (obj.metadata === undefined) obj.metadata = {};
  const meta = obj.metadata;
  if (entries) meta["managedFields"] = entries;
  else delete meta["managedFields"];
  if (Object.keys(meta).length === 0 && !entries) delete obj.metadata;
}

/** GroupVersionKind.String(): `apps/v1, Kind=Deployment`, `/v1, Kind=ConfigMap`. */
function gvkString(apiVersion: unknown, kind: unknown): string {
  const av = typeof apiVersion === "string" ? apiVersion : "";
  const slash = av.indexOf("/");
  const group = slash >= 0 ? av.slice(0, slash) : "";
  const version = slash >= 0 ? av.slice(slash + 1) : av;
  return `${group}/${version}, Kind=${typeof kind === "string" ? kind : ""}`;
}

function stripMeta(managed: Managed, id: string): void {
  const vs = managed.fields.get(id);
  if (!vs) return;
  const set = vs.set.difference(STRIPPED);
  if (set.isEmpty()) managed.fields.delete(id);
  else managed.fields.set(id, { ...vs, set });
}

function nowString(target: FieldManagerTarget): string {
  return formatManagedTime((target.now ?? (() => new Date()))());
}

/**
 * The Update side of the chain (capManagers -> buildManagerInfo -> managedFieldsUpdater -> stripMeta ->
 * ownership). Mutates `managed`.
 */
function updateChain(
  live: KubeJson,
  next: KubeJson,
  managed: Managed,
  manager: string,
  target: FieldManagerTarget,
): void {
  const id = managerIdentifier({
    manager: manager || "unknown",
    operation: "Update",
    apiVersion: target.apiVersion,
    subresource: target.subresource,
  });
  updateOwnership(
    withoutManagedFields(live) as Json,
    withoutManagedFields(next) as Json,
    target.type,
    target.apiVersion,
    managed.fields,
    CURRENT_OPERATION,
    { ignored: target.ignored },
  );
  stripMeta(managed, CURRENT_OPERATION);
  const current = managed.fields.get(CURRENT_OPERATION);
  if (current) {
    managed.fields.delete(CURRENT_OPERATION);
    const previous = managed.fields.get(id);
    managed.fields.set(id, { ...current, set: previous ? current.set.union(previous.set) : current.set });
    managed.times.set(id, nowString(target));
  }
  capUpdateManagers(managed);
}

/** capManagersManager: beyond {@link MAX_UPDATE_MANAGERS} Update managers, the oldest merge into `ancient-changes`. */
function capUpdateManagers(managed: Managed): void {
  const updaters = [...managed.fields.entries()].filter(([, vs]) => !vs.applied).map(([id]) => id);
  if (updaters.length <= MAX_UPDATE_MANAGERS) return;
  const seconds = (id: string) => {
    const t = managed.times.get(id);
    return t ? Math.floor(Date.parse(t) / 1000) : 0;
  };
  updaters.sort((a, b) => seconds(a) - seconds(b) || (a < b ? -1 : a > b ? 1 : 0));
  const firstOfVersion = new Map<string, string>();
  let length = updaters.length;
  for (let i = 0; i < updaters.length && length > MAX_UPDATE_MANAGERS; i++) {
    const id = updaters[i]!;
    const vs = managed.fields.get(id)!;
    const time = managed.times.get(id);
    const bucket = managerIdentifier({
      manager: ANCIENT_CHANGES_MANAGER,
      operation: "Update",
      apiVersion: vs.apiVersion,
    });
    const first = firstOfVersion.get(vs.apiVersion);
    if (first === undefined) {
      firstOfVersion.set(vs.apiVersion, id);
      continue;
    }
    if (!managed.fields.has(bucket)) {
      const s = managed.fields.get(first)!;
      managed.fields.delete(first);
      managed.fields.set(bucket, s);
    }
    managed.fields.set(bucket, { ...vs, set: vs.set.union(managed.fields.get(bucket)!.set) });
    managed.fields.delete(id);
    length--;
    managed.times.set(bucket, time);
  }
}

/** The Apply side: before-first-apply, identity, ownership, timestamps, strip. Returns the new object or undefined (no change). */
function applyChain(
  live: KubeJson,
  applied: KubeJson,
  managed: Managed,
  manager: string,
  force: boolean,
  target: FieldManagerTarget,
): KubeJson | undefined {
  if (managed.fields.size === 0) {
    const empty: KubeJson = { apiVersion: applied["apiVersion"], kind: applied["kind"] };
    updateChain(empty, live, managed, BEFORE_FIRST_APPLY_MANAGER, target);
  }
  const id = managerIdentifier({ manager, operation: "Apply", subresource: target.subresource });
  const liveJson = withoutManagedFields(live) as Json;
  try {
    validateTyped(applied as Json, target.type, false);
  } catch (err) {
    if (err instanceof TypedValueError) {
      throw applyInternal(`failed to create typed patch object (${describe(applied)}): ${err.message}`);
    }
    throw err;
  }
  let outcome: ReturnType<typeof applyOwnership>;
  try {
    outcome = applyOwnership(liveJson, applied as Json, target.type, target.apiVersion, managed.fields, id, force, {
      ignored: target.ignored,
    });
  } catch (err) {
    if (err instanceof TypedValueError) throw applyInternal(`failed to merge config: ${err.message}`);
    throw err;
  }
  stripMeta(managed, id);
  if (outcome.object === undefined) return undefined;
  managed.times.set(id, nowString(target));
  return outcome.object as KubeJson;
}

/** objectGVKNN: `ns/name; apps/v1, Kind=Deployment` as the apiserver prints it in typed-conversion errors. */
function describe(obj: KubeJson): string {
  const meta = metadataOf(obj);
  return `${String(meta["namespace"] ?? "")}/${String(meta["name"] ?? "")}; ${gvkString(obj["apiVersion"], obj["kind"])}`;
}

/** lastAppliedManager: the fields of `live` that still match kubectl's client-side last-applied configuration. */
function allowedFromLastApplied(live: KubeJson, target: FieldManagerTarget): FieldSet | undefined {
  const annotations = metadataOf(live)["annotations"] as Record<string, unknown> | undefined;
  const raw = annotations?.[LAST_APPLIED_ANNOTATION];
  if (typeof raw !== "string" || raw === "") return undefined;
  let lastApplied: unknown;
  try {
    lastApplied = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (lastApplied === null || typeof lastApplied !== "object" || Array.isArray(lastApplied)) return undefined;
  if ((lastApplied as KubeJson)["apiVersion"] !== target.apiVersion) return undefined;
  try {
    validateTyped(lastApplied as Json, target.type, false);
    const set = toFieldSet(lastApplied as Json, target.type);
    const cmp = compareTyped(lastApplied as Json, withoutManagedFields(live) as Json, target.type);
    return set.difference(cmp.modified).difference(cmp.added).difference(cmp.removed);
  } catch {
    return undefined;
  }
}

function annotationsSize(annotations: Record<string, unknown>): number {
  let total = 0;
  for (const [k, v] of Object.entries(annotations)) total += Buffer.byteLength(k) + Buffer.byteLength(String(v));
  return total;
}

/** lastAppliedUpdater: kubectl's server-side apply keeps an existing last-applied annotation in sync. */
function syncLastApplied(result: KubeJson, applied: KubeJson): void {
  const meta = metadataOf(result);
  const annotations = meta["annotations"] as Record<string, unknown> | undefined;
  const current = annotations?.[LAST_APPLIED_ANNOTATION];
  if (!annotations || typeof current !== "string" || current === "") return;
  const config = clone(applied);
  const configAnnotations = metadataOf(config)["annotations"];
  if (configAnnotations && typeof configAnnotations === "object") {
    delete (configAnnotations as Record<string, unknown>)[LAST_APPLIED_ANNOTATION];
  }
  // runtime.Encode of an Unstructured: json.Encoder output, sorted keys, trailing newline.
  annotations[LAST_APPLIED_ANNOTATION] = goJSON(config) + "\n";
  if (annotationsSize(annotations) > TOTAL_ANNOTATION_SIZE_LIMIT_BYTES) delete annotations[LAST_APPLIED_ANNOTATION];
}

/**
 * Server-side apply of `applied` (the decoded `application/apply-patch+yaml` body) to `live` (undefined
 * when the object does not exist yet: apply creates it). Throws {@link ApplyError} /
 * {@link ApplyConflictError}; never mutates its inputs.
 */
export function applyConfiguration(live: KubeJson | undefined, applied: KubeJson, options: ApplyOptions): ApplyResult {
  if (applied["apiVersion"] !== options.apiVersion || applied["kind"] !== options.kind) {
    throw applyBadRequest(`invalid object type: ${gvkString(applied["apiVersion"], applied["kind"])}`);
  }
  // unstructured.GetManagedFields reads a missing or non-list value (null included) as nil.
  if (Array.isArray(metadataOf(applied)["managedFields"])) {
    throw applyBadRequest("metadata.managedFields must be nil");
  }
  const liveObj: KubeJson = live ?? { apiVersion: options.apiVersion, kind: options.kind };
  const force = options.force === true;

  const attempt = (withForce: boolean): { object: KubeJson | undefined; managed: Managed } => {
    let managed: Managed;
    try {
      managed = decodeManagedFields(metadataOf(liveObj)["managedFields"] as ManagedFieldsEntry[] | undefined);
    } catch (err) {
      if (err instanceof ManagedFieldsError) throw applyInternal(`failed to decode managed fields: ${err.message}`);
      throw err;
    }
    const object = applyChain(liveObj, applied, managed, options.manager, withForce, options);
    return { object, managed };
  };

  let outcome: { object: KubeJson | undefined; managed: Managed };
  try {
    outcome = attempt(force);
  } catch (err) {
    if (!(err instanceof ConflictsError)) throw err;
    // lastAppliedManager: kubectl upgrading from client-side apply takes over fields it already set.
    if (options.manager !== "kubectl") throw new ApplyConflictError(err.conflicts);
    const allowed = allowedFromLastApplied(liveObj, options);
    if (!allowed) throw new ApplyConflictError(err.conflicts);
    const remaining = err.conflicts.filter((c) => !allowed.has(c.path));
    if (remaining.length > 0) throw new ApplyConflictError(remaining);
    outcome = attempt(true);
  }

  const result = clone(outcome.object ?? withoutManagedFields(liveObj));
  setManagedFields(result, encodeManagedFields(outcome.managed));
  if (options.manager === "kubectl") syncLastApplied(result, applied);
  return { object: result, changed: !jsonEqual(live as Json | undefined, result as Json) };
}

/**
 * `apply(live, applied, manager, { force, typeInfo })`: {@link applyConfiguration} with the target
 * apiVersion and kind taken from the live object (or the body when creating).
 */
export function apply(
  live: KubeJson | undefined,
  applied: KubeJson,
  manager: string,
  options: { force?: boolean; typeInfo: TypeNode } & Partial<Omit<FieldManagerTarget, "type">>,
): ApplyResult {
  const { typeInfo, ...rest } = options;
  const source = live ?? applied;
  return applyConfiguration(live, applied, {
    ...rest,
    manager,
    type: typeInfo,
    apiVersion: options.apiVersion ?? String(source["apiVersion"] ?? ""),
    kind: options.kind ?? String(source["kind"] ?? ""),
  });
}

function isResetManagedFields(v: unknown): boolean {
  if (!Array.isArray(v)) return false;
  if (v.length === 0) return true;
  return v.length === 1 && v[0] !== null && typeof v[0] === "object" && Object.keys(v[0] as object).length === 0;
}

function decodeOrEmpty(entries: unknown): Managed {
  try {
    return decodeManagedFields(entries as ManagedFieldsEntry[] | undefined);
  } catch {
    return { fields: new Map(), times: new Map() };
  }
}

/**
 * Tracks a non-apply write (create when `live` is undefined, update, json/merge/strategic patch): returns
 * `next` with managedFields where `manager` owns what it changed. A client may replace managedFields by
 * sending valid ones, or clear them with `[]`/`[{}]`. Never throws (UpdateNoErrors: on an internal
 * failure the managedFields are cleared, as Kubernetes 1.32 does).
 */
export function trackUpdate(
  live: KubeJson | undefined,
  next: KubeJson,
  options: FieldManagerTarget & { manager: string },
): KubeJson {
  const liveObj: KubeJson = live ?? {};
  const out = clone(next);
  try {
    const sent = metadataOf(next)["managedFields"];
    let managed: Managed;
    if (options.subresource) managed = decodeOrEmpty(metadataOf(liveObj)["managedFields"]);
    else if (isResetManagedFields(sent)) managed = { fields: new Map(), times: new Map() };
    else {
      managed = decodeOrEmpty(sent);
      if (managed.fields.size === 0) managed = decodeOrEmpty(metadataOf(liveObj)["managedFields"]);
    }
    const stripped = withoutManagedFields(next);
    // skipNonAppliedManager: objects that exist without managedFields stay untracked until applied.
    if (managed.fields.size === 0 && metadataOf(liveObj)["uid"] !== undefined) {
      setManagedFields(out, undefined);
      return out;
    }
    updateChain(liveObj, stripped, managed, options.manager, options);
    setManagedFields(out, encodeManagedFields(managed));
    return out;
  } catch {
    // Kubernetes 1.32's UpdateNoErrors clears managedFields rather than keep garbage (later releases restore the live ones).
    setManagedFields(out, undefined);
    return out;
  }
}

/** FieldManagerMaxLength: longer user-agent prefixes are cut (ValidateFieldManager's limit). */
const FIELD_MANAGER_MAX_LENGTH_BYTES = 128;
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * The manager of a non-apply write (handlers' managerOrUserAgent): the `fieldManager` parameter, or the
 * user agent up to its first `/` (`kubectl/v1.32.4 (linux/amd64)` -> `kubectl`), unprintable
 * characters dropped, cut at 128 bytes.
 */
export function managerOrUserAgent(fieldManager: string | null | undefined, userAgent: string | undefined): string {
  if (fieldManager) return fieldManager;
  const prefix = (userAgent ?? "").split("/")[0]!;
  // The usual user agent (`kubectl/v1.32.4 ...`) is short printable ASCII: nothing to drop or cut.
  if (prefix.length <= FIELD_MANAGER_MAX_LENGTH_BYTES && PRINTABLE_ASCII.test(prefix)) return prefix;
  let out = "";
  let bytes = 0;
  for (const ch of prefix) {
    if (/[\p{C}\p{Z}]/u.test(ch) && ch !== " ") continue;
    const size = Buffer.byteLength(ch);
    if (bytes + size > FIELD_MANAGER_MAX_LENGTH_BYTES) break;
    out += ch;
    bytes += size;
  }
  return out;
}

/** The reset fields of a main resource whose kind has a status subresource: `status` is not owned there. */
export function statusResetFields(): FieldSet {
  return FieldSet.of([{ field: "status" }]);
}

/** The reset fields of a custom resource's status subresource (apiextensions statusStrategy): `spec`. */
export function statusSubresourceResetFields(): FieldSet {
  return FieldSet.of([{ field: "spec" }]);
}
