/**
 * Per-handler filters, as Kopf's `labels=`, `annotations=` and `when=`: a handler runs for an
 * object only when every filter passes. Filters are checked on the object as it is now, each
 * time a handler could run.
 */
import type { KubeObject } from "../client/types.ts";

/** Matches a label or annotation that is set (any value). */
export const PRESENT: unique symbol = Symbol("capstan.present");
/** Matches a label or annotation that is not set. */
export const ABSENT: unique symbol = Symbol("capstan.absent");

/** An exact value, {@link PRESENT}, {@link ABSENT}, or a test of the value (`undefined` when not set). */
export type MetaFilterValue = string | typeof PRESENT | typeof ABSENT | ((value: string | undefined) => boolean);

/** The filters every handler kind accepts. */
export interface Filters<T extends KubeObject> {
  /** Labels the object must have: `{ app: "web", tier: PRESENT, legacy: ABSENT }`. */
  labels?: Readonly<Record<string, MetaFilterValue>>;
  /** Annotations the object must have, with the same forms as `labels`. */
  annotations?: Readonly<Record<string, MetaFilterValue>>;
  /** Any other condition on the object. */
  when?: (obj: T) => boolean;
}

/** Whether `obj` passes every filter. */
export function matchesFilters<T extends KubeObject>(obj: T, filters: Filters<T>): boolean {
  if (filters.labels !== undefined && !matchesMap(obj.metadata?.labels, filters.labels)) return false;
  if (filters.annotations !== undefined && !matchesMap(obj.metadata?.annotations, filters.annotations)) return false;
  return filters.when === undefined || filters.when(obj);
}

function matchesMap(
  actual: Readonly<Record<string, string>> | undefined,
  wanted: Readonly<Record<string, MetaFilterValue>>,
): boolean {
  for (const [key, want] of Object.entries(wanted)) {
    const value = actual !== undefined && Object.hasOwn(actual, key) ? actual[key] : undefined;
    if (want === PRESENT) {
      if (value === undefined) return false;
    } else if (want === ABSENT) {
      if (value !== undefined) return false;
    } else if (typeof want === "function") {
      if (!want(value)) return false;
    } else if (value !== want) {
      return false;
    }
  }
  return true;
}
