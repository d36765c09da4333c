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
  for (const [key, value] of Object.entries(obj)) {
    if (key === "apiVersion" || key === "kind" || key === "metadata" || key === "status") continue;
    if (value === undefined) continue;
    essence[key] = structuredClone(value);
  }
  const meta: Record<string, unknown> = {};
  const labels = obj.metadata?.labels;
  if (labels !== undefined && Object.keys(labels).length > 0) meta.labels = { ...labels };
  const annotations: Record<string, string> = {};
  for (const [key, value] of Object.entries(obj.metadata?.annotations ?? {})) {
    if (isCapstanAnnotation(key) || key === KUBECTL_LAST_APPLIED) continue;
    annotations[key] = value;
  }
  if (Object.keys(annotations).length > 0) meta.annotations = annotations;
  if (Object.keys(meta).length > 0) essence.metadata = meta;
  return dropEmptyMaps(essence) as Essence;
}

function dropEmptyMaps(value: unknown): unknown {
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const cleaned = dropEmptyMaps(v);
    if (isPlainObject(cleaned) && Object.keys(cleaned).length === 0) continue;
    out[k] = cleaned;
  }
  return out;
}

/** A JSON object (not an array, not null). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
