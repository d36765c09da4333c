/**
 * Assignment at admission (`sharding: { admission }`): two sharded replicas serve the shard
 * assignment webhook that `cluster.runSharded` registers, and a new object comes back from its
 * create already labelled with the member the ring gives it, without waiting for the coordinator.
 */
import { type ShardedRun, startTestCluster, waitUntil } from "capstan-dev/testing";
import type { ConfigMap as ConfigMapObject } from "kubernetes-types/core/v1.d.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Operator, operator } from "../../packages/capstan/src/operator/index.ts";
import { HashRing } from "../../packages/capstan/src/runtime/hash-ring.ts";
import { runAdmission } from "../../packages/capstan/src/webhooks/admission.ts";
import { fileFixture } from "../support/file-fixture.ts";
import { ConfigMap, Machine, machineCrd, namespace } from "./support/cluster.ts";

const cluster = fileFixture(() => startTestCluster({ crds: [machineCrd] }));

const RING = "admitted";
const SHARD = `shard.capstan.dev/${RING}`;
const DRAIN = `drain.shard.capstan.dev/${RING}`;

/** Every replica's operator, as `runSharded` made them. */
const replicas: Operator[] = [];

/** Machines reconciled (nothing to do: only where they are matters), owning ConfigMaps. */
function admittedOperator(): Operator {
  const op = operator({ name: RING });
  replicas.push(op);
  op.controller(Machine)
    .owns(ConfigMap)
    .reconcile(async () => {});
  return op;
}

let sharded: ShardedRun;
let ns: string;
let members: string[];
const machines = () => cluster.client.resource(Machine, ns);
const ringChoice = (name: string) =>
  new HashRing(members).memberFor({ group: Machine.group, kind: Machine.kind, namespace: ns, name });
const machine = (name: string, labels?: Record<string, string>) =>
  Machine.make({ metadata: { name, namespace: ns, ...(labels ? { labels } : {}) }, spec: { switchPosition: "up" } });

beforeAll(async () => {
  ns = await namespace(cluster, "admission");
  // A longer timeout than the default 2 s: a loaded test machine must not turn a slow answer into a missing label.
  sharded = await cluster.runSharded(admittedOperator, { replicas: 2, sharding: { admission: { timeout: "10s" } } });
  members = sharded.replicas.map((r) => r.member);
  // The replica answering has seen every member's Lease: for each member, a name the ring gives it
  // comes back from a dry-run create labelled with that member.
  const probes = members.map((m) => {
    for (let i = 0; ; i++) if (ringChoice(`probe-${i}`) === m) return `probe-${i}`;
  });
  await waitUntil(
    async () => {
      for (const name of probes) {
        const dry = await machines().create(machine(name), { dryRun: true });
        if (dry.metadata?.labels?.[SHARD] !== ringChoice(name)) return false;
      }
      return true;
    },
    { what: "the admission webhook seeing every member", timeout: cluster.waitTimeout },
  );
}, 120_000);
afterAll(() => sharded?.stop());

describe("assignment at admission", () => {
  it("labels a new object with the ring's choice in the create's answer, and its member reconciles it", async () => {
    const names = Array.from({ length: 8 }, (_, i) => `m-${i}`);
    for (const name of names) {
      const created = await machines().create(machine(name));
      expect(created.metadata?.labels?.[SHARD], name).toBe(ringChoice(name));
    }
    // Spread over both members, and the coordinator agrees (nothing is moved afterwards).
    expect(new Set(names.map(ringChoice)).size).toBe(2);
    for (const name of names) {
      const m = await cluster.waitFor(Machine, `${ns}/${name}`, (o) => o.metadata?.labels?.[SHARD] !== undefined);
      expect(m.metadata?.labels?.[SHARD]).toBe(ringChoice(name));
      expect(m.metadata?.labels?.[DRAIN]).toBeUndefined();
    }
  });

  it("labels a new child with its controller owner's member", async () => {
    const owner = await machines().create(machine("owner"));
    const configMaps = cluster.client.resource(ConfigMap, ns);
    const child = await configMaps.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: "owner-child",
        namespace: ns,
        ownerReferences: [
          {
            apiVersion: `${Machine.group}/${Machine.version}`,
            kind: Machine.kind,
            name: "owner",
            uid: owner.metadata?.uid as string,
            controller: true,
          },
        ],
      },
    } as ConfigMapObject);
    expect(owner.metadata?.labels?.[SHARD]).toBe(ringChoice("owner"));
    expect(child.metadata?.labels?.[SHARD]).toBe(ringChoice("owner"));
    // A ConfigMap without a controller owner of a ring kind is none of the ring's business.
    const loose = await configMaps.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "loose", namespace: ns },
    } as ConfigMapObject);
    expect(loose.metadata?.labels?.[SHARD]).toBeUndefined();
  });

  it("leaves an object carrying a shard or drain label as it is", async () => {
    // A member name the ring would not choose for it: kept, and the coordinator's to correct.
    const other = members.find((m) => m !== ringChoice("labelled")) as string;
    const labelled = await machines().create(machine("labelled", { [SHARD]: other }));
    expect(labelled.metadata?.labels?.[SHARD]).toBe(other);
    const draining = await machines().create(machine("draining", { [DRAIN]: "true" }));
    expect(draining.metadata?.labels?.[SHARD]).toBeUndefined();
    expect(draining.metadata?.labels?.[DRAIN]).toBe("true");

    // The configuration's objectSelector keeps such creates from the webhook; its handler, called
    // anyway (a configuration edited by hand), answers without a patch too.
    const [webhook] = (replicas[0] as Operator).webhooks({ sharding: { admission: true } });
    const handler = { name: "shard assignment", type: "mutating" as const, fn: webhook?.fn as never };
    const review = (labels: Record<string, string>, name = "by-hand") =>
      runAdmission(handler, {
        uid: name,
        kind: { group: Machine.group, version: Machine.version, kind: Machine.kind },
        resource: { group: Machine.group, version: Machine.version, resource: Machine.plural },
        name,
        namespace: ns,
        operation: "CREATE",
        userInfo: { username: "test" },
        object: machine(name, labels),
      });
    expect((await review({ [SHARD]: other })).response).toEqual({ uid: "by-hand", allowed: true });
    expect((await review({ [DRAIN]: "true" })).response).toEqual({ uid: "by-hand", allowed: true });
    // Unlabelled, the same call is answered with the label (the handler works, the guard made the difference).
    expect((await review({})).response.patch).toBeDefined();
  });

  it("leaves an object named by generateName to the coordinator (the API server names it after admission)", async () => {
    const created = await machines().create(
      Machine.make({ metadata: { generateName: "gen-", namespace: ns }, spec: { switchPosition: "up" } }),
    );
    expect(created.metadata?.labels?.[SHARD]).toBeUndefined();
    const name = created.metadata?.name as string;
    const assigned = await cluster.waitFor(Machine, `${ns}/${name}`, (o) => o.metadata?.labels?.[SHARD] !== undefined);
    expect(assigned.metadata?.labels?.[SHARD]).toBe(ringChoice(name));
  });
});
