import { startTestCluster, waitUntil } from "capstan-dev/testing";
import pino from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { loadClientConfig } from "../../packages/capstan/src/client/config.ts";
import { KubeClient } from "../../packages/capstan/src/client/resource-client.ts";
import type { KubeObject } from "../../packages/capstan/src/client/types.ts";
import { sleep } from "../../packages/capstan/src/runtime/clock.ts";
import { HashRing } from "../../packages/capstan/src/runtime/hash-ring.ts";
import { LEASE_KIND, Manager } from "../../packages/capstan/src/runtime/manager.ts";
import { isDeleted } from "../../packages/capstan/src/runtime/reconcile.ts";
import { ShardMembershipLostError } from "../../packages/capstan/src/runtime/sharding.ts";
import { fileFixture } from "../support/file-fixture.ts";
import { ConfigMap, Widget, widgetCrd } from "./support/widget.ts";

// Lease 8 s > renew deadline 5 s > retry 0.5 s * 1.2: client-go's proportions, scaled down by half
// so a crashed member's objects move in about 8 s instead of 15-24. Not shorter: on a shared
// 2-core machine at load 18 the embedded server took up to 1.4 s for a first apply, and a 2 s
// renew deadline was missed at start-up.
const timings = { leaseDuration: "8s", renewDeadline: 5000, retryPeriod: 500 };
const RING = "widgets";
const SHARD = `shard.capstan.dev/${RING}`;
const DRAIN = `drain.shard.capstan.dev/${RING}`;

const cluster = fileFixture(() => startTestCluster({ crds: [widgetCrd()] }));

/** Start and end of every reconcile, across replicas: how many ran at once per key, at most. */
class Overlap {
  private readonly active = new Map<string, number>();
  max = 0;
  readonly runs: { member: string; name: string }[] = [];
  async around(member: string, name: string, fn: () => Promise<void>): Promise<void> {
    const n = (this.active.get(name) ?? 0) + 1;
    this.active.set(name, n);
    this.max = Math.max(this.max, n);
    this.runs.push({ member, name });
    try {
      await fn();
    } finally {
      this.active.set(name, (this.active.get(name) ?? 1) - 1);
    }
  }
}

interface Replica {
  member: string;
  mgr: Manager;
  client: KubeClient;
  run: Promise<void>;
}

const replicas: Replica[] = [];
afterAll(async () => {
  for (const r of replicas) {
    await r.mgr.stop();
    await r.client.close();
  }
});

/** A replica: its own client and manager, with a controller of Widgets owning ConfigMaps. */
function replica(member: string, overlap: Overlap): Replica {
  const client = new KubeClient(loadClientConfig({ kubeconfig: cluster.kubeconfigPath }));
  const mgr = new Manager({
    client,
    name: RING,
    namespace: "default",
    logger: pino({ level: process.env.SHARD_TEST_LOG ?? "silent" }),
    sharding: { ...timings, member, namespace: "default" },
    leaderElection: { ...timings, namespace: "default" },
    informerDefaults: { backoff: { initial: 20, max: 200 } },
    gracefulShutdownTimeout: "5s",
  });
  mgr
    .controller(Widget)
    .owns(ConfigMap)
    .reconcile(async (target, ctx) => {
      if (isDeleted(target)) return;
      const name = target.metadata?.name as string;
      await overlap.around(member, name, async () => {
        // Long enough that a second replica starting on the same key would overlap.
        await sleep(15);
        await ctx.apply(
          ConfigMap,
          ctx.adopt({
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: { name },
            data: { size: String(target.spec.size) },
          }),
        );
      });
      // Reconciled again and again, so that hand-overs happen while reconciles run.
      return { requeueAfter: 40 };
    });
  const r: Replica = { member, mgr, client, run: mgr.start() };
  r.run.catch(() => {});
  replicas.push(r);
  return r;
}

/** The objects of `kind` in a replica's cache. */
function cached(r: Replica, kind: string): KubeObject[] {
  return r.mgr.informers
    .entries()
    .filter((e) => e.kind.kind === kind)
    .flatMap((e) => e.informer.store.list());
}

/** Every widget and its ConfigMap labelled with the ring's choice among `members`, no drain left. */
async function balancedOver(members: string[], names: string[]): Promise<boolean> {
  const ring = new HashRing(members);
  const widgets = (await cluster.client.resource(Widget, "default").list()).items;
  const maps = new Map(
    (await cluster.client.resource(ConfigMap, "default").list()).items.map((c) => [c.metadata?.name, c]),
  );
  if (widgets.length !== names.length) return false;
  return widgets.every((w) => {
    const name = w.metadata?.name as string;
    const want = ring.memberFor({ group: "example.com", kind: "Widget", namespace: "default", name });
    const labels = w.metadata?.labels ?? {};
    const child = maps.get(name)?.metadata?.labels ?? {};
    return labels[SHARD] === want && labels[DRAIN] === undefined && child[SHARD] === want;
  });
}

describe("sharding a controller over replicas", () => {
  it("assigns each widget to one replica, rebalances as members go 1 -> 2 -> 3 -> 2, never reconciling a key on two replicas at once", async () => {
    const overlap = new Overlap();
    const names = Array.from({ length: 24 }, (_, i) => `w-${i}`);
    const widgets = cluster.client.resource(Widget, "default");
    for (const name of names.slice(0, 12)) await widgets.create({ metadata: { name }, spec: { size: 1 } } as Widget);

    const a = replica("a", overlap);
    await waitUntil(() => balancedOver(["a"], names.slice(0, 12)), { what: "a holds everything", timeout: 30_000 });
    // Objects created while members change are assigned too.
    for (const name of names.slice(12)) await widgets.create({ metadata: { name }, spec: { size: 1 } } as Widget);
    const b = replica("b", overlap);
    await waitUntil(() => balancedOver(["a", "b"], names), { what: "a and b share", timeout: 30_000 });
    const c = replica("c", overlap);
    await waitUntil(() => balancedOver(["a", "b", "c"], names), { what: "a, b and c share", timeout: 30_000 });

    // Each replica caches exactly its share: widgets and their ConfigMaps.
    const ring3 = new HashRing(["a", "b", "c"]);
    for (const r of [a, b, c]) {
      const mine = names.filter(
        (name) => ring3.memberFor({ group: "example.com", kind: "Widget", namespace: "default", name }) === r.member,
      );
      await waitUntil(() => cached(r, "Widget").length === mine.length, { what: `${r.member}'s cache`, timeout: 5000 });
      expect(
        cached(r, "Widget")
          .map((w) => w.metadata?.name)
          .sort(),
      ).toEqual([...mine].sort());
      await waitUntil(() => cached(r, "ConfigMap").length === mine.length, {
        what: `${r.member}'s ConfigMaps`,
        timeout: 5000,
      });
    }

    // An update is reconciled by the widget's member alone.
    const probe = names[5] as string;
    const owner = ring3.memberFor({ group: "example.com", kind: "Widget", namespace: "default", name: probe });
    const before = overlap.runs.length;
    await widgets.patch(probe, { spec: { size: 7 } }, { type: "merge" });
    await waitUntil(async () => (await cluster.client.resource(ConfigMap, "default").get(probe)).data?.size === "7", {
      what: "the update reconciled",
      timeout: 5000,
    });
    const after = overlap.runs.slice(before).filter((r) => r.name === probe);
    expect(after.length).toBeGreaterThan(0);
    expect(new Set(after.map((r) => r.member))).toEqual(new Set([owner]));

    // b leaves gracefully: its Lease is released, its objects go to a and c at once.
    await b.mgr.stop();
    await b.run;
    await waitUntil(() => balancedOver(["a", "c"], names), { what: "a and c share", timeout: 30_000 });
    await expect(cluster.client.resource(LEASE_KIND, "default").get(`${RING}-b`)).rejects.toMatchObject({ code: 404 });

    // The coordinator's metrics: two members, every widget counted on one of them, a rebalance
    // time; a handed over objects to b and c when they joined.
    const coordinator = [a, c].find((r) => r.mgr.sharding?.coordinating) as Replica;
    expect(coordinator).toBeDefined();
    await waitUntil(
      async () => {
        const text = await coordinator.mgr.metrics.text();
        const counted = [...text.matchAll(/^capstan_shard_objects\{ring="widgets",member="([a-z]*)"\} (\d+)$/gm)];
        return (
          text.includes(`capstan_shard_members{ring="widgets"} 2`) &&
          counted.every((m) => m[1] === "a" || m[1] === "c") &&
          counted.reduce((n, m) => n + Number(m[2]), 0) === names.length
        );
      },
      { what: "the coordinator's shard metrics", timeout: 10_000 },
    );
    expect(await coordinator.mgr.metrics.text()).toMatch(
      /^capstan_shard_rebalance_seconds\{ring="widgets"\} [0-9.e-]+$/m,
    );
    // The object counts follow each assignment and deletion, not only rebalances: one more widget
    // (no membership change) is counted on its member, and uncounted once deleted.
    const objectsOf = async (member: string) => {
      const text = await coordinator.mgr.metrics.text();
      const m = new RegExp(`^capstan_shard_objects\\{ring="widgets",member="${member}"\\} (\\d+)$`, "m").exec(text);
      return Number(m?.[1] ?? 0);
    };
    const extra = "w-extra";
    const extraMember = new HashRing(["a", "c"]).memberFor({
      group: "example.com",
      kind: "Widget",
      namespace: "default",
      name: extra,
    }) as string;
    const counted = await objectsOf(extraMember);
    await widgets.create({ metadata: { name: extra }, spec: { size: 1 } } as Widget);
    await waitUntil(async () => (await objectsOf(extraMember)) === counted + 1, {
      what: `${extra} counted on ${extraMember}`,
      timeout: 10_000,
    });
    await widgets.delete(extra);
    await waitUntil(async () => (await objectsOf(extraMember)) === counted, {
      what: `${extra} uncounted`,
      timeout: 10_000,
    });
    expect(await a.mgr.metrics.text()).toMatch(
      /^capstan_shard_handovers_total\{ring="widgets",kind="Widget.example.com"\} [1-9]\d*$/m,
    );

    // Every widget was reconciled, and never on two replicas at once.
    for (const name of names) expect(overlap.runs.some((r) => r.name === name)).toBe(true);
    expect(overlap.max).toBe(1);
    for (const r of [a, c]) await r.mgr.stop();
    for (const name of names) await widgets.delete(name);
  }, 120_000);

  it("reassigns a crashed replica's objects once its Lease expired, and they are reconciled by the others", async () => {
    const overlap = new Overlap();
    const names = Array.from({ length: 12 }, (_, i) => `crash-${i}`);
    const widgets = cluster.client.resource(Widget, "default");
    for (const name of names) await widgets.create({ metadata: { name }, spec: { size: 2 } } as Widget);
    const x = replica("x", overlap);
    const y = replica("y", overlap);
    await waitUntil(() => balancedOver(["x", "y"], names), { what: "x and y share", timeout: 30_000 });

    // Every socket of x goes away: it can neither renew its Lease nor release it.
    await x.client.close();
    await expect(x.run).rejects.toBeInstanceOf(ShardMembershipLostError);
    await waitUntil(() => balancedOver(["y"], names), { what: "y took x's objects", timeout: 30_000 });
    // x's objects were reconciled again by y after the move: update them and see y do it.
    for (const name of names) await widgets.patch(name, { spec: { size: 9 } }, { type: "merge" });
    await waitUntil(
      async () =>
        (await cluster.client.resource(ConfigMap, "default").list()).items.filter(
          (c) => names.includes(c.metadata?.name as string) && c.data?.size === "9",
        ).length === names.length,
      { what: "y reconciled every widget", timeout: 10_000 },
    );
    expect(overlap.max).toBe(1);
    await y.mgr.stop();
    for (const name of names) await widgets.delete(name);
  }, 120_000);
});
