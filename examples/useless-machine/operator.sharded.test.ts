/**
 * The useless machine run as three sharded replicas (docs/runtime.md, "Sharding"): the scenarios
 * of operator-scenarios.ts unchanged, then a replica stopped while its machines have work to do,
 * which the other two take over with their Switches.
 */
import { Namespace } from "capstan/core";
import { type ShardedRun, startTestCluster, type TestCluster, waitUntil } from "capstan-dev/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MACHINE_LABEL, Machine, Switch, uselessMachineOperator } from "./operator.ts";
import { FLIP_DELAY, uselessMachineScenarios } from "./operator-scenarios.ts";

/** A hand-over waits for a drain or a coordinator's election on a loaded machine: more than a plain wait. */
const HANDOVER_TIMEOUT = "30s";

let cluster: TestCluster;
let sharded: ShardedRun;
beforeAll(async () => {
  cluster = await startTestCluster();
  sharded = await cluster.runSharded(() => uselessMachineOperator({ flipDelay: FLIP_DELAY }), { replicas: 3 });
}, 60_000);
afterAll(() => cluster?.stop());

describe("useless machine, three sharded replicas", () => {
  uselessMachineScenarios(() => cluster);

  it("moves a stopped replica's machines and their Switches to the others, which finish its work", async () => {
    const ns = "handover";
    await cluster.client.resource(Namespace).create(Namespace.make({ metadata: { name: ns } }));
    const machines = cluster.client.resource(Machine, ns);
    const switches = cluster.client.resource(Switch, ns);
    const names = Array.from({ length: 9 }, (_, i) => `m-${i}`);
    for (const name of names) {
      await machines.create(Machine.make({ metadata: { name, namespace: ns }, spec: { switches: 1 } }));
    }
    for (const name of names) await cluster.waitFor(Machine, `${ns}/${name}`, (m) => m.status?.positions === "d");

    // Spread over the replicas; each Switch on its machine's replica.
    const holders = new Map<string, string>();
    for (const m of (await machines.list()).items) {
      const replica = sharded.replicaOf(m);
      expect(replica, `machine ${m.metadata.name} assigned`).toBeDefined();
      holders.set(m.metadata.name as string, replica?.member as string);
    }
    expect(new Set(holders.values()).size).toBeGreaterThan(1);
    // A Switch the operator creates through its client is labelled by the coordinator once it sees
    // it (docs/runtime.md, "Sharding"): a moment after its machine counted it, maybe.
    const switchesWithTheirMachines = async (machineMembers: ReadonlyMap<string | undefined, string | undefined>) =>
      (await switches.list()).items.every(
        (sw) => sharded.replicaOf(sw)?.member === machineMembers.get(sw.metadata.labels?.[MACHINE_LABEL]),
      );
    await waitUntil(() => switchesWithTheirMachines(holders), {
      what: "every Switch on its machine's replica",
      timeout: cluster.waitTimeout,
    });

    // One replica's machines get work: their own switches up (a flip waits the delay, requeued),
    // then that replica stops, then they get more (a second Switch each) that only the others can do.
    const leaving = sharded.replicas.find((r) => r.member === holders.get("m-0"));
    const theirs = names.filter((n) => holders.get(n) === leaving?.member);
    for (const name of theirs) {
      await machines.patch(name, { spec: { switchPosition: "up" } }, { type: "merge" });
    }
    await leaving?.stop();
    expect(sharded.running().map((r) => r.member)).not.toContain(leaving?.member);
    for (const name of theirs) {
      await machines.patch(name, { spec: { switches: 2 } }, { type: "merge" });
    }

    // The others do it: two Switches down and the own switch back down, on a live replica.
    for (const name of theirs) {
      await cluster.waitFor(
        Machine,
        `${ns}/${name}`,
        (m) =>
          m.status?.positions === "dd" &&
          m.spec.switchPosition === "down" &&
          sharded.running().includes(sharded.replicaOf(m) as never),
        { timeout: HANDOVER_TIMEOUT },
      );
    }
    // Every machine and Switch is held by a running replica, a Switch by its machine's.
    const live = new Set(sharded.running().map((r) => r.member));
    const now = new Map((await machines.list()).items.map((m) => [m.metadata.name, sharded.replicaOf(m)?.member]));
    expect([...now.values()].every((member) => live.has(member as string))).toBe(true);
    for (const name of names.filter((n) => !theirs.includes(n))) expect(now.get(name)).toBe(holders.get(name));
    await waitUntil(() => switchesWithTheirMachines(now), {
      what: "every Switch on its machine's new replica",
      timeout: cluster.waitTimeout,
    });
  }, 90_000);
});
