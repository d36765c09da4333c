/**
 * Write conflicts worded as kube-apiserver 1.32 words them. A DELETE's preconditions are checked by
 * rest.BeforeDelete, which names the object by kind; an update's metadata.uid is a storage
 * precondition (DefaultUpdatedObjectInfo), refused with the StorageError naming the etcd key; a stale
 * resourceVersion is the registry's optimistic-lock Conflict.
 */
import { describe, expect, it } from "vitest";
import { fileFixture } from "../support/file-fixture.ts";
import { configMap, startRawHttpCluster } from "./support/http.ts";

const CMS = "/api/v1/namespaces/default/configmaps";
const t = fileFixture(() => startRawHttpCluster());

function conflictStatus(message: string, details: Record<string, string>) {
  return {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message,
    reason: "Conflict",
    details,
    code: 409,
  };
}

describe("DELETE preconditions", () => {
  it("refuses a uid or resourceVersion the object does not have, naming it by kind", async () => {
    const created = (await t.request("POST", CMS, { body: configMap("del-pre") })).body;
    const { uid, resourceVersion } = created.metadata;
    const byUid = await t.request("DELETE", `${CMS}/del-pre`, { body: { preconditions: { uid: "not-the-uid" } } });
    expect(byUid.body).toEqual(
      conflictStatus(
        `Operation cannot be fulfilled on ConfigMap "del-pre": the UID in the precondition (not-the-uid) does not match the UID in record (${uid}). The object might have been deleted and then recreated`,
        { name: "del-pre", kind: "ConfigMap" },
      ),
    );
    const byRv = await t.request("DELETE", `${CMS}/del-pre`, { body: { preconditions: { resourceVersion: "1" } } });
    expect(byRv.body).toEqual(
      conflictStatus(
        `Operation cannot be fulfilled on ConfigMap "del-pre": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (${resourceVersion}). The object might have been modified`,
        { name: "del-pre", kind: "ConfigMap" },
      ),
    );
    const both = await t.request("DELETE", `${CMS}/del-pre`, { body: { preconditions: { uid, resourceVersion } } });
    expect(both.status).toBe(200);
  });

  it("qualifies the kind by its group, and reads null preconditions as unset", async () => {
    const deployments = "/apis/apps/v1/namespaces/default/deployments";
    const body = {
      metadata: { name: "del-pre-apps" },
      spec: {
        selector: { matchLabels: { app: "x" } },
        template: { metadata: { labels: { app: "x" } }, spec: { containers: [{ name: "c", image: "x:1" }] } },
      },
    };
    const created = (await t.request("POST", deployments, { body })).body;
    const res = await t.request("DELETE", `${deployments}/del-pre-apps`, { body: { preconditions: { uid: "u" } } });
    expect(res.body).toEqual(
      conflictStatus(
        `Operation cannot be fulfilled on Deployment.apps "del-pre-apps": the UID in the precondition (u) does not match the UID in record (${created.metadata.uid}). The object might have been deleted and then recreated`,
        { name: "del-pre-apps", group: "apps", kind: "Deployment" },
      ),
    );
    const unset = await t.request("DELETE", `${deployments}/del-pre-apps`, {
      body: { preconditions: { uid: null, resourceVersion: null } },
    });
    expect(unset.status).toBe(200);
  });

  it("answers NotFound before looking at preconditions", async () => {
    const res = await t.request("DELETE", `${CMS}/del-pre-missing`, { body: { preconditions: { uid: "u" } } });
    expect([res.status, res.body.reason]).toEqual([404, "NotFound"]);
  });
});

describe("update conflicts", () => {
  it("refuses a body whose uid is not the object's with the storage's precondition error, before its resourceVersion", async () => {
    const created = (await t.request("POST", CMS, { body: configMap("put-uid") })).body;
    const stale = { ...created, metadata: { ...created.metadata, uid: "other-uid", resourceVersion: "1" } };
    const res = await t.request("PUT", `${CMS}/put-uid`, { body: stale });
    expect(res.body).toEqual(
      conflictStatus(
        `Operation cannot be fulfilled on configmaps "put-uid": StorageError: invalid object, Code: 4, Key: /registry/configmaps/default/put-uid, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: other-uid, UID in object meta: ${created.metadata.uid}`,
        { name: "put-uid", kind: "configmaps" },
      ),
    );
    const same = await t.request("PUT", `${CMS}/put-uid`, { body: { ...created, data: { b: "2" } } });
    expect([same.status, same.body.data]).toEqual([200, { b: "2" }]);
  });

  it.each([
    ["/api/v1/namespaces/default/services", "/registry/services/specs/default/"],
    ["/api/v1/namespaces", "/registry/namespaces/"],
    ["/apis/rbac.authorization.k8s.io/v1/clusterroles", "/registry/clusterroles/"],
  ])("names the etcd key of %s objects", async (collection, keyPrefix) => {
    const name = `put-uid-${collection.split("/").pop()}`;
    const body: Record<string, unknown> = { metadata: { name } };
    if (collection.endsWith("services")) body["spec"] = { ports: [{ port: 80 }] };
    const created = (await t.request("POST", collection, { body })).body;
    const res = await t.request("PUT", `${collection}/${name}`, {
      body: { ...created, metadata: { ...created.metadata, uid: "other-uid" } },
    });
    expect(res.status, res.text).toBe(409);
    expect(res.body.message).toContain(`, Key: ${keyPrefix}${name}, ResourceVersion: 0, AdditionalErrorMsg:`);
  });

  it("refuses a stale resourceVersion with the optimistic-lock Conflict", async () => {
    const created = (await t.request("POST", CMS, { body: configMap("put-stale") })).body;
    await t.request("PUT", `${CMS}/put-stale`, { body: { ...created, data: { a: "1" } } });
    const res = await t.request("PUT", `${CMS}/put-stale`, { body: { ...created, data: { a: "2" } } });
    expect(res.body).toEqual(
      conflictStatus(
        'Operation cannot be fulfilled on configmaps "put-stale": the object has been modified; please apply your changes to the latest version and try again',
        { name: "put-stale", kind: "configmaps" },
      ),
    );
  });
});
