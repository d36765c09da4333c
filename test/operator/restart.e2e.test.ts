import { startTestCluster, waitUntil } from "capstan-dev/testing";
import { describe, expect, it } from "vitest";
import { isAlreadyExists } from "../../packages/capstan/src/client/errors.ts";
import { type Operator, operator } from "../../packages/capstan/src/operator/index.ts";
import { fileFixture } from "../support/file-fixture.ts";
import {
  ConfigMap,
  handlerState,
  Machine,
  machineCrd,
  namespace,
  type RunningOperator,
  run,
} from "./support/cluster.ts";

const cluster = fileFixture(() => startTestCluster({ crds: [machineCrd] }));

const machines = (ns: string) => cluster.client.resource(Machine, ns);
/** The essence operator "restarts" stored on a Machine (in its status), if any. */
const essence = (m: { status?: unknown }) => handlerState(m, "restarts")["last-handled-configuration"];

describe("operator restarts", () => {
  it("resumes existing objects after a restart instead of creating them again, and sees updates made while it was away", async () => {
    const ns = await namespace(cluster, "resume");
    const calls: string[] = [];
    const build = (): Operator => {
      const op = operator({ name: "restarts" });
      op.on.create(Machine, async function created({ name }) {
        calls.push(`create:${name}`);
      });
      op.on.update(Machine, async function updated({ name, diff }) {
        calls.push(`update:${name}:${diff.map((d) => d.field).join(",")}`);
      });
      op.on.resume(Machine, async function resumed({ name }) {
        calls.push(`resume:${name}`);
      });
      return op;
    };
    let running = await run(build(), cluster, { namespaces: [ns] });
    await machines(ns).create(Machine.make({ metadata: { name: "a", namespace: ns }, spec: { switchPosition: "up" } }));
    await machines(ns).create(Machine.make({ metadata: { name: "b", namespace: ns }, spec: { switchPosition: "up" } }));
    await waitUntil(async () => (await machines(ns).list()).items.every((m) => essence(m)), {
      what: "both handled",
    });
    await running.stop();
    expect(calls.sort()).toEqual(["create:a", "create:b"]);

    calls.length = 0;
    await machines(ns).patch("b", { spec: { size: 2 } }, { type: "merge" });
    running = await run(build(), cluster, { namespaces: [ns] });
    try {
      await waitUntil(() => calls.length >= 3, { what: "resume and update after the restart" });
      await new Promise((r) => setTimeout(r, 300));
      // `a` resumes; `b` changed while we were away: its update runs with the resume handlers mixed in.
      expect(calls.sort()).toEqual(["resume:a", "resume:b", "update:b:spec.size"]);
    } finally {
      await running.stop();
    }
  });

  it("after a crash between a handler's effect and its bookkeeping, re-runs only that handler, once, creating no duplicate child", async () => {
    const ns = await namespace(cluster, "crash");
    const runs = { prepare: 0, makeChild: 0 };
    const childCreates: string[] = [];
    let crashNext = true;
    let current: RunningOperator | undefined;
    const build = (): Operator => {
      const op = operator({ name: "restarts" });
      op.on.create(Machine, async function prepare() {
        runs.prepare++;
      });
      op.on.create(Machine, async function makeChild({ adopt, api }) {
        runs.makeChild++;
        // Named after its parent (adopt's default), so a re-run cannot make a second child.
        const child = adopt(ConfigMap.make({ data: { owner: "machine" } }));
        try {
          await api.resource(ConfigMap).create(child);
          childCreates.push("created");
        } catch (err) {
          if (!isAlreadyExists(err)) throw err;
          childCreates.push("already-exists");
        }
      });
      return op;
    };
    const hooks = {
      beforeBookkeeping: ({ handlerId }: { handlerId: string }) => {
        if (handlerId !== "makeChild" || !crashNext) return undefined;
        crashNext = false;
        current?.abort(); // the process "dies" right after the child was created
        return "abandon" as const;
      },
    };
    current = await run(build(), cluster, { namespaces: [ns], hooks });
    await machines(ns).create(Machine.make({ metadata: { name: "m", namespace: ns }, spec: { switchPosition: "up" } }));
    await current.done;
    expect(runs).toEqual({ prepare: 1, makeChild: 1 });
    const crashed = await machines(ns).get("m");
    expect(essence(crashed)).toBeUndefined();
    expect(JSON.parse(handlerState(crashed, "restarts").prepare ?? "{}")).toMatchObject({
      purpose: "create",
      success: true,
    });

    current = await run(build(), cluster, { namespaces: [ns], hooks });
    try {
      await waitUntil(async () => essence(await machines(ns).get("m")), {
        what: "the create to complete",
      });
      await new Promise((r) => setTimeout(r, 300));
      expect(runs).toEqual({ prepare: 1, makeChild: 2 });
      expect(childCreates).toEqual(["created", "already-exists"]);
      const children = (await cluster.client.resource(ConfigMap, ns).list()).items.filter((c) =>
        c.metadata?.ownerReferences?.some((r) => r.uid === crashed.metadata.uid),
      );
      expect(children.map((c) => c.metadata?.name)).toEqual(["m"]);
    } finally {
      await current.stop();
    }
  });
});
