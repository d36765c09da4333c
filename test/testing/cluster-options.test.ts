import { startTestCluster } from "capstan-dev/testing";
import { describe, expect, it } from "vitest";
import { CustomResourceDefinition } from "../../packages/capstan/src/resources/builtins.ts";
import { widgetCrd } from "../runtime/support/widget.ts";

describe("startTestCluster's options", () => {
  it("serves the CRDs given in crds before it resolves, and passes server options to the embedded server", async () => {
    const cluster = await startTestCluster({ crds: [widgetCrd()], server: { kubelet: false } });
    try {
      const crd = await cluster.client.resource(CustomResourceDefinition).get("widgets.example.com");
      expect(crd.status?.conditions?.find((c) => c.type === "Established")?.status).toBe("True");
      // kubelet: false reached the server: no simulated kubelet.
      expect(cluster.kubelet).toBeUndefined();
      expect(cluster.kubeconfigPath.startsWith(cluster.dir)).toBe(true);
    } finally {
      await cluster.stop();
    }
  });
});
