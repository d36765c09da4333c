import { startTestCluster, waitUntil } from "capstan-dev/testing";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { loadClientConfig } from "../../packages/capstan/src/client/config.ts";
import { KubeClient } from "../../packages/capstan/src/client/resource-client.ts";
import type { ResourceKind } from "../../packages/capstan/src/client/types.ts";
import { Manager, type ManagerOptions } from "../../packages/capstan/src/runtime/manager.ts";
import { isDeleted } from "../../packages/capstan/src/runtime/reconcile.ts";
import { fileFixture } from "../support/file-fixture.ts";
import { TcpProxy } from "./support/tcp-proxy.ts";
import { ConfigMap, Widget, widgetCrd } from "./support/widget.ts";

// Small bounds, in client-go's proportions to the defaults (10 s / 5 min, probe every 3 s with a
// 5 s timeout): not ready after 1.5 s without contact, not live after 5 s, probe every 200 ms
// with a 500 ms timeout.
const watchHealth = { notReadyAfter: 1500, notLiveAfter: "5s", probePeriod: 200, probeTimeout: 500 };

const cluster = fileFixture(() => startTestCluster({ crds: [widgetCrd()] }));

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A manager whose client reaches the API server through a proxy the test can take down or freeze. */
async function operatorBehindProxy(extra: Partial<ManagerOptions> = {}) {
  const config = loadClientConfig({ kubeconfig: cluster.kubeconfigPath });
  const proxy = await TcpProxy.start(config.server);
  const client = new KubeClient({ ...config, server: proxy.url });
  const reconciled: string[] = [];
  const mgr = new Manager({
    client,
    name: "widgets",
    logger: pino({ level: "silent" }),
    healthProbePort: 0,
    bindHost: "127.0.0.1",
    watchHealth,
    ...extra,
  });
  mgr
    .controller(Widget)
    .owns(ConfigMap)
    .reconcile((w) => {
      if (!isDeleted(w)) reconciled.push(w.metadata?.name ?? "");
    });
  cleanups.push(async () => {
    await mgr.stop();
    await proxy.stop();
    await client.close();
  });
  return { mgr, proxy, reconciled };
}

async function probe(mgr: Manager, path: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://127.0.0.1:${mgr.endpoints.healthProbe}${path}`);
  return { status: res.status, body: await res.text() };
}

async function waitForStatus(mgr: Manager, path: string, status: number, timeout = 10_000): Promise<number> {
  const started = performance.now();
  let last = 0;
  await waitUntil(
    async () => {
      last = (await probe(mgr, path)).status;
      return last === status;
    },
    { what: () => `${path} answering ${status} (last ${last})`, timeout, interval: 50 },
  );
  return performance.now() - started;
}

describe("readiness and liveness from the watches", () => {
  it("is ready once every informer synced and watches, and ?verbose names each informer", async () => {
    const { mgr } = await operatorBehindProxy();
    void mgr.start();
    await waitForStatus(mgr, "/readyz", 200);
    const verbose = await probe(mgr, "/readyz?verbose");
    expect(verbose.body).toContain("[+]informer:example.com/v1/widgets ok");
    expect(verbose.body).toContain("[+]informer:v1/configmaps ok");
    expect((await probe(mgr, "/readyz/informer:v1/configmaps")).status).toBe(200);
    const live = await probe(mgr, "/healthz?verbose");
    expect(live.status).toBe(200);
    expect(live.body).toContain("[+]informer:example.com/v1/widgets ok");
  });

  it("is never ready while an informer cannot list, and names it", async () => {
    const Gadget: ResourceKind = {
      group: "example.com",
      version: "v1",
      kind: "Gadget",
      plural: "gadgets",
      namespaced: true,
    };
    const { mgr } = await operatorBehindProxy();
    mgr.controller(Gadget).reconcile(() => {}); // no such CRD: every list is a 404
    void mgr.start();
    await waitUntil(() => mgr.informers.all().every((i) => i.phase.phase !== "idle"), { what: "informers running" });
    await waitUntil(() => mgr.informers.all().filter((i) => i.hasSynced()).length === 2, { what: "the others synced" });
    const ready = await probe(mgr, "/readyz?verbose");
    expect(ready.status).toBe(500);
    expect(ready.body).toContain("[-]informer:example.com/v1/gadgets failed");
    expect(ready.body).toContain("[+]informer:example.com/v1/widgets ok");
    expect(mgr.state).toBe("syncing");
  });

  it("goes not ready when the API server dies, fails liveness after the larger bound, and recovers when it returns", async () => {
    const { mgr, proxy, reconciled } = await operatorBehindProxy();
    void mgr.start();
    await waitForStatus(mgr, "/readyz", 200);

    await proxy.down();
    const downAt = performance.now();
    await waitForStatus(mgr, "/readyz", 500);
    const notReadyMs = performance.now() - downAt;
    // Still live: readiness fails first, a restart comes only after the larger bound.
    expect((await probe(mgr, "/healthz")).status).toBe(200);
    expect(notReadyMs).toBeGreaterThanOrEqual(1400);
    await waitForStatus(mgr, "/healthz", 500);
    expect(performance.now() - downAt).toBeGreaterThanOrEqual(4900);
    expect((await probe(mgr, "/healthz?verbose")).body).toContain("[-]informer:example.com/v1/widgets failed");

    await proxy.up();
    await waitForStatus(mgr, "/readyz", 200);
    expect((await probe(mgr, "/healthz")).status).toBe(200);
    // And it sees changes again.
    await cluster.client
      .resource(Widget, "default")
      .create({ metadata: { name: "after-outage" }, spec: { size: 1 } } as Widget);
    await waitUntil(() => reconciled.includes("after-outage"), { what: "reconciled after the outage" });
  });

  it("goes not ready when the API server freezes with its connections open, then not live, and reconnects its watches after", async () => {
    const { mgr, proxy, reconciled } = await operatorBehindProxy();
    void mgr.start();
    await waitForStatus(mgr, "/readyz", 200);
    const widgets = mgr.informers.all().find((i) => i.name.startsWith("Widget"));
    await waitUntil(() => widgets?.connection.watchOpen, { what: "the widget watch open" });

    proxy.freeze();
    await waitForStatus(mgr, "/readyz", 500);
    expect((await probe(mgr, "/readyz?verbose")).body).toContain("[-]informer:example.com/v1/widgets failed");
    // The probe got no answer: the silent watches were abandoned rather than trusted.
    expect(widgets?.connection.watchOpen).toBe(false);
    expect((await probe(mgr, "/healthz")).status).toBe(200);
    await waitForStatus(mgr, "/healthz", 500);

    await proxy.up();
    await waitForStatus(mgr, "/readyz", 200);
    await cluster.client
      .resource(Widget, "default")
      .create({ metadata: { name: "after-freeze" }, spec: { size: 1 } } as Widget);
    await waitUntil(() => reconciled.includes("after-freeze"), { what: "reconciled after the freeze" });
  });

  it("stays ready through an API server restart, whose watches come back within the bound", async () => {
    // A bound above the first reconnect backoff (800 ms stretched by up to 100%), as the default 10 s is.
    const { mgr } = await operatorBehindProxy({ watchHealth: { ...watchHealth, notReadyAfter: "4s" } });
    void mgr.start();
    await waitForStatus(mgr, "/readyz", 200);
    const widgets = mgr.informers.all().find((i) => i.name.startsWith("Widget"));
    const phases = new Set<string>();
    const sample = setInterval(() => phases.add(widgets?.phase.phase ?? ""), 1);
    const statuses: number[] = [];
    try {
      cluster.faults.restart(); // every connection and watch cut
      await waitUntil(
        async () => {
          statuses.push((await probe(mgr, "/readyz")).status);
          return phases.has("backingOff") && widgets?.connection.watchOpen === true;
        },
        { what: "the watch cut and open again", interval: 20 },
      );
    } finally {
      clearInterval(sample);
    }
    expect(statuses.every((s) => s === 200)).toBe(true);
  });

  it("refuses bounds that would restart an operator before it goes not ready, or flap readiness", () => {
    const client = new KubeClient(loadClientConfig({ kubeconfig: cluster.kubeconfigPath }));
    cleanups.push(() => client.close());
    expect(() => new Manager({ client, watchHealth: { notReadyAfter: "1m", notLiveAfter: "30s" } })).toThrow(
      /notLiveAfter \(30000 ms\) must be greater than notReadyAfter \(60000 ms\)/,
    );
    expect(() => new Manager({ client, watchHealth: { notReadyAfter: "5s" } })).toThrow(
      /probePeriod \+ probeTimeout \(8000 ms\) must be less than notReadyAfter \(5000 ms\)/,
    );
    expect(() => new Manager({ client, readinessEndpointName: "readyz" })).toThrow(/readinessEndpointName/);
  });

  it("serves readiness and liveness under controller-runtime's endpoint names when given", async () => {
    const { mgr } = await operatorBehindProxy({ readinessEndpointName: "/ready", livenessEndpointName: "/live" });
    void mgr.start();
    await waitForStatus(mgr, "/ready", 200);
    expect((await probe(mgr, "/live")).status).toBe(200);
    expect((await probe(mgr, "/readyz")).status).toBe(404);
  });
});
