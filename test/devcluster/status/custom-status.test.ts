/**
 * Writes to a custom resource's /status subresource follow apiextensions-apiserver's status strategy:
 * the body is defaulted and pruned as a whole, only its status is kept, and the result is validated
 * (status schema, scale status paths, list types, CEL rules; nothing ratcheted, as in 1.32) into a 422
 * with causes, for PUT, every patch type the server takes for custom resources, and server-side apply.
 */

import { waitUntil } from "capstan-dev/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RawHttpCluster, startRawHttpCluster } from "../support/http.ts";

let t: RawHttpCluster;

const CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const CRD_NAME = "pools.st.example.com";
const POOLS = "/apis/st.example.com/v1/namespaces/default/pools";
const MERGE = "application/merge-patch+json";
const JSON_PATCH = "application/json-patch+json";
const APPLY = "application/apply-patch+yaml";

const STATUS_SCHEMA = {
  type: "object",
  "x-kubernetes-validations": [
    { rule: "!has(self.replicas) || self.ready <= self.replicas", message: "ready must not exceed replicas" },
  ],
  properties: {
    replicas: { type: "integer" },
    ready: { type: "integer", default: 0 },
    phase: { type: "string", enum: ["Pending", "Running"], default: "Pending" },
    conditions: {
      type: "array",
      "x-kubernetes-list-type": "map",
      "x-kubernetes-list-map-keys": ["type"],
      items: {
        type: "object",
        required: ["type"],
        properties: { type: { type: "string" }, status: { type: "string" } },
      },
    },
  },
};

function specSchema(rules: unknown[] = []): Record<string, unknown> {
  return {
    type: "object",
    ...(rules.length > 0 ? { "x-kubernetes-validations": rules } : {}),
    properties: { size: { type: "integer" }, replicas: { type: "integer" } },
  };
}

function crd(specRules: unknown[] = []): Record<string, unknown> {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: CRD_NAME },
    spec: {
      group: "st.example.com",
      scope: "Namespaced",
      names: { plural: "pools", singular: "pool", kind: "Pool", listKind: "PoolList" },
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          subresources: {
            status: {},
            scale: { specReplicasPath: ".spec.replicas", statusReplicasPath: ".status.replicas" },
          },
          schema: {
            openAPIV3Schema: {
              type: "object",
              properties: { spec: specSchema(specRules), status: STATUS_SCHEMA },
            },
          },
        },
      ],
    },
  };
}

const pool = (name: string, spec: Record<string, unknown> = { size: 1, replicas: 1 }) => ({
  apiVersion: "st.example.com/v1",
  kind: "Pool",
  metadata: { name },
  spec,
});

async function create(name: string, spec?: Record<string, unknown>): Promise<void> {
  const res = await t.request("POST", POOLS, { body: pool(name, spec) });
  expect(res.status, res.text).toBe(201);
}

beforeAll(async () => {
  t = await startRawHttpCluster({ kubelet: false });
  const res = await t.request("POST", CRDS, { body: crd() });
  expect(res.status, res.text).toBe(201);
  await waitUntil(async () => (await t.request("GET", POOLS)).status === 200, { what: "pools to be served" });
});
afterAll(async () => {
  await t.stop();
});

describe("/status writes of custom resources are validated against the CRD schema", () => {
  it("refuses a PUT of a status of the wrong type with 422 and the schema's cause at status.*", async () => {
    await create("put");
    const current = (await t.request("GET", `${POOLS}/put`)).body;
    const res = await t.request("PUT", `${POOLS}/put/status`, {
      body: { ...current, status: { ready: "three" } },
    });
    expect(res.status, res.text).toBe(422);
    expect(res.body.reason).toBe("Invalid");
    expect(res.body.message).toBe(
      // The status validator is rooted at the status schema: the field has the prefix, kube-openapi's text does not.
      'Pool.st.example.com "put" is invalid: [status.ready: Invalid value: "string": ready in body must be of type integer: "string", ' +
        '<nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]',
    );
    expect(res.body.details).toEqual({
      name: "put",
      group: "st.example.com",
      kind: "Pool",
      causes: [
        {
          reason: "FieldValueTypeInvalid",
          message: 'Invalid value: "string": ready in body must be of type integer: "string"',
          field: "status.ready",
        },
        {
          reason: "FieldValueInvalid",
          message:
            'Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
          field: "<nil>",
        },
      ],
    });
    expect((await t.request("GET", `${POOLS}/put`)).body.status).toBeUndefined();
  });

  it("refuses an enum violation sent as a merge patch (CEL skipped after it), and the same sent as a JSON patch", async () => {
    await create("patches");
    const merge = await t.request("PATCH", `${POOLS}/patches/status`, {
      body: { status: { phase: "Exploded" } },
      contentType: MERGE,
    });
    expect(merge.status, merge.text).toBe(422);
    expect(merge.body.details.causes).toEqual([
      {
        reason: "FieldValueNotSupported",
        message: 'Unsupported value: "Exploded": supported values: "Pending", "Running"',
        field: "status.phase",
      },
      {
        reason: "FieldValueInvalid",
        message:
          'Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
        field: "<nil>",
      },
    ]);
    const jsonPatch = await t.request("PATCH", `${POOLS}/patches/status`, {
      body: [{ op: "add", path: "/status", value: { phase: "Exploded" } }],
      contentType: JSON_PATCH,
    });
    expect(jsonPatch.status, jsonPatch.text).toBe(422);
    expect(jsonPatch.body.details.causes[0].field).toBe("status.phase");
  });

  it("refuses an invalid status sent by server-side apply to /status and accepts a valid one", async () => {
    await create("applied");
    const applied = (status: Record<string, unknown>) => ({
      apiVersion: "st.example.com/v1",
      kind: "Pool",
      metadata: { name: "applied" },
      status,
    });
    const bad = await t.request("PATCH", `${POOLS}/applied/status?fieldManager=test`, {
      body: applied({ replicas: -0.5 }),
      contentType: APPLY,
    });
    expect(bad.status, bad.text).toBe(422);
    expect(bad.body.details.causes.map((c: { field: string }) => c.field)).toContain("status.replicas");
    const good = await t.request("PATCH", `${POOLS}/applied/status?fieldManager=test`, {
      body: applied({ replicas: 2, ready: 1, phase: "Running" }),
      contentType: APPLY,
    });
    expect(good.status, good.text).toBe(200);
    expect(good.body.status).toEqual({ replicas: 2, ready: 1, phase: "Running" });
  });

  it("applies status defaults and prunes unknown status fields with a warning (Warn) or a 400 (Strict)", async () => {
    await create("decoded");
    const warned = await t.request("PATCH", `${POOLS}/decoded/status`, {
      body: { status: { replicas: 2, colour: "red" } },
      contentType: MERGE,
    });
    expect(warned.status, warned.text).toBe(200);
    expect(warned.headers["warning"]).toBe('299 - "unknown field \\"status.colour\\""');
    expect(warned.body.status).toEqual({ replicas: 2, ready: 0, phase: "Pending" });
    const strict = await t.request("PATCH", `${POOLS}/decoded/status?fieldValidation=Strict`, {
      body: { status: { size: 3 } },
      contentType: MERGE,
    });
    expect(strict.status, strict.text).toBe(400);
    expect(strict.body.message).toBe(
      'Pool in version "v1" cannot be handled as a Pool: strict decoding error: unknown field "status.size"',
    );
  });

  it("ignores spec and metadata changes sent to /status (no error, generation unchanged)", async () => {
    await create("ignored", { size: 1, replicas: 1 });
    const current = (await t.request("GET", `${POOLS}/ignored`)).body;
    const res = await t.request("PUT", `${POOLS}/ignored/status`, {
      body: {
        ...current,
        metadata: { ...current.metadata, labels: { sneaky: "yes" } },
        spec: { size: 99, replicas: 1 },
        status: { replicas: 1 },
      },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.spec).toEqual({ size: 1, replicas: 1 });
    expect(res.body.metadata.labels).toBeUndefined();
    expect(res.body.metadata.generation).toBe(1);
    expect(res.body.status).toEqual({ replicas: 1, ready: 0, phase: "Pending" });
  });

  it("ignores status sent to the main resource when the status subresource is on", async () => {
    await create("main");
    await t.request("PATCH", `${POOLS}/main/status`, { body: { status: { replicas: 1 } }, contentType: MERGE });
    const res = await t.request("PATCH", `${POOLS}/main`, {
      body: { spec: { size: 2 }, status: { replicas: "not even an integer" } },
      contentType: MERGE,
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.spec.size).toBe(2);
    expect(res.body.status).toEqual({ replicas: 1, ready: 0, phase: "Pending" });
  });

  it("ignores status sent to the main resource by JSON patch and by server-side apply", async () => {
    await create("main-other");
    await t.request("PATCH", `${POOLS}/main-other/status`, { body: { status: { replicas: 1 } }, contentType: MERGE });
    const jsonPatch = await t.request("PATCH", `${POOLS}/main-other`, {
      body: [{ op: "replace", path: "/status/replicas", value: 7 }],
      contentType: JSON_PATCH,
    });
    expect(jsonPatch.status, jsonPatch.text).toBe(200);
    expect(jsonPatch.body.status.replicas).toBe(1);
    const applied = await t.request("PATCH", `${POOLS}/main-other?fieldManager=test`, {
      body: {
        apiVersion: "st.example.com/v1",
        kind: "Pool",
        metadata: { name: "main-other" },
        status: { replicas: 9 },
      },
      contentType: APPLY,
    });
    expect(applied.status, applied.text).toBe(200);
    expect(applied.body.status.replicas).toBe(1);
  });

  it("runs the status CEL rules on /status writes", async () => {
    await create("cel");
    const res = await t.request("PATCH", `${POOLS}/cel/status`, {
      body: { status: { replicas: 1, ready: 3 } },
      contentType: MERGE,
    });
    expect(res.status, res.text).toBe(422);
    expect(res.body.message).toBe(
      'Pool.st.example.com "cel" is invalid: status: Invalid value: "object": ready must not exceed replicas',
    );
  });

  it("skips CEL rules after a blocking schema error, saying so", async () => {
    await create("blocked");
    const res = await t.request("PATCH", `${POOLS}/blocked/status`, {
      body: { status: { replicas: 1, ready: "x" } },
      contentType: MERGE,
    });
    expect(res.status, res.text).toBe(422);
    expect(res.body.details.causes.map((c: { field: string; message: string }) => [c.field, c.message])).toEqual([
      ["status.ready", 'Invalid value: "string": ready in body must be of type integer: "string"'],
      [
        "<nil>",
        'Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
      ],
    ]);
  });

  it("checks the scale subresource's status replicas path", async () => {
    await create("scale");
    const res = await t.request("PATCH", `${POOLS}/scale/status`, {
      body: { status: { replicas: -1, ready: -2 } },
      contentType: MERGE,
    });
    expect(res.status, res.text).toBe(422);
    expect(res.body.details.causes).toEqual([
      {
        reason: "FieldValueInvalid",
        message: "Invalid value: -1: should be a non-negative integer",
        field: ".status.replicas",
      },
    ]);
  });

  it("refuses duplicate keys of a map list in status", async () => {
    await create("lists");
    const res = await t.request("PATCH", `${POOLS}/lists/status`, {
      body: {
        status: {
          conditions: [
            { type: "Ready", status: "True" },
            { type: "Ready", status: "False" },
          ],
        },
      },
      contentType: MERGE,
    });
    expect(res.status, res.text).toBe(422);
    expect(res.body.details.causes).toEqual([
      {
        reason: "FieldValueDuplicate",
        message: 'Duplicate value: map[string]interface {}{"type":"Ready"}',
        field: "status.conditions[1]",
      },
    ]);
  });

  it("does not ratchet on /status, as 1.32: a spec the stored object breaks fails /status writes too", async () => {
    await create("ratchet", { size: 20, replicas: 1 });
    const updated = (await t.request("GET", `${CRDS}/${CRD_NAME}`)).body;
    updated.spec.versions[0].schema.openAPIV3Schema.properties.spec = specSchema([
      { rule: "self.size < 10", message: "size must be below 10" },
    ]);
    const put = await t.request("PUT", `${CRDS}/${CRD_NAME}`, { body: updated });
    expect(put.status, put.text).toBe(200);
    await waitUntil(
      async () =>
        (await t.request("POST", `${POOLS}?dryRun=All`, { body: pool("probe", { size: 20 }) })).status === 422,
      { what: "the new rule to be served" },
    );
    const status = await t.request("PATCH", `${POOLS}/ratchet/status`, {
      body: { status: { replicas: 1 } },
      contentType: MERGE,
    });
    // Status subresource ratcheting came in 1.33; 1.32's status strategy runs the rules unratcheted.
    expect(status.status, status.text).toBe(422);
    expect(status.body.message).toBe(
      'Pool.st.example.com "ratchet" is invalid: spec: Invalid value: "object": size must be below 10',
    );
    const spec = await t.request("PATCH", `${POOLS}/ratchet`, { body: { spec: { size: 21 } }, contentType: MERGE });
    expect(spec.status, spec.text).toBe(422);
    expect(spec.body.message).toBe(
      'Pool.st.example.com "ratchet" is invalid: spec: Invalid value: "object": size must be below 10',
    );
  });
});
