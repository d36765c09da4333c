import { startTestCluster, waitUntil } from "capstan-dev/testing";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { loadClientConfig } from "../../packages/capstan/src/client/config.ts";
import { KubeClient } from "../../packages/capstan/src/client/resource-client.ts";
import { LEASE_KIND, LeadershipLostError, Manager } from "../../packages/capstan/src/runtime/manager.ts";
import { isDeleted } from "../../packages/capstan/src/runtime/reconcile.ts";
import { fileFixture } from "../support/file-fixture.ts";
import { TcpProxy } from "./support/tcp-proxy.ts";
import { Widget, widgetCrd } from "./support/widget.ts";

// Lease 1 s > renew deadline 0.5 s > retry 0.1 s * 1.2: client-go's proportions, scaled down so
// a hand-over takes about a second instead of 15.
const timings = { leaseDuration: "1s", renewDeadline: 500, retryPeriod: 100 };

// Lease 4 s > renew deadline 3 s > retry 0.5 s * 1.2: for a test where the leader must keep leading on
// a loaded machine, whose late timers can outlast a 0.5 s renew deadline (the leader then steps down).
const patient = { leaseDuration: "4s", renewDeadline: 3000, retryPeriod: 500 };

const cluster = fileFixture(() => startTestCluster({ crds: [widgetCrd()] }));

/** A replica: its own client and manager, recording which widgets it reconciled. */
function replica(identity: string, lease: string, reconciled: string[], leaseTimings = timings) {
  const client = new KubeClient(loadClientConfig({ kubeconfig: cluster.kubeconfigPath }));
  const mgr = new Manager({
    client,
    name: "widgets",
    logger: pino({ level: "silent" }),
    leaderElection: { ...leaseTimings, identity, name: lease, namespace: "default" },
    informerDefaults: { backoff: { initial: 20, max: 200 } },
  });
  mgr.controller(Widget).reconcile((target) => {
    if (!isDeleted(target)) reconciled.push(`${identity}:${target.metadata?.name}`);
  });
  return { client, mgr };
}

/** `leader_election_master_status{name=lease}` of a manager, as a scrape shows it. */
async function leaderGauge(mgr: Manager, lease: string): Promise<string | undefined> {
  const prefix = `leader_election_master_status{name="${lease}"} `;
  const line = (await mgr.metrics.text()).split("\n").find((l) => l.startsWith(prefix));
  return line?.slice(prefix.length);
}

/** Polls both replicas and counts moments where both claimed to lead. */
function watchOverlap(a: Manager, b: Manager): { overlaps(): number; stop(): void } {
  let overlaps = 0;
  const timer = setInterval(() => {
    if (a.isLeader && b.isLeader) overlaps++;
  }, 5);
  return { overlaps: () => overlaps, stop: () => clearInterval(timer) };
}

describe("leader election between two managers on one Lease", () => {
  it("hands over at once when the leader stops gracefully (the Lease is released)", async () => {
    const reconciled: string[] = [];
    // A released Lease is taken on the standby's next retry, not after the lease duration.
    const one = replica("one", "handover-graceful", reconciled, patient);
    const two = replica("two", "handover-graceful", reconciled, patient);
    const overlap = watchOverlap(one.mgr, two.mgr);
    const widgets = cluster.client.resource(Widget, "default");
    try {
      const runOne = one.mgr.start();
      await waitUntil(() => one.mgr.isLeader, { what: "one leads", timeout: 5000 });
      const runTwo = two.mgr.start();
      await waitUntil(() => two.mgr.state === "candidate", { what: "two waits", timeout: 5000 });
      await widgets.create({ metadata: { name: "graceful-a" }, spec: { size: 1 } } as Widget);
      await waitUntil(() => reconciled.includes("one:graceful-a"), { what: "leader reconciled", timeout: 5000 });

      await one.mgr.stop();
      await runOne;
      const lease = await cluster.client.resource(LEASE_KIND, "default").get("handover-graceful");
      // Released on the way out (no holder), or already taken by the standby.
      expect(["", "two"]).toContain(lease.spec?.holderIdentity ?? "");
      await waitUntil(() => two.mgr.isLeader, { what: "two took over", timeout: 5000 });
      await widgets.create({ metadata: { name: "graceful-b" }, spec: { size: 2 } } as Widget);
      await waitUntil(() => reconciled.includes("two:graceful-b"), { what: "new leader reconciled", timeout: 5000 });
      expect(reconciled.some((r) => r.startsWith("one:graceful-b"))).toBe(false);
      expect(overlap.overlaps()).toBe(0);
      await two.mgr.stop();
      await runTwo;
    } finally {
      overlap.stop();
      await one.mgr.stop();
      await two.mgr.stop();
      await one.client.close();
      await two.client.close();
    }
  });

  it("a leader cut off from the API server stops acting, and the standby takes over after the lease expires", async () => {
    const reconciled: string[] = [];
    const one = replica("one", "handover-crash", reconciled);
    const two = replica("two", "handover-crash", reconciled);
    const overlap = watchOverlap(one.mgr, two.mgr);
    try {
      const runOne = one.mgr.start();
      await waitUntil(() => one.mgr.isLeader, { what: "one leads", timeout: 5000 });
      const runTwo = two.mgr.start();
      await waitUntil(() => two.mgr.state === "candidate", { what: "two waits", timeout: 5000 });

      // Every socket of replica one goes away: it can neither renew nor release the Lease.
      await one.client.close();
      await expect(runOne).rejects.toBeInstanceOf(LeadershipLostError);
      await waitUntil(() => two.mgr.isLeader, { what: "two took over", timeout: 5000 });
      const lease = await cluster.client.resource(LEASE_KIND, "default").get("handover-crash");
      expect(lease.spec?.holderIdentity).toBe("two");
      expect(lease.spec?.leaseTransitions).toBe(1);
      expect(overlap.overlaps()).toBe(0);
      await two.mgr.stop();
      await runTwo;
    } finally {
      overlap.stop();
      await one.mgr.stop();
      await two.mgr.stop();
      await two.client.close();
    }
  });
  it("hands over within leaseDuration + 2 x 2.2 x retryPeriod when the leader's API server vanishes, never before the lease expired", async () => {
    // Lease 4 s > renew deadline 3 s > retry 0.5 s * 1.2: room for a loaded machine's late timers.
    const fast = { leaseDuration: "4s", renewDeadline: 3000, retryPeriod: 500 };
    const config = loadClientConfig({ kubeconfig: cluster.kubeconfigPath });
    const proxy = await TcpProxy.start(config.server);
    const clients = [new KubeClient({ ...config, server: proxy.url }), new KubeClient(config)];
    const [one, two] = clients.map(
      (client, i) =>
        new Manager({
          client,
          name: "widgets",
          logger: pino({ level: "silent" }),
          leaderElection: { ...fast, identity: `replica-${i}`, name: "handover-timed", namespace: "default" },
        }),
    ) as [Manager, Manager];
    const overlap = watchOverlap(one, two);
    let oneStoppedAt = 0;
    let twoLeadsAt = 0;
    const sampler = setInterval(() => {
      if (oneStoppedAt === 0 && !one.isLeader && one.state !== "candidate") oneStoppedAt = performance.now();
      if (twoLeadsAt === 0 && two.isLeader) twoLeadsAt = performance.now();
    }, 2);
    try {
      const runOne = one.start();
      await waitUntil(() => one.isLeader, { what: "one leads" });
      const runTwo = two.start();
      await waitUntil(() => two.state === "candidate", { what: "two waits" });
      expect(await leaderGauge(one, "handover-timed")).toBe("1");
      expect(await leaderGauge(two, "handover-timed")).toBe("0");

      // As a kill -9 would look from the cluster: the leader's connections are gone, nothing is released.
      // The measure starts from a leader that still leads.
      expect(one.isLeader && twoLeadsAt === 0, "one still leads, two has not led, before the cut").toBe(true);
      // The last renewal the Lease shows (a later one before the cut only pushes the expiry back).
      const renewed = await cluster.client.resource(LEASE_KIND, "default").get("handover-timed");
      const renewedAt = Date.parse(renewed.spec?.renewTime ?? "");
      expect(renewedAt).toBeGreaterThan(0);
      // From the moment of the cut: down() destroys the connections at once, then waits for its listener to close.
      const goneAt = performance.now();
      const goneAtEpoch = Date.now();
      await proxy.down();
      await expect(runOne).rejects.toBeInstanceOf(LeadershipLostError);
      // The wait records the take-over too: it may see it before the sampler's next turn (a loaded
      // machine delays interval timers), which left twoLeadsAt 0 and the hand-over negative.
      await waitUntil(
        () => {
          if (twoLeadsAt === 0 && two.isLeader) twoLeadsAt = performance.now();
          return two.isLeader;
        },
        { what: "two took over", timeout: 15_000 },
      );
      const handoverMs = twoLeadsAt - goneAt;
      // Never before the lease could have expired: a lease duration after its last renewal, which is
      // usually within a retry period before the cut, but longer on a machine that delays timers.
      expect(goneAtEpoch + handoverMs).toBeGreaterThanOrEqual(renewedAt + 4000);
      // ...and within client-go's bound (plus slack for a loaded machine).
      expect(handoverMs).toBeLessThan(4000 + 2 * 2.2 * 500 + 2000);
      // The old leader had stopped acting before the new one started.
      expect(oneStoppedAt).toBeGreaterThan(0);
      expect(oneStoppedAt).toBeLessThan(twoLeadsAt);
      expect(overlap.overlaps()).toBe(0);
      expect(await leaderGauge(one, "handover-timed")).toBe("0");
      expect(await leaderGauge(two, "handover-timed")).toBe("1");
      await two.stop();
      await runTwo;
    } finally {
      clearInterval(sampler);
      overlap.stop();
      await one.stop();
      await two.stop();
      await proxy.stop();
      for (const c of clients) await c.close();
    }
  });
});
