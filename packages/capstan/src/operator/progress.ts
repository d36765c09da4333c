/**
 * Handler progress storage: what each handler of the cause in progress has done, stored on the
 * object itself as one annotation per handler (`<operator>.capstan.dev/<handler id>`), plus the
 * last handled essence (`<operator>.capstan.dev/last-handled-configuration`).
 *
 * ## Why annotations, not status
 * Kopf moved its progress from `status.kopf.progress` to annotations for the reason that applies
 * here too: a structural CRD schema prunes unknown status fields, built-in kinds have strict
 * status schemas, and a status write does not happen in the same request as the
 * metadata/spec write. Annotations exist on every kind, are never pruned, and a merge patch of
 * `metadata.annotations` touches only our keys, so several operators (and users) can write the
 * same object without clobbering each other.
 *
 * ## Expected flow (per cause: create, update, delete, resume)
 * 1. Read each handler's record ({@link readProgress}); records of another cause ("purpose") are
 *    stale and ignored (then purged).
 * 2. Run the first handler that is neither succeeded nor failed, unless it is delayed.
 * 3. Write its new record in one merge patch ({@link progressPatch}); a retry reads it back.
 * 4. When every handler is done: one merge patch removes every record of this operator and
 *    stores the new essence ({@link finishPatch}), which ends the cause.
 *
 * ## Guarantees
 * - Each write is one merge patch of our own annotation keys: atomic per object, idempotent
 *   (writing it twice gives the same object), and never touches other keys.
 * - A handler whose success record is stored is not run again for the same cause.
 * - Records are JSON; a record that does not parse is treated as absent (the handler re-runs),
 *   never as success.
 *
 * ## Caveats
 * - Between a handler's side effect and the write of its record, a crash loses the record: the
 *   handler runs again after the restart (at-least-once; see docs/handlers.md).
 * - Annotations are limited to 256 KiB per object in total; the essence holds the spec, so a
 *   spec near that size cannot be handled.
 */
import type { KubeObject } from "../client/types.ts";
import type { Essence } from "./essence.ts";
import type { OperatorNames } from "./naming.ts";

/** The causes a progress record can belong to. */
export type Purpose = "create" | "update" | "delete" | "resume";

/** One handler's progress within one cause. Timestamps are ISO 8601 (UTC). */
export interface ProgressRecord {
  /** The cause this record belongs to; a record of another cause is stale. */
  purpose: Purpose;
  /** First attempt. */
  started: string;
  /** Attempts that failed so far. */
  retries: number;
  /** Finished: succeeded (never run again for this cause). */
  success?: boolean;
  /** Finished: failed for good (PermanentError, retries or timeout exhausted). */
  failure?: boolean;
  /** Not to be retried before this time. */
  delayed?: string;
  /** The last error's message. */
  message?: string;
  /** When it finished. */
  stopped?: string;
}

/** The record of `handlerId` for `purpose`, if one is stored (and parses). */
export function readProgress(
  obj: KubeObject,
  names: OperatorNames,
  handlerId: string,
  purpose: Purpose,
): ProgressRecord | undefined {
  const raw = obj.metadata?.annotations?.[names.progressAnnotation(handlerId)];
  if (raw === undefined) return undefined;
  try {
    const parsed = JSON.parse(raw) as Partial<ProgressRecord>;
    if (parsed.purpose !== purpose || typeof parsed.started !== "string") return undefined;
    return { ...parsed, retries: typeof parsed.retries === "number" ? parsed.retries : 0 } as ProgressRecord;
  } catch {
    return undefined;
  }
}

/** The stored essence, or `undefined` when there is none (the object was never handled). */
export function readEssence(obj: KubeObject, names: OperatorNames): Essence | undefined {
  const raw = obj.metadata?.annotations?.[names.essenceAnnotation];
  if (raw === undefined) return undefined;
  try {
    const parsed = JSON.parse(raw) as unknown;
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Essence) : undefined;
  } catch {
    return undefined;
  }
}

/** `metadata.annotations` merge-patch fragment storing one record. */
export function progressPatch(
  names: OperatorNames,
  handlerId: string,
  record: ProgressRecord,
): Record<string, string | null> {
  return { [names.progressAnnotation(handlerId)]: JSON.stringify(record) };
}

/**
 * `metadata.annotations` merge-patch fragment that ends a cause: removes every progress record of
 * this operator present on `obj` and, when given, stores `essence` as the last handled state.
 */
export function finishPatch(
  obj: KubeObject,
  names: OperatorNames,
  essence: Essence | undefined,
): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const key of Object.keys(obj.metadata?.annotations ?? {})) {
    if (key.startsWith(`${names.prefix}/`) && key !== names.essenceAnnotation) out[key] = null;
  }
  // Compact JSON plus a newline, as kubectl's last-applied-configuration: readable in `kubectl get -o yaml`.
  if (essence !== undefined) out[names.essenceAnnotation] = `${JSON.stringify(essence)}\n`;
  return out;
}

/** Records of this operator present on `obj` that belong to another purpose (to purge). */
export function staleProgressKeys(obj: KubeObject, names: OperatorNames, purpose: Purpose): string[] {
  const out: string[] = [];
  for (const [key, raw] of Object.entries(obj.metadata?.annotations ?? {})) {
    if (!key.startsWith(`${names.prefix}/`) || key === names.essenceAnnotation) continue;
    try {
      if ((JSON.parse(raw) as Partial<ProgressRecord>).purpose !== purpose) out.push(key);
    } catch {
      out.push(key);
    }
  }
  return out;
}
