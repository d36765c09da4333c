/**
 * Creates and updates of custom resources get the whole custom resource strategy, as /status writes
 * do: besides the schema and CEL rules, the scale subresource's replicas paths, embedded resources
 * and list-type uniqueness (ratcheted on update: a stored object that already breaks it stays writable).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServedResource } from "../../../packages/capstan-dev/src/devcluster/index.ts";
import { type RawHttpCluster, startRawHttpCluster } from "../support/http.ts";

let t: RawHttpCluster;
const MERGE = "application/merge-patch+json";
const THINGS = "/apis/strat.example.com/v1/namespaces/default/things";

function served(listType: boolean): ServedResource {
  return {
    group: "strat.example.com",
    version: "v1",
    kind: "Thing",
    listKind: "ThingList",
    plural: "things",
    singular: "thing",
    namespaced: true,
    shortNames: [],
    categories: [],
    verbs: ["create", "delete", "get", "list", "patch", "update", "watch"],
    subresources: {
      status: true,
      scale: { specReplicasPath: ".spec.replicas", statusReplicasPath: ".status.replicas" },
    },
    generation: "all-but-metadata-and-status",
    custom: true,
    storageBucket: "strat.example.com/things",
    schema: {
      type: "object",
      properties: {
        spec: {
          type: "object",
          properties: {
            replicas: { type: "integer" },
            tags: {
              type: "array",
              items: { type: "string" },
              ...(listType ? { "x-kubernetes-list-type": "set" } : {}),
            },
            template: {
              type: "object",
              "x-kubernetes-embedded-resource": true,
              "x-kubernetes-preserve-unknown-fields": true,
            },
          },
        },
        status: { type: "object", properties: { replicas: { type: "integer" } } },
      },
    },
  };
}

const thing = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: "strat.example.com/v1",
  kind: "Thing",
  metadata: { name },
  spec,
});

beforeAll(async () => {
  t = await startRawHttpCluster({ builtinPlugins: false });
  t.server.internals.registry.add(served(true));
});
afterAll(async () => {
  await t.stop();
});

describe("custom resource strategy on create and update", () => {
  it("refuses duplicate items of a set list", async () => {
    const res = await t.request("POST", THINGS, { body: thing("dupes", { tags: ["a", "a"] }) });
    expect(res.status, res.text).toBe(422);
    expect(res.body.details.causes).toEqual([
      { reason: "FieldValueDuplicate", message: 'Duplicate value: "a"', field: "spec.tags[1]" },
    ]);
  });

  it("refuses negative replicas at the scale subresource's spec path", async () => {
    const res = await t.request("POST", THINGS, { body: thing("negative", { replicas: -1 }) });
    expect(res.status, res.text).toBe(422);
    expect(res.body.details.causes).toEqual([
      {
        reason: "FieldValueInvalid",
        message: "Invalid value: -1: should be a non-negative integer",
        field: ".spec.replicas",
      },
    ]);
  });

  it("refuses an embedded resource without apiVersion and kind", async () => {
    const res = await t.request("POST", THINGS, { body: thing("embedded", { template: { metadata: { name: "x" } } }) });
    expect(res.status, res.text).toBe(422);
    expect(res.body.details.causes.map((c: { field: string }) => c.field)).toEqual([
      "spec.template.apiVersion",
      "spec.template.kind",
    ]);
  });

  it("keeps accepting writes of a stored object that broke a list type before it was declared", async () => {
    t.server.internals.registry.add(served(false));
    expect((await t.request("POST", THINGS, { body: thing("legacy", { tags: ["b", "b"] }) })).status).toBe(201);
    t.server.internals.registry.add(served(true));
    const res = await t.request("PATCH", `${THINGS}/legacy`, {
      body: { metadata: { labels: { touched: "yes" } }, spec: { replicas: 2 } },
      contentType: MERGE,
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.spec.tags).toEqual(["b", "b"]);
  });
});
