/**
 * Where Kopf-style handlers keep their state, seen from the API server: in `status.capstan` of a
 * kind defined with a status (one write per handler: result and state together), in annotations
 * when the CRD in the cluster prunes that field, and read from annotations written by an older
 * operator version.
 */
import { startTestCluster, waitUntil } from "capstan-dev/testing";
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../packages/capstan/src/client/types.ts";
import { operator } from "../../packages/capstan/src/operator/index.ts";
import { toCrd } from "../../packages/capstan/src/resources/crd.ts";
import { defineResource } from "../../packages/capstan/src/resources/define-resource.ts";
import { logCapture } from "../../packages/capstan-dev/src/testing/log-capture.ts";
import { fileFixture } from "../support/file-fixture.ts";
import { handlerState, Machine, machineCrd, namespace, run } from "./support/cluster.ts";

/** A kind whose status keeps only what its schema declares (no unknown fields). */
const Lamp = defineResource({
  group: "lamps.capstan.test",
  version: "v1",
  kind: "Lamp",
  scope: "Namespaced",
  spec: Type.Object({ watts: Type.Integer() }),
  status: Type.Object({ on: Type.Optional(Type.Boolean()) }),
});

/** Lamp's CRD as an older generator wrote it: without `status.capstan`, so the server prunes it. */
const oldLampCrd = (() => {
  const crd = toCrd(Lamp);
  for (const v of crd.spec.versions) delete v.schema?.openAPIV3Schema?.properties?.status?.properties?.capstan;
  return crd;
})();

const cluster = fileFixture(() => startTestCluster({ crds: [machineCrd, oldLampCrd] }));
const machines = (ns: string) => cluster.client.resource(Machine, ns);

const ESSENCE = "last-handled-configuration";

describe("handler state storage", () => {
  it("writes a create handler's status result and its state in one status write, and nothing else", async () => {
    const ns = await namespace(cluster, "one-write");
    const op = operator({ name: "single" });
    let runs = 0;
    op.on.create(Machine, async function created({ patch, spec }) {
      runs++;
      patch.status.flips = 1;
      return { seen: spec.switchPosition };
    });
    const created = await machines(ns).create(
      Machine.make({ metadata: { name: "m", namespace: ns }, spec: { switchPosition: "up" } }),
    );
    const watch = new AbortController();
    const events = await machines(ns).watch({
      resourceVersion: created.metadata.resourceVersion,
      signal: watch.signal,
    });
    const running = await run(op, cluster, { namespaces: [ns] });
    const modified: KubeObject[] = [];
    try {
      for await (const event of events) {
        if (event.type !== "MODIFIED") continue;
        modified.push(event.object);
        if (handlerState(event.object, "single")[ESSENCE] !== undefined) break;
      }
    } finally {
      watch.abort();
      await running.stop();
    }
    // One modification carried the handler's status, its result and the stored essence.
    expect(modified).toHaveLength(1);
    const written = modified[0] as ReturnType<typeof Machine.make>;
    expect(written.status).toMatchObject({ flips: 1, created: { seen: "up" } });
    expect(JSON.parse(handlerState(written, "single")[ESSENCE] ?? "")).toEqual({ spec: { switchPosition: "up" } });
    expect(Object.keys(written.metadata.annotations ?? {})).toEqual([]);
    // ...and nothing was written after it.
    expect((await machines(ns).get("m")).metadata.resourceVersion).toBe(written.metadata.resourceVersion);
    expect(runs).toBe(1);
  });

  it("keeps state in annotations, after one warning, when the CRD in the cluster prunes status.capstan", async () => {
    const ns = await namespace(cluster, "pruned");
    const lamps = cluster.client.resource(Lamp, ns);
    const logs = logCapture(process.env.OP_LOG ?? "silent");
    const op = operator({ name: "lamps" });
    const runs: string[] = [];
    op.on.create(Lamp, async function switchOn({ name, patch }) {
      runs.push(name);
      patch.status.on = true;
    });
    // The cluster keeps the old CRD: the operator does not register its own.
    const running = await run(op, cluster, { namespaces: [ns], logger: logs.logger, registerCrds: false });
    try {
      for (const name of ["a", "b"]) {
        await lamps.create(Lamp.make({ metadata: { name, namespace: ns }, spec: { watts: 40 } }));
        await waitUntil(
          async () => (await lamps.get(name)).metadata.annotations?.[`lamps.capstan.dev/${ESSENCE}`] !== undefined,
          { what: `the essence of ${name} in its annotations` },
        );
      }
      for (const name of ["a", "b"]) {
        const lamp = await lamps.get(name);
        expect(lamp.status).toEqual({ on: true });
        expect(JSON.parse(lamp.metadata.annotations?.[`lamps.capstan.dev/${ESSENCE}`] ?? "")).toEqual({
          spec: { watts: 40 },
        });
      }
      expect(runs).toEqual(["a", "b"]);
      const warnings = logs.records.filter((r) => String(r.msg).includes("drops status.capstan"));
      expect(warnings).toHaveLength(1);
    } finally {
      await running.stop();
    }
  });

  it("takes over state an older version left in annotations: no second create, and the next essence moves to status", async () => {
    const ns = await namespace(cluster, "migrated");
    await machines(ns).create(
      Machine.make({
        metadata: {
          name: "m",
          namespace: ns,
          annotations: { [`upgraded.capstan.dev/${ESSENCE}`]: '{"spec":{"switchPosition":"up"}}\n' },
        },
        spec: { switchPosition: "up" },
      }),
    );
    const op = operator({ name: "upgraded" });
    const calls: string[] = [];
    op.on.create(Machine, async () => {
      calls.push("create");
    });
    op.on.update(Machine, async ({ diff }) => {
      calls.push(`update:${diff.map((d) => d.field).join(",")}`);
    });
    const running = await run(op, cluster, { namespaces: [ns] });
    try {
      await machines(ns).patch("m", { spec: { switchPosition: "down" } }, { type: "merge" });
      const moved = await waitUntil(
        async () => {
          const m = await machines(ns).get("m");
          return handlerState(m, "upgraded")[ESSENCE] !== undefined ? m : undefined;
        },
        { what: "the essence in status" },
      );
      expect(calls).toEqual(["update:spec.switchPosition"]);
      expect(JSON.parse(handlerState(moved, "upgraded")[ESSENCE] ?? "")).toEqual({
        spec: { switchPosition: "down" },
      });
      expect(moved.metadata.annotations ?? {}).not.toHaveProperty([`upgraded.capstan.dev/${ESSENCE}`]);
    } finally {
      await running.stop();
    }
  });
});
