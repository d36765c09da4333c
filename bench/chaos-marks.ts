/**
 * Reads the marks file the chaos operator writes (format: bench/chaos-operator.ts) and tells what it
 * shows: how many reconciles ran, whether a key was ever reconciled twice at once (in one process or
 * across two), children created twice, and whether two processes acted at the same time.
 */
import { readFileSync } from "node:fs";

/** One reconcile, from its `S` mark to its `E` mark (or to its process's death). */
interface Span {
  pid: number;
  key: string;
  start: number;
  end: number;
}

/** What a marks file shows. */
export interface MarksSummary {
  /** Reconciles started. */
  reconciles: number;
  /** Reconciles that ended with an error (the key is retried). */
  errors: number;
  /**
   * Most reconciles of one key running at once: the deepest `depth` a process reported, or the most
   * overlapping spans of one key from different processes, whichever is larger. 1 is correct.
   */
  maxConcurrentPerKey: number;
  /** Child creations (POST answered 201) beyond the first for the same parent uid. */
  duplicateChildren: number;
  /** Reconciles that started while another process had a reconcile running (any key). */
  overlappingActors: number;
  /** Start time (ms) of each process's first reconcile, by pid. */
  firstStart: Map<number, number>;
  /** Start times (ms) of reconciles by key, in file order. */
  startsByKey: Map<string, number[]>;
}

/**
 * Summarises the marks in `path`. `deaths` gives the time (ms) a killed process died: its reconciles
 * still open then end there. Reconciles still open in a live process end at `now`.
 */
export function readMarks(
  path: string,
  deaths: ReadonlyMap<number, number> = new Map(),
  now = Date.now(),
): MarksSummary {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") text = "";
    else throw err;
  }
  const open = new Map<string, Span[]>(); // "pid key" -> open spans, oldest first
  const spans: Span[] = [];
  const created = new Map<string, number>();
  const firstStart = new Map<number, number>();
  const startsByKey = new Map<string, number[]>();
  let reconciles = 0;
  let errors = 0;
  let maxDepth = 0;
  for (const line of text.split("\n")) {
    const [type, pidText, msText, key, extra] = line.split(" ");
    if (type === undefined || key === undefined) continue; // the last, empty line
    const pid = Number(pidText);
    const ms = Number(msText);
    const id = `${pid} ${key}`;
    if (type === "S") {
      reconciles++;
      maxDepth = Math.max(maxDepth, Number(extra));
      if (!firstStart.has(pid)) firstStart.set(pid, ms);
      const starts = startsByKey.get(key) ?? [];
      starts.push(ms);
      startsByKey.set(key, starts);
      const span = { pid, key, start: ms, end: Number.POSITIVE_INFINITY };
      spans.push(span);
      const list = open.get(id) ?? [];
      list.push(span);
      open.set(id, list);
    } else if (type === "E") {
      if (extra === "error") errors++;
      const span = open.get(id)?.shift();
      if (span !== undefined) span.end = ms;
    } else if (type === "C") {
      created.set(extra ?? "", (created.get(extra ?? "") ?? 0) + 1);
    }
  }
  for (const span of spans) if (span.end === Number.POSITIVE_INFINITY) span.end = deaths.get(span.pid) ?? now;
  let duplicateChildren = 0;
  for (const n of created.values()) duplicateChildren += n - 1;
  return {
    reconciles,
    errors,
    maxConcurrentPerKey: Math.max(maxDepth, maxCrossProcessOverlapPerKey(spans)),
    duplicateChildren,
    overlappingActors: crossProcessStarts(spans),
    firstStart,
    startsByKey,
  };
}

/** The most spans of one key from different processes that overlap in time. */
function maxCrossProcessOverlapPerKey(spans: readonly Span[]): number {
  const byKey = new Map<string, Span[]>();
  for (const s of spans) {
    const list = byKey.get(s.key) ?? [];
    list.push(s);
    byKey.set(s.key, list);
  }
  let max = spans.length > 0 ? 1 : 0;
  for (const list of byKey.values()) {
    if (new Set(list.map((s) => s.pid)).size < 2) continue; // one process: its depth says it all
    // Ends before starts at the same millisecond: a span that ended then did not overlap one starting.
    const edges = list.flatMap((s) => [
      { at: s.start, delta: 1 },
      { at: s.end, delta: -1 },
    ]);
    edges.sort((a, b) => a.at - b.at || a.delta - b.delta);
    let depth = 0;
    for (const e of edges) {
      depth += e.delta;
      max = Math.max(max, depth);
    }
  }
  return max;
}

/** Spans that start while a span of another process is running (two actors at once). */
function crossProcessStarts(spans: readonly Span[]): number {
  const sorted = [...spans].sort((a, b) => a.start - b.start);
  const latestEnd = new Map<number, number>(); // pid -> latest end of its spans started so far
  let count = 0;
  for (const s of sorted) {
    for (const [pid, end] of latestEnd) {
      if (pid !== s.pid && end > s.start) {
        count++;
        break;
      }
    }
    latestEnd.set(s.pid, Math.max(latestEnd.get(s.pid) ?? 0, s.end));
  }
  return count;
}
