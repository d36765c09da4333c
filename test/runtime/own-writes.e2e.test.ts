/**
 * A level-triggered reconcile that applies an owned child and patches status costs two writes per
 * object and no more: the reconciles that its own writes trigger (the child's ADDED event, the
 * object's status event) neither re-apply the unchanged child nor patch the status again from a
 * cached copy older than their own write (runtime/own-writes.ts). A child the cache shows absent is
 * created, the cheaper request, with the field ownership of an apply kept (runtime/created-ownership.ts).
 */
import { startTestCluster, waitUntil } from "capstan-dev/testing";
import pino from "pino";
import { expect, it } from "vitest";
import { loadClientConfig } from "../../packages/capstan/src/client/config.ts";
import { KubeClient } from "../../packages/capstan/src/client/resource-client.ts";
import { Manager } from "../../packages/capstan/src/runtime/manager.ts";
import { isDeleted } from "../../packages/capstan/src/runtime/reconcile.ts";
import { fileFixture } from "../support/file-fixture.ts";
import { ConfigMap, type ConfigMapObject, Widget, widgetCrd } from "./support/widget.ts";

const cluster = fileFixture(() => startTestCluster({ crds: [widgetCrd()] }));

it("writes each object's child and status once, however many reconciles its own writes cause", async () => {
  const writes: string[] = [];
  const client = new KubeClient(loadClientConfig({ kubeconfig: cluster.kubeconfigPath }), {
    onResponse: (method) => {
      if (method !== "GET") writes.push(method);
    },
  });
  const mgr = new Manager({ client, name: "writes", logger: pino({ level: "silent" }), namespace: "default" });
  let reconciles = 0;
  const controller = mgr
    .controller(Widget)
    .owns(ConfigMap)
    .withOptions({ maxConcurrentReconciles: 8 })
    .reconcile(async (widget, ctx) => {
      reconciles++;
      if (isDeleted(widget)) return;
      await ctx.apply<ConfigMapObject>(
        ConfigMap,
        ctx.adopt({
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: ctx.key.name },
          data: { size: String(widget.spec.size) },
        }),
      );
      if (widget.status?.observedSize !== widget.spec.size) await ctx.patchStatus({ observedSize: widget.spec.size });
    });
  const run = mgr.start();
  const widgets = cluster.client.resource(Widget, "default");
  const n = 20;
  try {
    await waitUntil(() => mgr.isLeader, { what: "the manager to run" });
    await Promise.all(
      Array.from({ length: n }, (_, i) => widgets.create({ metadata: { name: `w${i}` }, spec: { size: i } } as Widget)),
    );
    const cache = mgr.informers.informerFor(Widget, { namespace: "default" }).store;
    const children = mgr.informers.informerFor(ConfigMap, { namespace: "default" }).store;
    // Idle: every status and child is in the caches (so every event they cause was delivered and
    // its key enqueued), and the queue has nothing queued or in progress.
    await waitUntil(
      () =>
        Array.from({ length: n }, (_, i) => i).every(
          (i) => cache.get(`default/w${i}`)?.status?.observedSize === i && children.get(`default/w${i}`) !== undefined,
        ) &&
        controller.queue.len() === 0 &&
        controller.queue.inFlight().longestRunningProcessorSeconds === 0,
      { what: "every Widget reconciled and the queue idle" },
    );
    // One create (POST) of each child the cache showed absent and one status PATCH per Widget; the
    // Widgets' creates are the test's.
    expect(writes.filter((m) => m === "POST")).toHaveLength(n);
    expect(writes.filter((m) => m === "PATCH")).toHaveLength(n);
    expect(writes.filter((m) => m !== "PATCH" && m !== "POST")).toEqual([]);
    // The writes did cause further reconciles: they just wrote nothing.
    expect(reconciles).toBeGreaterThan(n);

    // A change by someone else is still acted on: the child is applied again.
    await cluster.client.resource(ConfigMap, "default").patch("w3", { data: { size: "x" } }, { type: "merge" });
    await waitUntil(async () => (await cluster.client.resource(ConfigMap, "default").get("w3")).data?.size === "3", {
      what: "the drifted child applied again",
    });
  } finally {
    await mgr.stop();
    await run;
    await client.close();
  }
});

/** The controller's own managedFields entries of a child: "operation fields" per entry. */
function ownEntries(child: ConfigMapObject, manager: string): string[] {
  return (child.metadata?.managedFields ?? [])
    .filter((e) => e.manager === manager)
    .map((e) => `${e.operation} ${JSON.stringify(e.fieldsV1)}`);
}

it("creates a child it never applied, and its later applies still remove what the configuration dropped", async () => {
  const writes: string[] = [];
  const client = new KubeClient(loadClientConfig({ kubeconfig: cluster.kubeconfigPath }), {
    onResponse: (method, code) => {
      if (method !== "GET") writes.push(`${method} ${code}`);
    },
  });
  const mgr = new Manager({ client, name: "created", logger: pino({ level: "silent" }), namespace: "created" });
  // What the reconcile applies, per Widget size: size 1 sets keys a and b, size 2 only a.
  const dataFor = (size: number): Record<string, string> => (size === 1 ? { a: "1", b: "1" } : { a: String(size) });
  const controller = mgr
    .controller(Widget)
    .owns(ConfigMap)
    .reconcile(async (widget, ctx) => {
      if (isDeleted(widget)) return;
      await ctx.apply<ConfigMapObject>(
        ConfigMap,
        ctx.adopt({
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: `${ctx.key.name}-child` },
          data: dataFor(widget.spec.size),
        }),
      );
    });
  // A namespace of its own: the first test's Widgets are not this controller's.
  await cluster.client
    .resource({ group: "", version: "v1", kind: "Namespace", plural: "namespaces", namespaced: false })
    .create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "created" } });
  const run = mgr.start();
  const widgets = cluster.client.resource(Widget, "created");
  const configMaps = cluster.client.resource(ConfigMap, "created");
  try {
    await waitUntil(() => mgr.isLeader, { what: "the manager to run" });
    await widgets.create({ metadata: { name: "c1" }, spec: { size: 1 } } as Widget);
    await waitUntil(async () => (await configMaps.get("c1-child").catch(() => undefined)) !== undefined, {
      what: "the child created",
    });
    expect(writes).toEqual(["POST 201"]);
    const created = await configMaps.get("c1-child");
    expect(created.data).toEqual({ a: "1", b: "1" });
    // A create records an Update entry of the controller's field manager.
    expect(ownEntries(created, controller.name).map((e) => e.split(" ")[0])).toEqual(["Update"]);

    // Another manager applies a key of its own: the controller must never take or remove it.
    await configMaps.apply(
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c1-child" }, data: { c: "other" } },
      { fieldManager: "someone-else" },
    );
    // Anyone else's change is acted on: the controller applies its (unchanged) configuration again.
    await waitUntil(() => writes.length === 2, { what: "the controller to apply after the other manager's change" });
    expect(writes).toEqual(["POST 201", "PATCH 200"]);
    // The configuration drops b: as with server-side apply from the start, the apply removes it.
    await widgets.patch("c1", { spec: { size: 2 } }, { type: "merge" });
    await waitUntil(async () => (await configMaps.get("c1-child")).data?.a === "2", { what: "the child changed" });
    const changed = await configMaps.get("c1-child");
    expect(changed.data).toEqual({ a: "2", c: "other" });
    // One Apply entry of the controller is left (the create's Update entry folded into it), owning a
    // but neither the dropped b nor the other manager's c.
    const entries = ownEntries(changed, controller.name);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatch(/^Apply /);
    expect(entries[0]).toContain('"f:a"');
    expect(entries[0]).not.toContain('"f:b"');
    expect(entries[0]).not.toContain('"f:c"');
    // The apply, the fold of the create's fields into it (a merge PATCH) and the apply again.
    expect(writes).toEqual(["POST 201", "PATCH 200", "PATCH 200", "PATCH 200", "PATCH 200"]);

    // Once folded, a further change is one apply.
    await widgets.patch("c1", { spec: { size: 3 } }, { type: "merge" });
    await waitUntil(async () => (await configMaps.get("c1-child")).data?.a === "3", {
      what: "the child changed again",
    });
    expect(writes).toHaveLength(6);
  } finally {
    await mgr.stop();
    await run;
    await client.close();
  }
});
