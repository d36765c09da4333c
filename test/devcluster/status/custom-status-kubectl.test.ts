/** `kubectl patch --subresource=status` of a custom resource gets the status strategy's 422, and a valid status lands. */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { startTestCluster, type TestCluster } from "capstan-dev/testing";
import { afterAll, beforeAll, expect, it } from "vitest";
import { stringify } from "yaml";

let cluster: TestCluster;

const CRD = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "gauges.st.example.com" },
  spec: {
    group: "st.example.com",
    scope: "Namespaced",
    names: { plural: "gauges", singular: "gauge", kind: "Gauge", listKind: "GaugeList" },
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: {
              spec: { type: "object", properties: { max: { type: "integer" } } },
              status: {
                type: "object",
                "x-kubernetes-validations": [{ rule: "self.level <= 100", message: "level is a percentage" }],
                properties: { level: { type: "integer" } },
              },
            },
          },
        },
      },
    ],
  },
};

beforeAll(async () => {
  cluster = await startTestCluster();
  const path = join(cluster.dir, "crd.yaml");
  await writeFile(path, stringify(CRD));
  expect((await cluster.kubectl(["apply", "-f", path])).code).toBe(0);
  expect((await cluster.kubectl(["wait", "--for=condition=Established", "crd/gauges.st.example.com"])).code).toBe(0);
  const gauge = join(cluster.dir, "gauge.yaml");
  await writeFile(
    gauge,
    stringify({ apiVersion: "st.example.com/v1", kind: "Gauge", metadata: { name: "g" }, spec: { max: 1 } }),
  );
  let created = await cluster.kubectl(["apply", "-f", gauge]);
  // Discovery of the new kind can lag the Established condition by a moment in kubectl's cache.
  for (let i = 0; i < 20 && created.code !== 0; i++) {
    await new Promise((r) => setTimeout(r, 100));
    created = await cluster.kubectl(["apply", "-f", gauge]);
  }
  expect(created.code, created.stderr).toBe(0);
});
afterAll(async () => {
  await cluster.stop();
});

it("kubectl patch --subresource=status reports the schema and CEL errors and then applies a valid status", async () => {
  const typed = await cluster.kubectl([
    "patch",
    "gauge",
    "g",
    "--subresource=status",
    "--type=merge",
    "-p",
    '{"status":{"level":"high"}}',
  ]);
  expect(typed.code).not.toBe(0);
  expect(typed.stderr).toContain('The Gauge "g" is invalid');
  expect(typed.stderr).toContain(
    'status.level: Invalid value: "string": level in body must be of type integer: "string"',
  );
  const rule = await cluster.kubectl([
    "patch",
    "gauge",
    "g",
    "--subresource=status",
    "--type=merge",
    "-p",
    '{"status":{"level":120}}',
  ]);
  expect(rule.code).not.toBe(0);
  expect(rule.stderr).toContain('The Gauge "g" is invalid: status: Invalid value: "object": level is a percentage');
  const ok = await cluster.kubectl([
    "patch",
    "gauge",
    "g",
    "--subresource=status",
    "--type=merge",
    "-p",
    '{"status":{"level":42}}',
  ]);
  expect(ok.stderr).toBe("");
  expect(ok.stdout).toBe("gauge.st.example.com/g patched\n");
  const level = await cluster.kubectl(["get", "gauge", "g", "-o", "jsonpath={.status.level}"]);
  expect(level.stdout).toBe("42");
});
