import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { customServed } from "./support/custom-served.ts";
import { configMap, type RawHttpCluster, startRawHttpCluster } from "./support/http.ts";

const MiB = 1024 * 1024;
let t: RawHttpCluster;
const blobs = customServed("size.example.com", "Blob");
const blob = (name: string, bytes: number) => ({
  apiVersion: "size.example.com/v1",
  kind: "Blob",
  metadata: { name },
  payload: "x".repeat(bytes),
});

beforeAll(async () => {
  t = await startRawHttpCluster({ builtinPlugins: false });
  t.server.internals.registry.add(blobs);
});
afterAll(() => t.stop());

describe("ConfigMap and Secret data", () => {
  const cms = "/api/v1/namespaces/default/configmaps";

  it("accepts exactly 1 MiB of ConfigMap data and refuses one byte more on the whole object", async () => {
    const half = "a".repeat(MiB / 2);
    expect((await t.request("POST", cms, { body: configMap("full", { a: half, b: half }) })).status).toBe(201);
    const res = await t.request("POST", cms, {
      body: { ...configMap("over", { a: half }), binaryData: { b: Buffer.alloc(MiB / 2 + 1).toString("base64") } },
    });
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('ConfigMap "over" is invalid: []: Too long: may not be more than 1048576 bytes');
    expect(res.body.details).toEqual({
      name: "over",
      kind: "ConfigMap",
      causes: [{ reason: "FieldValueTooLong", message: "Too long: may not be more than 1048576 bytes", field: "[]" }],
    });
    // Updates are validated the same way.
    const grown = await t.request("PUT", `${cms}/full`, { body: configMap("full", { a: half, b: `${half}!` }) });
    expect([grown.status, grown.body.message]).toEqual([
      422,
      'ConfigMap "full" is invalid: []: Too long: may not be more than 1048576 bytes',
    ]);
  });

  it("counts a Secret's decoded data and stringData and reports it on data", async () => {
    const secret = (name: string, extra: number) => ({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name },
      data: { a: Buffer.alloc(MiB - 10).toString("base64") },
      stringData: { b: "s".repeat(10 + extra) },
    });
    expect((await t.request("POST", "/api/v1/namespaces/default/secrets", { body: secret("fits", 0) })).status).toBe(
      201,
    );
    const res = await t.request("POST", "/api/v1/namespaces/default/secrets", { body: secret("over", 1) });
    expect([res.status, res.body.message]).toEqual([
      422,
      'Secret "over" is invalid: data: Too long: may not be more than 1048576 bytes',
    ]);
  });
});

describe("objects etcd would not take", () => {
  const base = "/apis/size.example.com/v1/namespaces/default/blobs";

  it("answers a write over etcd's 1.5 MiB request limit with etcd's error, a 500 without a reason", async () => {
    const res = await t.request("POST", base, { body: blob("huge", 1.5 * MiB) });
    expect(res.status).toBe(500);
    expect(res.body).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: "etcdserver: request is too large",
      code: 500,
    });
    expect((await t.request("GET", `${base}/huge`)).status).toBe(404);
  });

  it("refuses an update that grows an object past it and keeps the stored version", async () => {
    const created = await t.request("POST", base, { body: blob("grows", 1024) });
    expect(created.status).toBe(201);
    const res = await t.request("PATCH", `${base}/grows`, {
      raw: JSON.stringify({ payload: "y".repeat(1.5 * MiB) }),
      contentType: "application/merge-patch+json",
    });
    expect([res.status, res.body.message]).toEqual([500, "etcdserver: request is too large"]);
    const after = await t.request("GET", `${base}/grows`);
    expect(after.body.metadata.resourceVersion).toBe(created.body.metadata.resourceVersion);
  });

  it("refuses bodies over 3 MiB before decoding them, with the handler's 413", async () => {
    const res = await t.request("POST", base, { body: blob("body", 3 * MiB) });
    expect([res.status, res.body.reason, res.body.message]).toEqual([
      413,
      "RequestEntityTooLarge",
      "Request entity too large: limit is 3145728",
    ]);
  });
});
