/**
 * One object as a row of the page's table: what `kubectl get` shows (namespace, name, age, the
 * kind's printer columns) plus what an operator author looks for at a glance: its conditions,
 * whether it is being deleted or held by finalizers, and, for a sharded operator's objects, the
 * member each ring assigned it to (read from its labels: no request of its own).
 */
import type { KubeObject } from "capstan";
import { DRAIN_LABEL_PREFIX, SHARD_LABEL_PREFIX } from "capstan/runtime";
import { cellValue, parseJsonPath } from "./json-path.ts";
import type { DashboardKind, PrinterColumn } from "./kinds.ts";
import { objectKey } from "./object-feed.ts";

/** A status condition, as the page shows it. */
export interface ConditionSummary {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

/**
 * An object's place in one shard ring (docs/runtime.md, "Sharding"): its `shard.capstan.dev/<ring>`
 * label (the member reconciling it) and whether `drain.shard.capstan.dev/<ring>` asks that member
 * to let go of it.
 */
export interface ShardSummary {
  ring: string;
  /** Absent while unassigned (new, or between two members of a hand-over). */
  member?: string;
  draining: boolean;
}

/** One table row. */
export interface ObjectRow {
  /** `namespace/name` or `name`: the row's identity in the table. */
  key: string;
  uid: string;
  namespace?: string;
  name: string;
  /** `metadata.creationTimestamp`; the page turns it into an age. */
  created?: string;
  resourceVersion?: string;
  /** One value per column of the kind, in the kind's order (`null`: the field is absent). */
  cells: (string | number | boolean | null)[];
  conditions: ConditionSummary[];
  /** `metadata.deletionTimestamp`: deletion requested, finalizers still running. */
  deleting?: string;
  finalizers: string[];
  /** Set when the object carries a shard or drain label: one entry per ring, by ring name. */
  shards?: ShardSummary[];
}

const parsed = new Map<string, ReturnType<typeof parseJsonPath>>();

/** A printer column's parsed path, parsed once per distinct path. */
function pathOf(column: PrinterColumn) {
  let path = parsed.get(column.jsonPath);
  if (path === undefined) {
    path = parseJsonPath(column.jsonPath);
    parsed.set(column.jsonPath, path);
  }
  return path;
}

/** Why a column's path cannot be evaluated, if it cannot. */
export function columnError(column: PrinterColumn): string | undefined {
  return pathOf(column).error;
}

/** The row of `obj` in the table of `kind`. */
export function objectRow(kind: DashboardKind, obj: KubeObject): ObjectRow {
  const meta = obj.metadata ?? {};
  return {
    key: objectKey(obj),
    uid: meta.uid ?? "",
    ...(meta.namespace ? { namespace: meta.namespace } : {}),
    name: meta.name ?? "",
    ...(meta.creationTimestamp ? { created: String(meta.creationTimestamp) } : {}),
    ...(meta.resourceVersion ? { resourceVersion: meta.resourceVersion } : {}),
    cells: kind.columns.map((column) => cellValue(pathOf(column), obj)),
    conditions: conditionsOf(obj),
    ...(meta.deletionTimestamp ? { deleting: String(meta.deletionTimestamp) } : {}),
    finalizers: meta.finalizers ?? [],
    ...shardsField(meta.labels),
  };
}

/** The `shards` of a row: every ring named by a shard or drain label, sorted by ring. */
export function shardsField(labels: Record<string, string> | undefined): { shards?: ShardSummary[] } {
  if (labels === undefined) return {};
  const rings = new Map<string, ShardSummary>();
  const entry = (ring: string) => {
    let summary = rings.get(ring);
    if (summary === undefined) {
      summary = { ring, draining: false };
      rings.set(ring, summary);
    }
    return summary;
  };
  for (const [key, value] of Object.entries(labels)) {
    if (key.startsWith(DRAIN_LABEL_PREFIX)) entry(key.slice(DRAIN_LABEL_PREFIX.length)).draining = true;
    else if (key.startsWith(SHARD_LABEL_PREFIX) && value !== "")
      entry(key.slice(SHARD_LABEL_PREFIX.length)).member = value;
  }
  if (rings.size === 0) return {};
  return { shards: [...rings.values()].sort((a, b) => (a.ring < b.ring ? -1 : a.ring > b.ring ? 1 : 0)) };
}

/** `status.conditions`, the fields the page shows, well-formed entries only. */
export function conditionsOf(obj: KubeObject): ConditionSummary[] {
  const conditions = (obj as { status?: { conditions?: unknown } }).status?.conditions;
  if (!Array.isArray(conditions)) return [];
  const out: ConditionSummary[] = [];
  for (const c of conditions as Record<string, unknown>[]) {
    if (typeof c?.type !== "string") continue;
    out.push({
      type: c.type,
      status: typeof c.status === "string" ? c.status : "Unknown",
      ...(typeof c.reason === "string" ? { reason: c.reason } : {}),
      ...(typeof c.message === "string" ? { message: c.message } : {}),
      ...(typeof c.lastTransitionTime === "string" ? { lastTransitionTime: c.lastTransitionTime } : {}),
    });
  }
  return out;
}
