/**
 * The operator runs the dashboard's reconcile timeline shows: every reconcile, handler and timer
 * run the operators reported (capstan's run traces, `observeReconciles`), kept per object, bounded,
 * with subscribers for the live panel.
 *
 * Anything that observes runs can feed it: `capstan dev` adds the runs its operator children
 * stream on their report pipe; an in-process operator (a test) is fed with
 * `observeReconciles({ onRun: (run) => runs.add("my-operator", run) })`.
 *
 * ## Guarantees
 * - Bounded: at most {@link RUNS_PER_OBJECT} runs per object (its newest) and {@link RUNS_TOTAL}
 *   over all objects (the oldest overall go first); an object whose runs are all gone is forgotten.
 * - Runs are kept per object kind (group and kind, any version), namespace and name: the runs of a
 *   deleted object (reported without uid) stay with the name; a reader asking for one uid gets the
 *   runs of that uid and the uid-less ones.
 * - `seq` increases by one per run added, so a page can tell what it has shown; `add` never throws.
 */
import type { ReconcileRun, RunObject } from "capstan";

/**
 * Runs kept per object: the last few hours of an object retried every minute, or the whole story
 * of an ordinary object, in a few hundred kilobytes at most.
 */
export const RUNS_PER_OBJECT = 200;
/**
 * Runs kept in all: a busy development cluster's last minutes (a run is a few hundred bytes to a
 * few kilobytes with its writes), some 10 MB at the very most.
 */
export const RUNS_TOTAL = 10_000;

/** A run as the page receives it. */
export type StoredRun = ReconcileRun & {
  /** Position in the store: 1 for the first run added, +1 per run. */
  readonly seq: number;
  /** Who reported it: an operator's label in `capstan dev`. */
  readonly source: string;
};

/** Which object's runs a reader wants. */
export interface RunFilter {
  group: string;
  kind: string;
  namespace: string;
  name: string;
  /** Only the runs of this uid (and those without one); any uid when absent. */
  uid?: string;
}

interface Entry {
  readonly run: StoredRun;
  readonly key: string;
  evicted: boolean;
}

/** The key of an object's runs. */
function objectKeyOf(o: Pick<RunObject, "group" | "kind" | "namespace" | "name">): string {
  return `${o.group}/${o.kind}/${o.namespace}/${o.name}`;
}

/** True when `run` is about the object `filter` names. */
export function matchesRunFilter(run: ReconcileRun, filter: RunFilter): boolean {
  const o = run.object;
  return (
    o.group === filter.group &&
    o.kind === filter.kind &&
    o.namespace === filter.namespace &&
    o.name === filter.name &&
    (filter.uid === undefined || o.uid === undefined || o.uid === filter.uid)
  );
}

/** The bounded store of runs; see the module documentation. */
export class RunStore {
  readonly #byObject = new Map<string, Entry[]>();
  /** Every kept entry in the order added (and some evicted ones, skipped, until compacted). */
  #order: Entry[] = [];
  #orderHead = 0;
  #size = 0;
  #seq = 0;
  readonly #listeners = new Set<(run: StoredRun) => void>();

  constructor(
    private readonly perObject: number = RUNS_PER_OBJECT,
    private readonly total: number = RUNS_TOTAL,
  ) {
    if (!(perObject >= 1 && total >= 1)) throw new Error("RunStore: the bounds must be at least 1");
  }

  /** Runs kept now. */
  get size(): number {
    return this.#size;
  }

  /** Entries the store holds, evicted ones awaiting compaction included (diagnostics, tests). */
  get retained(): number {
    return this.#order.length - this.#orderHead;
  }

  /** Adds one run reported by `source`. */
  add(source: string, run: ReconcileRun): void {
    const stored: StoredRun = { ...run, seq: ++this.#seq, source };
    const key = objectKeyOf(run.object);
    const entry: Entry = { run: stored, key, evicted: false };
    let list = this.#byObject.get(key);
    if (list === undefined) {
      list = [];
      this.#byObject.set(key, list);
    }
    list.push(entry);
    this.#order.push(entry);
    this.#size++;
    if (list.length > this.perObject) this.#evict(list.shift() as Entry);
    while (this.#size > this.total) {
      const oldest = this.#order[this.#orderHead++] as Entry;
      if (oldest.evicted) continue;
      // The oldest kept run overall is the oldest of its object's runs: the head of its list.
      this.#byObject.get(oldest.key)?.shift();
      this.#evict(oldest);
    }
    this.#compact();
    for (const listener of this.#listeners) {
      try {
        listener(stored);
      } catch {
        // A broken subscriber must not lose the run for the others.
      }
    }
  }

  /** The kept runs of one object, newest first, at most `limit`. */
  runs(filter: RunFilter, limit = this.perObject): StoredRun[] {
    const list = this.#byObject.get(objectKeyOf(filter)) ?? [];
    const out: StoredRun[] = [];
    for (let i = list.length - 1; i >= 0 && out.length < limit; i--) {
      const run = (list[i] as Entry).run;
      if (matchesRunFilter(run, filter)) out.push(run);
    }
    return out;
  }

  /** Calls `listener` with each new run until the returned function is called. */
  subscribe(listener: (run: StoredRun) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #evict(entry: Entry): void {
    entry.evicted = true;
    this.#size--;
    const list = this.#byObject.get(entry.key);
    if (list !== undefined && list.length === 0) this.#byObject.delete(entry.key);
  }

  /**
   * Keeps the order list in proportion to the runs kept: evicted entries at its head are skipped,
   * and the list is rebuilt once the skipped head, or the evicted entries left in its middle by the
   * per-object bound, outweigh the kept ones (amortised O(1) per run).
   */
  #compact(): void {
    while (this.#orderHead < this.#order.length && (this.#order[this.#orderHead] as Entry).evicted) this.#orderHead++;
    if (this.#order.length > 2 * this.#size + 1024) {
      this.#order = this.#order.slice(this.#orderHead).filter((e) => !e.evicted);
      this.#orderHead = 0;
    }
  }
}
