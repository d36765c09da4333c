/**
 * List items as kube-apiserver encodes them: a built-in kind's list is a typed Go list whose items
 * have an empty TypeMeta (no kind, no apiVersion); a custom resource's list is unstructured and keeps
 * them. Single objects, watch events, Table rows' objects and PartialObjectMetadataList items carry them.
 */
import { waitUntil } from "capstan-dev/testing";
import { describe, expect, it } from "vitest";
import { fileFixture } from "../support/file-fixture.ts";
import { exchangeRateCrd } from "./kubectl/support/cluster.ts";
import { configMap, startRawHttpCluster } from "./support/http.ts";

const GROUP = "listitems.example.com";
const CMS = "/api/v1/namespaces/list-items/configmaps";
const RATES = `/apis/${GROUP}/v1/namespaces/list-items/exchangerates`;

const t = fileFixture(async () => {
  const raw = await startRawHttpCluster();
  await raw.request("POST", "/api/v1/namespaces", { body: { metadata: { name: "list-items" } } });
  await raw.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
    body: exchangeRateCrd({ group: GROUP }),
  });
  await waitUntil(async () => (await raw.request("GET", RATES)).status === 200);
  for (const name of ["a", "b"]) {
    await raw.request("POST", CMS, { body: configMap(name) });
    await raw.request("POST", RATES, {
      body: { apiVersion: `${GROUP}/v1`, kind: "ExchangeRate", metadata: { name }, spec: { currency: "CAD" } },
    });
  }
  return raw;
});

const typeMeta = (o: Record<string, unknown>) => [o["kind"], o["apiVersion"]];

describe("list items", () => {
  it("of a built-in kind carry no kind or apiVersion; the list and single objects do", async () => {
    const list = await t.request("GET", CMS);
    expect(typeMeta(list.body)).toEqual(["ConfigMapList", "v1"]);
    expect(list.body.items.map((i: Record<string, unknown>) => Object.keys(i))).toEqual([
      ["metadata", "data"],
      ["metadata", "data"],
    ]);
    expect(typeMeta((await t.request("GET", `${CMS}/a`)).body)).toEqual(["ConfigMap", "v1"]);
    const namespaces = await t.request("GET", "/api/v1/namespaces?limit=1");
    expect(typeMeta(namespaces.body.items[0])).toEqual([undefined, undefined]);
    // CustomResourceDefinitions are a built-in kind of apiextensions-apiserver: typed too.
    const crds = await t.request("GET", `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/`);
    expect(crds.body.items.map(typeMeta)).toContainEqual([undefined, undefined]);
    expect(crds.body.items.map(typeMeta)).not.toContainEqual(["CustomResourceDefinition", "apiextensions.k8s.io/v1"]);
  });

  it("of a custom resource keep kind and apiVersion", async () => {
    const list = await t.request("GET", RATES);
    expect(list.body.items.map(typeMeta)).toEqual([
      ["ExchangeRate", `${GROUP}/v1`],
      ["ExchangeRate", `${GROUP}/v1`],
    ]);
  });

  it("of a metadata-only list are PartialObjectMetadata, and a Table row's object is typed", async () => {
    const partial = await t.request("GET", CMS, {
      accept: "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
    });
    expect(partial.body.items.map(typeMeta)).toEqual([
      ["PartialObjectMetadata", "meta.k8s.io/v1"],
      ["PartialObjectMetadata", "meta.k8s.io/v1"],
    ]);
    const table = await t.request("GET", `${CMS}?includeObject=Object`, {
      accept: "application/json;as=Table;g=meta.k8s.io;v=v1",
    });
    expect(table.body.rows.map((r: { object: Record<string, unknown> }) => typeMeta(r.object))).toEqual([
      ["ConfigMap", "v1"],
      ["ConfigMap", "v1"],
    ]);
  });

  it("in watch events carry kind and apiVersion", async () => {
    const watch = await t.watch(`${CMS}?watch=true&fieldSelector=metadata.name%3Da`);
    try {
      expect(typeMeta((await watch.next())?.object)).toEqual(["ConfigMap", "v1"]);
    } finally {
      watch.close();
    }
  });

  it("of a deletecollection answer follow the same rule", async () => {
    await t.request("POST", CMS, { body: configMap("doomed", {}, { labels: { doomed: "yes" } }) });
    const deleted = await t.request("DELETE", `${CMS}?labelSelector=doomed%3Dyes`);
    expect(deleted.body.kind).toBe("ConfigMapList");
    expect(deleted.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual(["doomed"]);
    expect(typeMeta(deleted.body.items[0])).toEqual([undefined, undefined]);
  });
});
