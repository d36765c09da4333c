import { waitUntil } from "capstan-dev/testing";
import { afterEach, describe, expect, it } from "vitest";
import type { ResourceKind } from "../../packages/capstan/src/client/types.ts";
import type { ObservedWrite, WriteObserver, WriteResult } from "../../packages/capstan/src/client/write-observer.ts";
import { Informer } from "../../packages/capstan/src/runtime/informer.ts";
import type { InformerScope } from "../../packages/capstan/src/runtime/shared-informers.ts";
import { WriteVisibility } from "../../packages/capstan/src/runtime/write-visibility.ts";
import { FakeListerWatcher, type TestObject } from "./support/fake-lister-watcher.ts";

const ConfigMapKind: ResourceKind = {
  group: "",
  version: "v1",
  kind: "ConfigMap",
  plural: "configmaps",
  namespaced: true,
};

const stops: AbortController[] = [];
afterEach(() => {
  for (const s of stops.splice(0)) s.abort();
});

/** A client stand-in whose writes the test reports itself. */
function writer() {
  const observers: WriteObserver[] = [];
  return {
    observeWrites(o: WriteObserver) {
      observers.push(o);
      return () => observers.splice(observers.indexOf(o), 1);
    },
    /** Reports a write from start to end at once. */
    wrote(method: string, path: string, result: WriteResult): void {
      const write: ObservedWrite = { method, path };
      for (const o of observers) o.started?.(write);
      for (const o of observers) o.ended?.(write, result);
    },
    started(method: string, path: string): () => void {
      const write: ObservedWrite = { method, path };
      for (const o of observers) o.started?.(write);
      return () => {
        for (const o of observers) o.ended?.(write, { error: new Error("refused") });
      };
    },
  };
}

async function setUp(scope: InformerScope = {}) {
  const api = new FakeListerWatcher();
  const informer = new Informer<TestObject>({
    listerWatcher: api,
    ...(scope.labelSelector ? { labelSelector: scope.labelSelector } : {}),
  });
  const stop = new AbortController();
  stops.push(stop);
  void informer.run(stop.signal);
  await informer.waitForSync();
  let changes = 0;
  const visibility = new WriteVisibility(
    { entries: () => [{ kind: ConfigMapKind, scope, informer: informer as unknown as Informer }] },
    () => changes++,
  );
  const client = writer();
  visibility.track(client);
  const allSeen = () => waitUntil(() => visibility.busy().length === 0, { what: "every write seen" });
  return { api, informer, visibility, client, allSeen, changes: () => changes };
}

describe("WriteVisibility", () => {
  it("waits until the informer shows the version a write answered, then forgets the write", async () => {
    const { api, visibility, client, allSeen, changes } = await setUp();
    const written = api.upsert("a", { x: "1" });
    client.wrote("PATCH", "/api/v1/namespaces/default/configmaps/a", { body: written });
    // The watch event is still on its way: the informer has not shown it yet.
    expect(visibility.busy()).toEqual([
      `PATCH configmaps default/a (resourceVersion ${written.metadata?.resourceVersion}) not yet seen by informer`,
    ]);
    await allSeen();
    expect(changes()).toBeGreaterThan(0);
  });

  it("takes a DELETE answered with a Status as seen once the object left the cache", async () => {
    const { api, informer, visibility, client, allSeen } = await setUp();
    api.upsert("a");
    await waitUntil(() => informer.store.get("default/a"), { what: "a cached" });
    api.remove("a");
    client.wrote("DELETE", "/api/v1/namespaces/default/configmaps/a", {
      body: { kind: "Status", apiVersion: "v1", status: "Success" },
    });
    expect(visibility.busy()).toHaveLength(1);
    await allSeen();
    expect(informer.store.get("default/a")).toBeUndefined();
  });

  it("takes a write as seen once the informer passed its version, though the object was deleted since", async () => {
    const { api, informer, visibility, client, allSeen } = await setUp();
    api.muted = true;
    const written = api.upsert("a");
    api.remove("a");
    client.wrote("POST", "/api/v1/namespaces/default/configmaps", { body: written });
    expect(visibility.busy()).toHaveLength(1);
    api.muted = false;
    api.upsert("other"); // an event past both: the informer's version moves beyond the write's
    await allSeen();
    expect(informer.store.get("default/a")).toBeUndefined();
  });

  it("follows only writes an informer will see: not other resources, namespaces, selectors, dry runs, failures", async () => {
    const { api, visibility, client } = await setUp({ namespace: "default", labelSelector: "app=web" });
    const outside = api.upsert("b");
    client.wrote("PATCH", "/api/v1/namespaces/default/secrets/b", { body: outside });
    client.wrote("PATCH", "/api/v1/namespaces/other/configmaps/b", {
      body: { ...outside, metadata: { ...outside.metadata, namespace: "other" } },
    });
    client.wrote("PATCH", "/api/v1/namespaces/default/configmaps/b", { body: outside }); // no app=web label
    const labelled = { ...outside, metadata: { ...outside.metadata, labels: { app: "web" } } };
    client.wrote("POST", "/api/v1/namespaces/default/configmaps?dryRun=All", { body: labelled });
    client.wrote("PATCH", "/api/v1/namespaces/default/configmaps/b", { error: new Error("409") });
    expect(visibility.busy()).toEqual([]);
    client.wrote("PATCH", "/api/v1/namespaces/default/configmaps/b", { body: labelled });
    expect(visibility.busy()).toHaveLength(1);
  });

  it("counts a write in flight from its start to its end", async () => {
    const { visibility, client } = await setUp();
    const end = client.started("PUT", "/apis/coordination.k8s.io/v1/namespaces/default/leases/l");
    expect(visibility.busy()).toEqual([
      "write in flight: PUT /apis/coordination.k8s.io/v1/namespaces/default/leases/l",
    ]);
    end();
    expect(visibility.busy()).toEqual([]);
  });
});
