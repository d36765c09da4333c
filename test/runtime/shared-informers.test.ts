import { waitUntil } from "capstan-dev/testing";
import { afterEach, describe, expect, it } from "vitest";
import type { ResourceKind } from "../../packages/capstan/src/client/types.ts";
import { clientListerWatchers, SharedInformerFactory } from "../../packages/capstan/src/runtime/shared-informers.ts";
import { FakeListerWatcher, type TestObject } from "./support/fake-lister-watcher.ts";

const ConfigMap: ResourceKind<TestObject> = {
  group: "",
  version: "v1",
  kind: "ConfigMap",
  plural: "configmaps",
  namespaced: true,
};
const Secret: ResourceKind<TestObject> = {
  group: "",
  version: "v1",
  kind: "Secret",
  plural: "secrets",
  namespaced: true,
};

const stops: AbortController[] = [];
afterEach(() => {
  for (const s of stops.splice(0)) s.abort();
});

function factory() {
  const made: { kind: string; namespace?: string; metadataOnly: boolean; api: FakeListerWatcher }[] = [];
  const f = new SharedInformerFactory({
    listerWatcherFor: (kind, scope) => {
      const api = new FakeListerWatcher();
      made.push({ kind: kind.kind, ...scope, api });
      return api as never;
    },
  });
  return { f, made };
}

describe("SharedInformerFactory", () => {
  it("returns one informer, with one list/watch, for two requests of the same kind and scope", () => {
    const { f, made } = factory();
    const first = f.informerFor(ConfigMap, { namespace: "ns", labelSelector: "app=x" });
    const second = f.informerFor(ConfigMap, { labelSelector: "app=x", namespace: "ns" });
    expect(second).toBe(first);
    expect(made).toHaveLength(1);
    expect(f.all()).toHaveLength(1);
  });

  it("keeps separate informers per kind, namespace, selectors and metadata-only mode", () => {
    const { f, made } = factory();
    const base = f.informerFor(ConfigMap);
    const others = [
      f.informerFor(Secret),
      f.informerFor(ConfigMap, { namespace: "other" }),
      f.informerFor(ConfigMap, { labelSelector: "a=b" }),
      f.informerFor(ConfigMap, { fieldSelector: "metadata.name=x" }),
      f.informerFor(ConfigMap, { metadataOnly: true }),
    ];
    expect(new Set([base, ...others]).size).toBe(6);
    expect(made.find((m) => m.metadataOnly)?.kind).toBe("ConfigMap");
    expect(made.filter((m) => m.namespace === "other")).toHaveLength(1);
    // An empty namespace means all namespaces, the same informer as no namespace.
    expect(f.informerFor(ConfigMap, { namespace: "" })).toBe(base);
  });

  it("starts every informer, including ones requested after start, and stops them all", async () => {
    const { f, made } = factory();
    const early = f.informerFor(ConfigMap);
    const stop = new AbortController();
    stops.push(stop);
    const running = f.start(stop.signal);
    expect(await f.waitForCacheSync()).toBe(true);
    expect(early.hasSynced()).toBe(true);
    const late = f.informerFor(Secret);
    expect(await f.waitForCacheSync()).toBe(true);
    expect(late.hasSynced()).toBe(true);
    await waitUntil(() => made.every((m) => m.api.openWatches === 1), { what: "watches", timeout: 2000 });
    stop.abort();
    await running;
    expect(made.map((m) => m.api.openWatches)).toEqual([0, 0]);
    expect(early.phase.phase).toBe("stopped");
    expect(late.phase.phase).toBe("stopped");
  });

  it("builds ListerWatchers from a client: the resource view, or the metadata view in metadata-only mode", () => {
    const calls: string[] = [];
    const lw = new FakeListerWatcher();
    const factoryFn = clientListerWatchers({
      resource: (kind, ns) => {
        calls.push(`resource ${kind.kind} ${ns ?? "*"}`);
        return lw as never;
      },
      metadata: (kind, ns) => {
        calls.push(`metadata ${kind.kind} ${ns ?? "*"}`);
        return lw as never;
      },
    });
    const f = new SharedInformerFactory({ listerWatcherFor: factoryFn });
    f.informerFor(ConfigMap, { namespace: "ns" });
    f.informerFor(Secret, { metadataOnly: true });
    expect(calls).toEqual(["resource ConfigMap ns", "metadata Secret *"]);
  });
});
