/**
 * The useless machine's end-to-end scenarios, shared by operator.test.ts (one replica) and
 * operator.sharded.test.ts (three sharded replicas): the same assertions, whoever runs the
 * operator. The machine's own switch goes back down after the delay, Switches follow
 * `spec.switches` up and down, are flipped down one per delay, come back when deleted, and go
 * with their machine.
 */
import { toMilliseconds } from "capstan";
import { Event, Namespace } from "capstan/core";
import type { TestCluster } from "capstan-dev/testing";
import { beforeAll, expect, it, vi } from "vitest";
import { FLIPPED_AT_ANNOTATION, MACHINE_LABEL, Machine, Switch } from "./operator.ts";

/** Short enough for a fast test, long enough that a flip is never confused with the next one. */
export const FLIP_DELAY = "200ms";
const delayMs = toMilliseconds(FLIP_DELAY);

/**
 * Declares the scenarios as tests, against the cluster `getCluster` returns once the caller's
 * `beforeAll` started it and its operator (flip delay {@link FLIP_DELAY}); call inside a `describe`.
 */
export function uselessMachineScenarios(getCluster: () => TestCluster): void {
  let cluster: TestCluster;
  beforeAll(() => {
    cluster = getCluster();
  });

  async function namespace(name: string): Promise<string> {
    await cluster.client.resource(Namespace).create(Namespace.make({ metadata: { name } }));
    return name;
  }

  async function switchesOf(ns: string, machine: string) {
    const list = await cluster.client.resource(Switch, ns).list({ labelSelector: `${MACHINE_LABEL}=${machine}` });
    return list.items;
  }

  async function setPositions(ns: string, names: readonly string[], position: "up" | "down") {
    for (const name of names) {
      await cluster.client.resource(Switch, ns).patch(name, { spec: { position } }, { type: "merge" });
    }
  }

  it("moves the machine's own switch back down once the delay after status.seenAt has passed", async () => {
    const ns = await namespace("own-switch");
    const machines = cluster.client.resource(Machine, ns);
    await machines.create(
      Machine.make({ metadata: { name: "machine-1", namespace: ns }, spec: { switchPosition: "up" } }),
    );

    const seen = await cluster.waitFor(Machine, `${ns}/machine-1`, (m) => m.status?.seenAt !== undefined);
    expect(seen.spec.switchPosition).toBe("up");
    const down = await cluster.waitFor(Machine, `${ns}/machine-1`, (m) => m.spec.switchPosition === "down");
    const flipped = await cluster.waitFor(
      Machine,
      `${ns}/machine-1`,
      (m) => m.status?.seenAt === undefined && m.status?.lastFlipAt !== undefined,
    );
    expect(down.metadata.generation).toBe(2); // created up, flipped down by the operator: one spec change
    const seenAt = Date.parse(seen.status?.seenAt as string);
    const lastFlipAt = Date.parse(flipped.status?.lastFlipAt as string);
    expect(lastFlipAt - seenAt).toBeGreaterThanOrEqual(delayMs);

    // The Event is recorded after the flip's write, asynchronously: wait for it rather than list once.
    await vi.waitFor(
      async () => {
        const events = await cluster.client
          .resource(Event, ns)
          .list({ fieldSelector: "involvedObject.name=machine-1" });
        expect(events.items.map((e) => e.reason)).toContain("FlippedDown");
      },
      { timeout: 10_000, interval: 50 },
    );

    // Up again: it waits a fresh delay from the new sighting, not from the old one.
    await machines.patch("machine-1", { spec: { switchPosition: "up" } }, { type: "merge" });
    const again = await cluster.waitFor(
      Machine,
      `${ns}/machine-1`,
      (m) => m.status?.seenAt !== undefined && m.spec.switchPosition === "up",
    );
    const back = await cluster.waitFor(
      Machine,
      `${ns}/machine-1`,
      (m) => m.spec.switchPosition === "down" && m.status?.lastFlipAt !== flipped.status?.lastFlipAt,
    );
    expect(
      Date.parse(back.status?.lastFlipAt as string) - Date.parse(again.status?.seenAt as string),
    ).toBeGreaterThanOrEqual(delayMs);
  });

  it("creates spec.switches Switches labelled and owned by the machine, with their positions in status", async () => {
    const ns = await namespace("create-switches");
    const machine = await cluster.client
      .resource(Machine, ns)
      .create(Machine.make({ metadata: { name: "machine-3", namespace: ns }, spec: { switches: 3 } }));

    await cluster.waitFor(Machine, `${ns}/machine-3`, (m) => m.status?.positions === "ddd");
    const switches = await switchesOf(ns, "machine-3");
    expect(switches).toHaveLength(3);
    for (const sw of switches) {
      expect(sw.metadata.name).toMatch(/^switch-[a-z0-9]+$/);
      expect(sw.spec.position).toBe("down");
      expect(sw.metadata.ownerReferences).toEqual([
        expect.objectContaining({ kind: "Machine", name: "machine-3", uid: machine.metadata.uid, controller: true }),
      ]);
    }
  });

  it("flips switches a user turned up back down, no more than one per machine per delay", async () => {
    const ns = await namespace("flips");
    await cluster.client
      .resource(Machine, ns)
      .create(Machine.make({ metadata: { name: "busy", namespace: ns }, spec: { switches: 3 } }));
    await cluster.waitFor(Machine, `${ns}/busy`, (m) => m.status?.positions === "ddd");
    const names = (await switchesOf(ns, "busy")).map((s) => s.metadata.name as string);

    await setPositions(ns, names, "up");
    const seen = await cluster.waitFor(Machine, `${ns}/busy`, (m) => m.status?.seenAt !== undefined);
    const seenAt = seen.status?.seenAt as string;
    const done = await cluster.waitFor(Machine, `${ns}/busy`, (m) => m.status?.positions === "ddd", { timeout: "10s" });
    expect(done.status?.seenAt).toBeUndefined();

    // The times the operator flipped each switch: the first a full delay after it saw them up,
    // each next one at least a delay after the previous one.
    const flips = (await switchesOf(ns, "busy"))
      .map((s) => Date.parse(s.metadata.annotations?.[FLIPPED_AT_ANNOTATION] ?? ""))
      .sort((a, b) => a - b);
    expect(flips.every((t) => !Number.isNaN(t))).toBe(true);
    expect(flips).toHaveLength(3);
    expect(flips[0] as number).toBeGreaterThanOrEqual(Date.parse(seenAt) + delayMs);
    for (let i = 1; i < flips.length; i++) {
      expect((flips[i] as number) - (flips[i - 1] as number)).toBeGreaterThanOrEqual(delayMs);
    }
    expect(Date.parse(done.status?.lastFlipAt as string)).toBe(flips[2]);
  });

  it("scales Switches up and down with spec.switches, deleting the last ones in creation order", async () => {
    const ns = await namespace("scale");
    const machines = cluster.client.resource(Machine, ns);
    await machines.create(Machine.make({ metadata: { name: "scaled", namespace: ns }, spec: { switches: 2 } }));
    await cluster.waitFor(Machine, `${ns}/scaled`, (m) => m.status?.positions === "dd");

    await machines.patch("scaled", { spec: { switches: 5 } }, { type: "merge" });
    await cluster.waitFor(Machine, `${ns}/scaled`, (m) => m.status?.positions === "ddddd");
    const five = await switchesOf(ns, "scaled");
    expect(five).toHaveLength(5);
    // Creation order as the operator sees it: creationTimestamp (whole seconds), then name.
    const inOrder = five
      .map((s) => [s.metadata.creationTimestamp ?? "", s.metadata.name ?? ""] as const)
      .sort(([t1, n1], [t2, n2]) => (t1 === t2 ? (n1 < n2 ? -1 : 1) : t1 < t2 ? -1 : 1))
      .map(([, name]) => name);

    await machines.patch("scaled", { spec: { switches: 2 } }, { type: "merge" });
    await cluster.waitFor(Machine, `${ns}/scaled`, (m) => m.status?.positions === "dd");
    const remaining = (await switchesOf(ns, "scaled")).map((s) => s.metadata.name as string).sort();
    expect(remaining).toEqual(inOrder.slice(0, 2).sort());

    await machines.patch("scaled", { spec: { switches: 0 } }, { type: "merge" });
    await cluster.waitFor(Machine, `${ns}/scaled`, (m) => m.status?.positions === "");
    expect(await switchesOf(ns, "scaled")).toHaveLength(0);
  });

  it("replaces a Switch deleted directly, and collects every Switch when the machine goes", async () => {
    const ns = await namespace("lifecycle");
    await cluster.client
      .resource(Machine, ns)
      .create(Machine.make({ metadata: { name: "doomed", namespace: ns }, spec: { switches: 2 } }));
    await cluster.waitFor(Machine, `${ns}/doomed`, (m) => m.status?.positions === "dd");
    const [first, second] = (await switchesOf(ns, "doomed")).map((s) => s.metadata.name as string);

    await cluster.client.resource(Switch, ns).delete(first as string);
    await cluster.waitForDeletion(Switch, `${ns}/${first}`);
    await expect.poll(async () => (await switchesOf(ns, "doomed")).length).toBe(2);
    const replaced = (await switchesOf(ns, "doomed")).map((s) => s.metadata.name);
    expect(replaced).toContain(second);
    expect(replaced).not.toContain(first);

    await cluster.client.resource(Machine, ns).delete("doomed");
    // On a real cluster its garbage collector may first have to learn the Machine kind.
    const collected = { timeout: cluster.timeouts.garbageCollection };
    for (const name of replaced) await cluster.waitForDeletion(Switch, `${ns}/${name}`, collected);
    expect(await switchesOf(ns, "doomed")).toHaveLength(0);
  });

  it("moves a relabelled Switch to the machine its label names: released by the old one, adopted by the new", async () => {
    const ns = await namespace("relabel");
    const machines = cluster.client.resource(Machine, ns);
    const a = await machines.create(Machine.make({ metadata: { name: "a", namespace: ns }, spec: { switches: 2 } }));
    const b = await machines.create(Machine.make({ metadata: { name: "b", namespace: ns }, spec: { switches: 1 } }));
    await cluster.waitFor(Machine, `${ns}/a`, (m) => m.status?.positions === "dd");
    await cluster.waitFor(Machine, `${ns}/b`, (m) => m.status?.positions === "d");
    const moved = (await switchesOf(ns, "a"))[0]?.metadata.name as string;

    await cluster.client
      .resource(Switch, ns)
      .patch(moved, { metadata: { labels: { [MACHINE_LABEL]: "b" } } }, { type: "merge" });

    // Each machine ends with its count of Switches, each labelled for it and controlled by it only:
    // a released the moved one and made a replacement; b adopted it and removed its extra one.
    const controllers = async (machine: string) =>
      (await switchesOf(ns, machine)).map((s) =>
        (s.metadata.ownerReferences ?? []).map((r) => `${r.name}:${r.uid}:${r.controller}`).join(","),
      );
    await expect
      .poll(async () => ({ a: await controllers("a"), b: await controllers("b") }), { timeout: 10_000 })
      .toEqual({
        a: [`a:${a.metadata.uid}:true`, `a:${a.metadata.uid}:true`],
        b: [`b:${b.metadata.uid}:true`],
      });
    expect((await switchesOf(ns, "a")).map((s) => s.metadata.name)).not.toContain(moved);

    // The Switch b kept survives a's deletion.
    const [kept] = await switchesOf(ns, "b");
    await machines.delete("a");
    await cluster.waitFor(Machine, `${ns}/b`, (m) => m.status?.positions === "d");
    // Garbage-collected: on a real cluster once its collector has learnt the Machine kind.
    const collected = { timeout: toMilliseconds(cluster.timeouts.garbageCollection) };
    await expect.poll(async () => (await switchesOf(ns, "a")).length, collected).toBe(0);
    expect((await switchesOf(ns, "b")).map((s) => s.metadata.uid)).toEqual([kept?.metadata.uid]);
  });
}
