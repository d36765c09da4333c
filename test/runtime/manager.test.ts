import { waitUntil } from "capstan-dev/testing";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import type { KubeClient } from "../../packages/capstan/src/client/resource-client.ts";
import type { KubeObject, ResourceKind } from "../../packages/capstan/src/client/types.ts";
import { LeadershipLostError, Manager, type ManagerOptions } from "../../packages/capstan/src/runtime/manager.ts";
import { RuntimeMetrics } from "../../packages/capstan/src/runtime/metrics.ts";
import { deferred } from "./controller-fakes.ts";
import { FakeLeases } from "./support/fake-leases.ts";
import { apiError, FakeListerWatcher, trackRuntimeTimers } from "./support/fake-lister-watcher.ts";

const ConfigMap: ResourceKind = { group: "", version: "v1", kind: "ConfigMap", plural: "configmaps", namespaced: true };

// Short, consistent leader-election timings (lease 1 s > renew deadline 0.5 s > retry 0.1 s * 1.2).
const election = { leaseDuration: "1s", renewDeadline: 500, retryPeriod: 100, namespace: "ops", name: "lock" };

/** A client whose resources are in-memory fakes: one ConfigMap lister-watcher, a Lease, and Events. */
function fakeClient(lw: FakeListerWatcher, leases = new FakeLeases()) {
  const view = leases.view();
  const events: KubeObject[] = [];
  const client = {
    defaultNamespace: "default",
    resource(kind: ResourceKind) {
      if (kind.kind === "Lease") return view;
      if (kind.kind === "Event") {
        return {
          create: async (e: KubeObject) => {
            events.push(e);
            return e;
          },
          patch: async () => ({}),
        };
      }
      return lw;
    },
    // The API server probe of the watch health checks: always answered.
    request: async () => "ok",
    close: async () => {},
    // The Lease and probe connections (one fake serves them all).
    withOwnConnections: () => client,
  } as unknown as KubeClient;
  return { client, view, events };
}

const managers: Manager[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.stop()));
});

function manager(client: KubeClient, extra: Partial<ManagerOptions> = {}): Manager {
  const m = new Manager({
    client,
    name: "test-operator",
    logger: pino({ level: "silent" }),
    informerDefaults: { backoff: { initial: 10, max: 20, jitter: 0 } },
    ...extra,
  });
  managers.push(m);
  return m;
}

/** Listening servers of this process, once closed handles of earlier tests had a turn to go away. */
async function listeningServers(): Promise<number> {
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  return process.getActiveResourcesInfo().filter((r) => r === "TCPServerWrap").length;
}

async function get(port: number | undefined, path: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, body: await res.text() };
}

describe("endpoints", () => {
  it("answers /healthz at once, /readyz only after the caches synced, and /metrics with controller-runtime's names", async () => {
    const lw = new FakeListerWatcher();
    lw.upsert("a");
    for (let i = 0; i < 10_000; i++) lw.listFailures.push(apiError(500, "etcd unavailable"));
    const { client } = fakeClient(lw);
    const m = manager(client, { healthProbePort: 0, metricsPort: 0, bindHost: "127.0.0.1" });
    let reconciled = 0;
    m.controller(ConfigMap).reconcile(() => {
      reconciled++;
    });
    const run = m.start();
    await waitUntil(() => m.endpoints.healthProbe !== undefined && m.endpoints.metrics !== undefined, {
      what: "ports",
      timeout: 2000,
    });
    const { healthProbe, metrics } = m.endpoints;
    expect(await get(healthProbe, "/healthz")).toEqual({ status: 200, body: "ok" });
    const notReady = await get(healthProbe, "/readyz?verbose");
    expect(notReady.status).toBe(500);
    expect(notReady.body).toContain("[-]informer:v1/configmaps failed");
    expect(m.state).toBe("syncing");

    lw.listFailures.length = 0;
    await waitUntil(() => m.state === "leading", { what: "synced and running", timeout: 2000 });
    expect(await get(healthProbe, "/readyz")).toEqual({ status: 200, body: "ok" });
    expect((await get(healthProbe, "/readyz/informer:v1/configmaps")).status).toBe(200);
    expect((await get(healthProbe, "/readyz/nope")).status).toBe(404);
    await waitUntil(() => reconciled === 1, { what: "reconcile", timeout: 2000 });

    const scrape = await get(metrics, "/metrics");
    expect(scrape.status).toBe(200);
    for (const name of [
      'controller_runtime_reconcile_total{controller="configmap",result="success"} 1',
      'controller_runtime_reconcile_total{controller="configmap",result="requeue_after"} 0',
      'controller_runtime_reconcile_errors_total{controller="configmap"} 0',
      'controller_runtime_reconcile_time_seconds_count{controller="configmap"} 1',
      'controller_runtime_active_workers{controller="configmap"} 0',
      'controller_runtime_max_concurrent_reconciles{controller="configmap"} 1',
      'workqueue_depth{name="configmap",controller="configmap",priority=""} 0',
      'workqueue_adds_total{name="configmap",controller="configmap"} 1',
      'workqueue_queue_duration_seconds_count{name="configmap",controller="configmap"} 1',
      'workqueue_work_duration_seconds_count{name="configmap",controller="configmap"} 1',
      'workqueue_retries_total{name="configmap",controller="configmap"} 0',
      'workqueue_unfinished_work_seconds{name="configmap",controller="configmap"} 0',
      'workqueue_longest_running_processor_seconds{name="configmap",controller="configmap"} 0',
      "# TYPE rest_client_requests_total counter",
    ]) {
      expect(scrape.body).toContain(name);
    }
    // Health and metrics are not mixed up on separate ports.
    expect((await get(metrics, "/healthz")).status).toBe(404);
    await m.stop();
    await run;
  });
});

describe("shutdown", () => {
  it("a graceful stop lets the in-flight reconcile finish, releases the Lease, and leaves no timer or socket", async () => {
    const timers = trackRuntimeTimers();
    const serversBefore = await listeningServers();
    try {
      const lw = new FakeListerWatcher();
      lw.upsert("a");
      const leases = new FakeLeases();
      const { client } = fakeClient(lw, leases);
      const m = manager(client, {
        leaderElection: { ...election, identity: "one" },
        healthProbePort: 0,
        bindHost: "127.0.0.1",
      });
      const gate = deferred();
      let signal: AbortSignal | undefined;
      let finished = false;
      m.controller(ConfigMap).reconcile(async (_t, ctx) => {
        signal = ctx.signal;
        await gate.promise;
        finished = true;
        return { requeueAfter: "1h" };
      });
      const run = m.start();
      await waitUntil(() => signal !== undefined, { what: "reconcile in flight", timeout: 3000 });
      expect(leases.lease?.spec?.holderIdentity).toBe("one");
      const stopping = m.stop();
      await new Promise((r) => setTimeout(r, 20));
      expect(m.state).toBe("stopping");
      expect(signal?.aborted).toBe(false);
      gate.resolve();
      await stopping;
      await run;
      expect(finished).toBe(true);
      expect(m.state).toBe("stopped");
      expect(leases.lease?.spec?.holderIdentity).toBe("");
      expect(leases.lease?.spec?.leaseDurationSeconds).toBe(1);
      expect(lw.openWatches).toBe(0);
      expect(await timers.pending()).toBe(0);
      expect(await listeningServers()).toBe(serversBefore);
    } finally {
      timers.stop();
    }
  });

  it("stops gracefully on SIGTERM when asked to, and removes its signal handlers", async () => {
    const lw = new FakeListerWatcher();
    const { client } = fakeClient(lw);
    const before = process.listeners("SIGTERM");
    const m = manager(client, { handleSignals: true });
    m.controller(ConfigMap).reconcile(() => {});
    const run = m.start();
    await waitUntil(() => m.state === "leading", { what: "running", timeout: 2000 });
    const added = process.listeners("SIGTERM").filter((l) => !before.includes(l));
    expect(added).toHaveLength(1);
    (added[0] as (s: NodeJS.Signals) => void)("SIGTERM");
    await run;
    expect(m.state).toBe("stopped");
    expect(process.listeners("SIGTERM")).toEqual(before);
  });

  it("aborts running reconciles at once when leadership is lost, and start() rejects", async () => {
    const lw = new FakeListerWatcher();
    lw.upsert("a");
    const { client, view } = fakeClient(lw);
    const m = manager(client, { leaderElection: { ...election, identity: "one" } });
    let signal: AbortSignal | undefined;
    m.controller(ConfigMap).reconcile(async (_t, ctx) => {
      signal = ctx.signal;
      // Ignores nothing: resolves only when told to stop acting.
      await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve()));
    });
    const run = m.start();
    await waitUntil(() => signal !== undefined, { what: "reconcile in flight", timeout: 3000 });
    view.partitioned = true;
    await expect(run).rejects.toBeInstanceOf(LeadershipLostError);
    expect(signal?.aborted).toBe(true);
    expect(m.state).toBe("stopped");
  });
});

describe("controllers added while running", () => {
  it("starts a controller registered after start once its cache synced, and drains it on stop", async () => {
    const lw = new FakeListerWatcher();
    lw.upsert("a");
    const { client } = fakeClient(lw);
    const m = manager(client);
    m.controller(ConfigMap)
      .named("first")
      .reconcile(() => {});
    const run = m.start();
    await waitUntil(() => m.state === "leading", { what: "running", timeout: 2000 });
    const gate = deferred();
    let signal: AbortSignal | undefined;
    let finished = false;
    m.controller(ConfigMap)
      .named("late")
      .reconcile(async (_t, ctx) => {
        signal = ctx.signal;
        await gate.promise;
        finished = true;
      });
    await waitUntil(() => signal !== undefined, { what: "late controller reconciling", timeout: 2000 });
    const stopping = m.stop();
    await new Promise((r) => setTimeout(r, 20));
    expect(signal?.aborted).toBe(false);
    gate.resolve();
    await stopping;
    await run;
    expect(finished).toBe(true);
  });

  it("refuses two controllers with the same name", () => {
    const { client } = fakeClient(new FakeListerWatcher());
    const m = manager(client);
    m.controller(ConfigMap).reconcile(() => {});
    expect(() => m.controller(ConfigMap).reconcile(() => {})).toThrow(/already exists/);
  });
});

/** The value of `leader_election_master_status{name="lock"}` in the manager's metrics. */
async function leaderStatus(m: Manager): Promise<string | undefined> {
  const line = (await m.metrics.text())
    .split("\n")
    .find((l) => l.startsWith('leader_election_master_status{name="lock"}'));
  return line?.split(" ").at(-1);
}

describe("leader election", () => {
  it("refuses timings client-go refuses when the manager is built, not after its caches synced", () => {
    const { client } = fakeClient(new FakeListerWatcher());
    const build = (t: Record<string, string | number>) =>
      new Manager({ client, logger: pino({ level: "silent" }), leaderElection: { ...t } });
    expect(() => build({ leaseDuration: "10s" })).toThrow(
      "leader election: leaseDuration (10000 ms) must be greater than renewDeadline (10000 ms)",
    );
    expect(() => build({ retryPeriod: "9s" })).toThrow(
      "leader election: renewDeadline (10000 ms) must be greater than retryPeriod * 1.2 (10800 ms)",
    );
    expect(() => build({ retryPeriod: 0 })).toThrow("leader election: retryPeriod must be greater than zero, got 0 ms");
    expect(() => build({ leaseDuration: "soon" })).toThrow(/invalid duration "soon"/);
  });

  it("runs controllers on one replica only, and a standby takes over when the leader stops", async () => {
    const lw = new FakeListerWatcher();
    lw.upsert("a");
    const leases = new FakeLeases();
    const reconciledBy: string[] = [];
    const replicas = ["one", "two"].map((identity) => {
      const { client } = fakeClient(lw, leases);
      const m = manager(client, {
        leaderElection: { ...election, identity },
        healthProbePort: 0,
        bindHost: "127.0.0.1",
      });
      m.controller(ConfigMap).reconcile(() => {
        reconciledBy.push(identity);
      });
      return m;
    });
    const [one, two] = replicas as [Manager, Manager];
    const runOne = one.start();
    await waitUntil(() => one.isLeader, { what: "first replica leads", timeout: 3000 });
    const runTwo = two.start();
    await waitUntil(() => two.state === "candidate", { what: "second replica synced, waiting", timeout: 3000 });
    await waitUntil(() => reconciledBy.length === 1, { what: "leader reconciled", timeout: 3000 });
    expect(two.isLeader).toBe(false);
    // A standby with synced caches is ready: it can take over at once.
    expect(await get(two.endpoints.healthProbe, "/readyz")).toEqual({ status: 200, body: "ok" });
    // controller-runtime's leadership gauge: 1 on the leader, 0 on the standby.
    expect(await leaderStatus(one)).toBe("1");
    expect(await leaderStatus(two)).toBe("0");

    await one.stop();
    await runOne;
    expect(await leaderStatus(one)).toBe("0");
    // The released Lease (duration 1 s, no holder) is taken at the standby's next try.
    await waitUntil(() => two.isLeader, { what: "standby took over", timeout: 3000 });
    expect(await leaderStatus(two)).toBe("1");
    await waitUntil(() => reconciledBy.length === 2, { what: "new leader reconciled", timeout: 3000 });
    expect(reconciledBy).toEqual(["one", "two"]);
    expect(leases.lease?.spec?.holderIdentity).toBe("two");
    await two.stop();
    await runTwo;
  });
});

describe("manager-wide maxConcurrentReconciles", () => {
  it("is the workers of controllers that set none, as controller-runtime's Controller.MaxConcurrentReconciles", async () => {
    const metrics = new RuntimeMetrics();
    const m = manager(fakeClient(new FakeListerWatcher()).client, { metrics, maxConcurrentReconciles: 6 });
    m.controller(ConfigMap)
      .named("wide")
      .reconcile(() => {});
    const gauge = (await metrics.text())
      .split("\n")
      .find((l) => l.startsWith('controller_runtime_max_concurrent_reconciles{controller="wide"}'));
    expect(gauge?.split(" ").at(-1)).toBe("6");
  });
});

describe("idleAwaitsWrites", () => {
  /** A fake client whose writes the test starts by hand through the observer the manager registers. */
  function observedClient() {
    const { client } = fakeClient(new FakeListerWatcher());
    const observers: { started?(w: { method: string; path: string }): void }[] = [];
    (client as unknown as { observeWrites: unknown }).observeWrites = (o: (typeof observers)[number]) => {
      observers.push(o);
      return () => observers.splice(observers.indexOf(o), 1);
    };
    const startWrite = () => {
      for (const o of observers) o.started?.({ method: "PUT", path: "/api/v1/namespaces/default/configmaps/a" });
    };
    return { client, startWrite };
  }

  /** A running manager with one idle controller, a write of its client started and not ended. */
  async function runningWithWriteInFlight(extra: Partial<ManagerOptions> = {}) {
    const { client, startWrite } = observedClient();
    const m = manager(client, extra);
    m.controller(ConfigMap)
      .named("w")
      .reconcile(() => {});
    const run = m.start();
    await waitUntil(() => m.state === "leading", { what: "running", timeout: 2000 });
    startWrite();
    return { m, run };
  }

  it("by default, whenIdle waits for a write of the manager's client still in flight", async () => {
    const { m, run } = await runningWithWriteInFlight();
    const error = await m.whenIdle({ timeout: 200 }).catch((e: unknown) => e);
    expect(String((error as Error).message)).toMatch(
      /write in flight: PUT \/api\/v1\/namespaces\/default\/configmaps\/a/,
    );
    await m.stop();
    await run;
  });

  it("off (as capstan run sets it), whenIdle does not follow the client's writes", async () => {
    const { m, run } = await runningWithWriteInFlight({ idleAwaitsWrites: false });
    await m.whenIdle({ timeout: 2000 });
    await m.stop();
    await run;
  });
});
