/**
 * The informer and the leader elector on the real client against the embedded API server: real
 * resourceVersions, BOOKMARKs, a genuine 410 for a watch resumed from compacted history, and the
 * server's own 409s on concurrent Lease writes.
 */
import { startTestCluster, type TestCluster, waitUntil } from "capstan-dev/testing";
import type { Lease } from "kubernetes-types/coordination/v1.d.ts";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { KubeClient } from "../../packages/capstan/src/client/resource-client.ts";
import type { ListerWatcher, ResourceKind, WatchOptions } from "../../packages/capstan/src/client/types.ts";
import { DeletedFinalStateUnknown, Informer } from "../../packages/capstan/src/runtime/informer.ts";
import { LeaderElector } from "../../packages/capstan/src/runtime/leader-election.ts";
import { clientListerWatchers, SharedInformerFactory } from "../../packages/capstan/src/runtime/shared-informers.ts";
import { type ConfigMap, ConfigMapKind } from "../client/support/client.ts";

const SecretKind: ResourceKind<ConfigMap> = {
  group: "",
  version: "v1",
  kind: "Secret",
  plural: "secrets",
  namespaced: true,
};
const LeaseKind: ResourceKind<Lease> = {
  group: "coordination.k8s.io",
  version: "v1",
  kind: "Lease",
  plural: "leases",
  namespaced: true,
};

let cluster: TestCluster;
let client: KubeClient;
const stops: AbortController[] = [];
const runs: Promise<void>[] = [];

beforeAll(async () => {
  // A short history makes a 410 reachable with a few writes; frequent bookmarks keep the test short.
  cluster = await startTestCluster({ server: { historySize: 10, bookmarkIntervalMs: 50 } });
  client = await KubeClient.load({ kubeconfig: cluster.kubeconfigPath, env: {} });
});
afterEach(async () => {
  for (const s of stops.splice(0)) s.abort();
  await Promise.all(runs.splice(0));
});
afterAll(async () => {
  await client?.close();
  await cluster?.stop();
});

/** The client's ListerWatcher, with a switch that holds new watches back (a network outage). */
function pausable(inner: ListerWatcher<ConfigMap>) {
  let paused = false;
  let resume: (() => void) | undefined;
  let current: AbortController | undefined;
  return {
    pause() {
      paused = true;
      current?.abort();
    },
    resume() {
      paused = false;
      resume?.();
    },
    lw: {
      list: (o) => inner.list(o),
      async watch(o: WatchOptions) {
        if (paused) await new Promise<void>((r) => (resume = r));
        current = new AbortController();
        const signals = [current.signal, ...(o.signal ? [o.signal] : [])];
        return inner.watch({ ...o, signal: AbortSignal.any(signals) });
      },
    } satisfies ListerWatcher<ConfigMap>,
  };
}

describe("runtime against the embedded API server", () => {
  it("syncs in pages, follows changes, and advances its resume version on BOOKMARKs", async () => {
    const cms = client.resource(ConfigMapKind, "default");
    for (const n of ["p1", "p2", "p3"]) await cms.create({ metadata: { name: n }, data: { v: "1" } });
    const informer = new Informer<ConfigMap>({ listerWatcher: cms, pageSize: 2, labelSelector: "" });
    const seen: string[] = [];
    informer.addEventHandler({
      onAdd: (o) => seen.push(`add ${o.metadata?.name}`),
      onUpdate: (_o, n) => seen.push(`update ${n.metadata?.name} ${n.data?.v}`),
      onDelete: (o) => seen.push(`delete ${o instanceof DeletedFinalStateUnknown ? o.key : o.metadata?.name}`),
    });
    const stop = new AbortController();
    stops.push(stop);
    runs.push(informer.run(stop.signal));
    expect(await informer.waitForSync(stop.signal)).toBe(true);
    expect(informer.store.get("default/p1")).toMatchObject({ kind: "ConfigMap", apiVersion: "v1", data: { v: "1" } });
    await waitUntil(() => informer.phase.phase === "watching", { what: "watching", timeout: 5000 });

    const p1 = await cms.get("p1");
    await cms.update({ ...p1, data: { v: "2" } });
    await cms.delete("p2");
    await waitUntil(() => seen.includes("delete p2"), { what: "the watched delete", timeout: 5000 });
    expect(seen).toContain("update p1 2");

    // A write to another kind moves the server's resourceVersion; only a BOOKMARK can tell us.
    const secret = await client.resource(SecretKind, "default").create({ metadata: { name: "bump" } });
    await waitUntil(() => informer.lastSyncResourceVersion === secret.metadata?.resourceVersion, {
      what: "a bookmark at the secret's version",
      timeout: 5000,
    });
    for (const n of ["p1", "p3"]) await cms.delete(n);
    await client.resource(SecretKind, "default").delete("bump");
  });

  it("re-lists after the server answers 410 to a watch resumed from compacted history, and emits what it missed", async () => {
    const cms = client.resource(ConfigMapKind, "default");
    await cms.create({ metadata: { name: "stays" }, data: { v: "1" } });
    await cms.create({ metadata: { name: "goes" }, data: { v: "1" } });
    const { lw, pause, resume } = pausable(cms);
    const informer = new Informer<ConfigMap>({ listerWatcher: lw, backoff: { initial: 1, max: 10, random: () => 0 } });
    const seen: string[] = [];
    informer.addEventHandler({
      onAdd: (o) => seen.push(`add ${o.metadata?.name}`),
      onUpdate: (_o, n) => seen.push(`update ${n.metadata?.name} ${n.data?.v}`),
      onDelete: (o) =>
        seen.push(o instanceof DeletedFinalStateUnknown ? `tombstone ${o.key}` : `delete ${o.metadata?.name}`),
    });
    const stop = new AbortController();
    stops.push(stop);
    runs.push(informer.run(stop.signal));
    await informer.waitForSync(stop.signal);
    await waitUntil(() => informer.phase.phase === "watching", { what: "watching", timeout: 5000 });

    pause();
    const stays = await cms.get("stays");
    await cms.update({ ...stays, data: { v: "2" } });
    await cms.delete("goes");
    await cms.create({ metadata: { name: "new" } });
    // More writes than the history keeps, so the informer's version is compacted away.
    for (let i = 0; i < 12; i++) await cms.create({ metadata: { name: `filler-${i}` } });
    resume();

    await waitUntil(() => seen.includes("tombstone default/goes"), { what: "the relist", timeout: 10_000 });
    expect(seen).toContain("update stays 2");
    expect(seen).toContain("add new");
    expect(informer.store.get("default/goes")).toBeUndefined();

    await cms.deleteCollection({});
  });

  it("keeps only metadata in a metadata-only informer from the shared factory", async () => {
    const cms = client.resource(ConfigMapKind, "default");
    await cms.create({ metadata: { name: "meta-only", labels: { app: "x" } }, data: { big: "payload" } });
    const factory = new SharedInformerFactory({ listerWatcherFor: clientListerWatchers(client) });
    const informer = factory.informerFor(ConfigMapKind, { namespace: "default", metadataOnly: true });
    const stop = new AbortController();
    stops.push(stop);
    runs.push(factory.start(stop.signal));
    expect(await factory.waitForCacheSync(stop.signal)).toBe(true);
    const cached = informer.store.get("default/meta-only") as ConfigMap;
    expect(cached.metadata?.labels).toEqual({ app: "x" });
    expect(cached.data).toBeUndefined();
    await cms.delete("meta-only");
    await waitUntil(() => informer.store.get("default/meta-only") === undefined, {
      what: "the watched delete",
      timeout: 5000,
    });
  });

  it("hands a Lease over between two electors using the server's optimistic concurrency", async () => {
    const leases = client.resource(LeaseKind, "default");
    const leaders: string[] = [];
    const electors = ["alpha", "beta"].map((identity) => {
      const stop = new AbortController();
      stops.push(stop);
      const elector = new LeaderElector({
        leases,
        namespace: "default",
        name: "runtime-e2e",
        identity,
        leaseDuration: "1s",
        renewDeadline: 500,
        retryPeriod: 50,
        onStartedLeading: () => {
          leaders.push(identity);
        },
      });
      const run = elector.run(stop.signal);
      runs.push(run);
      return { identity, elector, stop, run };
    });
    await waitUntil(() => leaders.length === 1, { what: "a leader", timeout: 5000 });
    const first = electors.find((e) => e.identity === leaders[0])!;
    const second = electors.find((e) => e !== first)!;
    first.stop.abort();
    await first.run;
    const released = await leases.get("runtime-e2e");
    expect(released.spec?.holderIdentity ?? "").toBe("");
    await waitUntil(() => leaders.length === 2, { what: "the hand-over", timeout: 5000 });
    expect(leaders[1]).toBe(second.identity);
    expect((await leases.get("runtime-e2e")).spec).toMatchObject({
      holderIdentity: second.identity,
      leaseTransitions: 1,
    });
  });
});
