import { waitUntil } from "capstan-dev/testing";
import { describe, expect, it } from "vitest";
import { fileFixture } from "../../support/file-fixture.ts";
import { startRawHttpCluster } from "../support/http.ts";

// biome-ignore lint/suspicious/noExplicitAny: test assertions read arbitrary JSON
type Doc = any;

// The server as users start it: kubelet, scheduler and controllers on, with short delays.
const t = fileFixture(() => startRawHttpCluster({ kubelet: { readyDelayMs: 10 } }));

function managers(obj: Doc): string[] {
  return (obj.metadata.managedFields ?? []).map((e: Doc) => `${e.manager}/${e.operation}/${e.subresource ?? ""}`);
}

describe("managedFields of the devcluster's own writers", () => {
  it("names the API server as the creator of the initial namespaces", async () => {
    const ns = (await t.request("GET", "/api/v1/namespaces/default")).body;
    expect(managers(ns)).toEqual(["kube-apiserver/Update/"]);
    expect(ns.metadata.managedFields[0].fieldsV1).toEqual({
      "f:metadata": { "f:labels": { ".": {}, "f:kubernetes.io/metadata.name": {} } },
    });
  });

  it("names the kubelet for pod status and the controller manager for the pods a ReplicaSet creates", async () => {
    const rs = {
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      metadata: { name: "web" },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: "web" } },
        template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "c", image: "nginx" }] } },
      },
    };
    expect(
      (
        await t.request("POST", "/apis/apps/v1/namespaces/default/replicasets?fieldManager=kubectl-create", {
          body: rs,
        })
      ).status,
    ).toBe(201);
    const pods = await waitUntil(
      async () => {
        const items = (await t.request("GET", "/api/v1/namespaces/default/pods?labelSelector=app%3Dweb")).body
          .items as Doc[];
        return items.length === 1 && items[0].status?.phase === "Running" ? items : undefined;
      },
      { what: "the web pod Running" },
    );
    expect(pods[0].status.phase).toBe("Running");
    expect(managers(pods[0])).toEqual(
      expect.arrayContaining(["kube-controller-manager/Update/", "kubelet/Update/status"]),
    );
    const node = (await t.request("GET", `/api/v1/nodes/${pods[0].spec.nodeName}`)).body;
    expect(managers(node)[0]).toMatch(/^kubelet\/Update\//);
  });
});
