/**
 * Boolean query parameters as kube-apiserver's parameter codec reads them: `0` and `false` in any case
 * are false, anything else true. The official Python client sends `watch=True` and
 * `orphanDependents=True`; reading those as false made its watches end at once.
 */
import { describe, expect, it } from "vitest";
import { queryBool } from "../../packages/capstan-dev/src/devcluster/request/query-params.ts";
import { fileFixture } from "../support/file-fixture.ts";
import { configMap, startRawHttpCluster } from "./support/http.ts";

const CMS = "/api/v1/namespaces/default/configmaps";

describe("queryBool", () => {
  it.each([
    ["watch=true", true],
    ["watch=True", true],
    ["watch=1", true],
    ["watch=yes", true],
    ["watch=", true],
    ["watch", true],
    ["watch=false", false],
    ["watch=FALSE", false],
    ["watch=False", false],
    ["watch=0", false],
    ["other=true", undefined],
  ])("reads %s as %s", (query, expected) => {
    expect(queryBool(new URLSearchParams(query), "watch")).toBe(expected);
  });
});

const t = fileFixture(() => startRawHttpCluster());

describe("boolean parameters on the wire", () => {
  it("streams a watch for watch=True and lists for watch=False", async () => {
    await t.request("POST", CMS, { body: configMap("py-watch") });
    const list = await t.request("GET", `${CMS}?watch=False`);
    expect(list.body.kind).toBe("ConfigMapList");
    const watch = await t.watch(`${CMS}?watch=True&allowWatchBookmarks=True&fieldSelector=metadata.name%3Dpy-watch`);
    try {
      expect(watch.status).toBe(200);
      const added = await watch.next();
      expect([added?.type, added?.object.metadata.name]).toEqual(["ADDED", "py-watch"]);
    } finally {
      watch.close();
    }
  });

  it("orphans dependents for orphanDependents=True", async () => {
    await t.request("POST", CMS, { body: configMap("py-orphan") });
    const deleted = await t.request("DELETE", `${CMS}/py-orphan?orphanDependents=True`);
    expect(deleted.body.metadata.finalizers).toEqual(["orphan"]);
  });
});
