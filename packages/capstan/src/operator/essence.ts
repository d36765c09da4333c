/**
 * The essence of an object: what its handlers react to, and what the operator remembers as the
 * "last handled" state (Kopf's diff-base). Create and update are detected by comparing the
 * current essence with the one stored on the object, never by comparing watch events, so a
 * restarted operator sees exactly what changed while it was away.
 *
 * ## What is in it
 * Every top-level field except `apiVersion`, `kind`, `metadata` and `status` (so `spec`, and
 * `data` of a ConfigMap), plus `metadata.labels` and `metadata.annotations` without:
 * - annotations of any Capstan operator (prefix `capstan.dev/` or `<anything>.capstan.dev/`):
 *   our own progress records must not look like user changes, nor another operator's;
 * - `kubectl.kubernetes.io/last-applied-configuration` (kubectl's own diff-base).
 * Empty maps are dropped, so `labels: {}` and no labels are the same essence.
 *
 * So status-only writes, resourceVersion/generation/managedFields bumps, finalizer changes and our
 * own annotations never make an update (what Kopf does in `DiffBaseStorage.build`).
 */
import type { KubeObject } from "../client/types.ts";

/** The essence of an object, as stored (JSON). */
export type Essence = Record<string, unknown>;

/** kubectl's client-side apply diff-base; never part of the essence. */
const KUBECTL_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

/** Whether an annotation key belongs to a Capstan operator (ours or another one's). */
export function isCapstanAnnotation(key: string): boolean {
  const slash = key.indexOf("/");
  if (slash < 0) return false;
  const prefix = key.slice(0, slash);
  return prefix === "capstan.dev" || prefix.endsWith(".capstan.dev");
}

/** The essence of `obj`: a fresh JSON value, safe to keep and to mutate. */
export function essenceOf(obj: KubeObject): Essence {
  const essence: Essence = {};
  for (const key of Object.keys(obj)) {
    if (key === "apiVersion" || key === "kind" || key === "metadata" || key === "status") continue;
    const value = withoutEmptyMaps((obj as Record<string, unknown>)[key]);
    if (value !== undefined && !isEmptyMap(value)) essence[key] = value;
  }
  const meta: Record<string, unknown> = {};
  const labels = obj.metadata?.labels;
  if (labels !== undefined && Object.keys(labels).length > 0) meta.labels = { ...labels };
  let annotations: Record<string, string> | undefined;
  const all = obj.metadata?.annotations;
  if (all !== undefined) {
    for (const key of Object.keys(all)) {
      if (isCapstanAnnotation(key) || key === KUBECTL_LAST_APPLIED) continue;
      annotations ??= {};
      annotations[key] = all[key] as string;
    }
  }
  if (annotations !== undefined) meta.annotations = annotations;
  if (meta.labels !== undefined || meta.annotations !== undefined) essence.metadata = meta;
  return essence;
}

/**
 * A copy of `value` in which every map (any object but an array) is copied key by key without
 * the keys whose value is, or became, an empty map; arrays are copied whole and not normalised.
 * A map is copied by its own enumerable keys, so a map left empty is dropped by its parent.
 * (A hand-written copy: essences are computed on every visit of an object, and
 * `structuredClone` costs several times more on these small JSON values.)
 */
function withoutEmptyMaps(value: unknown): unknown {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return copyJson(value);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const cleaned = withoutEmptyMaps((value as Record<string, unknown>)[key]);
    if (isEmptyMap(cleaned)) continue;
    out[key] = cleaned;
  }
  return out;
}

/** A deep copy of a JSON value (plain objects and arrays copied; anything else cloned as `structuredClone` does). */
function copyJson(value: unknown): unknown {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return value.map(copyJson);
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return structuredClone(value);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) out[key] = copyJson((value as Record<string, unknown>)[key]);
  return out;
}

function isEmptyMap(value: unknown): boolean {
  if (!isPlainObject(value)) return false;
  for (const _ in value) return false;
  return true;
}

/** A JSON object (not an array, not null). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
