import { startTestCluster, waitUntil } from "capstan-dev/testing";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { type Operator, operator } from "../../packages/capstan/src/operator/index.ts";
import { fileFixture } from "../support/file-fixture.ts";
import { Machine, machineCrd, namespace } from "./support/cluster.ts";

const cluster = fileFixture(() => startTestCluster({ crds: [machineCrd] }));

const machines = (ns: string) => cluster.client.resource(Machine, ns);

describe("two replicas with leader election", () => {
  it("handles each change on the leader only, and the standby takes over with resume after the leader stops", async () => {
    const ns = await namespace(cluster, "replicas");
    const calls: string[] = [];
    const replica = (id: string): Operator => {
      const op = operator({ name: "ha" });
      op.on.create(Machine, async ({ name }) => {
        calls.push(`${id}:create:${name}`);
      });
      op.on.update(Machine, async ({ name }) => {
        calls.push(`${id}:update:${name}`);
      });
      op.on.resume(Machine, async ({ name }) => {
        calls.push(`${id}:resume:${name}`);
      });
      return op;
    };
    const start = (op: Operator, id: string) => {
      const abort = new AbortController();
      const done = op.start({
        client: cluster.client,
        signal: abort.signal,
        namespaces: [ns],
        logger: pino({ level: "silent" }),
        informerDefaults: { backoff: { initial: 20, max: 200 } },
        gracefulShutdownTimeout: "5s",
        leaderElection: { namespace: ns, identity: id, leaseDuration: "2s", renewDeadline: "1s", retryPeriod: 100 },
      });
      return { abort, done };
    };
    const one = replica("one");
    const two = replica("two");
    const r1 = start(one, "one");
    await waitUntil(() => one.state === "leading", { what: "replica one to lead" });
    const r2 = start(two, "two");
    try {
      await waitUntil(() => two.state === "candidate", { what: "replica two to stand by" });
      await machines(ns).create(
        Machine.make({ metadata: { name: "m", namespace: ns }, spec: { switchPosition: "up" } }),
      );
      await waitUntil(() => calls.length === 1, { what: "the create" });
      await new Promise((r) => setTimeout(r, 300));
      expect(calls).toEqual(["one:create:m"]);

      r1.abort.abort(); // graceful: the Lease is released, so replica two takes over at once
      await r1.done;
      await waitUntil(() => two.state === "leading", { what: "replica two to lead" });
      await waitUntil(() => calls.length === 2, { what: "the resume on the new leader" });
      await machines(ns).patch("m", { spec: { size: 2 } }, { type: "merge" });
      await waitUntil(() => calls.length === 3, { what: "the update on the new leader" });
      expect(calls).toEqual(["one:create:m", "two:resume:m", "two:update:m"]);
    } finally {
      r1.abort.abort();
      r2.abort.abort();
      await Promise.all([r1.done, r2.done]);
    }
  });
});
