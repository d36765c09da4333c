import { startTestCluster, waitUntil } from "capstan-dev/testing";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { type Operator, operator } from "../../packages/capstan/src/operator/index.ts";
import { HashRing } from "../../packages/capstan/src/runtime/hash-ring.ts";
import { fileFixture } from "../support/file-fixture.ts";
import { Machine, machineCrd, namespace } from "./support/cluster.ts";

const cluster = fileFixture(() => startTestCluster({ crds: [machineCrd] }));

// client-go's proportions scaled down by half (sharding.e2e.test.ts in test/runtime says why not less).
const timings = { leaseDuration: "8s", renewDeadline: 5000, retryPeriod: 500 };
const SHARD = "shard.capstan.dev/sharded";

describe("Kopf-style handlers on a sharded operator", () => {
  it("moves handler progress, finalizers and daemons with the object: daemons stop on the old replica before they start on the new one", async () => {
    const ns = await namespace(cluster, "sharded");
    const created: string[] = [];
    const deleted: string[] = [];
    const daemonsRunning = new Map<string, number>();
    let maxDaemonsPerObject = 0;
    const daemonStarts: string[] = [];
    const replica = (member: string): Operator => {
      const op = operator({ name: "sharded" });
      op.on.create(Machine, async ({ name }) => {
        created.push(`${member}:${name}`);
      });
      op.on.delete(Machine, async ({ name }) => {
        deleted.push(`${member}:${name}`);
      });
      op.daemon(Machine, async ({ name, signal }) => {
        const n = (daemonsRunning.get(name) ?? 0) + 1;
        daemonsRunning.set(name, n);
        maxDaemonsPerObject = Math.max(maxDaemonsPerObject, n);
        daemonStarts.push(`${member}:${name}`);
        await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
        daemonsRunning.set(name, (daemonsRunning.get(name) ?? 1) - 1);
      });
      return op;
    };
    const start = (op: Operator, member: string) => {
      const abort = new AbortController();
      const done = op.start({
        client: cluster.client,
        signal: abort.signal,
        namespaces: [ns],
        logger: pino({ level: "silent" }),
        informerDefaults: { backoff: { initial: 20, max: 200 } },
        gracefulShutdownTimeout: "5s",
        sharding: { ...timings, member, namespace: ns },
        leaderElection: { ...timings, namespace: ns },
      });
      done.catch(() => {});
      return { abort, done };
    };
    const names = Array.from({ length: 10 }, (_, i) => `m-${i}`);
    const machines = cluster.client.resource(Machine, ns);
    const ownerAmong = (members: string[], name: string) =>
      new HashRing(members).memberFor({ group: Machine.group, kind: Machine.kind, namespace: ns, name });
    const balanced = async (members: string[]) => {
      const items = (await machines.list()).items;
      return (
        items.length === names.length &&
        items.every((m) => m.metadata?.labels?.[SHARD] === ownerAmong(members, m.metadata?.name as string))
      );
    };

    const p = replica("p");
    const q = replica("q");
    const runP = start(p, "p");
    let runQ: ReturnType<typeof start> | undefined;
    try {
      for (const name of names) {
        await machines.create(Machine.make({ metadata: { name, namespace: ns }, spec: { switchPosition: "up" } }));
      }
      await waitUntil(() => balanced(["p"]), { what: "p holds every machine", timeout: 30_000 });
      await waitUntil(() => created.length === names.length && daemonStarts.length === names.length, {
        what: "p handled every create and started every daemon",
        timeout: 30_000,
      });

      runQ = start(q, "q");
      await waitUntil(() => balanced(["p", "q"]), { what: "p and q share", timeout: 30_000 });
      const movedToQ = names.filter((n) => ownerAmong(["p", "q"], n) === "q");
      expect(movedToQ.length).toBeGreaterThan(0);
      await waitUntil(() => movedToQ.every((n) => daemonStarts.includes(`q:${n}`)), {
        what: "q started the daemons of the machines it took",
        timeout: 30_000,
      });
      // p let go of them: one daemon per machine, on its member, and never two at once.
      await waitUntil(() => p.runningDaemons() === names.length - movedToQ.length, {
        what: "p's daemons of moved machines stopped",
        timeout: 10_000,
      });
      expect(q.runningDaemons()).toBe(movedToQ.length);
      expect(maxDaemonsPerObject).toBe(1);
      // The create handlers' success moved with the objects: none ran again on q.
      expect(created.filter((c) => c.startsWith("q:"))).toEqual([]);

      // A machine on q is deleted: q runs the delete handler and releases the finalizer.
      const victim = movedToQ[0] as string;
      await machines.delete(victim);
      await waitUntil(async () => (await machines.list()).items.every((m) => m.metadata?.name !== victim), {
        what: "the machine is gone",
        timeout: 30_000,
      });
      expect(deleted).toEqual([`q:${victim}`]);

      // The rest go while their replicas run: a stopped operator would leave its finalizers on them,
      // which a real API server keeps (and with them the namespace and the CRD the cluster deletes).
      for (const name of names) if (name !== victim) await machines.delete(name);
      await waitUntil(async () => (await machines.list()).items.length === 0, {
        what: "every machine gone, their finalizers released by their replicas",
        timeout: 30_000,
      });
      expect(deleted.length).toBe(names.length);
    } finally {
      runP.abort.abort();
      runQ?.abort.abort();
      await runP.done.catch(() => {});
      await runQ?.done.catch(() => {});
    }
    expect(p.runningDaemons() + q.runningDaemons()).toBe(0);
  }, 120_000);
});
