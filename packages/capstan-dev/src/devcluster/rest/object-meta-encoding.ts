/**
 * An object's metadata as kube-apiserver prints it back after decoding it into metav1.ObjectMeta:
 * every field is omitempty (or a pointer), so empty ones disappear, and times are re-encoded.
 * Built-in objects get there through their Go struct and protobuf storage; custom objects too, as
 * apiextensions-apiserver round-trips their metadata through ObjectMeta while decoding
 * (schema/objectmeta GetObjectMeta, then SetObjectMeta's ToUnstructured, which skips empty maps and
 * slices of omitempty fields).
 *
 * Expected flow: the store's decoding step (builtin-decoding.ts, run on every body and patch result
 * it owns, custom objects' included) calls {@link encodeObjectMeta} before the strategy and the field
 * manager see the object, so managedFields never list a field that is not stored.
 *
 * Guarantees:
 * - `labels`/`annotations` that are `{}` or null, and `finalizers`/`ownerReferences` that are `[]` or
 *   null, are removed; a null label or annotation value is `""`, as Go decodes it into a string.
 * - `generateName: ""` and null fields are removed (`creationTimestamp` aside: the strategy sets it).
 * - `creationTimestamp`, `deletionTimestamp` and `managedFields[].time` are UTC RFC 3339 in whole
 *   seconds; an entry's null time is removed.
 * - `managedFields: []` stays on a built-in object: the field manager reads it as a request to reset
 *   managedFields (isResetManagedFields), and drops it once done. A custom object's is removed while
 *   decoding, before the field manager sees it, so there it resets nothing.
 *
 * Caveats: values of the wrong type, and times that do not parse, are left as they are: the type
 * checks (the built-in decoder, meta-types.ts) refuse them.
 */
import { GoTimeParseError, metaTimeJson } from "../machinery/go-time.ts";
import type { ServedResource } from "../registry/served-resource.ts";

const MAPS = ["labels", "annotations"] as const;
const SLICES = ["finalizers", "ownerReferences"] as const;
const TIMES = ["creationTimestamp", "deletionTimestamp"] as const;

function isEmptyMap(value: unknown): boolean {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  for (const _ in value) return false;
  return true;
}

/** `text` as metav1.Time prints it, or `text` itself when it does not parse (the type check refuses it). */
function reencoded(text: string): string | null {
  try {
    return metaTimeJson(text);
  } catch (err) {
    if (err instanceof GoTimeParseError) return text;
    throw err;
  }
}

/** Rewrites `meta` (owned by the caller) as Go prints ObjectMeta back. See the module comment. */
export function encodeObjectMeta(served: ServedResource, meta: Record<string, unknown>): void {
  for (const key in meta) if (meta[key] === null && key !== "creationTimestamp") delete meta[key];
  for (const key of MAPS) {
    const value = meta[key];
    if (value === undefined) continue;
    if (isEmptyMap(value)) {
      delete meta[key];
      continue;
    }
    if (typeof value === "object" && !Array.isArray(value)) {
      const map = value as Record<string, unknown>;
      for (const k in map) if (map[k] === null) map[k] = "";
    }
  }
  for (const key of SLICES) {
    const value = meta[key];
    if (Array.isArray(value) && value.length === 0) delete meta[key];
  }
  if (meta["generateName"] === "") delete meta["generateName"];
  for (const key of TIMES) {
    const value = meta[key];
    if (typeof value !== "string") continue;
    const text = reencoded(value);
    if (text === null) delete meta[key];
    else if (text !== value) meta[key] = text;
  }
  const managed = meta["managedFields"];
  if (Array.isArray(managed)) {
    if (managed.length === 0 && served.custom) delete meta["managedFields"];
    for (const entry of managed) encodeEntryTime(entry);
  }
}

/** A managedFields entry's `time` (*metav1.Time): null omitted, a string re-encoded. */
function encodeEntryTime(entry: unknown): void {
  if (entry === null || typeof entry !== "object" || Array.isArray(entry)) return;
  const e = entry as Record<string, unknown>;
  const time = e["time"];
  if (time === null) delete e["time"];
  else if (typeof time === "string") {
    const text = reencoded(time);
    if (text !== time) e["time"] = text;
  }
}
