import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestCluster, waitUntil } from "capstan-dev/testing";
import { afterEach, describe, expect, it } from "vitest";
import {
  rolloutLimits,
  scaledValue,
  templateHash,
} from "../../../packages/capstan-dev/src/devcluster/controllers/deployment-controller.ts";
import { fileFixture } from "../../support/file-fixture.ts";
import { http } from "../kubectl/support/cluster.ts";

const cluster = fileFixture(() => startTestCluster());

interface Rs {
  metadata: {
    name: string;
    labels: Record<string, string>;
    annotations: Record<string, string>;
    ownerReferences: { kind: string; name: string; controller: boolean }[];
  };
  spec: { replicas: number; selector: { matchLabels: Record<string, string> } };
  status: { replicas: number; readyReplicas?: number; availableReplicas?: number };
}
interface PodItem {
  metadata: { name: string; generateName?: string; deletionTimestamp?: string; ownerReferences?: { name: string }[] };
  spec: { containers: { image: string }[] };
  status: { phase: string };
}
interface Deploy {
  metadata: { generation: number; annotations?: Record<string, string> };
  status: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    conditions?: { type: string; status: string; reason: string; message: string }[];
  };
}

function deployment(name: string, replicas: number, image: string) {
  return JSON.stringify({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "app", image }] } },
    },
  });
}

async function getJson<T>(path: string): Promise<T> {
  const res = await http(cluster, "GET", path);
  expect(res.status, res.text).toBe(200);
  return res.body as T;
}

async function replicaSets(label: string): Promise<Rs[]> {
  return (await getJson<{ items: Rs[] }>(`/apis/apps/v1/namespaces/default/replicasets?labelSelector=app%3D${label}`))
    .items;
}

async function livePods(label: string): Promise<PodItem[]> {
  const items = (await getJson<{ items: PodItem[] }>(`/api/v1/namespaces/default/pods?labelSelector=app%3D${label}`))
    .items;
  return items.filter((p) => !p.metadata.deletionTimestamp);
}

describe("Deployment -> ReplicaSet -> Pods", () => {
  it("creates a ReplicaSet per template hash and its pods, which become Ready; kubectl rollout status completes", async () => {
    const apply = await cluster.kubectl(["apply", "-f", "-"], { stdin: deployment("web", 3, "nginx:1.26") });
    expect(apply.code, apply.stderr).toBe(0);
    const rollout = await cluster.kubectl(["rollout", "status", "deployment/web", "--timeout=20s"], {
      timeout: 25_000,
    });
    expect(rollout.code, rollout.stderr).toBe(0);
    expect(rollout.stdout).toContain('deployment "web" successfully rolled out');

    const [rs, ...others] = await replicaSets("web");
    expect(others).toHaveLength(0);
    const hash = rs!.metadata.labels["pod-template-hash"];
    expect(hash).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]+$/);
    expect(rs!.metadata.name).toBe(`web-${hash}`);
    expect(rs!.spec.selector.matchLabels).toEqual({ app: "web", "pod-template-hash": hash });
    expect(rs!.metadata.annotations["deployment.kubernetes.io/revision"]).toBe("1");
    expect(rs!.metadata.ownerReferences[0]).toMatchObject({ kind: "Deployment", name: "web", controller: true });
    expect(rs!.status).toMatchObject({ replicas: 3, readyReplicas: 3, availableReplicas: 3 });

    const pods = await livePods("web");
    expect(pods).toHaveLength(3);
    for (const p of pods) {
      expect(p.metadata.generateName).toBe(`web-${hash}-`);
      expect(p.metadata.ownerReferences?.[0]?.name).toBe(`web-${hash}`);
      expect(p.status.phase).toBe("Running");
    }

    const d = await getJson<Deploy>("/apis/apps/v1/namespaces/default/deployments/web");
    expect(d.metadata.annotations?.["deployment.kubernetes.io/revision"]).toBe("1");
    expect(d.status).toMatchObject({
      observedGeneration: d.metadata.generation,
      replicas: 3,
      updatedReplicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
    });
    const byType = Object.fromEntries((d.status.conditions ?? []).map((c) => [c.type, c]));
    expect(byType["Available"]).toMatchObject({ status: "True", reason: "MinimumReplicasAvailable" });
    expect(byType["Progressing"]).toMatchObject({
      status: "True",
      reason: "NewReplicaSetAvailable",
      message: `ReplicaSet "web-${hash}" has successfully progressed.`,
    });

    const table = await cluster.kubectl(["get", "deployment", "web"]);
    expect(table.stdout).toMatch(/web\s+3\/3\s+3\s+3\s/);
  });

  it("scales up and down with kubectl scale", async () => {
    expect((await cluster.kubectl(["scale", "deployment/web", "--replicas=5"])).code).toBe(0);
    await waitUntil(async () => (await livePods("web")).length === 5);
    const up = await cluster.kubectl(["rollout", "status", "deployment/web", "--timeout=20s"], { timeout: 25_000 });
    expect(up.code, up.stderr).toBe(0);

    expect((await cluster.kubectl(["scale", "deployment/web", "--replicas=2"])).code).toBe(0);
    await waitUntil(async () => (await livePods("web")).length === 2);
    const rss = await replicaSets("web");
    expect(rss).toHaveLength(1);
    expect(rss[0]!.spec.replicas).toBe(2);
    await waitUntil(async () => {
      const d = await getJson<Deploy>("/apis/apps/v1/namespaces/default/deployments/web");
      return d.status.replicas === 2 && d.status.availableReplicas === 2;
    });
  });

  it("rolls out an image change to a second ReplicaSet (revision 2) and scales the old one to zero", async () => {
    const set = await cluster.kubectl(["set", "image", "deployment/web", "app=nginx:1.27"]);
    expect(set.code, set.stderr).toBe(0);
    const rollout = await cluster.kubectl(["rollout", "status", "deployment/web", "--timeout=20s"], {
      timeout: 25_000,
    });
    expect(rollout.code, rollout.stderr).toBe(0);
    expect(rollout.stdout).toContain('deployment "web" successfully rolled out');

    const rss = await replicaSets("web");
    expect(rss).toHaveLength(2);
    const byRevision = Object.fromEntries(
      rss.map((rs) => [rs.metadata.annotations["deployment.kubernetes.io/revision"], rs]),
    );
    expect(byRevision["1"]?.spec.replicas).toBe(0);
    expect(byRevision["2"]?.spec.replicas).toBe(2);
    await waitUntil(async () => {
      const pods = await livePods("web");
      return pods.length === 2 && pods.every((p) => p.spec.containers[0]?.image === "nginx:1.27");
    });
    const d = await getJson<Deploy>("/apis/apps/v1/namespaces/default/deployments/web");
    expect(d.metadata.annotations?.["deployment.kubernetes.io/revision"]).toBe("2");

    const history = await cluster.kubectl(["rollout", "history", "deployment/web"]);
    expect(history.code, history.stderr).toBe(0);
    expect(history.stdout).toMatch(/^1\s/m);
    expect(history.stdout).toMatch(/^2\s/m);
  });

  it("rolls back to revision 1's template, which becomes revision 3 on the same ReplicaSet", async () => {
    const undo = await cluster.kubectl(["rollout", "undo", "deployment/web", "--to-revision=1"]);
    expect(undo.code, undo.stderr).toBe(0);
    const rollout = await cluster.kubectl(["rollout", "status", "deployment/web", "--timeout=20s"], {
      timeout: 25_000,
    });
    expect(rollout.code, rollout.stderr).toBe(0);
    const rss = await replicaSets("web");
    expect(rss).toHaveLength(2);
    const current = rss.find((rs) => rs.spec.replicas === 2);
    expect(current?.metadata.annotations["deployment.kubernetes.io/revision"]).toBe("3");
    await waitUntil(async () => {
      const pods = await livePods("web");
      return pods.length === 2 && pods.every((p) => p.spec.containers[0]?.image === "nginx:1.26");
    });
  });

  it("replaces a deleted pod of a ReplicaSet; kubectl delete --grace-period waits through Terminating until it is gone", async () => {
    const [victim] = await livePods("web");
    const del = await cluster.kubectl(["delete", "pod", victim!.metadata.name, "--grace-period=5"]);
    expect(del.code, del.stderr).toBe(0);
    expect(del.stdout).toContain(`pod "${victim!.metadata.name}" deleted`);
    expect((await http(cluster, "GET", `/api/v1/namespaces/default/pods/${victim!.metadata.name}`)).status).toBe(404);
    await waitUntil(async () => {
      const pods = await livePods("web");
      return pods.length === 2 && pods.every((p) => p.status.phase === "Running") ? pods : undefined;
    });
  });

  it("deleting the Deployment removes its ReplicaSets and pods (garbage collector, then the kubelet)", async () => {
    expect((await cluster.kubectl(["delete", "deployment", "web"])).code).toBe(0);
    await waitUntil(async () => (await replicaSets("web")).length === 0);
    await waitUntil(async () => {
      const all = (await getJson<{ items: PodItem[] }>("/api/v1/namespaces/default/pods?labelSelector=app%3Dweb"))
        .items;
      return all.length === 0;
    });
  });
});

describe("ReplicaSet", () => {
  it("adopts an orphan pod its selector matches and creates only the missing replicas", async () => {
    const orphan = await http(cluster, "POST", "/api/v1/namespaces/default/pods", {
      metadata: { name: "orphan", labels: { app: "adopt" } },
      spec: { containers: [{ name: "app", image: "nginx" }] },
    });
    expect(orphan.status, orphan.text).toBe(201);
    const rs = await http(cluster, "POST", "/apis/apps/v1/namespaces/default/replicasets", {
      metadata: { name: "adopter" },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: "adopt" } },
        template: { metadata: { labels: { app: "adopt" } }, spec: { containers: [{ name: "app", image: "nginx" }] } },
      },
    });
    expect(rs.status, rs.text).toBe(201);
    const pods = await waitUntil(async () => {
      const live = await livePods("adopt");
      return live.length === 2 && live.every((p) => p.metadata.ownerReferences?.[0]?.name === "adopter")
        ? live
        : undefined;
    });
    expect(pods.map((p) => p.metadata.name)).toContain("orphan");
    await waitUntil(async () => {
      const got = await getJson<Rs>("/apis/apps/v1/namespaces/default/replicasets/adopter");
      return got.status.readyReplicas === 2;
    });
    expect((await cluster.kubectl(["delete", "rs", "adopter"])).code).toBe(0);
    await waitUntil(async () => (await livePods("adopt")).length === 0);
  });
});

describe("Deployment rollout arithmetic", () => {
  it("resolves maxSurge up and maxUnavailable down, and never both zero", () => {
    expect(scaledValue("25%", 3, true)).toBe(1);
    expect(scaledValue("25%", 3, false)).toBe(0);
    expect(scaledValue(2, 3, false)).toBe(2);
    expect(() => scaledValue("x%", 3, true)).toThrow("invalid int-or-percent");
    expect(rolloutLimits({ replicas: 3 })).toEqual({ maxSurge: 1, maxUnavailable: 0 });
    expect(rolloutLimits({ replicas: 3, strategy: { rollingUpdate: { maxSurge: 0, maxUnavailable: 0 } } })).toEqual({
      maxSurge: 0,
      maxUnavailable: 1,
    });
  });

  it("hashes equal templates equally whatever their key order, and differently with a collision count", () => {
    const a = templateHash({ metadata: { labels: { app: "x" } }, spec: { containers: [{ name: "c", image: "i" }] } });
    const b = templateHash({ spec: { containers: [{ image: "i", name: "c" }] }, metadata: { labels: { app: "x" } } });
    expect(a).toBe(b);
    expect(templateHash({ spec: {} }, 1)).not.toBe(templateHash({ spec: {} }));
  });
});

describe("capstan apiserver --no-kubelet", () => {
  let child: ChildProcess | undefined;
  let dir: string | undefined;
  afterEach(() => {
    if (child && child.exitCode === null) child.kill("SIGKILL");
    child = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("serves no node, and pods stay Pending", async () => {
    dir = mkdtempSync(join(tmpdir(), "capstan-nokubelet-"));
    const kubeconfig = join(dir, "kc");
    child = spawn(
      process.execPath,
      ["packages/capstan/bin/capstan.js", "apiserver", "--port", "0", "--kubeconfig", kubeconfig, "--no-kubelet"],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    await new Promise<void>((resolve, reject) => {
      let out = "";
      child!.stdout!.on("data", (d: Buffer) => {
        out += d.toString();
        if (out.includes("\n")) resolve();
      });
      child!.once("exit", (code) => reject(new Error(`exited ${code}`)));
    });
    const env = { ...process.env, KUBECONFIG: kubeconfig, KUBECACHEDIR: join(dir, "cache"), HOME: dir };
    const kubectl = (args: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        execFile(process.env.KUBECTL ?? "kubectl", args, { env, timeout: 20_000 }, (err, stdout, stderr) =>
          resolve({ code: err ? 1 : 0, stdout: String(stdout), stderr: String(stderr) }),
        );
      });
    const nodes = await kubectl(["get", "nodes"]);
    expect(nodes.code, nodes.stderr).toBe(0);
    expect(nodes.stderr).toContain("No resources found");
    expect((await kubectl(["run", "idle", "--image=nginx"])).code).toBe(0);
    await new Promise((r) => setTimeout(r, 300));
    const phase = await kubectl(["get", "pod", "idle", "-o", "jsonpath={.status.phase}/{.spec.nodeName}"]);
    expect(phase.stdout).toBe("Pending/");
    const exited = new Promise<number | null>((resolve) => child!.once("exit", (code) => resolve(code)));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });
});
