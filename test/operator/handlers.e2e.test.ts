import { startTestCluster, waitUntil } from "capstan-dev/testing";
import { describe, expect, it } from "vitest";
import { isNotFound } from "../../packages/capstan/src/client/errors.ts";
import { type DiffEntry, operator, PRESENT } from "../../packages/capstan/src/operator/index.ts";
import { fileFixture } from "../support/file-fixture.ts";
import { ConfigMap, eventsFor, handlerState, Machine, machineCrd, namespace, run } from "./support/cluster.ts";

const cluster = fileFixture(() => startTestCluster({ crds: [machineCrd] }));

function machines(ns: string) {
  return cluster.client.resource(Machine, ns);
}

describe("create and update handlers on the embedded API server", () => {
  it("fires create once, then update with a field diff, and never for status-only or metadata-only writes", async () => {
    const ns = await namespace(cluster, "create-update");
    const op = operator({ name: "machines" });
    const creates: string[] = [];
    const updates: DiffEntry[][] = [];
    const olds: unknown[] = [];
    op.on.create(Machine, async function created({ name, spec }) {
      creates.push(`${name}:${spec.switchPosition}`);
      return { seen: spec.switchPosition };
    });
    op.on.update(Machine, async ({ diff, old, new: current }) => {
      updates.push([...diff]);
      olds.push([old?.spec.switchPosition, current?.spec.switchPosition]);
    });
    const running = await run(op, cluster, { namespaces: [ns] });
    try {
      await machines(ns).create(
        Machine.make({ metadata: { name: "m1", namespace: ns }, spec: { switchPosition: "up" } }),
      );
      // The create handler's result lands in status.<handler id>; the essence is stored.
      const handled = await waitUntil(
        async () => {
          const m = await machines(ns).get("m1");
          return handlerState(m, "machines")["last-handled-configuration"] ? m : undefined;
        },
        { what: "the essence annotation" },
      );
      expect((handled.status as Record<string, unknown> | undefined)?.created).toEqual({ seen: "up" });
      expect(JSON.parse(handlerState(handled, "machines")["last-handled-configuration"] ?? "")).toEqual({
        spec: { switchPosition: "up" },
      });
      expect(creates).toEqual(["m1:up"]);

      // Status-only and metadata-only (finalizer-free) writes: no update.
      await machines(ns).patchStatus("m1", { status: { flips: 3 } });
      await machines(ns).patch("m1", { metadata: { annotations: { "other.capstan.dev/x": "1" } } }, { type: "merge" });
      await machines(ns).patch("m1", { metadata: { finalizers: ["example.com/hold"] } }, { type: "merge" });
      await machines(ns).patch("m1", { metadata: { finalizers: null } }, { type: "merge" });
      await machines(ns).patch("m1", { spec: { switchPosition: "down" } }, { type: "merge" });
      await waitUntil(() => updates.length === 1, { what: "the update handler" });
      expect(updates[0]).toEqual([
        { op: "change", path: ["spec", "switchPosition"], field: "spec.switchPosition", old: "up", new: "down" },
      ]);
      // A label is part of the essence: it is an update too.
      await machines(ns).patch("m1", { metadata: { labels: { tier: "gold" } } }, { type: "merge" });
      await waitUntil(() => updates.length === 2, { what: "the label update" });
      expect(updates[1]).toEqual([
        { op: "add", path: ["metadata"], field: "metadata", old: undefined, new: { labels: { tier: "gold" } } },
      ]);
      expect(olds).toEqual([
        ["up", "down"],
        ["down", "down"],
      ]);
      // Give stray events a chance to show up before asserting their absence.
      await machines(ns).patchStatus("m1", { status: { flips: 4 } });
      await new Promise((r) => setTimeout(r, 300));
      expect(updates).toHaveLength(2);
      expect(creates).toHaveLength(1);
    } finally {
      await running.stop();
    }
  });

  it("runs field handlers with the field's old and new values, and a handler's own spec patch does not re-trigger it", async () => {
    const ns = await namespace(cluster, "field");
    const op = operator({ name: "useless" });
    const calls: { old: unknown; new: unknown }[] = [];
    op.on.field(Machine, "spec.switchPosition", async function flip(ctx) {
      calls.push({ old: ctx.old, new: ctx.new });
      if (ctx.new === "up") ctx.patch.spec.switchPosition = "down";
    });
    const running = await run(op, cluster, { namespaces: [ns] });
    try {
      await machines(ns).create(
        Machine.make({ metadata: { name: "m", namespace: ns }, spec: { switchPosition: "down" } }),
      );
      await waitUntil(() => calls.length === 1, { what: "the field handler on create" });
      await machines(ns).patch("m", { spec: { switchPosition: "up" } }, { type: "merge" });
      await waitUntil(async () => (await machines(ns).get("m")).spec.switchPosition === "down", {
        what: "the switch back down",
      });
      await machines(ns).patch("m", { spec: { size: 3 } }, { type: "merge" });
      await new Promise((r) => setTimeout(r, 300));
      expect(calls).toEqual([
        { old: undefined, new: "down" },
        { old: "down", new: "up" },
      ]);
      const stored = JSON.parse(
        handlerState(await machines(ns).get("m"), "useless")["last-handled-configuration"] ?? "",
      );
      expect(stored.spec.switchPosition).toBe("down");
    } finally {
      await running.stop();
    }
  });

  it("runs several create handlers in order, collecting patches, and adopts an idempotently named child", async () => {
    const ns = await namespace(cluster, "ordered");
    const op = operator({ name: "ordered" });
    const order: string[] = [];
    op.on.create(Machine, async function first({ patch }) {
      order.push("first");
      patch.metadata.labels.first = "done";
      patch.status.flips = 1;
    });
    op.on.create(Machine, async function second({ adopt, api, obj }) {
      order.push("second");
      const child = adopt(ConfigMap.make({ data: { position: obj.spec.switchPosition } }));
      await api.resource(ConfigMap).create(child);
    });
    const running = await run(op, cluster, { namespaces: [ns] });
    try {
      const m = await machines(ns).create(
        Machine.make({ metadata: { name: "m", namespace: ns }, spec: { switchPosition: "up" } }),
      );
      const cm = await waitUntil(() => cluster.client.resource(ConfigMap, ns).get("m"), {
        what: "the child ConfigMap",
      });
      expect(cm.metadata?.ownerReferences).toEqual([
        {
          apiVersion: "useless.capstan.test/v1alpha1",
          kind: "Machine",
          name: "m",
          uid: m.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
      const after = await waitUntil(
        async () => {
          const o = await machines(ns).get("m");
          return handlerState(o, "ordered")["last-handled-configuration"] ? o : undefined;
        },
        { what: "the cause to end" },
      );
      expect(order).toEqual(["first", "second"]);
      expect(after.metadata.labels).toEqual({ first: "done" });
      expect(after.status?.flips).toBe(1);
      // Progress records are purged once the cause is complete.
      expect(Object.keys(handlerState(after, "ordered"))).toEqual(["last-handled-configuration"]);
      expect(Object.keys(after.metadata.annotations ?? {}).filter((k) => k.startsWith("ordered.capstan.dev/"))).toEqual(
        [],
      );
      // The handler's own label did not turn into an update (nothing else registered to see it, but
      // the stored essence includes it, so no update cause is pending).
      expect(JSON.parse(handlerState(after, "ordered")["last-handled-configuration"] ?? "")).toEqual({
        spec: { switchPosition: "up" },
        metadata: { labels: { first: "done" } },
      });
    } finally {
      await running.stop();
    }
  });
});

describe("built-in kinds and namespaces", () => {
  it("handles a built-in kind without status: the result is dropped, the cause still completes", async () => {
    const ns = await namespace(cluster, "builtin");
    const op = operator({ name: "cms" });
    const seen: string[] = [];
    op.on.create(ConfigMap, async function index({ obj, patch }) {
      seen.push(obj.data?.key ?? "");
      patch.metadata.labels.indexed = "yes";
      return "not storable";
    });
    const running = await run(op, cluster, { namespaces: [ns] });
    try {
      await cluster.client
        .resource(ConfigMap, ns)
        .create(ConfigMap.make({ metadata: { name: "c", namespace: ns }, data: { key: "v" } }));
      const cm = await waitUntil(
        async () => {
          const c = await cluster.client.resource(ConfigMap, ns).get("c");
          return c.metadata?.annotations?.["cms.capstan.dev/last-handled-configuration"] ? c : undefined;
        },
        { what: "the cause to end" },
      );
      expect(cm.metadata?.labels).toEqual({ indexed: "yes" });
      expect(seen).toEqual(["v"]);
    } finally {
      await running.stop();
    }
  });

  it("writes no state at all on objects that no handler's filters match", async () => {
    const ns = await namespace(cluster, "filtered");
    const op = operator({ name: "choosy" });
    const seen: string[] = [];
    op.on.create(
      Machine,
      { when: (m) => m.spec.switchPosition === "up", labels: { team: PRESENT } },
      async ({ name }) => {
        seen.push(name);
      },
    );
    const running = await run(op, cluster, { namespaces: [ns] });
    try {
      await machines(ns).create(
        Machine.make({
          metadata: { name: "down", namespace: ns, labels: { team: "a" } },
          spec: { switchPosition: "down" },
        }),
      );
      await machines(ns).create(
        Machine.make({ metadata: { name: "unlabelled", namespace: ns }, spec: { switchPosition: "up" } }),
      );
      await machines(ns).create(
        Machine.make({
          metadata: { name: "yes", namespace: ns, labels: { team: "a" } },
          spec: { switchPosition: "up" },
        }),
      );
      await waitUntil(() => seen.includes("yes"), { what: "the matching object" });
      await new Promise((r) => setTimeout(r, 300));
      expect(seen).toEqual(["yes"]);
      expect((await machines(ns).get("down")).metadata.annotations).toBeUndefined();
      expect((await machines(ns).get("unlabelled")).metadata.annotations).toBeUndefined();
    } finally {
      await running.stop();
    }
  });

  it("watches only the namespaces it is given", async () => {
    const [a, b, c] = [
      await namespace(cluster, "ns-a"),
      await namespace(cluster, "ns-b"),
      await namespace(cluster, "ns-c"),
    ];
    const op = operator({ name: "scoped" });
    const seen: string[] = [];
    op.on.create(Machine, async ({ namespace }) => {
      seen.push(namespace ?? "");
    });
    const running = await run(op, cluster, { namespaces: [a, b] });
    try {
      for (const ns of [a, b, c]) {
        await machines(ns).create(
          Machine.make({ metadata: { name: "m", namespace: ns }, spec: { switchPosition: "up" } }),
        );
      }
      await waitUntil(() => seen.length === 2, { what: "both watched namespaces" });
      await new Promise((r) => setTimeout(r, 300));
      expect(seen.sort()).toEqual([a, b]);
      expect((await machines(c).get("m")).metadata.annotations).toBeUndefined();
    } finally {
      await running.stop();
    }
  });
});

describe("delete handlers and the finalizer", () => {
  it("adds the finalizer, runs the delete handler on deletion, then removes it so the object goes", async () => {
    const ns = await namespace(cluster, "deletion");
    const op = operator({ name: "cleaner" });
    const deleted: string[] = [];
    op.on.delete(Machine, async ({ name, obj }) => {
      expect(obj.metadata.deletionTimestamp).toBeDefined();
      deleted.push(name);
    });
    const running = await run(op, cluster, { namespaces: [ns] });
    try {
      await machines(ns).create(
        Machine.make({ metadata: { name: "m", namespace: ns }, spec: { switchPosition: "up" } }),
      );
      await waitUntil(
        async () => (await machines(ns).get("m")).metadata.finalizers?.includes("cleaner.capstan.dev/finalizer"),
        { what: "the finalizer" },
      );
      await machines(ns).delete("m");
      await waitUntil(
        async () => {
          try {
            await machines(ns).get("m");
            return false;
          } catch (err) {
            return isNotFound(err);
          }
        },
        { what: "the object to be gone" },
      );
      expect(deleted).toEqual(["m"]);
    } finally {
      await running.stop();
    }
  });

  it("does not fire delete handlers for an object deleted without our finalizer (never twice)", async () => {
    const ns = await namespace(cluster, "no-finalizer");
    const op = operator({ name: "late" });
    const deleted: string[] = [];
    op.on.delete(Machine, async ({ name }) => {
      deleted.push(name);
    });
    // Another party's finalizer holds the object; ours was never added (operator not running yet).
    await machines(ns).create(
      Machine.make({
        metadata: { name: "m", namespace: ns, finalizers: ["someone.example.com/hold"] },
        spec: { switchPosition: "up" },
      }),
    );
    await machines(ns).delete("m");
    const running = await run(op, cluster, { namespaces: [ns] });
    try {
      await new Promise((r) => setTimeout(r, 500));
      const m = await machines(ns).get("m");
      expect(m.metadata.finalizers).toEqual(["someone.example.com/hold"]);
      expect(deleted).toEqual([]);
    } finally {
      await running.stop();
      await machines(ns).patch("m", { metadata: { finalizers: null } }, { type: "merge" });
    }
  });

  it("runs delete handlers once even when another finalizer keeps the object around after ours is gone", async () => {
    const ns = await namespace(cluster, "shared-deletion");
    const op = operator({ name: "once" });
    let deletes = 0;
    op.on.delete(Machine, async () => {
      deletes++;
    });
    const running = await run(op, cluster, { namespaces: [ns] });
    try {
      await machines(ns).create(
        Machine.make({
          metadata: { name: "m", namespace: ns, finalizers: ["someone.example.com/hold"] },
          spec: { switchPosition: "up" },
        }),
      );
      await waitUntil(async () => (await machines(ns).get("m")).metadata.finalizers?.length === 2, {
        what: "our finalizer",
      });
      await machines(ns).delete("m");
      await waitUntil(
        async () => (await machines(ns).get("m")).metadata.finalizers?.join() === "someone.example.com/hold",
        { what: "our finalizer released" },
      );
      // The object lives on (someone else's finalizer); later changes must not run delete again.
      await machines(ns).patch("m", { metadata: { labels: { poke: "1" } } }, { type: "merge" });
      await machines(ns).patch("m", { metadata: { labels: { poke: "2" } } }, { type: "merge" });
      await new Promise((r) => setTimeout(r, 300));
      expect(deletes).toBe(1);
    } finally {
      await running.stop();
      await machines(ns).patch("m", { metadata: { finalizers: null } }, { type: "merge" });
    }
  });

  it("removes its finalizer when no delete handler matches the object any more", async () => {
    const ns = await namespace(cluster, "unmatched");
    const op = operator({ name: "picky" });
    op.on.delete(Machine, { labels: { managed: "yes" } }, async () => {});
    const running = await run(op, cluster, { namespaces: [ns] });
    try {
      await machines(ns).create(
        Machine.make({
          metadata: { name: "m", namespace: ns, labels: { managed: "yes" } },
          spec: { switchPosition: "up" },
        }),
      );
      await waitUntil(async () => (await machines(ns).get("m")).metadata.finalizers?.length === 1, {
        what: "the finalizer",
      });
      await machines(ns).patch("m", { metadata: { labels: { managed: null } } }, { type: "merge" });
      await waitUntil(async () => ((await machines(ns).get("m")).metadata.finalizers ?? []).length === 0, {
        what: "finalizer removed",
      });
    } finally {
      await running.stop();
    }
  });
});

describe("raw events and filters", () => {
  it("delivers ADDED, MODIFIED and DELETED events in order, only for objects passing the filters", async () => {
    const ns = await namespace(cluster, "events");
    const op = operator({ name: "spy" });
    const seen: string[] = [];
    op.on.event(Machine, { annotations: { watch: "me" } }, async ({ type, name }) => {
      seen.push(`${type}:${name}`);
    });
    const running = await run(op, cluster, { namespaces: [ns] });
    try {
      await machines(ns).create(
        Machine.make({
          metadata: { name: "a", namespace: ns, annotations: { watch: "me" } },
          spec: { switchPosition: "up" },
        }),
      );
      await machines(ns).create(
        Machine.make({ metadata: { name: "b", namespace: ns }, spec: { switchPosition: "up" } }),
      );
      await machines(ns).patch("a", { spec: { switchPosition: "down" } }, { type: "merge" });
      await machines(ns).delete("a");
      await waitUntil(() => seen.includes("DELETED:a"), { what: "the DELETED event" });
      expect(seen).toEqual(["ADDED:a", "MODIFIED:a", "DELETED:a"]);
    } finally {
      await running.stop();
    }
  });

  it("posts no events for successful handlers but a Warning for a failing one, naming the handler", async () => {
    const ns = await namespace(cluster, "warn");
    const op = operator({ name: "warner" });
    let attempts = 0;
    op.on.create(Machine, { backoff: 10 }, async function flaky() {
      attempts++;
      if (attempts === 1) throw new Error("rate server unreachable");
    });
    const running = await run(op, cluster, { namespaces: [ns] });
    try {
      await machines(ns).create(
        Machine.make({ metadata: { name: "m", namespace: ns }, spec: { switchPosition: "up" } }),
      );
      const events = await waitUntil(
        async () => {
          const list = await eventsFor(cluster, ns, "m");
          return list.length > 0 ? list : undefined;
        },
        { what: "a Warning event" },
      );
      expect(events[0]?.type).toBe("Warning");
      expect(events[0]?.reason).toBe("HandlerRetrying");
      expect(events[0]?.message).toContain("Handler 'flaky' failed");
      expect(events[0]?.message).toContain("rate server unreachable");
      await waitUntil(() => attempts === 2, { what: "the retry" });
    } finally {
      await running.stop();
    }
  });
});
