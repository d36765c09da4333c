/**
 * The client against the embedded API server: real REST semantics (resourceVersions, conflicts, status
 * codes, server-side apply, watch history) rather than a scripted test server.
 */
import { startTestCluster, type TestCluster } from "capstan-dev/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ApiError,
  isAlreadyExists,
  isConflict,
  isGone,
  isInvalid,
  isNotFound,
} from "../../packages/capstan/src/client/errors.ts";
import { KubeClient } from "../../packages/capstan/src/client/resource-client.ts";
import type { WatchEvent } from "../../packages/capstan/src/client/types.ts";
import { type ConfigMap, ConfigMapKind } from "./support/client.ts";

let cluster: TestCluster;
let client: KubeClient;
const codes: string[] = [];

beforeAll(async () => {
  // A short watch history so that a forced 410 needs only a few writes.
  cluster = await startTestCluster({ server: { historySize: 20 } });
  // A client of its own (not cluster.client): the test records every response code it sees.
  client = await KubeClient.load({
    kubeconfig: cluster.kubeconfigPath,
    env: {},
    onResponse: (m, c) => codes.push(`${m} ${c}`),
  });
});
afterAll(async () => {
  await client?.close();
  await cluster?.stop();
});

const ns = "default";

describe("client against the embedded API server", () => {
  it("creates, reads, updates, patches and deletes a ConfigMap with real resourceVersion semantics", async () => {
    const cms = client.resource(ConfigMapKind, ns);
    const created = await cms.create({ metadata: { name: "e2e-crud" }, data: { a: "1" } });
    expect(created.metadata?.resourceVersion).toBeTruthy();
    expect(await cms.get("e2e-crud")).toMatchObject({ data: { a: "1" } });

    const updated = await cms.update({ ...created, data: { a: "2" } });
    expect(updated.metadata?.resourceVersion).not.toBe(created.metadata?.resourceVersion);
    const stale = await cms.update({ ...created, data: { a: "3" } }).catch((e: unknown) => e);
    expect(isConflict(stale)).toBe(true);

    const patched = await cms.patch("e2e-crud", { data: { b: "x" } }, { type: "merge" });
    expect(patched.data).toEqual({ a: "2", b: "x" });
    const jsonPatched = await cms.patch("e2e-crud", [{ op: "replace", path: "/data/a", value: "j" }], { type: "json" });
    expect(jsonPatched.data?.a).toBe("j");

    // Server-side apply is checked on the wire in resource-client.test.ts: the embedded server does not
    // serve application/apply-patch+yaml yet (its part 2).

    await cms.delete("e2e-crud");
    expect(isNotFound(await cms.get("e2e-crud").catch((e: unknown) => e))).toBe(true);
  });

  it("maps the server's errors: AlreadyExists, NotFound, Invalid with the field named", async () => {
    const cms = client.resource(ConfigMapKind, ns);
    await cms.create({ metadata: { name: "e2e-dup" } });
    expect(isAlreadyExists(await cms.create({ metadata: { name: "e2e-dup" } }).catch((e: unknown) => e))).toBe(true);
    expect(isNotFound(await cms.delete("e2e-nope").catch((e: unknown) => e))).toBe(true);
    const invalid = await cms.create({ metadata: { name: "Not_Valid" } }).catch((e: unknown) => e);
    expect(isInvalid(invalid)).toBe(true);
    expect((invalid as ApiError).status.details?.causes?.some((c) => c.field === "metadata.name")).toBe(true);
    await cms.delete("e2e-dup");
  });

  it("pages a list with limit and continue through listAll", async () => {
    const cms = client.resource(ConfigMapKind, "kube-public");
    for (let i = 0; i < 5; i++) await cms.create({ metadata: { name: `e2e-page-${i}` } });
    const names: string[] = [];
    for await (const o of cms.listAll({ limit: 2 })) names.push(o.metadata!.name!);
    expect(names.filter((n) => n.startsWith("e2e-page-")).sort()).toEqual([0, 1, 2, 3, 4].map((i) => `e2e-page-${i}`));
    expect(codes.filter((c) => c === "GET 200").length).toBeGreaterThanOrEqual(3);
    await cms.deleteCollection({ labelSelector: "" });
  });

  it("watches from a list's resourceVersion and sees every change in order", async () => {
    const cms = client.resource(ConfigMapKind, ns);
    const list = await cms.list();
    const ac = new AbortController();
    const watch = await cms.watch({ resourceVersion: list.metadata.resourceVersion, signal: ac.signal });
    const seen: string[] = [];
    const done = (async () => {
      for await (const e of watch as AsyncIterable<WatchEvent<ConfigMap>>) {
        if (!e.object.metadata?.name?.startsWith("e2e-watch")) continue;
        seen.push(`${e.type} ${e.object.metadata.name}`);
        if (seen.length === 3) ac.abort();
      }
    })();
    await cms.create({ metadata: { name: "e2e-watch" }, data: { v: "1" } });
    await cms.patch("e2e-watch", { data: { v: "2" } }, { type: "merge" });
    await cms.delete("e2e-watch");
    await done;
    expect(seen).toEqual(["ADDED e2e-watch", "MODIFIED e2e-watch", "DELETED e2e-watch"]);
  });

  it("reports a resourceVersion older than the server's history as Gone (410)", async () => {
    const cms = client.resource(ConfigMapKind, ns);
    const first = await cms.create({ metadata: { name: "e2e-old" } });
    for (let i = 0; i < 30; i++) await cms.patch("e2e-old", { data: { i: String(i) } }, { type: "merge" });
    let err: unknown;
    try {
      const watch = await cms.watch({ resourceVersion: first.metadata?.resourceVersion });
      for await (const _ of watch) {
        // the first thing to arrive must be the 410
      }
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ApiError);
    expect(isGone(err)).toBe(true);
    await cms.delete("e2e-old");
  });

  it("lists and gets metadata only through the metadata view", async () => {
    const cms = client.resource(ConfigMapKind, ns);
    await cms.create({ metadata: { name: "e2e-meta", labels: { a: "b" } }, data: { big: "x".repeat(1000) } });
    const meta = client.metadata(ConfigMapKind, ns);
    const got = await meta.get("e2e-meta");
    expect(got).toMatchObject({ kind: "PartialObjectMetadata", metadata: { name: "e2e-meta", labels: { a: "b" } } });
    expect(got).not.toHaveProperty("data");
    const list = await meta.list({ labelSelector: "a=b" });
    expect(list.items.map((i) => i.metadata.name)).toEqual(["e2e-meta"]);
    expect(list.items[0]).not.toHaveProperty("data");
    await cms.delete("e2e-meta");
  });

  it("finds kinds it has no definition for through discovery", async () => {
    await expect(client.kindFor("v1", "ConfigMap")).resolves.toMatchObject({ plural: "configmaps", namespaced: true });
    await expect(client.kindFor("coordination.k8s.io/v1", "Lease")).resolves.toMatchObject({ plural: "leases" });
  });
});
