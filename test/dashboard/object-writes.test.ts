/**
 * The dashboard's write routes over HTTP against the embedded API server: create, update (409 on a
 * stale resourceVersion), delete with its preview of finalizers and dependents, the cluster's 422
 * causes passed through, the Origin and content-type guard, read-only mode, schemas and YAML.
 */
import { request } from "node:http";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { Guitar } from "../../examples/guitar/operator.ts";
import { ConfigMap, CustomResourceDefinition, Namespace } from "../../packages/capstan/src/resources/builtins.ts";
import { toCrd } from "../../packages/capstan/src/resources/index.ts";
import { type Dashboard, startDashboard } from "../../packages/capstan-dev/src/dashboard/index.ts";
import { isEstablished, startTestCluster, type TestCluster } from "../../packages/capstan-dev/src/testing/index.ts";

const GUITARS = "kool.karmalabs.local/v1/guitars";

// biome-ignore lint/suspicious/noExplicitAny: test-side view of the routes' JSON, checked by the assertions
type Body = any;

interface Call {
  method?: string;
  body?: unknown;
  /** Default: the dashboard's own origin. `null`: no Origin header. */
  origin?: string | null;
  contentType?: string;
}

/** One request to `dashboard` with its token, as the page sends writes; the status and JSON body. */
function call(dashboard: Dashboard, path: string, opts: Call = {}): Promise<{ status: number; body: Body }> {
  const url = new URL(path, dashboard.url);
  const origin = opts.origin === undefined ? url.origin : opts.origin;
  const text = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  const headers: Record<string, string> = { authorization: `Bearer ${dashboard.token}` };
  if (origin !== null) headers.origin = origin;
  if (text !== undefined) {
    headers["content-type"] = opts.contentType ?? "application/json";
    headers["content-length"] = String(Buffer.byteLength(text));
  }
  return new Promise((resolve, reject) => {
    const req = request(url, { method: opts.method ?? "GET", headers }, (res) => {
      let out = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => {
        out += c;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: out.startsWith("{") ? JSON.parse(out) : out }));
    });
    req.on("error", reject);
    req.end(text);
  });
}

const objectPath = (name: string, ns = "default") => `/api/object?kind=${GUITARS}&namespace=${ns}&name=${name}`;

let cluster: TestCluster;
let dashboard: Dashboard;
let readOnly: Dashboard;

beforeAll(async () => {
  cluster = await startTestCluster();
  await cluster.client.resource(CustomResourceDefinition).create(toCrd(Guitar));
  await cluster.waitFor(CustomResourceDefinition, Guitar.crdName, isEstablished);
  dashboard = await startDashboard({ client: cluster.client });
  readOnly = await startDashboard({ client: cluster.client, readOnly: true });
  // The CRD's kind is watched once the dashboard's CRD feed saw it Established.
  await vi.waitFor(async () => expect((await call(dashboard, `/api/schema?kind=${GUITARS}`)).status).toBe(200), {
    timeout: 10_000,
    interval: 50,
  });
});
afterAll(async () => {
  await readOnly?.stop();
  await dashboard?.stop();
  await cluster?.stop();
});

describe("dashboard writes", () => {
  it("creates an object from JSON or YAML, as the field manager capstan-dashboard", async () => {
    const created = await call(dashboard, `/api/objects?kind=${GUITARS}`, {
      method: "POST",
      body: { object: { metadata: { name: "strat", namespace: "default" }, spec: { brand: "fender" } } },
    });
    expect(created.status).toBe(201);
    expect(created.body.object.spec).toEqual({ brand: "fender", review: false }); // defaulted by the server
    expect(created.body.object.metadata.managedFields.map((f: Body) => f.manager)).toEqual(["capstan-dashboard"]);

    const fromYaml = await call(dashboard, `/api/objects?kind=${GUITARS}`, {
      method: "POST",
      body: {
        yaml: "apiVersion: kool.karmalabs.local/v1\nkind: Guitar\nmetadata:\n  name: lespaul\n  namespace: default\nspec:\n  brand: gibson\n",
      },
    });
    expect(fromYaml.status).toBe(201);
    expect((await cluster.client.resource(Guitar, "default").get("lespaul")).spec.brand).toBe("gibson");
  });

  it("passes the cluster's 422 through with the fields its causes name", async () => {
    const refused = await call(dashboard, `/api/objects?kind=${GUITARS}`, {
      method: "POST",
      body: { object: { metadata: { name: "nobrand", namespace: "default" }, spec: { brand: "" } } },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.error.reason).toBe("Invalid");
    expect(refused.body.error.causes).toEqual([expect.objectContaining({ field: "spec.brand" })]);
  });

  it("refuses an object of another kind, and YAML that does not parse, naming the line", async () => {
    const other = await call(dashboard, `/api/objects?kind=${GUITARS}`, {
      method: "POST",
      body: { object: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x", namespace: "default" } } },
    });
    expect(other.status).toBe(400);
    expect(other.body.error.message).toMatch(/ConfigMap .* the form is for Guitar/);
    const broken = await call(dashboard, "/api/yaml/parse", {
      method: "POST",
      body: { yaml: "spec:\n  a: [1,\n  b: 2" },
    });
    expect(broken.status).toBe(400);
    expect(broken.body.error.message).toMatch(/^YAML line \d+/);
  });

  it("updates with the resourceVersion the edit started from, and answers 409 when it is stale", async () => {
    await cluster.client
      .resource(Guitar, "default")
      .create(Guitar.make({ metadata: { name: "tele", namespace: "default" }, spec: { brand: "fender" } }));
    const opened = await call(dashboard, `/api/edit?kind=${GUITARS}&namespace=default&name=tele`);
    expect(opened.status).toBe(200);
    expect(opened.body.yaml).toMatch(/brand: fender/);
    expect(opened.body.yaml).not.toMatch(/managedFields/);
    const mine = opened.body.object;

    await cluster.client.resource(Guitar, "default").patch("tele", { spec: { comment: "theirs" } }, { type: "merge" });
    const stale = await call(dashboard, objectPath("tele"), {
      method: "PUT",
      body: { object: { ...mine, spec: { ...mine.spec, brand: "squier" } } },
    });
    expect(stale.status).toBe(409);
    expect(stale.body.error.reason).toBe("Conflict");

    const latest = (await call(dashboard, `/api/edit?kind=${GUITARS}&namespace=default&name=tele`)).body.object;
    const updated = await call(dashboard, objectPath("tele"), {
      method: "PUT",
      body: { object: { ...latest, spec: { ...latest.spec, brand: "squier" } } },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.object.spec).toEqual({ brand: "squier", review: false, comment: "theirs" });
  });

  it("refuses an edit without a resourceVersion or one that renames the object", async () => {
    const noVersion = await call(dashboard, objectPath("tele"), {
      method: "PUT",
      body: { object: { metadata: { name: "tele", namespace: "default" }, spec: { brand: "x" } } },
    });
    expect(noVersion.status).toBe(422);
    expect(noVersion.body.error.causes).toEqual([expect.objectContaining({ field: "metadata.resourceVersion" })]);
    const renamed = await call(dashboard, objectPath("tele"), {
      method: "PUT",
      body: { object: { metadata: { name: "other", namespace: "default", resourceVersion: "1" }, spec: {} } },
    });
    expect(renamed.status).toBe(400);
  });

  it("previews a deletion (finalizers, dependents garbage collection takes) and deletes", async () => {
    const guitar = await cluster.client.resource(Guitar, "default").create(
      Guitar.make({
        metadata: { name: "doomed", namespace: "default", finalizers: ["example.com/keep"] },
        spec: { brand: "fender" },
      }),
    );
    const owner = (o: { metadata?: { name?: string; uid?: string } }, apiVersion: string, kind: string) => ({
      apiVersion,
      kind,
      name: o.metadata?.name ?? "",
      uid: o.metadata?.uid ?? "",
    });
    const guitarRef = owner(guitar, "kool.karmalabs.local/v1", "Guitar");
    const configMaps = cluster.client.resource(ConfigMap, "default");
    const child = await configMaps.create({
      metadata: { name: "strings", namespace: "default", ownerReferences: [guitarRef] },
    });
    // A grandchild goes too; an object with another owner that stays does not.
    await configMaps.create({
      metadata: { name: "tuning", namespace: "default", ownerReferences: [owner(child, "v1", "ConfigMap")] },
    });
    const keeper = await configMaps.create({ metadata: { name: "keeper", namespace: "default" } });
    await configMaps.create({
      metadata: {
        name: "shared",
        namespace: "default",
        ownerReferences: [guitarRef, owner(keeper, "v1", "ConfigMap")],
      },
    });

    const preview = async () =>
      (await call(dashboard, `/api/deletion?kind=${GUITARS}&namespace=default&name=doomed`)).body;
    await expect.poll(async () => (await preview()).dependents?.length).toBe(2);
    const shown = await preview();
    expect(shown.finalizers).toEqual(["example.com/keep"]);
    expect(shown.dependents.map((d: Body) => `${d.kind} ${d.name}`)).toEqual(["ConfigMap strings", "ConfigMap tuning"]);

    const wrongUid = await call(dashboard, `${objectPath("doomed")}&uid=not-its-uid`, { method: "DELETE" });
    expect(wrongUid.status).toBe(409);
    const deleted = await call(dashboard, `${objectPath("doomed")}&uid=${guitar.metadata?.uid}`, { method: "DELETE" });
    expect(deleted.status).toBe(200);
    // Held by its finalizer: deletion requested, not gone.
    expect((await cluster.client.resource(Guitar, "default").get("doomed")).metadata?.deletionTimestamp).toBeDefined();
  });
});

describe("dashboard writes refused by the cluster", () => {
  it("passes an admission policy's denial through with its message", async () => {
    const policy = fileURLToPath(new URL("../../examples/guitar/strict-brands-policy.yaml", import.meta.url));
    expect((await cluster.kubectl(["apply", "-f", policy])).code).toBe(0);
    await cluster.client
      .resource(Namespace)
      .create({ metadata: { name: "strict-shop", labels: { "kool.karmalabs.local/strict": "true" } } });
    const object = { metadata: { name: "homemade", namespace: "strict-shop" }, spec: { brand: "acme" } };
    // The policy's binding takes effect once the server has read it: retried until it denies.
    const denied = await vi.waitFor(
      async () => {
        const answer = await call(dashboard, `/api/objects?kind=${GUITARS}`, { method: "POST", body: { object } });
        expect(answer.status).not.toBe(201);
        return answer;
      },
      { timeout: 10_000, interval: 100 },
    );
    expect(denied.body.error.message).toMatch(/nobody knows the brand acme/);
  });

  it("passes the cluster's 403 through when the dashboard's user may not write", async () => {
    const viewer = await cluster.serviceAccount("default/viewer");
    const limited = await startDashboard({ client: viewer.client });
    try {
      // A built-in kind: the viewer may not even list CRDs, so custom kinds are not watched.
      const answer = await call(limited, "/api/objects?kind=core/v1/configmaps", {
        method: "POST",
        body: { object: { metadata: { name: "nope", namespace: "default" }, data: { a: "b" } } },
      });
      expect(answer.status).toBe(403);
      expect(answer.body.error).toMatchObject({ code: 403, reason: "Forbidden" });
      expect(answer.body.error.message).toMatch(/viewer/);
    } finally {
      await limited.stop();
    }
  });
});

describe("dashboard write guards", () => {
  const create = {
    method: "POST",
    body: { object: { metadata: { name: "g", namespace: "default" }, spec: { brand: "x" } } },
  };

  it("refuses writes without the dashboard's own Origin, or with a body that is not JSON", async () => {
    const path = `/api/objects?kind=${GUITARS}`;
    const none = await call(dashboard, path, { ...create, origin: null });
    expect(none.status).toBe(403);
    expect(none.body.error.message).toMatch(/only from its own page/);
    expect((await call(dashboard, path, { ...create, origin: "http://evil.example" })).status).toBe(403);
    expect((await call(dashboard, path, { ...create, origin: "https://localhost:1" })).status).toBe(403);
    expect((await call(dashboard, path, { ...create, contentType: "text/plain" })).status).toBe(415);
    expect((await call(dashboard, `${objectPath("tele")}`, { method: "DELETE", origin: null })).status).toBe(403);
    await expect(cluster.client.resource(Guitar, "default").get("g")).rejects.toMatchObject({ code: 404 });
  });

  it("with readOnly, answers 403 to every write and says so to the page", async () => {
    expect((await call(readOnly, "/api/writes")).body).toEqual({ readOnly: true, fieldManager: "capstan-dashboard" });
    expect((await call(dashboard, "/api/writes")).body.readOnly).toBe(false);
    const refused = await call(readOnly, `/api/objects?kind=${GUITARS}`, create);
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toMatch(/read-only/);
    expect((await call(readOnly, objectPath("tele"), { method: "PUT", body: { object: {} } })).status).toBe(403);
    expect((await call(readOnly, objectPath("tele"), { method: "DELETE" })).status).toBe(403);
    expect((await cluster.client.resource(Guitar, "default").get("tele")).metadata?.deletionTimestamp).toBeUndefined();
  });
});

describe("dashboard schemas", () => {
  it("serves a CRD's schema and a built-in kind's from the server's /openapi/v3, without $ref", async () => {
    const guitar = (await call(dashboard, `/api/schema?kind=${GUITARS}`)).body.schema;
    expect(guitar.properties.spec.properties.brand).toMatchObject({ type: "string", minLength: 1 });
    expect(guitar.properties.spec.required).toEqual(["brand"]);

    const deployment = await call(dashboard, "/api/schema?kind=apps/v1/deployments");
    expect(deployment.status).toBe(200);
    const text = JSON.stringify(deployment.body.schema);
    expect(text).not.toMatch(/\$ref/);
    const containers = deployment.body.schema.properties.spec.properties.template.properties.spec.properties.containers;
    expect(containers.type).toBe("array");
    expect(containers.items.properties.image.type).toBe("string");
    const configMap = (await call(dashboard, "/api/schema?kind=core/v1/configmaps")).body.schema;
    expect(configMap.properties.data.additionalProperties.type).toBe("string");
  });
});
