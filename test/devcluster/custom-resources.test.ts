import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServedResource } from "../../packages/capstan-dev/src/devcluster/index.ts";
import { type RawHttpCluster, startRawHttpCluster } from "./support/http.ts";

let t: RawHttpCluster;
const schema = {
  type: "object",
  properties: {
    spec: {
      type: "object",
      required: ["currency"],
      properties: {
        currency: { type: "string", enum: ["CAD", "USD"] },
        amount: { type: "integer", minimum: 0, default: 1 },
      },
    },
    status: { type: "object", properties: { rate: { type: "number" } } },
  },
};

function served(version: string): ServedResource {
  return {
    group: "ex.example.com",
    version,
    kind: "ExchangeRate",
    listKind: "ExchangeRateList",
    plural: "exchangerates",
    singular: "exchangerate",
    namespaced: true,
    shortNames: ["er"],
    categories: [],
    verbs: ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
    subresources: { status: true },
    generation: "all-but-metadata-and-status",
    custom: true,
    schema,
    storageBucket: "ex.example.com/exchangerates",
  };
}

beforeAll(async () => {
  t = await startRawHttpCluster();
  t.server.internals.registry.add(served("v1"));
  t.server.internals.registry.add(served("v1beta1"));
});
afterAll(async () => {
  await t.stop();
});

const ERS = "/apis/ex.example.com/v1/namespaces/default/exchangerates";
const MERGE = "application/merge-patch+json";

describe("custom resources", () => {
  it("applies schema defaults, prunes unknown fields and starts generation at 1", async () => {
    const res = await t.request("POST", ERS, {
      body: {
        apiVersion: "ex.example.com/v1",
        kind: "ExchangeRate",
        metadata: { name: "usd" },
        spec: { currency: "USD", junk: 1 },
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.spec).toEqual({ currency: "USD", amount: 1 });
    expect(res.body.metadata.generation).toBe(1);
  });

  it("rejects objects that break the schema with 422 Invalid naming the field", async () => {
    const res = await t.request("POST", ERS, { body: { metadata: { name: "eur" }, spec: { currency: "EUR" } } });
    expect(res.status).toBe(422);
    expect(res.body.reason).toBe("Invalid");
    expect(res.body.message).toBe(
      'ExchangeRate.ex.example.com "eur" is invalid: spec.currency: Unsupported value: "EUR": supported values: "CAD", "USD"',
    );
    expect(res.body.details).toMatchObject({ name: "eur", group: "ex.example.com", kind: "ExchangeRate" });
    expect(res.body.details.causes[0].field).toBe("spec.currency");
  });

  it("bumps generation on spec changes, not on metadata or /status writes", async () => {
    await t.request("POST", ERS, { body: { metadata: { name: "gen" }, spec: { currency: "CAD" } } });
    const label = await t.request("PATCH", `${ERS}/gen`, {
      body: { metadata: { labels: { a: "b" } } },
      contentType: MERGE,
    });
    expect(label.body.metadata.generation).toBe(1);
    const status = await t.request("PATCH", `${ERS}/gen/status`, {
      body: { status: { rate: 1.3 } },
      contentType: MERGE,
    });
    expect(status.body.metadata.generation).toBe(1);
    expect(status.body.status).toEqual({ rate: 1.3 });
    const spec = await t.request("PATCH", `${ERS}/gen`, { body: { spec: { amount: 5 } }, contentType: MERGE });
    expect(spec.body.metadata.generation).toBe(2);
    expect(spec.body.status).toEqual({ rate: 1.3 });
  });

  it("requires a resourceVersion on update", async () => {
    const created = await t.request("POST", ERS, { body: { metadata: { name: "norv" }, spec: { currency: "CAD" } } });
    delete created.body.metadata.resourceVersion;
    const res = await t.request("PUT", `${ERS}/norv`, { body: created.body });
    expect(res.status).toBe(422);
    expect(res.body.details.causes[0]).toMatchObject({ field: "metadata.resourceVersion" });
  });

  it("refuses strategic merge patches with 415", async () => {
    await t.request("POST", ERS, { body: { metadata: { name: "smp" }, spec: { currency: "CAD" } } });
    const res = await t.request("PATCH", `${ERS}/smp`, {
      body: {},
      contentType: "application/strategic-merge-patch+json",
    });
    expect(res.status).toBe(415);
    expect(res.body.message).toBe(
      "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
    );
  });

  it("serves every version from one storage, differing only in apiVersion", async () => {
    await t.request("POST", ERS, { body: { metadata: { name: "multi" }, spec: { currency: "USD" } } });
    const beta = await t.request("GET", "/apis/ex.example.com/v1beta1/namespaces/default/exchangerates/multi");
    expect(beta.status).toBe(200);
    expect(beta.body.apiVersion).toBe("ex.example.com/v1beta1");
    expect(beta.body.spec.currency).toBe("USD");
  });
});

describe("fieldValidation of unknown fields", () => {
  it("refuses unknown fields with 400 under Strict, as kubectl's default asks", async () => {
    const res = await t.request("POST", `${ERS}?fieldValidation=Strict`, {
      body: { metadata: { name: "strict" }, spec: { currency: "USD", colour: "red", size: 1 } },
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe(
      'ExchangeRate in version "v1" cannot be handled as a ExchangeRate: strict decoding error: unknown field "spec.colour", unknown field "spec.size"',
    );
    expect((await t.request("GET", `${ERS}/strict`)).status).toBe(404);
  });

  it("drops unknown fields with a Warning header under Warn (the default) and silently under Ignore", async () => {
    const warned = await t.request("POST", ERS, {
      body: { metadata: { name: "warned" }, spec: { currency: "USD", colour: "red" } },
    });
    expect(warned.status).toBe(201);
    expect(warned.headers["warning"]).toBe('299 - "unknown field \\"spec.colour\\""');
    expect(warned.body.spec.colour).toBeUndefined();
    const ignored = await t.request("POST", `${ERS}?fieldValidation=Ignore`, {
      body: { metadata: { name: "ignored" }, spec: { currency: "USD", colour: "red" } },
    });
    expect(ignored.status).toBe(201);
    expect(ignored.headers["warning"]).toBeUndefined();
  });
});
