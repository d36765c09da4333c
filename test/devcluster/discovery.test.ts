import { describe, expect, it } from "vitest";
import type { ServedResource } from "../../packages/capstan-dev/src/devcluster/index.ts";
import { fileFixture } from "../support/file-fixture.ts";
import { startRawHttpCluster } from "./support/http.ts";

const t = fileFixture(() => startRawHttpCluster());

describe("discovery", () => {
  it("serves /api with v1 and /api/v1 with the core kinds, short names, categories and subresources", async () => {
    const api = await t.request("GET", "/api");
    expect(api.body).toMatchObject({ kind: "APIVersions", versions: ["v1"] });
    const v1 = await t.request("GET", "/api/v1");
    expect(v1.body).toMatchObject({ kind: "APIResourceList", apiVersion: "v1", groupVersion: "v1" });
    const byName = new Map(v1.body.resources.map((r: { name: string }) => [r.name, r]));
    expect(byName.get("pods")).toMatchObject({
      singularName: "pod",
      namespaced: true,
      kind: "Pod",
      shortNames: ["po"],
      categories: ["all"],
      verbs: ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
    });
    expect(byName.get("pods/status")).toMatchObject({ kind: "Pod", verbs: ["get", "patch", "update"] });
    expect(byName.get("namespaces")).toMatchObject({ namespaced: false, shortNames: ["ns"] });
    expect(byName.get("configmaps")).toMatchObject({ shortNames: ["cm"] });
    for (const name of ["nodes", "secrets", "services", "serviceaccounts", "events"])
      expect(byName.has(name)).toBe(true);
  });

  it("lists every built-in group under /apis with preferred versions", async () => {
    const apis = await t.request("GET", "/apis");
    const groups = apis.body.groups.map((g: { name: string }) => g.name);
    expect(groups).toEqual(
      expect.arrayContaining([
        "apps",
        "events.k8s.io",
        "coordination.k8s.io",
        "rbac.authorization.k8s.io",
        "apiextensions.k8s.io",
        "admissionregistration.k8s.io",
      ]),
    );
    const apps = await t.request("GET", "/apis/apps");
    expect(apps.body).toEqual({
      kind: "APIGroup",
      apiVersion: "v1",
      name: "apps",
      versions: [{ groupVersion: "apps/v1", version: "v1" }],
      preferredVersion: { groupVersion: "apps/v1", version: "v1" },
    });
    const appsV1 = await t.request("GET", "/apis/apps/v1");
    const deploy = appsV1.body.resources.find((r: { name: string }) => r.name === "deployments/scale");
    expect(deploy).toMatchObject({ group: "autoscaling", version: "v1", kind: "Scale" });
  });

  it("shows resources added to the registry at once and forgets removed ones", async () => {
    const served: ServedResource = {
      group: "example.com",
      version: "v1",
      kind: "Widget",
      listKind: "WidgetList",
      plural: "widgets",
      singular: "widget",
      namespaced: true,
      shortNames: ["wd"],
      categories: ["all"],
      verbs: ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
      subresources: { status: true },
      generation: "all-but-metadata-and-status",
      custom: true,
    };
    t.server.internals.registry.add(served);
    const group = await t.request("GET", "/apis/example.com/v1");
    expect(group.body.resources[0]).toMatchObject({
      name: "widgets",
      kind: "Widget",
      shortNames: ["wd"],
      categories: ["all"],
    });
    expect((await t.request("GET", "/apis")).body.groups.map((g: { name: string }) => g.name)).toContain("example.com");
    t.server.internals.registry.remove("example.com", "widgets");
    expect((await t.request("GET", "/apis/example.com/v1")).status).toBe(404);
    expect((await t.request("GET", "/apis/example.com/v1/namespaces/default/widgets")).status).toBe(404);
  });

  it("serves /version, /healthz, /readyz and /livez", async () => {
    const version = await t.request("GET", "/version");
    expect(version.body).toMatchObject({ major: "1", minor: "32" });
    for (const path of ["/healthz", "/readyz", "/livez"]) {
      const res = await t.request("GET", path);
      expect(res.status).toBe(200);
      expect(res.text).toBe("ok");
    }
  });
});
