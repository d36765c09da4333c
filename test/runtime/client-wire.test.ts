/**
 * The runtime on the real client, over HTTPS: the informer and the leader elector are written
 * against structural interfaces, and this proves the client's ResourceClient fits them on the wire
 * (list pages, watch query, NDJSON events, a 410 ERROR event, Lease get/create/update with
 * resourceVersion conflicts). The server side is the in-memory fakes behind the test HTTPS server.
 */

import { waitUntil } from "capstan-dev/testing";
import type { Lease } from "kubernetes-types/coordination/v1.d.ts";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { KubeClient } from "../../packages/capstan/src/client/resource-client.ts";
import type { ResourceKind } from "../../packages/capstan/src/client/types.ts";
import { DeletedFinalStateUnknown, Informer } from "../../packages/capstan/src/runtime/informer.ts";
import { LeaderElector } from "../../packages/capstan/src/runtime/leader-election.ts";
import { type ConfigMap, ConfigMapKind, clientFor } from "../client/support/client.ts";
import {
  json,
  type RecordingHttpsServer,
  startRecordingHttpsServer,
  status,
} from "../client/support/recording-https-server.ts";
import { FakeLeases } from "./support/fake-leases.ts";
import { FakeListerWatcher } from "./support/fake-lister-watcher.ts";

const LeaseKind: ResourceKind<Lease> = {
  group: "coordination.k8s.io",
  version: "v1",
  kind: "Lease",
  plural: "leases",
  namespaced: true,
};

let server: RecordingHttpsServer;
let client: KubeClient;
const stops: AbortController[] = [];
const runs: Promise<void>[] = [];

beforeEach(async () => {
  server = await startRecordingHttpsServer();
  client = clientFor(server);
});
afterEach(async () => {
  for (const s of stops.splice(0)) s.abort();
  await Promise.all(runs.splice(0));
  await client.close();
  await server.close();
});

/** Serves GET list/watch of configmaps in `default` from a fake, as the API server would. */
function serveConfigMaps(api: FakeListerWatcher): void {
  server.on("GET", "/api/v1/namespaces/default/configmaps", async (req, res) => {
    const q = req.query;
    if (q.get("watch") !== "true") {
      const limit = q.get("limit");
      json(
        res,
        200,
        await api.list({ limit: limit ? Number(limit) : undefined, continue: q.get("continue") ?? undefined }),
      );
      return;
    }
    const ctl = new AbortController();
    res.on("close", () => ctl.abort());
    let stream: AsyncIterable<unknown>;
    try {
      stream = await api.watch({ resourceVersion: q.get("resourceVersion") ?? undefined, signal: ctl.signal });
    } catch {
      json(res, 410, status(410, "Expired", "too old resource version"));
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    try {
      for await (const event of stream) res.write(`${JSON.stringify(event)}\n`);
    } catch {
      res.write(`${JSON.stringify({ type: "ERROR", object: status(410, "Expired", "too old resource version") })}\n`);
    }
    res.end();
  });
}

/** Serves the Lease endpoints from a fake with the API server's conflict rules. */
function serveLeases(leases: FakeLeases): void {
  const view = leases.view();
  const answer = async (
    res: Parameters<Parameters<RecordingHttpsServer["on"]>[2]>[1],
    call: () => Promise<Lease>,
    code = 200,
  ) => {
    try {
      json(res, code, await call());
    } catch (err) {
      const e = err as { code: number; status: unknown };
      json(res, e.code, e.status);
    }
  };
  const base = "/apis/coordination.k8s.io/v1/namespaces/ops/leases";
  server.on("GET", `${base}/lock`, (_req, res) => answer(res, () => view.get("lock")));
  server.on("POST", base, (req, res) => answer(res, () => view.create(JSON.parse(req.body)), 201));
  server.on("PUT", `${base}/lock`, (req, res) => answer(res, () => view.update(JSON.parse(req.body))));
}

describe("runtime over the real client", () => {
  it("lists in pages, watches with bookmarks from the list's version, and re-lists after a 410 ERROR event", async () => {
    const api = new FakeListerWatcher();
    for (const n of ["a", "b", "c"]) api.upsert(n);
    serveConfigMaps(api);
    const informer = new Informer<ConfigMap>({
      listerWatcher: client.resource(ConfigMapKind, "default"),
      pageSize: 2,
      backoff: { initial: 1, max: 5, random: () => 0 },
    });
    const seen: string[] = [];
    informer.addEventHandler({
      onAdd: (o) => seen.push(`add ${o.metadata?.name}`),
      onUpdate: (_o, n) => seen.push(`update ${n.metadata?.name}`),
      onDelete: (o) =>
        seen.push(o instanceof DeletedFinalStateUnknown ? `tombstone ${o.key}` : `delete ${o.metadata?.name}`),
    });
    const stop = new AbortController();
    stops.push(stop);
    runs.push(informer.run(stop.signal));
    expect(await informer.waitForSync(stop.signal)).toBe(true);
    await waitUntil(() => api.openWatches === 1, { what: "the watch", timeout: 5000 });

    const lists = server.requests.filter((r) => r.path.endsWith("/configmaps") && r.query.get("watch") !== "true");
    expect(lists.map((r) => r.query.get("limit"))).toEqual(["2", "2"]);
    const watch = server.requests.find((r) => r.query.get("watch") === "true")!;
    expect(watch.query.get("allowWatchBookmarks")).toBe("true");
    expect(watch.query.get("resourceVersion")).toBe(api.resourceVersion);
    expect(Number(watch.query.get("timeoutSeconds"))).toBeGreaterThanOrEqual(300);

    api.upsert("d");
    await waitUntil(() => seen.includes("add d"), { what: "the watched add", timeout: 5000 });

    api.muted = true;
    api.remove("a");
    api.compact();
    api.expireWatches();
    await waitUntil(() => seen.includes("tombstone default/a"), { what: "the relist", timeout: 5000 });
    expect(informer.store.keys().sort()).toEqual(["default/b", "default/c", "default/d"]);
  });

  it("elects a leader through the client's Lease get/create/update and hands over on release", async () => {
    const leases = new FakeLeases();
    serveLeases(leases);
    const electors = ["one", "two"].map((identity) => {
      const stop = new AbortController();
      stops.push(stop);
      const elector = new LeaderElector({
        leases: client.resource(LeaseKind, "ops"),
        namespace: "ops",
        name: "lock",
        identity,
        leaseDuration: "1s",
        renewDeadline: 500,
        retryPeriod: 50,
        onStartedLeading: () => {},
      });
      const run = elector.run(stop.signal);
      runs.push(run);
      return { elector, stop, run };
    });
    await waitUntil(() => electors.some((e) => e.elector.state === "leader"), { what: "a leader", timeout: 5000 });
    const leader = electors.find((e) => e.elector.state === "leader")!;
    const other = electors.find((e) => e !== leader)!;
    expect(other.elector.state).toBe("candidate");
    // Renewals are PUTs carrying the resourceVersion that was read.
    await waitUntil(() => server.requests.some((r) => r.method === "PUT"), { what: "a renewal", timeout: 5000 });
    const put = server.requests.find((r) => r.method === "PUT")!;
    expect(JSON.parse(put.body).metadata.resourceVersion).toBeTruthy();

    leader.stop.abort();
    await leader.run;
    await waitUntil(() => other.elector.state === "leader", { what: "the hand-over", timeout: 5000 });
    expect(leases.lease?.spec?.leaseTransitions).toBe(1);
  });
});
