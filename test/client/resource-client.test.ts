import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  ApiError,
  isAlreadyExists,
  isConflict,
  isInvalid,
  isNotFound,
} from "../../packages/capstan/src/client/errors.ts";
import type { KubeClient } from "../../packages/capstan/src/client/resource-client.ts";
import { ConfigMapKind, clientFor, NodeKind, WidgetKind } from "./support/client.ts";
import {
  json,
  type RecordingHttpsServer,
  startRecordingHttpsServer,
  status,
} from "./support/recording-https-server.ts";

let server: RecordingHttpsServer;
let client: KubeClient;

beforeEach(async () => {
  server = await startRecordingHttpsServer();
  client = clientFor(server);
});
afterEach(async () => {
  await client.close();
  await server.close();
});

const cm = { metadata: { name: "a", namespace: "ns1" }, data: { k: "v" } };

describe("verbs on the wire", () => {
  it("get sends GET to the namespaced item path with the bearer token and returns the parsed object", async () => {
    server.on("GET", "/api/v1/namespaces/ns1/configmaps/a", (_r, res) => json(res, 200, { ...cm, kind: "ConfigMap" }));
    const got = await client.resource(ConfigMapKind, "ns1").get("a");
    expect(got.data).toEqual({ k: "v" });
    const req = server.requests[0]!;
    expect(req.headers.authorization).toBe("Bearer test-token");
    expect(req.headers.accept).toBe("application/json");
  });

  it("list sends every list option as a query parameter, all namespaces when none is bound", async () => {
    server.on("GET", "/apis/example.com/v1/widgets", (_r, res) =>
      json(res, 200, { kind: "WidgetList", metadata: { resourceVersion: "7" }, items: [] }),
    );
    const list = await client.resource(WidgetKind).list({
      labelSelector: "app=x,tier in (a,b)",
      fieldSelector: "metadata.name=w",
      limit: 10,
      continue: "tok",
      resourceVersion: "5",
      resourceVersionMatch: "NotOlderThan",
    });
    expect(list.metadata.resourceVersion).toBe("7");
    const q = server.requests[0]!.query;
    expect(Object.fromEntries(q)).toEqual({
      labelSelector: "app=x,tier in (a,b)",
      fieldSelector: "metadata.name=w",
      limit: "10",
      continue: "tok",
      resourceVersion: "5",
      resourceVersionMatch: "NotOlderThan",
    });
  });

  it("listAll follows continue tokens until the last page", async () => {
    server.on("GET", "/api/v1/namespaces/ns1/configmaps", (r, res) => {
      const page = r.query.get("continue");
      if (!page) json(res, 200, { metadata: { continue: "p2" }, items: [{ metadata: { name: "a" } }] });
      else if (page === "p2") json(res, 200, { metadata: { continue: "p3" }, items: [{ metadata: { name: "b" } }] });
      else json(res, 200, { metadata: {}, items: [{ metadata: { name: "c" } }] });
    });
    const names: string[] = [];
    for await (const o of client.resource(ConfigMapKind, "ns1").listAll({ limit: 1 })) names.push(o.metadata!.name!);
    expect(names).toEqual(["a", "b", "c"]);
    expect(server.requests.map((r) => r.query.get("continue"))).toEqual([null, "p2", "p3"]);
    expect(server.requests.every((r) => r.query.get("limit") === "1")).toBe(true);
  });

  it("create POSTs JSON to the collection of the object's namespace and fills apiVersion and kind", async () => {
    server.on("POST", "/apis/example.com/v1/namespaces/ns2/widgets", (r, res) => json(res, 201, JSON.parse(r.body)));
    const created = await client
      .resource(WidgetKind, "bound")
      .create({ metadata: { name: "w", namespace: "ns2" }, spec: { size: 1 } }, { dryRun: true, fieldManager: "me" });
    expect(created.apiVersion).toBe("example.com/v1");
    expect(created.kind).toBe("Widget");
    const req = server.requests[0]!;
    expect(req.headers["content-type"]).toBe("application/json");
    expect(Object.fromEntries(req.query)).toEqual({ dryRun: "All", fieldManager: "me" });
  });

  it("update PUTs to the item and updateStatus to its status subresource", async () => {
    server.on("PUT", "/api/v1/namespaces/ns1/configmaps/a", (r, res) => json(res, 200, JSON.parse(r.body)));
    server.on("PUT", "/apis/example.com/v1/namespaces/ns1/widgets/w/status", (r, res) =>
      json(res, 200, JSON.parse(r.body)),
    );
    await client.resource(ConfigMapKind).update(cm);
    await client
      .resource(WidgetKind)
      .updateStatus({ metadata: { name: "w", namespace: "ns1" }, status: { ready: true } });
    expect(server.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      "PUT /api/v1/namespaces/ns1/configmaps/a",
      "PUT /apis/example.com/v1/namespaces/ns1/widgets/w/status",
    ]);
    expect(JSON.parse(server.requests[1]!.body).status).toEqual({ ready: true });
  });

  it("patch uses the content type of each patch flavour", async () => {
    server.on("PATCH", "/api/v1/namespaces/ns1/configmaps/a", (_r, res) => json(res, 200, cm));
    const cms = client.resource(ConfigMapKind, "ns1");
    await cms.patch("a", [{ op: "add", path: "/data/x", value: "1" }], { type: "json" });
    await cms.patch("a", { data: { x: "1" } }, { type: "merge" });
    await cms.patch("a", { data: { x: "1" } }, { type: "strategic" });
    await cms.patch("a", { data: { x: "1" } }, { type: "apply", fieldManager: "op", force: true });
    expect(server.requests.map((r) => r.headers["content-type"])).toEqual([
      "application/json-patch+json",
      "application/merge-patch+json",
      "application/strategic-merge-patch+json",
      "application/apply-patch+yaml",
    ]);
    expect(Object.fromEntries(server.requests[3]!.query)).toEqual({ fieldManager: "op", force: "true" });
    expect(JSON.parse(server.requests[0]!.body)).toEqual([{ op: "add", path: "/data/x", value: "1" }]);
  });

  it("patchStatus sends a merge patch to the status subresource by default", async () => {
    server.on("PATCH", "/apis/example.com/v1/namespaces/ns1/widgets/w/status", (_r, res) => json(res, 200, {}));
    await client.resource(WidgetKind, "ns1").patchStatus("w", { status: { ready: true } });
    expect(server.requests[0]!.headers["content-type"]).toBe("application/merge-patch+json");
  });

  it("apply sends the completed object as an apply patch with fieldManager and force", async () => {
    server.on("PATCH", "/api/v1/namespaces/ns1/configmaps/a", (r, res) => json(res, 200, JSON.parse(r.body)));
    const applied = await client
      .resource(ConfigMapKind)
      .apply({ metadata: { name: "a", namespace: "ns1" }, data: { k: "v" } }, { fieldManager: "ctl", force: true });
    expect(applied).toMatchObject({ apiVersion: "v1", kind: "ConfigMap", data: { k: "v" } });
    const req = server.requests[0]!;
    expect(req.headers["content-type"]).toBe("application/apply-patch+yaml");
    expect(Object.fromEntries(req.query)).toEqual({ fieldManager: "ctl", force: "true" });
  });

  it("apply refuses to send without a fieldManager", async () => {
    await expect(client.resource(ConfigMapKind, "ns1").patch("a", {}, { type: "apply" })).rejects.toThrow(
      /fieldManager/,
    );
    expect(server.requests).toHaveLength(0);
  });

  it("delete sends a DeleteOptions body with propagation policy, grace period, preconditions and dryRun", async () => {
    server.on("DELETE", "/api/v1/namespaces/ns1/configmaps/a", (_r, res) =>
      json(res, 200, { kind: "Status", status: "Success" }),
    );
    const out = await client.resource(ConfigMapKind, "ns1").delete("a", {
      propagationPolicy: "Foreground",
      gracePeriodSeconds: 0,
      preconditions: { uid: "u1", resourceVersion: "9" },
      dryRun: true,
    });
    expect(out).toMatchObject({ status: "Success" });
    expect(JSON.parse(server.requests[0]!.body)).toEqual({
      apiVersion: "v1",
      kind: "DeleteOptions",
      propagationPolicy: "Foreground",
      gracePeriodSeconds: 0,
      preconditions: { uid: "u1", resourceVersion: "9" },
      dryRun: ["All"],
    });
  });

  it("deleteCollection sends DELETE to the collection with the selector in the query", async () => {
    server.on("DELETE", "/api/v1/namespaces/ns1/configmaps", (_r, res) => json(res, 200, { metadata: {}, items: [] }));
    await client
      .resource(ConfigMapKind, "ns1")
      .deleteCollection({ labelSelector: "a=b", propagationPolicy: "Background" });
    const req = server.requests[0]!;
    expect(req.query.get("labelSelector")).toBe("a=b");
    expect(JSON.parse(req.body).propagationPolicy).toBe("Background");
  });

  it("cluster-scoped kinds use the cluster path even when a namespace is bound", async () => {
    server.on("GET", "/api/v1/nodes/n1", (_r, res) => json(res, 200, { metadata: { name: "n1" } }));
    await client.resource(NodeKind, "ignored").get("n1");
    expect(server.requests[0]!.path).toBe("/api/v1/nodes/n1");
  });

  it("names are URL-encoded in paths", async () => {
    server.on("GET", "/api/v1/namespaces/ns1/configmaps/a%3Ab", (_r, res) => json(res, 200, {}));
    await client.resource(ConfigMapKind, "ns1").get("a:b");
    expect(server.requests[0]!.path).toBe("/api/v1/namespaces/ns1/configmaps/a%3Ab");
  });
});

describe("raw requests", () => {
  it("request() parses JSON bodies and hands text bodies back as text", async () => {
    server.on("GET", "/version", (_r, res) => json(res, 200, { major: "1", minor: "32" }));
    server.on("GET", "/healthz", (_r, res) => {
      res.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
      res.end("ok");
    });
    await expect(client.request("GET", "/version")).resolves.toEqual({ major: "1", minor: "32" });
    await expect(client.request("GET", "/healthz")).resolves.toBe("ok");
  });

  it("request() encodes query parameters and leaves out undefined ones", async () => {
    server.on("GET", "/api/v1/pods", (_r, res) => json(res, 200, { items: [] }));
    await client.request("GET", "/api/v1/pods", {
      query: { labelSelector: "a in (b,c)", limit: 5, continue: undefined },
    });
    expect(server.requests[0]!.query.toString()).toBe("labelSelector=a+in+%28b%2Cc%29&limit=5");
  });
});

describe("metadata-only view", () => {
  it("reads an empty list whose items kube-apiserver encodes as null as no items", async () => {
    // kube-apiserver 1.26 answers an empty PartialObjectMetadataList with `"items": null` (a nil Go slice).
    server.on("GET", "/api/v1/namespaces/ns1/configmaps", (_r, res) =>
      json(res, 200, {
        kind: "PartialObjectMetadataList",
        apiVersion: "meta.k8s.io/v1",
        metadata: { resourceVersion: "9" },
        items: null,
      }),
    );
    const list = await client.metadata(ConfigMapKind, "ns1").list();
    expect(list.items).toEqual([]);
  });

  it("asks for PartialObjectMetadata like client-go's metadata client and cuts whole objects down to it", async () => {
    server.on("GET", "/api/v1/namespaces/ns1/configmaps", (_r, res) =>
      json(res, 200, { metadata: { resourceVersion: "3" }, items: [{ ...cm, kind: "ConfigMap", apiVersion: "v1" }] }),
    );
    server.on("GET", "/api/v1/namespaces/ns1/configmaps/a", (_r, res) =>
      json(res, 200, {
        kind: "PartialObjectMetadata",
        apiVersion: "meta.k8s.io/v1",
        metadata: { name: "a", uid: "u" },
      }),
    );
    const meta = client.metadata(ConfigMapKind, "ns1");
    const list = await meta.list();
    expect(list.items).toEqual([
      { apiVersion: "meta.k8s.io/v1", kind: "PartialObjectMetadata", metadata: cm.metadata },
    ]);
    expect(list.metadata.resourceVersion).toBe("3");
    expect(server.requests[0]!.headers.accept).toBe(
      "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json",
    );
    await expect(meta.get("a")).resolves.toEqual({
      kind: "PartialObjectMetadata",
      apiVersion: "meta.k8s.io/v1",
      metadata: { name: "a", uid: "u" },
    });
    expect(server.requests[1]!.headers.accept).toBe(
      "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json",
    );
  });

  it("yields watch events with metadata only", async () => {
    server.on("GET", "/api/v1/namespaces/ns1/configmaps", (_r, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(`${JSON.stringify({ type: "ADDED", object: { ...cm, kind: "ConfigMap" } })}\n`);
    });
    const objects: unknown[] = [];
    for await (const e of await client.metadata(ConfigMapKind, "ns1").watch({})) objects.push(e.object);
    expect(objects).toEqual([{ apiVersion: "meta.k8s.io/v1", kind: "PartialObjectMetadata", metadata: cm.metadata }]);
  });
});

describe("namespace resolution", () => {
  it("prefers the call's namespace, then the object's, then the bound one", async () => {
    server.on("PUT", "/api/v1/namespaces/call/configmaps/a", (_r, res) => json(res, 200, {}));
    server.on("PUT", "/api/v1/namespaces/ns1/configmaps/a", (_r, res) => json(res, 200, {}));
    server.on("GET", "/api/v1/namespaces/bound/configmaps/a", (_r, res) => json(res, 200, {}));
    const cms = client.resource(ConfigMapKind, "bound");
    await cms.update(cm, { namespace: "call" });
    await cms.update(cm);
    await cms.get("a");
    expect(server.requests.map((r) => r.path)).toEqual([
      "/api/v1/namespaces/call/configmaps/a",
      "/api/v1/namespaces/ns1/configmaps/a",
      "/api/v1/namespaces/bound/configmaps/a",
    ]);
  });

  it("throws a clear error, without sending anything, when a namespaced call has no namespace", async () => {
    await expect(client.resource(ConfigMapKind).get("a")).rejects.toThrow(
      /ConfigMap is namespaced and no namespace was given/,
    );
    expect(server.requests).toHaveLength(0);
  });
});

describe("errors", () => {
  it("maps a Status body to an ApiError with its code, reason and causes", async () => {
    server.on("POST", "/api/v1/namespaces/ns1/configmaps", (_r, res) =>
      json(
        res,
        422,
        status(422, "Invalid", 'ConfigMap "a" is invalid', {
          details: { causes: [{ reason: "FieldValueInvalid", field: "data.k" }] },
        }),
      ),
    );
    const err = await client
      .resource(ConfigMapKind)
      .create(cm)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(isInvalid(err)).toBe(true);
    expect((err as ApiError).status.details?.causes?.[0]?.field).toBe("data.k");
    expect((err as ApiError).message).toBe('ConfigMap "a" is invalid');
  });

  it("synthesizes a NotFound Status naming the resource when the 404 body is not a Status", async () => {
    server.on("GET", "/api/v1/namespaces/ns1/configmaps/zz", (_r, res) => {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("404 page not found\n");
    });
    const err = await client
      .resource(ConfigMapKind, "ns1")
      .get("zz")
      .catch((e: unknown) => e);
    expect(isNotFound(err)).toBe(true);
    expect((err as ApiError).message).toBe("the server could not find the requested resource (get configmaps zz)");
    expect((err as ApiError).status.details?.causes?.[0]?.message).toBe("404 page not found");
  });

  it("tells AlreadyExists from Conflict on a bare 409 by the verb, as client-go does", async () => {
    server.on("POST", "/api/v1/namespaces/ns1/configmaps", (_r, res) => {
      res.writeHead(409);
      res.end();
    });
    server.on("PUT", "/api/v1/namespaces/ns1/configmaps/a", (_r, res) => {
      res.writeHead(409);
      res.end();
    });
    const created = await client
      .resource(ConfigMapKind)
      .create(cm)
      .catch((e: unknown) => e);
    const updated = await client
      .resource(ConfigMapKind)
      .update(cm)
      .catch((e: unknown) => e);
    expect(isAlreadyExists(created)).toBe(true);
    expect(isConflict(updated)).toBe(true);
  });
});

describe("retries", () => {
  it("retries a GET on 429 and 503 and returns the eventual success", async () => {
    let n = 0;
    server.on("GET", "/api/v1/namespaces/ns1/configmaps/a", (_r, res) => {
      n++;
      if (n === 1) json(res, 429, status(429, "TooManyRequests", "slow down"), { "retry-after": "1" });
      else if (n === 2) json(res, 503, status(503, "ServiceUnavailable", "busy"));
      else json(res, 200, cm);
    });
    await expect(client.resource(ConfigMapKind, "ns1").get("a")).resolves.toMatchObject({ data: { k: "v" } });
    expect(n).toBe(3);
  });

  it("does not retry a POST answered with 500", async () => {
    server.on("POST", "/api/v1/namespaces/ns1/configmaps", (_r, res) =>
      json(res, 500, status(500, "InternalError", "boom"), { "retry-after": "1" }),
    );
    const err = await client
      .resource(ConfigMapKind)
      .create(cm)
      .catch((e: unknown) => e);
    expect((err as ApiError).code).toBe(500);
    expect(server.requests).toHaveLength(1);
  });

  it("retries a POST answered with 429, which the server did not process", async () => {
    let n = 0;
    server.on("POST", "/api/v1/namespaces/ns1/configmaps", (r, res) => {
      n++;
      if (n === 1) json(res, 429, status(429, "TooManyRequests", "later"), { "retry-after": "1" });
      else json(res, 201, JSON.parse(r.body));
    });
    await client.resource(ConfigMapKind).create(cm);
    expect(n).toBe(2);
  });

  it("does not retry a JSON patch on 503 but does retry a merge patch", async () => {
    let n = 0;
    let failNext = true;
    server.on("PATCH", "/api/v1/namespaces/ns1/configmaps/a", (_r, res) => {
      n++;
      if (failNext) json(res, 503, status(503, "ServiceUnavailable", "busy"));
      else json(res, 200, cm);
      failNext = false;
    });
    const cms = client.resource(ConfigMapKind, "ns1");
    await expect(cms.patch("a", [], { type: "json" })).rejects.toBeInstanceOf(ApiError);
    expect(n).toBe(1);
    failNext = true;
    await cms.patch("a", {}, { type: "merge" });
    expect(n).toBe(3);
  });

  it("gives up after the configured number of attempts", async () => {
    const c = clientFor(server, { retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5 } });
    server.on("GET", "/api/v1/namespaces/ns1/configmaps/a", (_r, res) =>
      json(res, 503, status(503, "ServiceUnavailable", "down")),
    );
    await expect(c.resource(ConfigMapKind, "ns1").get("a")).rejects.toMatchObject({ code: 503 });
    expect(server.requests).toHaveLength(3);
    await c.close();
  });

  it("reports every attempt to the onResponse observer with method and code", async () => {
    const seen: string[] = [];
    const c = clientFor(server, { onResponse: (m, code) => seen.push(`${m} ${code}`) });
    let n = 0;
    server.on("GET", "/api/v1/namespaces/ns1/configmaps/a", (_r, res) => {
      n++;
      if (n === 1) json(res, 503, status(503, "ServiceUnavailable", "x"));
      else json(res, 200, cm);
    });
    await c.resource(ConfigMapKind, "ns1").get("a");
    expect(seen).toEqual(["GET 503", "GET 200"]);
    await c.close();
  });
});

describe("timeouts and aborts", () => {
  it("fails a request that gets no answer within timeoutMs with a message naming the server", async () => {
    const c = clientFor(server, { timeoutMs: 50, retry: false });
    server.on("GET", "/api/v1/namespaces/ns1/configmaps/slow", () => new Promise(() => {}));
    await expect(c.resource(ConfigMapKind, "ns1").get("slow")).rejects.toThrow(
      /no answer from https:\/\/127\.0\.0\.1:\d+ within 50 ms/,
    );
    await c.close();
  });

  it("rejects with the abort reason when the signal aborts", async () => {
    server.on("GET", "/api/v1/namespaces/ns1/configmaps/slow", () => new Promise(() => {}));
    const ac = new AbortController();
    const p = client.resource(ConfigMapKind, "ns1").get("slow", { signal: ac.signal });
    setTimeout(() => ac.abort(new Error("stop")), 10);
    await expect(p).rejects.toThrow("stop");
  });
});

describe("rate limiting", () => {
  it("makes requests beyond the burst wait for a token", async () => {
    server.on("GET", "/api/v1/namespaces/ns1/configmaps/a", (_r, res) => json(res, 200, cm));
    const c = clientFor(server, { qps: 1, burst: 1 });
    const cms = c.resource(ConfigMapKind, "ns1");
    await cms.get("a");
    const ac = new AbortController();
    const second = cms.get("a", { signal: ac.signal });
    // With one token a second and the only one spent, the second request is still waiting: abort it.
    setTimeout(() => ac.abort(new Error("gave up waiting")), 20);
    await expect(second).rejects.toThrow("gave up waiting");
    expect(server.requests).toHaveLength(1);
    await c.close();
  });
});
