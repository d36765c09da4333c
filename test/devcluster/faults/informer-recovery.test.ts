/**
 * The runtime's informer (src/runtime) against a hostile devcluster: watches dropped every 200 ms,
 * about 10% of requests failing with 500 or 429, and a compaction midway. It must still converge to
 * exactly the server's state. The writes go through the in-process API, so only the informer (and its
 * client) suffers the faults.
 */
import { startTestCluster, type TestCluster, waitUntil } from "capstan-dev/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { KubeClient } from "../../../packages/capstan/src/client/resource-client.ts";
import { Informer } from "../../../packages/capstan/src/runtime/informer.ts";
import { type ConfigMap, ConfigMapKind } from "../../client/support/client.ts";

const CM_REF = { group: "", version: "v1", plural: "configmaps" };

let cluster: TestCluster;
let server: TestCluster["server"];
let client: KubeClient;
let stop: AbortController;
const runs: Promise<void>[] = [];

beforeEach(async () => {
  stop = new AbortController();
  cluster = await startTestCluster({ server: { builtinPlugins: false, bookmarkIntervalMs: 100 } });
  server = cluster.server;
  client = await KubeClient.load({
    kubeconfig: cluster.kubeconfigPath,
    env: {},
    retry: { baseDelayMs: 1, maxDelayMs: 20 },
  });
});
afterEach(async () => {
  stop.abort();
  await Promise.all(runs.splice(0));
  await client.close();
  await cluster.stop();
});

/** `name@resourceVersion` of every ConfigMap in "default", sorted: what "the same state" means. */
function serverState(): string[] {
  return server.internals.api
    .list(CM_REF, "default")
    .items.map((o) => `${o.metadata?.name}@${o.metadata?.resourceVersion}`)
    .sort();
}

describe("an informer under injected faults", () => {
  it("converges to the server's state despite watches dropped every 200 ms and 10% of requests failing", async () => {
    const api = server.internals.api;
    for (let i = 0; i < 20; i++)
      await api.create(CM_REF, "default", { metadata: { name: `cm-${i}` }, data: { v: "0" } });

    const faults = server.faults;
    faults.seed(42);
    faults.dropWatchesEvery(200);
    // 5% + 95% x 5.26% = 10% of requests fail, half with each code.
    faults.failFraction(0.05, { code: 500 });
    faults.failFraction(0.05 / 0.95, { code: 429, retryAfterSeconds: 0 });

    // Three informers (different page sizes) triple the requests the faults can hit.
    const informers = [5, 7, 50].map(
      (pageSize) =>
        new Informer<ConfigMap>({
          listerWatcher: client.resource(ConfigMapKind, "default"),
          pageSize, // several pages per list, so continue requests are failed too
          backoff: { initial: 10, max: 100 },
        }),
    );
    runs.push(...informers.map((informer) => informer.run(stop.signal)));
    for (const informer of informers) expect(await informer.waitForSync(stop.signal)).toBe(true);
    const informerState = (informer: Informer<ConfigMap>) =>
      informer.store
        .list()
        .map((o) => `${o.metadata?.name}@${o.metadata?.resourceVersion}`)
        .sort();

    // Keep writing while the faults hit: updates, deletions, creations, and one compaction midway.
    for (let round = 1; round <= 20; round++) {
      for (let i = round % 3; i < 20; i += 3) {
        const name = `cm-${i}`;
        if (round % 4 === 0 && i % 2 === 0) await api.deleteIfExists(CM_REF, "default", name);
        else if (!api.tryGet(CM_REF, "default", name)) {
          await api.create(CM_REF, "default", { metadata: { name }, data: { v: String(round) } });
        } else await api.modify(CM_REF, "default", name, (o) => ({ ...o, data: { v: String(round) } }));
      }
      if (round === 10) faults.compact();
      await new Promise((r) => setTimeout(r, 100));
    }

    for (const informer of informers) {
      await waitUntil(() => informerState(informer).join() === serverState().join(), {
        timeout: 20_000,
        what: () =>
          `informer ${informerState(informer).join()} / server ${serverState().join()}; ${JSON.stringify(faults.counts)}`,
      });
    }
    const counts = faults.counts;
    expect(counts.watchesDropped).toBeGreaterThan(3);
    expect(counts.failed500 + counts.failed429).toBeGreaterThan(0);
  }, 40_000);
  it("converges after simulated restarts that drop its connections and expire its resume version", async () => {
    const api = server.internals.api;
    for (let i = 0; i < 5; i++) await api.create(CM_REF, "default", { metadata: { name: `r-${i}` }, data: { v: "0" } });
    const informer = new Informer<ConfigMap>({
      listerWatcher: client.resource(ConfigMapKind, "default"),
      backoff: { initial: 10, max: 100 },
    });
    runs.push(informer.run(stop.signal));
    expect(await informer.waitForSync(stop.signal)).toBe(true);
    const informerState = () =>
      informer.store
        .list()
        .map((o) => `${o.metadata?.name}@${o.metadata?.resourceVersion}`)
        .sort();
    for (let round = 1; round <= 3; round++) {
      await waitUntil(() => informer.phase.phase === "watching", {
        timeout: 10_000,
        what: () => `phase ${informer.phase.phase}`,
      });
      const result = server.faults.restart();
      expect(result.watchesDropped).toBe(1);
      // Changes made while the informer is cut off reach it through its resumed watch, or a relist after a 410.
      await api.deleteIfExists(CM_REF, "default", `r-${round}`);
      await api.modify(CM_REF, "default", "r-0", (o) => ({ ...o, data: { v: String(round) } }));
      await waitUntil(() => informerState().join() === serverState().join(), {
        timeout: 10_000,
        what: () => `round ${round}: informer ${informerState().join()} / server ${serverState().join()}`,
      });
    }
    expect(informer.store.get("default/r-0")?.data).toEqual({ v: "3" });
  }, 40_000);
});
