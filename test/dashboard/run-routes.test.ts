/**
 * The reconcile timeline's routes (run-routes.ts) over HTTP against the embedded API server: runs
 * added to the dashboard's store come back per object, newest first, as JSON and live on the
 * object's detail stream.
 */
import type { ReconcileRun } from "capstan";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigMap } from "../../packages/capstan/src/resources/builtins.ts";
import { type Dashboard, startDashboard } from "../../packages/capstan-dev/src/dashboard/index.ts";
import { startTestCluster, type TestCluster } from "../../packages/capstan-dev/src/testing/index.ts";
import { apiUrl } from "./support/dashboard-url.ts";
import { openSse } from "./support/sse-client.ts";

const CONFIGMAPS = "core/v1/configmaps";
let cluster: TestCluster;
let dashboard: Dashboard;

beforeAll(async () => {
  cluster = await startTestCluster();
  await cluster.client
    .resource(ConfigMap, "default")
    .create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cm", namespace: "default" } });
  dashboard = await startDashboard({ client: cluster.client });
}, 30_000);
afterAll(async () => {
  await dashboard?.stop();
  await cluster?.stop();
});

let nextId = 1;
function run(name: string, uid: string | undefined, outcome: ReconcileRun["outcome"]): ReconcileRun {
  return {
    id: nextId++,
    type: "reconcile",
    controller: "cm",
    object: { group: "", version: "v1", kind: "ConfigMap", namespace: "default", name, ...(uid ? { uid } : {}) },
    start: Date.now(),
    durationMs: 2,
    outcome,
    writes: [{ verb: "PATCH", group: "", resource: "configmaps", namespace: "default", name, code: 200 }],
  };
}

async function getJson(path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(apiUrl(dashboard, path));
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe("the timeline's routes", () => {
  it("answers an object's runs newest first, by uid when asked, and 404 for a kind it does not watch", async () => {
    dashboard.runs.add("op.ts", run("cm", "uid-old", { result: "ok" }));
    dashboard.runs.add("op.ts", run("cm", "uid-new", { result: "error", message: "boom", retryInMs: 5 }));
    dashboard.runs.add("op.ts", run("other", "uid-other", { result: "ok" }));
    const all = await getJson(`/api/runs?kind=${CONFIGMAPS}&namespace=default&name=cm`);
    expect(all.status).toBe(200);
    expect(all.body.available).toBe(true);
    expect((all.body.runs as ReconcileRun[]).map((r) => r.object.uid)).toEqual(["uid-new", "uid-old"]);
    expect((all.body.runs as ReconcileRun[])[0]).toMatchObject({
      source: "op.ts",
      outcome: { result: "error", message: "boom", retryInMs: 5 },
    });
    const one = await getJson(`/api/runs?kind=${CONFIGMAPS}&namespace=default&name=cm&uid=uid-old`);
    expect((one.body.runs as ReconcileRun[]).map((r) => r.object.uid)).toEqual(["uid-old"]);
    const unknown = await getJson("/api/runs?kind=example.com/v1/nothings&namespace=default&name=cm");
    expect(unknown.status).toBe(404);
  });

  it("sends the object's runs on its detail stream, then each new one of it only", async () => {
    const stream = await openSse(apiUrl(dashboard, `/api/stream/object?kind=${CONFIGMAPS}&namespace=default&name=cm`));
    try {
      const first = (await stream.next("runs")).data as { runs: ReconcileRun[] };
      expect(first.runs.length).toBeGreaterThanOrEqual(2);
      dashboard.runs.add("op.ts", run("other", "uid-other", { result: "ok" }));
      dashboard.runs.add("op.ts", run("cm", "uid-new", { result: "requeue", afterMs: 30_000 }));
      const next = (await stream.next("run")).data as ReconcileRun;
      expect(next.object.name).toBe("cm");
      expect(next.outcome).toEqual({ result: "requeue", afterMs: 30_000 });
    } finally {
      stream.close();
    }
  });
});
