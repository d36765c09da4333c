/**
 * The dashboard over HTTP against the embedded API server: kinds (a CRD created here among them),
 * live objects, an object's detail with its events and children, operator logs, cluster errors as
 * JSON, and the Host guard.
 */
import { request } from "node:http";
import pino from "pino";
import { Type } from "typebox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ConfigMap,
  CustomResourceDefinition,
  Deployment,
  Event,
  Secret,
} from "../../packages/capstan/src/resources/builtins.ts";
import { defineResource, toCrd } from "../../packages/capstan/src/resources/index.ts";
import { type Dashboard, LogFeed, startDashboard } from "../../packages/capstan-dev/src/dashboard/index.ts";
import {
  isEstablished,
  startTestCluster,
  type TestCluster,
  waitUntil,
} from "../../packages/capstan-dev/src/testing/index.ts";
import { apiUrl } from "./support/dashboard-url.ts";
import { openSse } from "./support/sse-client.ts";

const Gizmo = defineResource({
  group: "dashboard.capstan.test",
  version: "v1",
  kind: "Gizmo",
  scope: "Namespaced",
  spec: Type.Object({ size: Type.Integer() }),
  status: Type.Object({ rate: Type.Optional(Type.Number()) }),
  printerColumns: [
    { name: "Size", type: "integer", jsonPath: ".spec.size" },
    { name: "Rate", type: "number", jsonPath: ".status.rate" },
  ],
});
const GIZMOS = "dashboard.capstan.test/v1/gizmos";

/**
 * A route's JSON body, loosely typed: the tests read the fields they check, and a missing one
 * fails the assertion on it.
 */
// biome-ignore lint/suspicious/noExplicitAny: test-side view of the routes' JSON, checked by the assertions
type Body = any;

/**
 * GET `path` on the dashboard with its access token (as a script sends it) and an optional Host
 * header; the status and parsed JSON body.
 */
function getJson(dashboard: Dashboard, path: string, host?: string): Promise<{ status: number; body: Body }> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, dashboard.url);
    const headers = { authorization: `Bearer ${dashboard.token}`, ...(host ? { host } : {}) };
    const req = request(url, { headers }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => {
        text += c;
      });
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, body: text.startsWith("{") ? JSON.parse(text) : text }),
      );
    });
    req.on("error", reject);
    req.end();
  });
}

let cluster: TestCluster;
let dashboard: Dashboard;
const logs = new LogFeed();

beforeAll(async () => {
  cluster = await startTestCluster();
  await cluster.client.resource(CustomResourceDefinition).create(toCrd(Gizmo));
  await cluster.waitFor(CustomResourceDefinition, Gizmo.crdName, isEstablished);
  dashboard = await startDashboard({ client: cluster.client, logs });
});
afterAll(async () => {
  await dashboard?.stop();
  await cluster?.stop();
});

describe("dashboard kinds", () => {
  it("lists a CRD created in the test, with its printer columns and object count, beside the built-in kinds", async () => {
    await cluster.client
      .resource(Gizmo)
      .create(Gizmo.make({ metadata: { name: "counted", namespace: "default" }, spec: { size: 1 } }));
    let gizmo: Body;
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
      const { status, body } = await getJson(dashboard, "/api/kinds");
      expect(status).toBe(200);
      gizmo = body.kinds.find((k: { id: string }) => k.id === GIZMOS);
      if (gizmo?.count >= 1) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(gizmo).toMatchObject({
      group: "dashboard.capstan.test",
      version: "v1",
      kind: "Gizmo",
      plural: "gizmos",
      namespaced: true,
      builtin: false,
      columns: [
        { name: "Size", jsonPath: ".spec.size" },
        { name: "Rate", jsonPath: ".status.rate" },
      ],
    });
    expect(gizmo.count).toBeGreaterThanOrEqual(1);
    const { body } = await getJson(dashboard, "/api/kinds");
    expect(body.kinds.map((k: { kind: string }) => k.kind)).toEqual(
      expect.arrayContaining(["Pod", "ConfigMap", "Secret", "Service", "Deployment", "ReplicaSet", "Event"]),
    );
  });
});

describe("dashboard objects", () => {
  it("the objects route and the stream see a create, an update and a delete, in order", async () => {
    const stream = await openSse(apiUrl(dashboard, `/api/stream/objects?kind=${GIZMOS}`));
    try {
      expect(stream.status).toBe(200);
      await stream.next("snapshot");
      const api = cluster.client.resource(Gizmo, "default");
      await api.create(Gizmo.make({ metadata: { name: "g1", namespace: "default" }, spec: { size: 3 } }));
      const seen: string[] = [];
      const nextOf = async (event: string) => {
        for (;;) {
          const e = await stream.next(event);
          const key = (e.data as { key: string }).key;
          if (key === "default/g1") {
            seen.push(e.event);
            return e.data as Body;
          }
        }
      };
      const added = await nextOf("upsert");
      expect(added).toMatchObject({ namespace: "default", name: "g1", cells: [3, null] });

      const listed = await getJson(dashboard, `/api/objects?kind=${GIZMOS}`);
      expect(listed.status).toBe(200);
      expect(listed.body.rows.find((r: { key: string }) => r.key === "default/g1")).toMatchObject({ cells: [3, null] });

      await api.patchStatus("g1", { status: { rate: 1.25 } });
      const updated = await nextOf("upsert");
      expect(updated.cells).toEqual([3, 1.25]);

      await api.delete("g1");
      expect(await nextOf("remove")).toEqual({ key: "default/g1" });
      expect(seen).toEqual(["upsert", "upsert", "remove"]);
      const after = await getJson(dashboard, `/api/objects?kind=${GIZMOS}`);
      expect(after.body.rows.some((r: { key: string }) => r.key === "default/g1")).toBe(false);
    } finally {
      stream.close();
    }
  });

  it("marks an object being deleted and the finalizers holding it", async () => {
    const api = cluster.client.resource(Gizmo, "default");
    await api.create(
      Gizmo.make({
        metadata: { name: "held", namespace: "default", finalizers: ["capstan.test/hold"] },
        spec: { size: 1 },
      }),
    );
    await api.delete("held");
    let row: Body;
    for (const deadline = Date.now() + 10_000; Date.now() < deadline && row?.deleting === undefined; ) {
      const { body } = await getJson(dashboard, `/api/objects?kind=${GIZMOS}`);
      row = body.rows.find((r: { key: string }) => r.key === "default/held");
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(row.deleting).toEqual(expect.any(String));
    expect(row.finalizers).toEqual(["capstan.test/hold"]);
    await api.patch("held", { metadata: { finalizers: null } }, { type: "merge" });
  });

  it("gives the row of a sharded operator's object its member, from the shard label", async () => {
    const api = cluster.client.resource(Gizmo, "default");
    await api.create(
      Gizmo.make({
        metadata: { name: "sharded", namespace: "default", labels: { "shard.capstan.dev/gizmos": "replica-2" } },
        spec: { size: 1 },
      }),
    );
    const row: Body = await waitUntil(
      async () =>
        (await getJson(dashboard, `/api/objects?kind=${GIZMOS}`)).body.rows.find(
          (r: { key: string }) => r.key === "default/sharded",
        ),
      { what: "the sharded Gizmo's row", timeout: cluster.waitTimeout },
    );
    expect(row.shards).toEqual([{ ring: "gizmos", member: "replica-2", draining: false }]);
    await api.delete("sharded");
  });
});

describe("dashboard object detail", () => {
  it("shows the object's YAML, its owned children and the Events about it, newest first", async () => {
    const parent = await cluster.client
      .resource(Gizmo)
      .create(Gizmo.make({ metadata: { name: "parent", namespace: "default" }, spec: { size: 2 } }));
    const owner = {
      apiVersion: "dashboard.capstan.test/v1",
      kind: "Gizmo",
      name: "parent",
      uid: parent.metadata.uid as string,
      controller: true,
    };
    await cluster.client.resource(ConfigMap).create(
      ConfigMap.make({
        metadata: { name: "parent-child", namespace: "default", ownerReferences: [owner] },
        data: { a: "1" },
      }),
    );
    const involvedObject = {
      apiVersion: owner.apiVersion,
      kind: "Gizmo",
      name: "parent",
      namespace: "default",
      uid: owner.uid,
    };
    for (const [name, reason, when] of [
      ["parent.1", "Older", "2026-01-01T00:00:00Z"],
      ["parent.2", "Newer", "2026-01-02T00:00:00Z"],
    ] as const) {
      await cluster.client.resource(Event).create(
        Event.make({
          metadata: { name, namespace: "default" },
          involvedObject,
          reason,
          message: `${reason} event`,
          type: "Normal",
          lastTimestamp: when,
          firstTimestamp: when,
        } as never),
      );
    }
    const path = `/api/object?kind=${GIZMOS}&namespace=default&name=parent`;
    let detail: Body;
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
      detail = (await getJson(dashboard, path)).body;
      if (detail.children?.length === 1 && detail.events?.length === 2) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(detail.children).toEqual([
      expect.objectContaining({
        kindId: "core/v1/configmaps",
        kind: "ConfigMap",
        namespace: "default",
        name: "parent-child",
      }),
    ]);
    expect(detail.events.map((e: { reason: string }) => e.reason)).toEqual(["Newer", "Older"]);
    expect(detail.yaml).toContain("name: parent\n");
    expect(detail.yaml).toContain("size: 2");
    expect(detail.yaml).not.toContain("managedFields");

    const child = (await getJson(dashboard, "/api/object?kind=core/v1/configmaps&namespace=default&name=parent-child"))
      .body;
    expect(child.ownerReferences).toEqual([
      expect.objectContaining({ kindId: GIZMOS, name: "parent", controller: true, present: true }),
    ]);
  });

  it("streams the detail again when an Event about the object arrives", async () => {
    const obj = await cluster.client
      .resource(Gizmo)
      .create(Gizmo.make({ metadata: { name: "watched", namespace: "default" }, spec: { size: 1 } }));
    const stream = await openSse(apiUrl(dashboard, `/api/stream/object?kind=${GIZMOS}&namespace=default&name=watched`));
    try {
      expect(((await stream.next("detail")).data as Body).events).toEqual([]);
      await cluster.client.resource(Event).create(
        Event.make({
          metadata: { name: "watched.1", namespace: "default" },
          involvedObject: {
            apiVersion: "dashboard.capstan.test/v1",
            kind: "Gizmo",
            name: "watched",
            namespace: "default",
            uid: obj.metadata.uid,
          },
          reason: "Poked",
          message: "poked",
          type: "Warning",
        } as never),
      );
      for (;;) {
        const detail = (await stream.next("detail")).data as Body;
        if (detail.events.length > 0) {
          expect(detail.events[0]).toMatchObject({ type: "Warning", reason: "Poked", message: "poked" });
          break;
        }
      }
    } finally {
      stream.close();
    }
  });

  it("shows an Event written through events.k8s.io/v1 (regarding, note, reportingController) as its core/v1 form", async () => {
    const obj = await cluster.client
      .resource(Gizmo)
      .create(Gizmo.make({ metadata: { name: "reported", namespace: "default" }, spec: { size: 1 } }));
    await cluster.client.request("POST", "/apis/events.k8s.io/v1/namespaces/default/events", {
      body: {
        apiVersion: "events.k8s.io/v1",
        kind: "Event",
        metadata: { name: "reported.1", namespace: "default" },
        regarding: {
          apiVersion: "dashboard.capstan.test/v1",
          kind: "Gizmo",
          name: "reported",
          namespace: "default",
          uid: obj.metadata.uid,
        },
        reason: "Reported",
        note: "through events.k8s.io",
        type: "Normal",
        action: "Report",
        eventTime: "2026-01-03T00:00:00.000000Z",
        reportingController: "capstan.test/reporter",
        reportingInstance: "reporter-1",
      },
    });
    const path = `/api/object?kind=${GIZMOS}&namespace=default&name=reported`;
    let detail: Body;
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
      detail = (await getJson(dashboard, path)).body;
      if (detail.events?.length === 1) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(detail.events).toEqual([
      expect.objectContaining({
        reason: "Reported",
        message: "through events.k8s.io",
        source: "capstan.test/reporter",
      }),
    ]);
  });

  it("follows a Deployment to its ReplicaSet and that to its Pod, through owned children", async () => {
    await cluster.client.resource(Deployment).create(
      Deployment.make({
        metadata: { name: "web", namespace: "default" },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: "web" } },
          template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "web", image: "nginx" }] } },
        },
      }),
    );
    const childrenOf = async (path: string, kind: string): Promise<Body[]> => {
      for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
        const children = ((await getJson(dashboard, path)).body.children ?? []) as Body[];
        if (children.some((c) => c.kind === kind)) return children;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`no ${kind} among the children of ${path}`);
    };
    const [rs] = await childrenOf("/api/object?kind=apps/v1/deployments&namespace=default&name=web", "ReplicaSet");
    expect(rs).toMatchObject({ kindId: "apps/v1/replicasets", namespace: "default" });
    const pods = await childrenOf(`/api/object?kind=apps/v1/replicasets&namespace=default&name=${rs.name}`, "Pod");
    expect(pods).toEqual([expect.objectContaining({ kindId: "core/v1/pods", name: expect.stringMatching(/^web-/) })]);
  });

  it("never shows a Secret's data, only its metadata", async () => {
    await cluster.client
      .resource(Secret)
      .create(Secret.make({ metadata: { name: "hush", namespace: "default" }, stringData: { password: "hunter2" } }));
    const { status, body } = await getJson(dashboard, "/api/object?kind=core/v1/secrets&namespace=default&name=hush");
    expect(status).toBe(200);
    expect(body.yaml).toContain("name: hush");
    expect(JSON.stringify(body)).not.toMatch(/hunter2|aHVudGVyMg|password/);
  });

  it("answers a missing object with the cluster's 404 as JSON, and an unknown kind with a 404", async () => {
    const missing = await getJson(dashboard, "/api/object?kind=core/v1/configmaps&namespace=default&name=nope");
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({
      code: 404,
      reason: "NotFound",
      message: expect.stringContaining("nope"),
    });
    const unknown = await getJson(dashboard, "/api/objects?kind=example.com/v1/nothings");
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.message).toContain("example.com/v1/nothings");
  });
});

describe("dashboard logs", () => {
  it("serves the operator lines it is fed, filterable by operator and by object, and streams new ones", async () => {
    const logger = pino({ level: "info" }, logs.destination("gizmos"));
    logger.info({ namespace: "default", name: "g7", controller: "gizmo" }, "reconciled");
    logger.child({ namespace: "default", name: "g8" }).warn("slow");
    logs.write("other", "plain text line");

    const byOperator = await getJson(dashboard, "/api/logs?source=gizmos");
    expect(byOperator.body.lines.map((l: { msg: string }) => l.msg)).toEqual(["reconciled", "slow"]);
    expect(byOperator.body.sources).toEqual(["gizmos", "other"]);
    const byObject = await getJson(dashboard, "/api/logs?namespace=default&name=g7");
    expect(byObject.body.lines).toEqual([
      expect.objectContaining({ source: "gizmos", level: "info", msg: "reconciled", fields: { controller: "gizmo" } }),
    ]);

    const stream = await openSse(apiUrl(dashboard, "/api/stream/logs?name=g9"));
    try {
      expect(((await stream.next("lines")).data as Body).lines).toEqual([]);
      logger.info({ namespace: "default", name: "g8" }, "not this one");
      logger.info({ namespace: "default", name: "g9" }, "this one");
      expect(((await stream.next("line")).data as Body).msg).toBe("this one");
    } finally {
      stream.close();
    }
  });
});

describe("dashboard guards", () => {
  it("rejects a request whose Host is not its loopback address (DNS rebinding)", async () => {
    const evil = await getJson(dashboard, "/api/kinds", "evil.example");
    expect(evil.status).toBe(403);
    expect(evil.body.error.reason).toBe("Forbidden");
    const evilWithPort = await getJson(dashboard, "/", `evil.example:${dashboard.port}`);
    expect(evilWithPort.status).toBe(403);
    expect((await getJson(dashboard, "/api/kinds", `localhost:${dashboard.port}`)).status).toBe(200);
    expect((await getJson(dashboard, "/", `127.0.0.1:${dashboard.port}`)).status).toBe(200);
  });

  it("answers 405 to a write on a route that only reads (writes are object-writes.test.ts's)", async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(apiUrl(dashboard, "/api/kinds"), { method: "POST" }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      req.end("{}");
    });
    expect(status).toBe(405);
  });

  it("refuses to listen on a non-loopback address", async () => {
    await expect(startDashboard({ client: cluster.client, host: "0.0.0.0" })).rejects.toThrow(/loopback/);
  });
});

describe("dashboard against a cluster that refuses or is gone", () => {
  it("turns the cluster's 403 into a JSON error the page shows", async () => {
    const rbacCluster = await startTestCluster();
    const viewer = await rbacCluster.serviceAccount("default/nobody");
    const forbidden = await startDashboard({ client: viewer.client });
    try {
      const { status, body } = await getJson(forbidden, "/api/objects?kind=core/v1/pods");
      expect(status).toBe(403);
      expect(body.error).toMatchObject({ code: 403, reason: "Forbidden", message: expect.stringContaining("nobody") });
      const kinds = await getJson(forbidden, "/api/kinds");
      expect(kinds.status).toBe(200);
      expect(kinds.body.crdError).toMatchObject({ code: 403, reason: "Forbidden" });
    } finally {
      await forbidden.stop();
      await rbacCluster.stop();
    }
  });

  it("turns a refused connection into a 502 JSON error, and does not crash", async () => {
    const gone = await startTestCluster();
    const path = gone.kubeconfigPath;
    const { readFile, writeFile, mkdtemp, rm } = await import("node:fs/promises");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const dir = await mkdtemp(join(tmpdir(), "capstan-dashboard-"));
    const kubeconfigPath = join(dir, "kubeconfig");
    await writeFile(kubeconfigPath, await readFile(path));
    await gone.stop();
    const orphan = await startDashboard({ kubeconfigPath });
    try {
      const { status, body } = await getJson(orphan, "/api/objects?kind=core/v1/configmaps");
      expect(status).toBe(502);
      expect(body.error).toMatchObject({ code: 0, message: expect.stringMatching(/ECONNREFUSED|refused/i) });
      expect((await getJson(orphan, "/")).status).toBe(200);
    } finally {
      await orphan.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
