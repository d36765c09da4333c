/**
 * Handler state: what each handler of the cause in progress has done (one progress record per
 * handler) and the last handled essence, as entries of strings per operator. Where the entries
 * live on the object is state-storage.ts's: in `status.capstan.<operator>` for kinds whose schema
 * keeps it, else in annotations (`<operator>.capstan.dev/<entry>`). Reading merges both (status
 * wins), so objects handled before the state moved keep their history.
 *
 * ## Expected flow (per cause: create, update, delete, resume)
 * 1. Read each handler's record ({@link readProgress}); records of another cause ("purpose") are
 *    stale and ignored (then purged).
 * 2. Run the first handler that is neither succeeded nor failed, unless it is delayed.
 * 3. Write its new record ({@link progressEntries}), in the same request as its status result
 *    where the storage allows; a retry reads it back.
 * 4. When every handler is done: one write removes every record of this operator and stores the
 *    new essence ({@link finishEntries}), which ends the cause.
 *
 * ## Guarantees
 * - Each write is one merge patch of our own entries: atomic per object, idempotent (writing it
 *   twice gives the same object), and never touches other keys.
 * - A handler whose success record is stored is not run again for the same cause.
 * - Records are JSON; a record that does not parse is treated as absent (the handler re-runs),
 *   never as success.
 *
 * ## Caveats
 * - Between a handler's side effect and the write of its record, a crash loses the record: the
 *   handler runs again after the restart (at-least-once; see docs/handlers.md).
 * - Annotations are limited to 256 KiB per object in total, and the whole object to 1.5 MiB; the
 *   essence holds the spec, so a spec near that size cannot be handled.
 */
import type { KubeObject } from "../client/types.ts";
import { STATUS_STATE_FIELD } from "../resources/crd.ts";
import type { Essence } from "./essence.ts";
import { ESSENCE_KEY, type OperatorNames } from "./naming.ts";

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

/** A write of state entries: entry name -> raw value, or null to remove the entry. */
export type StateEntries = Record<string, string | null>;

/** This operator's state entries on `obj`, from annotations and `status.capstan` (which wins). */
export function readState(obj: KubeObject, names: OperatorNames): Record<string, string> {
  const out: Record<string, string> = {};
  const head = `${names.prefix}/`;
  for (const [key, value] of Object.entries(obj.metadata?.annotations ?? {})) {
    if (key.startsWith(head)) out[key.slice(head.length)] = value;
  }
  for (const [key, value] of Object.entries(statusState(obj, names))) {
    // A server may return any key in status; `__proto__` would not become an entry but a prototype.
    if (typeof value === "string" && key !== "__proto__") out[key] = value;
  }
  return out;
}

/** `status.capstan.<operator>` of `obj`, or `{}`. */
export function statusState(obj: KubeObject, names: OperatorNames): Record<string, unknown> {
  const all = (obj as { status?: Record<string, unknown> }).status?.[STATUS_STATE_FIELD];
  if (typeof all !== "object" || all === null) return {};
  const mine = ownValue(all as Record<string, unknown>, names.operator);
  return typeof mine === "object" && mine !== null && !Array.isArray(mine) ? (mine as Record<string, unknown>) : {};
}

/** `obj[key]` when it is the object's own property (never a prototype's). */
function ownValue(obj: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

/** The record of `handlerId` for `purpose`, if one is stored (and parses). */
export function readProgress(
  obj: KubeObject,
  names: OperatorNames,
  handlerId: string,
  purpose: Purpose,
): ProgressRecord | undefined {
  const raw = ownValue(readState(obj, names), handlerId);
  if (typeof raw !== "string") return undefined;
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
  const raw = readState(obj, names)[ESSENCE_KEY];
  if (raw === undefined) return undefined;
  try {
    const parsed = JSON.parse(raw) as unknown;
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Essence) : undefined;
  } catch {
    return undefined;
  }
}

/** The entry storing one record. */
export function progressEntries(handlerId: string, record: ProgressRecord): StateEntries {
  return { [handlerId]: JSON.stringify(record) };
}

/** The raw form of a stored essence. */
export function essenceEntry(essence: Essence): string {
  // Compact JSON plus a newline, as kubectl's last-applied-configuration: readable in `kubectl get -o yaml`.
  return `${JSON.stringify(essence)}\n`;
}

/**
 * The entries that end a cause: every progress record of this operator present on `obj` removed
 * and, when given, `essence` stored as the last handled state.
 */
export function finishEntries(obj: KubeObject, names: OperatorNames, essence: Essence | undefined): StateEntries {
  const out: StateEntries = {};
  for (const key of Object.keys(readState(obj, names))) if (key !== ESSENCE_KEY) out[key] = null;
  if (essence !== undefined) out[ESSENCE_KEY] = essenceEntry(essence);
  return out;
}

/** Records of this operator present on `obj` that belong to another purpose (to purge). */
export function staleProgressKeys(obj: KubeObject, names: OperatorNames, purpose: Purpose): string[] {
  const out: string[] = [];
  for (const [key, raw] of Object.entries(readState(obj, names))) {
    if (key === ESSENCE_KEY) continue;
    try {
      if ((JSON.parse(raw) as Partial<ProgressRecord>).purpose !== purpose) out.push(key);
    } catch {
      out.push(key);
    }
  }
  return out;
}
