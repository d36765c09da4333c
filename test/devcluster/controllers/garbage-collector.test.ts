import { startTestCluster, waitUntil } from "capstan-dev/testing";
import { describe, expect, it } from "vitest";
import { fileFixture } from "../../support/file-fixture.ts";
import { exchangeRateCrd, http } from "../kubectl/support/cluster.ts";

const cluster = fileFixture(() => startTestCluster());

type Obj = {
  metadata: {
    name: string;
    uid: string;
    finalizers?: string[];
    deletionTimestamp?: string;
    ownerReferences?: unknown[];
  };
};

async function createCm(name: string, extra: Record<string, unknown> = {}): Promise<Obj> {
  const res = await http(cluster, "POST", "/api/v1/namespaces/default/configmaps", {
    metadata: { name, ...extra },
    data: { k: "v" },
  });
  expect(res.status, res.text).toBe(201);
  return res.body as Obj;
}

const ownedBy = (owner: Obj, extra: Record<string, unknown> = {}) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  name: owner.metadata.name,
  uid: owner.metadata.uid,
  ...extra,
});

const get = (name: string) => http(cluster, "GET", `/api/v1/namespaces/default/configmaps/${name}`);
const gone = (name: string) => async () => (await get(name)).status === 404;

describe("garbage collector", () => {
  it("deletes dependents after their owner is deleted in the background", async () => {
    const owner = await createCm("bg-owner");
    await createCm("bg-child", { ownerReferences: [ownedBy(owner)] });
    const del = await http(cluster, "DELETE", "/api/v1/namespaces/default/configmaps/bg-owner");
    expect(del.status).toBe(200);
    await waitUntil(gone("bg-child"));
  });

  it("keeps a foreground-deleted owner until its blocking dependents are gone", async () => {
    const owner = await createCm("fg-owner");
    // The dependent has a finalizer of its own, so it cannot go until the test removes it.
    await createCm("fg-child", {
      ownerReferences: [ownedBy(owner, { blockOwnerDeletion: true })],
      finalizers: ["example.com/hold"],
    });
    const del = await http(cluster, "DELETE", "/api/v1/namespaces/default/configmaps/fg-owner", {
      propagationPolicy: "Foreground",
    });
    expect(del.status).toBe(200);
    const child = await waitUntil(async () => {
      const res = await get("fg-child");
      const body = res.body as Obj;
      return body.metadata.deletionTimestamp ? body : undefined;
    });
    expect(child.metadata.finalizers).toEqual(["example.com/hold"]);
    const ownerNow = (await get("fg-owner")).body as Obj;
    expect(ownerNow.metadata.deletionTimestamp).toBeDefined();
    expect(ownerNow.metadata.finalizers).toContain("foregroundDeletion");

    const release = await http(
      cluster,
      "PATCH",
      "/api/v1/namespaces/default/configmaps/fg-child",
      [{ op: "remove", path: "/metadata/finalizers" }],
      "application/json-patch+json",
    );
    expect(release.status, release.text).toBe(200);
    await waitUntil(gone("fg-child"));
    await waitUntil(gone("fg-owner"));
  });

  it("orphans dependents: their reference to the owner is removed and they stay", async () => {
    const owner = await createCm("orphan-owner");
    const other = await createCm("orphan-other-owner");
    await createCm("orphan-child", { ownerReferences: [ownedBy(owner), ownedBy(other)] });
    const del = await http(cluster, "DELETE", "/api/v1/namespaces/default/configmaps/orphan-owner", {
      propagationPolicy: "Orphan",
    });
    expect(del.status).toBe(200);
    await waitUntil(gone("orphan-owner"));
    const child = (await get("orphan-child")).body as Obj;
    expect(child.metadata.ownerReferences).toEqual([ownedBy(other)]);
  });

  it("collects a dependent whose owner reference points at a uid that does not exist", async () => {
    await createCm("dangling-owner"); // same name, other uid
    await createCm("dangling-child", {
      ownerReferences: [
        { apiVersion: "v1", kind: "ConfigMap", name: "dangling-owner", uid: "6ee5e7f8-0000-4000-8000-000000000000" },
      ],
    });
    await waitUntil(gone("dangling-child"));
    expect((await get("dangling-owner")).status).toBe(200);
  });

  it("keeps a dependent that still has a solid owner and drops its dangling reference", async () => {
    const solid = await createCm("mixed-solid");
    const danglingRef = {
      apiVersion: "v1",
      kind: "ConfigMap",
      name: "never-was",
      uid: "0d7a3c9e-0000-4000-8000-000000000000",
    };
    await createCm("mixed-child", { ownerReferences: [ownedBy(solid), danglingRef] });
    const child = await waitUntil(async () => {
      const body = (await get("mixed-child")).body as Obj;
      return body.metadata.ownerReferences?.length === 1 ? body : undefined;
    });
    expect(child.metadata.ownerReferences).toEqual([ownedBy(solid)]);
  });

  it("collects dependents of a cluster-scoped owner across namespaces", async () => {
    const ns = await http(cluster, "POST", "/api/v1/namespaces", { metadata: { name: "gc-owner-ns" } });
    expect(ns.status).toBe(201);
    const owner = ns.body as Obj;
    await createCm("ns-owned", {
      ownerReferences: [{ apiVersion: "v1", kind: "Namespace", name: "gc-owner-ns", uid: owner.metadata.uid }],
    });
    await http(cluster, "DELETE", "/api/v1/namespaces/gc-owner-ns");
    await waitUntil(gone("ns-owned"));
  });

  it("collects the dependents of custom objects when their CRD is deleted", async () => {
    const crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    expect((await http(cluster, "POST", crds, exchangeRateCrd())).status).toBe(201);
    const base = "/apis/operators.example.com/v1/namespaces/default/exchangerates";
    const created = await waitUntil(async () => {
      const res = await http(cluster, "POST", base, {
        apiVersion: "operators.example.com/v1",
        kind: "ExchangeRate",
        metadata: { name: "usd" },
        spec: { currency: "USD" },
      });
      return res.status === 201 ? (res.body as Obj) : undefined;
    });
    await createCm("usd-rate", {
      ownerReferences: [
        { apiVersion: "operators.example.com/v1", kind: "ExchangeRate", name: "usd", uid: created.metadata.uid },
      ],
    });
    expect((await http(cluster, "DELETE", `${crds}/exchangerates.operators.example.com`)).status).toBe(200);
    await waitUntil(
      async () => (await http(cluster, "GET", `${crds}/exchangerates.operators.example.com`)).status === 404,
    );
    await waitUntil(gone("usd-rate"));
  });

  it("indexes objects already stored for a resource that starts being served later (data from before a restart)", async () => {
    // A stored custom object whose owner does not exist, written before its CRD is served.
    const stored = {
      apiVersion: "restart.example.com/v1",
      kind: "ExchangeRate",
      metadata: {
        name: "orphaned",
        namespace: "default",
        uid: "5b0c1f3e-0000-4000-8000-000000000001",
        creationTimestamp: "2026-01-01T00:00:00Z",
        ownerReferences: [
          { apiVersion: "v1", kind: "ConfigMap", name: "gone", uid: "5b0c1f3e-0000-4000-8000-000000000002" },
        ],
      },
      spec: { currency: "USD" },
    };
    await cluster.server.internals.storage.create("restart.example.com/exchangerates", "default/orphaned", (rev) =>
      JSON.stringify({ ...stored, metadata: { ...stored.metadata, resourceVersion: String(rev) } }),
    );
    const crd = exchangeRateCrd({ group: "restart.example.com" });
    expect((await http(cluster, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)).status).toBe(
      201,
    );
    const path = "/apis/restart.example.com/v1/namespaces/default/exchangerates/orphaned";
    await waitUntil(async () => (await http(cluster, "GET", "/apis/restart.example.com/v1")).status === 200);
    await waitUntil(async () => (await http(cluster, "GET", path)).status === 404);
  });
});
