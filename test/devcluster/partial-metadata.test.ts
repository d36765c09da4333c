import { describe, expect, it } from "vitest";
import { fileFixture } from "../support/file-fixture.ts";
import { configMap, startRawHttpCluster } from "./support/http.ts";

const t = fileFixture(() => startRawHttpCluster({ builtinPlugins: false }));

const CMS = "/api/v1/namespaces/default/configmaps";
const AS_METADATA = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";
const AS_METADATA_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";

describe("metadata-only responses (as=PartialObjectMetadata)", () => {
  it("answers a get with the object's whole metadata and nothing else", async () => {
    const created = await t.request("POST", CMS, { body: configMap("meta-get", { secret: "value" }) });
    const res = await t.request("GET", `${CMS}/meta-get`, { accept: AS_METADATA });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      kind: "PartialObjectMetadata",
      apiVersion: "meta.k8s.io/v1",
      metadata: created.body.metadata,
    });
  });

  it("answers a list with a PartialObjectMetadataList keeping the list's resourceVersion and continue", async () => {
    await t.request("POST", CMS, { body: configMap("meta-list-a", { a: "1" }) });
    await t.request("POST", CMS, { body: configMap("meta-list-b", { b: "2" }) });
    const res = await t.request("GET", `${CMS}?limit=1`, { accept: AS_METADATA_LIST });
    expect(res.status).toBe(200);
    expect(res.body.kind).toBe("PartialObjectMetadataList");
    expect(res.body.apiVersion).toBe("meta.k8s.io/v1");
    expect(res.body.metadata.continue).toEqual(expect.any(String));
    expect(res.body.items).toHaveLength(1);
    expect(res.body.items[0]).toEqual({
      kind: "PartialObjectMetadata",
      apiVersion: "meta.k8s.io/v1",
      metadata: expect.objectContaining({ name: expect.any(String), resourceVersion: expect.any(String) }),
    });
    expect(res.body.items[0].data).toBeUndefined();
  });

  it("streams watch events whose objects are PartialObjectMetadata", async () => {
    const list = await t.request("GET", CMS);
    const watch = await t.watch(`${CMS}?watch=1&resourceVersion=${list.body.metadata.resourceVersion}`, {
      accept: AS_METADATA,
    });
    await t.request("POST", CMS, { body: configMap("meta-watch", { big: "x".repeat(100) }) });
    const event = await watch.next(5000);
    watch.close();
    expect(event?.type).toBe("ADDED");
    expect(event?.object.kind).toBe("PartialObjectMetadata");
    expect(event?.object.metadata.name).toBe("meta-watch");
    expect(event?.object.data).toBeUndefined();
  });
});
