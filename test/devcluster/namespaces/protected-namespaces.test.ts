/**
 * The namespaces kube-apiserver's NamespaceLifecycle admission keeps alive (default, kube-system,
 * kube-public) answer a delete with 403 Forbidden, and namespaces have no deletecollection at all
 * (their storage dropped it, kubernetes#46407): a DELETE on the collection is go-restful's 405.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RawHttpCluster, startRawHttpCluster } from "../support/http.ts";

let t: RawHttpCluster;

beforeAll(async () => {
  t = await startRawHttpCluster({ kubelet: false });
});
afterAll(async () => {
  await t.stop();
});

describe("protected namespaces", () => {
  for (const name of ["default", "kube-system", "kube-public"]) {
    it(`refuses to delete ${name} with 403 and the admission plugin's Status, dry run or not`, async () => {
      for (const query of ["", "?dryRun=All"]) {
        const res = await t.request("DELETE", `/api/v1/namespaces/${name}${query}`);
        expect(res.status).toBe(403);
        expect(res.body).toEqual({
          kind: "Status",
          apiVersion: "v1",
          metadata: {},
          status: "Failure",
          message: `namespaces "${name}" is forbidden: this namespace may not be deleted`,
          reason: "Forbidden",
          details: { name, kind: "namespaces" },
          code: 403,
        });
      }
      const ns = await t.request("GET", `/api/v1/namespaces/${name}`);
      expect(ns.status).toBe(200);
      expect(ns.body.metadata.deletionTimestamp).toBeUndefined();
    });
  }

  it("deletes other namespaces, kube-node-lease included", async () => {
    expect((await t.request("POST", "/api/v1/namespaces", { body: { metadata: { name: "mortal" } } })).status).toBe(
      201,
    );
    expect((await t.request("DELETE", "/api/v1/namespaces/mortal")).status).toBe(200);
    const lease = await t.request("DELETE", "/api/v1/namespaces/kube-node-lease?dryRun=All");
    expect(lease.status, lease.text).toBe(200);
  });

  it("has no deletecollection: DELETE on the collection is 405 and deletes nothing", async () => {
    const res = await t.request("DELETE", "/api/v1/namespaces");
    expect(res.status).toBe(405);
    expect(res.body).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: "the server does not allow this method on the requested resource",
      reason: "MethodNotAllowed",
      details: {},
      code: 405,
    });
    const list = await t.request("GET", "/api/v1/namespaces");
    const names = list.body.items.map((ns: { metadata: { name: string } }) => ns.metadata.name);
    expect(names).toEqual(expect.arrayContaining(["default", "kube-system", "kube-public", "kube-node-lease"]));
  });

  it("does not list deletecollection among the namespaces verbs in discovery", async () => {
    const res = await t.request("GET", "/api/v1");
    const namespaces = res.body.resources.find((r: { name: string }) => r.name === "namespaces");
    expect(namespaces.verbs).toEqual(["create", "delete", "get", "list", "patch", "update", "watch"]);
  });
});
