/**
 * The real kubectl against the devcluster's built-in kinds and controllers: discovery, built-in
 * table columns, owner-reference garbage collection and namespace deletion as kubectl drives them.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { startTestCluster, waitUntil } from "capstan-dev/testing";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { fileFixture } from "../../support/file-fixture.ts";
import { exchangeRateCrd, spawnKubectl } from "./support/cluster.ts";

const cluster = fileFixture(() => startTestCluster());

async function apply(name: string, ...docs: unknown[]) {
  const path = join(cluster.dir, name);
  await writeFile(path, docs.map((d) => stringify(d)).join("---\n"));
  return cluster.kubectl(["apply", "-f", path]);
}

function table(stdout: string): string[][] {
  return stdout
    .trim()
    .split("\n")
    .map((line) => line.trim().split(/\s{2,}/));
}

const cm = (name: string, extra: Record<string, unknown> = {}, namespace = "default") => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace, ...extra },
  data: { a: "1", b: "2" },
});

async function uidOf(kind: string, name: string, namespace = "default"): Promise<string> {
  const res = await cluster.kubectl(["get", kind, name, "-n", namespace, "-o", "jsonpath={.metadata.uid}"]);
  expect(res.code, res.stderr).toBe(0);
  return res.stdout;
}

describe("kubectl with built-in kinds and controllers", () => {
  it("lists the built-in resources with their short names in api-resources", async () => {
    const res = await cluster.kubectl(["api-resources"]);
    expect(res.code, res.stderr).toBe(0);
    const rows = table(res.stdout);
    expect(rows[0]).toEqual(["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]);
    const byName = new Map(rows.slice(1).map((r) => [`${r[0]} ${r[2]}`, r]));
    expect(byName.get("configmaps v1")).toEqual(["configmaps", "cm", "v1", "true", "ConfigMap"]);
    expect(byName.get("namespaces v1")).toEqual(["namespaces", "ns", "v1", "false", "Namespace"]);
    expect(byName.get("deployments apps/v1")).toEqual(["deployments", "deploy", "apps/v1", "true", "Deployment"]);
    expect(byName.get("customresourcedefinitions apiextensions.k8s.io/v1")).toEqual([
      "customresourcedefinitions",
      "crd,crds",
      "apiextensions.k8s.io/v1",
      "false",
      "CustomResourceDefinition",
    ]);
    // No short names: the empty SHORTNAMES cell leaves four cells.
    expect(rows).toContainEqual(["leases", "coordination.k8s.io/v1", "true", "Lease"]);
  });

  it("shows built-in kinds with kube-apiserver's columns", async () => {
    expect((await apply("cm.yaml", cm("settings"))).code).toBe(0);
    const cms = table((await cluster.kubectl(["get", "cm", "settings"])).stdout);
    expect(cms[0]).toEqual(["NAME", "DATA", "AGE"]);
    expect(cms[1]?.slice(0, 2)).toEqual(["settings", "2"]);
    const ns = table((await cluster.kubectl(["get", "ns", "default"])).stdout);
    expect(ns[0]).toEqual(["NAME", "STATUS", "AGE"]);
    expect(ns[1]?.slice(0, 2)).toEqual(["default", "Active"]);
    const crds = await cluster.kubectl(["get", "crd"]);
    expect(crds.stderr.trim()).toBe("No resources found");
  });

  it("shows pods (wide), deployments and CRDs with kube-apiserver's columns", async () => {
    const applied = await apply(
      "workloads.yaml",
      {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web-0" },
        // Bound to a node no kubelet runs, so it stays Pending whatever the cluster's simulated nodes do.
        spec: { nodeName: "elsewhere", containers: [{ name: "nginx", image: "nginx:1.27" }] },
      },
      {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "web" },
        spec: {
          // No replicas: the row does not depend on the workload controllers' progress.
          replicas: 0,
          selector: { matchLabels: { app: "web" } },
          template: {
            metadata: { labels: { app: "web" } },
            spec: { containers: [{ name: "nginx", image: "nginx:1.27" }] },
          },
        },
      },
    );
    expect(applied.code, applied.stderr).toBe(0);
    const pods = table((await cluster.kubectl(["get", "pods", "-o", "wide"])).stdout);
    expect(pods[0]).toEqual([
      "NAME",
      "READY",
      "STATUS",
      "RESTARTS",
      "AGE",
      "IP",
      "NODE",
      "NOMINATED NODE",
      "READINESS GATES",
    ]);
    expect([...(pods[1]?.slice(0, 4) ?? []), ...(pods[1]?.slice(5) ?? [])]).toEqual([
      "web-0",
      "0/1",
      "Pending",
      "0",
      "<none>",
      "elsewhere",
      "<none>",
      "<none>",
    ]);
    const deploy = table((await cluster.kubectl(["get", "deploy", "-o", "wide"])).stdout);
    expect(deploy[0]).toEqual(["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"]);
    expect([...(deploy[1]?.slice(0, 4) ?? []), ...(deploy[1]?.slice(5) ?? [])]).toEqual([
      "web",
      "0/0",
      "0",
      "0",
      "nginx",
      "nginx:1.27",
      "app=web",
    ]);
    const crdFile = join(cluster.dir, "crd.yaml");
    await writeFile(crdFile, stringify(exchangeRateCrd()));
    expect((await cluster.kubectl(["apply", "-f", crdFile])).code).toBe(0);
    const crds = table((await cluster.kubectl(["get", "crd"])).stdout);
    expect(crds[0]).toEqual(["NAME", "CREATED AT"]);
    expect(crds[1]?.[0]).toBe("exchangerates.operators.example.com");
    expect(crds[1]?.[1]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect((await cluster.kubectl(["delete", "-f", crdFile])).code).toBe(0);
  });

  it("re-applies a built-in object client-side without warnings, removing a key it no longer declares", async () => {
    expect((await apply("reapply.yaml", cm("reapplied"))).code).toBe(0);
    const second = await apply("reapply.yaml", { ...cm("reapplied"), data: { a: "1" } });
    expect(second.stderr).toBe("");
    expect(second.stdout).toBe("configmap/reapplied configured\n");
    const data = await cluster.kubectl(["get", "cm", "reapplied", "-o", "jsonpath={.data}"]);
    expect(data.stdout).toBe('{"a":"1"}');
    expect((await cluster.kubectl(["delete", "cm", "reapplied"])).code).toBe(0);
  });

  it("explains built-in kinds from the published schemas", async () => {
    const res = await cluster.kubectl(["explain", "pods.spec.containers.ports"]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/KIND:\s+Pod\nVERSION:\s+v1\n/);
    expect(res.stdout).toMatch(/\n\s+containerPort\s+<integer>\n/);
    expect(res.stdout).toMatch(/\n\s+protocol\s+<string>\n/);
  });

  it("garbage-collects dependents when kubectl deletes their owner", async () => {
    expect((await apply("owner.yaml", cm("owner"))).code).toBe(0);
    const uid = await uidOf("cm", "owner");
    const ref = { apiVersion: "v1", kind: "ConfigMap", name: "owner", uid };
    expect(
      (await apply("deps.yaml", cm("dep-1", { ownerReferences: [ref] }), cm("dep-2", { ownerReferences: [ref] }))).code,
    ).toBe(0);
    const del = await cluster.kubectl(["delete", "cm", "owner"]);
    expect(del.stdout).toBe('configmap "owner" deleted\n');
    await waitUntil(async () => (await cluster.kubectl(["get", "cm", "-o", "name"])).stdout === "configmap/settings\n");
  });

  it("deletes the owner last with --cascade=foreground and keeps orphans with --cascade=orphan", async () => {
    expect((await apply("fg.yaml", cm("fg-owner"), cm("orphan-owner"))).code).toBe(0);
    const fgRef = {
      apiVersion: "v1",
      kind: "ConfigMap",
      name: "fg-owner",
      uid: await uidOf("cm", "fg-owner"),
      blockOwnerDeletion: true,
    };
    const orphanRef = {
      apiVersion: "v1",
      kind: "ConfigMap",
      name: "orphan-owner",
      uid: await uidOf("cm", "orphan-owner"),
    };
    expect(
      (
        await apply(
          "fg-deps.yaml",
          cm("fg-dep", { ownerReferences: [fgRef] }),
          cm("kept", { ownerReferences: [orphanRef] }),
        )
      ).code,
    ).toBe(0);

    const fg = await cluster.kubectl(["delete", "cm", "fg-owner", "--cascade=foreground"]);
    expect(fg.code, fg.stderr).toBe(0);
    // kubectl waited for the owner, which goes only after its blocking dependent.
    expect((await cluster.kubectl(["get", "cm", "fg-dep", "fg-owner", "--ignore-not-found"])).stdout).toBe("");

    const orphan = await cluster.kubectl(["delete", "cm", "orphan-owner", "--cascade=orphan"]);
    expect(orphan.code, orphan.stderr).toBe(0);
    const kept = await cluster.kubectl(["get", "cm", "kept", "-o", "jsonpath={.metadata.ownerReferences}"]);
    expect(kept.code).toBe(0);
    expect(kept.stdout).toBe("");
  });

  it("deletes a namespace with its content; kubectl waits until it is gone", async () => {
    const applied = await apply(
      "ns.yaml",
      { apiVersion: "v1", kind: "Namespace", metadata: { name: "team-a" } },
      cm("one", {}, "team-a"),
      cm("two", { finalizers: ["example.com/hold"] }, "team-a"),
    );
    expect(applied.code, applied.stderr).toBe(0);
    const del = spawnKubectl(cluster, ["delete", "ns", "team-a"]);
    const terminating = await waitUntil(async () => {
      const res = await cluster.kubectl(["get", "ns", "team-a", "--no-headers"]);
      return res.stdout.includes("Terminating") ? res.stdout : undefined;
    });
    expect(terminating.trim().split(/\s+/).slice(0, 2)).toEqual(["team-a", "Terminating"]);
    const conditions = await waitUntil(async () => {
      const res = await cluster.kubectl([
        "get",
        "ns",
        "team-a",
        "-o",
        'jsonpath={.status.conditions[?(@.type=="NamespaceFinalizersRemaining")].message}',
      ]);
      return res.stdout !== "" ? res.stdout : undefined;
    });
    expect(conditions).toBe(
      "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances",
    );
    const remaining = await cluster.kubectl(["get", "cm", "-n", "team-a", "-o", "name"]);
    expect(remaining.stdout).toBe("configmap/two\n");

    const release = await cluster.kubectl([
      "patch",
      "cm",
      "two",
      "-n",
      "team-a",
      "--type=json",
      "-p",
      '[{"op":"remove","path":"/metadata/finalizers"}]',
    ]);
    expect(release.code, release.stderr).toBe(0);
    const done = await del.exited;
    expect(done.stdout).toBe('namespace "team-a" deleted\n');
    expect(done.code).toBe(0);
    const after = await cluster.kubectl(["get", "ns", "team-a"]);
    expect(after.stderr).toContain('namespaces "team-a" not found');
  });
});
