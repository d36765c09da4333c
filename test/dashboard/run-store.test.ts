import type { ReconcileRun } from "capstan";
import { describe, expect, it } from "vitest";
import { parseReport } from "../../packages/capstan-dev/src/cli/operator-child-protocol.ts";
import { bounded, MAX_REPORTED_MESSAGE } from "../../packages/capstan-dev/src/cli/run-reports.ts";
import { RUNS_PER_OBJECT, RUNS_TOTAL, RunStore } from "../../packages/capstan-dev/src/dashboard/run-store.ts";

let nextId = 1;
function run(name: string, extra: Partial<ReconcileRun> = {}): ReconcileRun {
  return {
    id: nextId++,
    type: "reconcile",
    controller: "widget",
    object: { group: "example.com", version: "v1", kind: "Widget", namespace: "default", name, uid: `uid-${name}` },
    start: Date.now(),
    durationMs: 1,
    outcome: { result: "ok" },
    writes: [],
    ...extra,
  };
}
const of = (name: string) => ({ group: "example.com", kind: "Widget", namespace: "default", name });

describe("the run store", () => {
  it("keeps an object's runs newest first, numbered in the order added, and tells subscribers", () => {
    const store = new RunStore();
    const heard: number[] = [];
    const stop = store.subscribe((r) => heard.push(r.seq));
    store.add("op.ts", run("a"));
    store.add("op.ts", run("b"));
    store.add("op.ts", run("a", { outcome: { result: "error", message: "boom", retryInMs: 5 } }));
    stop();
    store.add("op.ts", run("a"));
    expect(store.runs(of("a")).map((r) => r.seq)).toEqual([4, 3, 1]);
    expect(store.runs(of("a"))[1]).toMatchObject({ source: "op.ts", outcome: { message: "boom" } });
    expect(store.runs(of("a"), 2)).toHaveLength(2);
    expect(store.runs(of("b"))).toHaveLength(1);
    expect(heard).toEqual([1, 2, 3]);
  });

  it("matches any version of the kind, and by uid keeps that uid's runs and those of the deleted object", () => {
    const store = new RunStore();
    store.add("op.ts", run("a"));
    store.add("op.ts", run("a", { object: { ...run("a").object, version: "v2", uid: "uid-new" } }));
    const { uid: _, ...gone } = run("a").object;
    store.add("op.ts", run("a", { object: gone }));
    expect(store.runs(of("a"))).toHaveLength(3);
    expect(store.runs({ ...of("a"), uid: "uid-new" }).map((r) => r.object.uid)).toEqual([undefined, "uid-new"]);
  });

  it("keeps at most the newest runs of each object, and at most the newest overall", () => {
    const store = new RunStore(3, 5);
    for (let i = 0; i < 10; i++) store.add("op.ts", run("busy", { durationMs: i }));
    expect(store.runs(of("busy")).map((r) => r.durationMs)).toEqual([9, 8, 7]);
    expect(store.size).toBe(3);
    store.add("op.ts", run("b"));
    store.add("op.ts", run("c"));
    store.add("op.ts", run("d")); // 6 runs: the oldest overall (busy's 7) goes
    expect(store.size).toBe(5);
    expect(store.runs(of("busy")).map((r) => r.durationMs)).toEqual([9, 8]);
    for (const name of ["e", "f", "g", "h", "i"]) store.add("op.ts", run(name));
    expect(store.size).toBe(5);
    expect(store.runs(of("busy"))).toEqual([]);
    expect(store.runs(of("b"))).toEqual([]);
    expect(store.runs(of("i"))).toHaveLength(1);
  });

  it("stays bounded in memory when one object churns beside a quiet one", () => {
    const store = new RunStore(2, 1_000);
    store.add("op.ts", run("quiet"));
    let most = 0;
    for (let i = 0; i < 20_000; i++) {
      store.add("op.ts", run("churn"));
      most = Math.max(most, store.retained);
    }
    expect(store.size).toBe(3);
    expect(store.runs(of("quiet"))).toHaveLength(1);
    // The runs evicted per object behind the quiet one's are dropped from the store's order list.
    expect(most).toBeLessThanOrEqual(2 * 3 + 1024 + 1);
  });

  it("has the documented default bounds", () => {
    expect(RUNS_PER_OBJECT).toBe(200);
    expect(RUNS_TOTAL).toBe(10_000);
  });
});

describe("runs on the report pipe", () => {
  it("parses a run report, and ignores a run line missing what the dashboard needs", () => {
    const r = run("a", { writes: [{ verb: "PATCH", group: "", resource: "configmaps", name: "a", code: 200 }] });
    expect(parseReport(JSON.stringify({ kind: "run", run: r }))).toEqual({ kind: "run", run: r });
    expect(parseReport(JSON.stringify({ kind: "run", run: { ...r, outcome: { result: "maybe" } } }))).toBeUndefined();
    expect(parseReport(JSON.stringify({ kind: "run", run: { ...r, object: undefined } }))).toBeUndefined();
  });

  it("cuts a long error message before it goes on the pipe", () => {
    const long = run("a", { outcome: { result: "error", message: "x".repeat(10_000), retryInMs: 1 } });
    const cut = bounded(long);
    expect(cut.outcome).toMatchObject({ result: "error", retryInMs: 1 });
    expect((cut.outcome as { message: string }).message.length).toBeLessThan(MAX_REPORTED_MESSAGE + 20);
    expect(bounded(run("b"))).toEqual(expect.objectContaining({ outcome: { result: "ok" } }));
  });
});
