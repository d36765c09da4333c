/**
 * `metadata.managedFields` on the wire and in memory (k8s.io/apimachinery managedfields/internal
 * managedfields.go): entries are decoded into {@link Managers} keyed by a manager identifier — the JSON
 * of {manager, operation, apiVersion (Update only), subresource} — and encoded back sorted as the real
 * server sorts them (operation, time, manager, apiVersion, subresource).
 */
import { goQuote } from "../validation/go-format.ts";
import { FieldSet, FieldsV1Error } from "./field-set.ts";
import type { Managers } from "./updater.ts";

/** metav1.ManagedFieldsEntry. */
export interface ManagedFieldsEntry {
  manager?: string;
  operation?: "Apply" | "Update" | string;
  apiVersion?: string;
  time?: string;
  fieldsType?: string;
  fieldsV1?: Record<string, unknown>;
  subresource?: string;
}

/** Decoded managed fields: who owns what, and when each manager last changed the object. */
export interface Managed {
  fields: Managers;
  times: Map<string, string | undefined>;
}

/** Thrown for managedFields that cannot be decoded, with the apiserver's message. */
export class ManagedFieldsError extends Error {}

/** BuildManagerIdentifier: the JSON of the entry's identity fields, in Go struct field order. */
export function managerIdentifier(entry: {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  subresource?: string;
}): string {
  const id: Record<string, string> = {};
  if (entry.manager) id["manager"] = entry.manager;
  if (entry.operation) id["operation"] = entry.operation;
  if (entry.operation !== "Apply" && entry.apiVersion) id["apiVersion"] = entry.apiVersion;
  if (entry.subresource) id["subresource"] = entry.subresource;
  return JSON.stringify(id);
}

/** The identity fields back from an identifier. */
export function parseManagerIdentifier(id: string): {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  subresource?: string;
} {
  try {
    const v = JSON.parse(id) as unknown;
    if (v !== null && typeof v === "object" && !Array.isArray(v)) return v as Record<string, string>;
  } catch {
    // Identifiers that are not JSON are plain names (printManager does the same).
  }
  return { manager: id };
}

/**
 * How a conflict names its manager (printManager): `"alice"`, `"bob" using v1`,
 * `"ctl" with subresource "status" using v1`.
 */
export function printManager(id: string): string {
  let parsed: { manager?: string; operation?: string; apiVersion?: string; subresource?: string };
  try {
    parsed = JSON.parse(id) as typeof parsed;
    if (parsed === null || typeof parsed !== "object") return goQuote(id);
  } catch {
    return goQuote(id);
  }
  let s = goQuote(parsed.manager ?? "");
  if (parsed.subresource) s += ` with subresource ${goQuote(parsed.subresource)}`;
  if (parsed.operation === "Update") s += ` using ${parsed.apiVersion ?? ""}`;
  return s;
}

/** DecodeManagedFields: entries to managers. Throws {@link ManagedFieldsError} with the apiserver's messages. */
export function decodeManagedFields(entries: readonly ManagedFieldsEntry[] | undefined): Managed {
  const fields: Managers = new Map();
  const times = new Map<string, string | undefined>();
  (entries ?? []).forEach((entry, i) => {
    if (entry.operation !== "Apply" && entry.operation !== "Update") {
      throw new ManagedFieldsError("operation must be `Apply` or `Update`");
    }
    if (!entry.apiVersion) throw new ManagedFieldsError("apiVersion must not be empty");
    if (entry.fieldsType === undefined || entry.fieldsType === "") {
      throw new ManagedFieldsError(`missing fieldsType in managed fields entry ${i}`);
    }
    if (entry.fieldsType !== "FieldsV1") {
      throw new ManagedFieldsError(
        `invalid fieldsType ${JSON.stringify(entry.fieldsType)} in managed fields entry ${i}`,
      );
    }
    const id = managerIdentifier(entry);
    let set: FieldSet;
    try {
      set = entry.fieldsV1 === undefined ? FieldSet.empty() : FieldSet.fromFieldsV1(entry.fieldsV1);
    } catch (err) {
      if (err instanceof FieldsV1Error) {
        throw new ManagedFieldsError(
          `error decoding versioned set from ${JSON.stringify(entry)}: error decoding set: ${err.message}`,
        );
      }
      throw err;
    }
    fields.set(id, { set, apiVersion: entry.apiVersion, applied: entry.operation === "Apply" });
    times.set(id, entry.time);
  });
  return { fields, times };
}

function unixSeconds(time: string | undefined): number {
  if (!time) return 0;
  const ms = Date.parse(time);
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000);
}

/** encodeManagedFields: managers to entries, sorted; undefined when there are none (the field is omitted). */
export function encodeManagedFields(managed: Managed): ManagedFieldsEntry[] | undefined {
  if (managed.fields.size === 0) return undefined;
  const out: ManagedFieldsEntry[] = [];
  for (const [id, vs] of managed.fields) {
    const ident = parseManagerIdentifier(id);
    const entry: ManagedFieldsEntry = {};
    if (ident.manager) entry.manager = ident.manager;
    entry.operation = vs.applied ? "Apply" : (ident.operation ?? "Update");
    entry.apiVersion = vs.apiVersion;
    const time = managed.times.get(id);
    if (time) entry.time = time;
    entry.fieldsType = "FieldsV1";
    entry.fieldsV1 = vs.set.toFieldsV1();
    if (ident.subresource) entry.subresource = ident.subresource;
    out.push(entry);
  }
  const cmp = (a: string | undefined, b: string | undefined) =>
    (a ?? "") < (b ?? "") ? -1 : (a ?? "") > (b ?? "") ? 1 : 0;
  return out.sort(
    (p, q) =>
      cmp(p.operation, q.operation) ||
      unixSeconds(p.time) - unixSeconds(q.time) ||
      cmp(p.manager, q.manager) ||
      cmp(p.apiVersion, q.apiVersion) ||
      cmp(p.subresource, q.subresource),
  );
}

/** metav1.Time as the API writes it: RFC 3339, UTC, whole seconds. */
export function formatManagedTime(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, "Z");
}
