import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Discovery } from "../../packages/capstan/src/client/discovery.ts";
import type { KubeClient } from "../../packages/capstan/src/client/resource-client.ts";
import { clientFor } from "./support/client.ts";
import { json, type RecordingHttpsServer, startRecordingHttpsServer } from "./support/recording-https-server.ts";

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

const resourceList = (groupVersion: string, resources: { name: string; kind: string; namespaced: boolean }[]) => ({
  kind: "APIResourceList",
  groupVersion,
  resources: resources.map((r) => ({ ...r, verbs: ["get", "list"] })),
});

describe("kindFor", () => {
  it("maps apiVersion and kind to plural and scope from the group-version's resource list, skipping subresources", async () => {
    server.on("GET", "/apis/apps/v1", (_r, res) =>
      json(
        res,
        200,
        resourceList("apps/v1", [
          { name: "deployments", kind: "Deployment", namespaced: true },
          { name: "deployments/status", kind: "Deployment", namespaced: true },
        ]),
      ),
    );
    server.on("GET", "/api/v1", (_r, res) =>
      json(res, 200, resourceList("v1", [{ name: "nodes", kind: "Node", namespaced: false }])),
    );
    await expect(client.kindFor("apps/v1", "Deployment")).resolves.toEqual({
      group: "apps",
      version: "v1",
      kind: "Deployment",
      plural: "deployments",
      namespaced: true,
    });
    await expect(client.kindFor("v1", "Node")).resolves.toMatchObject({
      group: "",
      plural: "nodes",
      namespaced: false,
    });
    await client.kindFor("apps/v1", "Deployment");
    expect(server.requests.filter((r) => r.path === "/apis/apps/v1")).toHaveLength(1); // cached
  });

  it("refreshes the cache once on a miss, so a newly installed CRD is found", async () => {
    let installed = false;
    server.on("GET", "/apis/example.com/v1", (_r, res) =>
      json(
        res,
        200,
        resourceList("example.com/v1", installed ? [{ name: "widgets", kind: "Widget", namespaced: true }] : []),
      ),
    );
    await expect(client.kindFor("example.com/v1", "Widget")).rejects.toThrow(
      "the server does not serve kind Widget in example.com/v1",
    );
    installed = true;
    await expect(client.kindFor("example.com/v1", "Widget")).resolves.toMatchObject({ plural: "widgets" });
  });

  it("reports a group-version the server does not serve as an unknown kind", async () => {
    await expect(client.kindFor("nope.example.com/v9", "Thing")).rejects.toThrow(/does not serve kind Thing/);
  });
});

describe("Discovery.groupVersions", () => {
  it("lists core versions, then each group's preferred version first", async () => {
    server.on("GET", "/api", (_r, res) => json(res, 200, { kind: "APIVersions", versions: ["v1"] }));
    server.on("GET", "/apis", (_r, res) =>
      json(res, 200, {
        kind: "APIGroupList",
        groups: [
          {
            name: "example.com",
            versions: [
              { groupVersion: "example.com/v1beta1", version: "v1beta1" },
              { groupVersion: "example.com/v1", version: "v1" },
            ],
            preferredVersion: { groupVersion: "example.com/v1", version: "v1" },
          },
        ],
      }),
    );
    await expect(new Discovery(client).groupVersions()).resolves.toEqual([
      "v1",
      "example.com/v1",
      "example.com/v1beta1",
    ]);
  });
});
