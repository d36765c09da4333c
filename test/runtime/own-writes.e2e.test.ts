/**
 * A level-triggered reconcile that applies an owned child and patches status costs two writes per
 * object and no more: the reconciles that its own writes trigger (the child's ADDED event, the
 * object's status event) neither re-apply the unchanged child nor patch the status again from a
 * cached copy older than their own write (runtime/own-writes.ts).
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
    // One apply (PATCH) of the child and one status PATCH per Widget; the creates are the test's.
    expect(writes.filter((m) => m === "PATCH")).toHaveLength(2 * n);
    expect(writes.filter((m) => m !== "PATCH")).toEqual([]);
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
