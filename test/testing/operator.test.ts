import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigMap } from "../../packages/capstan/src/resources/builtins.ts";
import { startTestCluster, type TestCluster } from "../../packages/capstan-dev/src/testing/index.ts";
import op, { Widget } from "../cli/fixtures/widget-operator.ts";

describe("startTestCluster with an operator() operator", () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await startTestCluster();
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it("runs it as a test would: its CRD is served when run resolves, its children can be awaited", async () => {
    const running = await cluster.run(op, { gracefulShutdownTimeout: "5s" });
    await cluster.client
      .resource(Widget)
      .create(Widget.make({ metadata: { name: "w1", namespace: "default" }, spec: { color: "red" } }));
    const cm = await cluster.waitFor(ConfigMap, "default/w1-color", (c) => c.data?.color === "red");
    expect(cm.metadata?.ownerReferences?.[0]).toMatchObject({ kind: "Widget", name: "w1" });
    const widget = await cluster.waitFor(Widget, "default/w1", (w) => w.status?.color === "red");
    expect(widget.spec.color).toBe("red");

    // The ConfigMap goes with its owner (the devcluster's garbage collector).
    await cluster.client.resource(Widget).delete("w1", { namespace: "default" });
    await cluster.waitForDeletion(ConfigMap, "default/w1-color");
    await running.stop();
    await expect(running.done).resolves.toBeUndefined();
  });
});
