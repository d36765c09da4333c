/** `kubectl delete namespace default` fails as against a real cluster, and the namespace stays. */

import { startTestCluster, type TestCluster } from "capstan-dev/testing";
import { afterAll, beforeAll, expect, it } from "vitest";

let cluster: TestCluster;

beforeAll(async () => {
  cluster = await startTestCluster();
});
afterAll(async () => {
  await cluster.stop();
});

it("kubectl delete namespace kube-system prints the Forbidden Status and leaves it Active", async () => {
  const res = await cluster.kubectl(["delete", "namespace", "kube-system"]);
  expect(res.code).not.toBe(0);
  expect(res.stderr.trim()).toBe(
    'Error from server (Forbidden): namespaces "kube-system" is forbidden: this namespace may not be deleted',
  );
  const phase = await cluster.kubectl(["get", "namespace", "kube-system", "-o", "jsonpath={.status.phase}"]);
  expect(phase.stdout).toBe("Active");
});
