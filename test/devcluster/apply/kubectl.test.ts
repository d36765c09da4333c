import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { startTestCluster, type TestCluster } from "capstan-dev/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let cluster: TestCluster;

const kubectl = (args: string[]) => cluster.kubectl(args);

async function applyFile(name: string, yaml: string, ...flags: string[]) {
  const file = join(cluster.dir, name);
  await writeFile(file, yaml);
  return kubectl(["apply", "-f", file, ...flags]);
}

// biome-ignore lint/suspicious/noExplicitAny: test assertions read arbitrary JSON
async function getJson(resource: string, name: string): Promise<Record<string, any>> {
  const out = await kubectl(["get", resource, name, "-o", "json", "--show-managed-fields"]);
  expect(out.stderr).toBe("");
  return JSON.parse(out.stdout);
}

beforeAll(async () => {
  // The server as users start it: strategic merge and server-side apply are on by default.
  cluster = await startTestCluster();
});

afterAll(async () => {
  await cluster?.stop();
});

const deploymentV1 = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: app
        image: nginx:1.25
        env:
        - {name: A, value: "1"}
        - {name: B, value: "2"}
      - name: sidecar
        image: busybox
`;

const deploymentV2 = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: app
        image: nginx:1.26
        env:
        - {name: A, value: "1"}
`;

describe("kubectl against the patch engines", () => {
  it("client-side apply twice removes the container, env var and replicas the manifest dropped", async () => {
    expect((await applyFile("d1.yaml", deploymentV1)).code).toBe(0);
    // Another writer adds an env var; client-side apply must keep it (strategic merge by name).
    const setEnv = await kubectl(["set", "env", "deployment/web", "-c", "app", "C=3"]);
    expect(setEnv.stderr).toBe("");
    const second = await applyFile("d2.yaml", deploymentV2);
    expect(second.stderr).toBe("");
    expect(second.stdout).toContain("deployment.apps/web configured");
    const d = await getJson("deployment", "web");
    const containers = d.spec.template.spec.containers;
    expect(containers.map((c: { name: string }) => c.name)).toEqual(["app"]);
    expect(containers[0].image).toBe("nginx:1.26");
    expect(containers[0].env.map((e: { name: string }) => e.name)).toEqual(["A", "C"]);
  });

  it("kubectl patch --type strategic merges a container by name", async () => {
    const out = await kubectl([
      "patch",
      "deployment",
      "web",
      "--type",
      "strategic",
      "-p",
      JSON.stringify({ spec: { template: { spec: { containers: [{ name: "extra", image: "redis" }] } } } }),
    ]);
    expect(out.stderr).toBe("");
    const d = await getJson("deployment", "web");
    expect(d.spec.template.spec.containers.map((c: { name: string }) => c.name).sort()).toEqual(["app", "extra"]);
  });

  it("kubectl set image keeps the containers' defaults and stores no strategic-merge directive", async () => {
    expect((await kubectl(["create", "deployment", "img", "--image=nginx:1.25"])).code).toBe(0);
    const set = await kubectl(["set", "image", "deployment/img", "nginx=nginx:1.26"]);
    expect(set.stderr).toBe("");
    const raw = await kubectl(["get", "deployment", "img", "-o", "json", "--show-managed-fields"]);
    expect(raw.stdout).not.toContain("$setElementOrder");
    const d = JSON.parse(raw.stdout);
    expect(d.spec.template.spec.containers).toEqual([
      {
        name: "nginx",
        image: "nginx:1.26",
        imagePullPolicy: "IfNotPresent",
        resources: {},
        terminationMessagePath: "/dev/termination-log",
        terminationMessagePolicy: "File",
      },
    ]);
    const managers = d.metadata.managedFields.map((e: { manager: string; subresource?: string }) =>
      [e.manager, e.subresource ?? ""].join("/"),
    );
    expect(managers).toEqual(expect.arrayContaining(["kubectl-create/", "kubectl-set/"]));
    // kubectl scale sends no fieldManager: the manager is its User-Agent's program, through /scale.
    expect((await kubectl(["scale", "deployment/img", "--replicas=3"])).code).toBe(0);
    const scaled = await getJson("deployment", "img");
    expect(scaled.spec.replicas).toBe(3);
    expect(scaled.metadata.managedFields).toContainEqual({
      manager: "kubectl",
      operation: "Update",
      apiVersion: "apps/v1",
      fieldsType: "FieldsV1",
      fieldsV1: { "f:spec": { "f:replicas": {} } },
      subresource: "scale",
    });
  });

  it("apply --server-side conflicts with another manager's field and --force-conflicts takes it", async () => {
    expect((await kubectl(["create", "configmap", "settings", "--from-literal=a=1"])).code).toBe(0);
    const cm = (a: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: "${a}"\n`;
    expect((await applyFile("alice.yaml", cm("1"), "--server-side", "--field-manager=alice")).stderr).toBe("");
    const conflict = await applyFile("bob.yaml", cm("2"), "--server-side", "--field-manager=bob");
    expect(conflict.code).not.toBe(0);
    expect(conflict.stderr).toContain(
      // kubectl create recorded itself as the manager of what it created, as on a real server.
      'Apply failed with 2 conflicts: conflicts with "alice":\n- .data.a\nconflicts with "kubectl-create" using v1:\n- .data.a',
    );
    const forced = await applyFile("bob.yaml", cm("2"), "--server-side", "--field-manager=bob", "--force-conflicts");
    expect(forced.stderr).toBe("");
    expect(forced.stdout).toContain("configmap/settings serverside-applied");
    const got = await getJson("configmap", "settings");
    expect(got.data).toEqual({ a: "2" });
    const bob = got.metadata.managedFields.find((e: { manager: string }) => e.manager === "bob");
    expect(bob).toMatchObject({
      operation: "Apply",
      apiVersion: "v1",
      fieldsType: "FieldsV1",
      fieldsV1: { "f:data": { "f:a": {} } },
    });
    expect(got.metadata.managedFields.map((e: { manager: string }) => e.manager)).not.toContain("alice");
  });

  it("apply --server-side creates an object that does not exist yet, owned by its field manager", async () => {
    const yaml = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fresh\ndata:\n  a: "1"\n`;
    const created = await applyFile("fresh.yaml", yaml, "--server-side", "--field-manager=carol");
    expect(created.stderr).toBe("");
    expect(created.stdout).toContain("configmap/fresh serverside-applied");
    const got = await getJson("configmap", "fresh");
    expect(got.data).toEqual({ a: "1" });
    expect(got.metadata.managedFields).toEqual([
      expect.objectContaining({ manager: "carol", operation: "Apply", fieldsV1: { "f:data": { "f:a": {} } } }),
    ]);
  });

  it("upgrades a client-side applied object to apply --server-side without conflicts", async () => {
    const cm = (a: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: upgraded\ndata:\n  a: "${a}"\n`;
    expect((await applyFile("u1.yaml", cm("1"))).code).toBe(0);
    const ssa = await applyFile("u2.yaml", cm("2"), "--server-side");
    expect(ssa.stderr).toBe("");
    const got = await getJson("configmap", "upgraded");
    expect(got.data).toEqual({ a: "2" });
    const lastApplied = JSON.parse(got.metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"]);
    expect(lastApplied.data).toEqual({ a: "2" });
  });

  it("applies custom resources with the CRD's list-map keys, and conflicts per item field", async () => {
    const crd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [port]
                items:
                  type: object
                  required: [port]
                  properties:
                    port: {type: integer}
                    name: {type: string}
`;
    expect((await applyFile("crd.yaml", crd)).code).toBe(0);
    const wait = await kubectl(["wait", "--for=condition=Established", "crd/gadgets.example.com", "--timeout=10s"]);
    expect(wait.code).toBe(0);
    const gadget = (ports: string) =>
      `apiVersion: example.com/v1\nkind: Gadget\nmetadata:\n  name: g\nspec:\n  ports: ${ports}\n`;
    expect((await applyFile("g0.yaml", gadget("[]"))).code).toBe(0);
    expect(
      (await applyFile("ga.yaml", gadget("[{port: 80, name: http}]"), "--server-side", "--field-manager=a")).stderr,
    ).toBe("");
    expect(
      (await applyFile("gb.yaml", gadget("[{port: 443, name: https}]"), "--server-side", "--field-manager=b")).stderr,
    ).toBe("");
    const got = await getJson("gadget", "g");
    expect(got.spec.ports).toEqual([
      { port: 80, name: "http" },
      { port: 443, name: "https" },
    ]);
    const conflict = await applyFile(
      "gb2.yaml",
      gadget("[{port: 80, name: web}]"),
      "--server-side",
      "--field-manager=b",
    );
    expect(conflict.stderr).toContain('Apply failed with 1 conflict: conflict with "a": .spec.ports[port=80].name');
  });
});
