import { startTestCluster, type TestCluster, waitUntil } from "capstan-dev/testing";
import { afterEach, describe, expect, it } from "vitest";
import { normalizeImage } from "../../../packages/capstan-dev/src/devcluster/controllers/kubelet.ts";
import { qosClassOf } from "../../../packages/capstan-dev/src/devcluster/registry/pod-qos.ts";

const PODS = { group: "", version: "v1", plural: "pods" };
const NODES = { group: "", version: "v1", plural: "nodes" };

interface ContainerStatus {
  name: string;
  ready: boolean;
  started?: boolean;
  restartCount: number;
  image: string;
  imageID: string;
  containerID?: string;
  state: {
    waiting?: { reason: string };
    running?: { startedAt: string };
    terminated?: { exitCode: number; reason: string; finishedAt: string };
  };
  lastState: { terminated?: { exitCode: number; reason: string } };
}
interface Pod {
  metadata: { name: string; uid: string; deletionTimestamp?: string; deletionGracePeriodSeconds?: number };
  spec: { nodeName?: string };
  status: {
    phase: string;
    conditions?: { type: string; status: string; reason?: string; message?: string; lastTransitionTime?: string }[];
    containerStatuses?: ContainerStatus[];
    initContainerStatuses?: ContainerStatus[];
    podIP?: string;
    podIPs?: { ip: string }[];
    hostIP?: string;
    startTime?: string;
    qosClass?: string;
  };
}

let cluster: TestCluster | undefined;
let server: TestCluster["server"] | undefined;
afterEach(async () => {
  await cluster?.stop();
  server = undefined;
});

function pod(name: string, extra: Record<string, unknown> = {}, containers = [{ name: "app", image: "nginx:1.27" }]) {
  return { metadata: { name }, spec: { containers, ...extra } };
}

function get(name: string): Pod {
  return server!.internals.api.get(PODS, "default", name) as unknown as Pod;
}

function condition(p: Pod, type: string) {
  return p.status.conditions?.find((c) => c.type === type);
}

/** Records every watch event of the default namespace's pods from now on, in order. */
function recordPods(): { events: { type: string; pod: Pod }[]; stop: () => void } {
  const events: { type: string; pod: Pod }[] = [];
  const api = server!.internals.api;
  const stop = api.watch(PODS, "default", { resourceVersion: String(api.currentRevision()) }, (type, object) => {
    events.push({ type, pod: object as unknown as Pod });
  });
  return { events, stop };
}

describe("simulated kubelet", () => {
  it("registers a Ready node with capacity, allocatable, addresses and nodeInfo", async () => {
    cluster = await startTestCluster();
    server = cluster.server;
    const node = server.internals.api.get(NODES, "", "capstan-node") as {
      status: {
        conditions: { type: string; status: string; reason: string }[];
        capacity: Record<string, string>;
        allocatable: Record<string, string>;
        addresses: { type: string; address: string }[];
        nodeInfo: { kubeletVersion: string; containerRuntimeVersion: string };
      };
    };
    expect(node.status.conditions.find((c) => c.type === "Ready")).toMatchObject({
      status: "True",
      reason: "KubeletReady",
    });
    expect(node.status.capacity).toMatchObject({ cpu: "4", pods: "110" });
    expect(node.status.allocatable.pods).toBe("110");
    expect(node.status.addresses.map((a) => a.type)).toEqual(["InternalIP", "Hostname"]);
    expect(node.status.nodeInfo.kubeletVersion).toMatch(/^v1\.32\./);
    expect(server.kubelet?.nodeName).toBe("capstan-node");
    const lease = server.internals.api.get(
      { group: "coordination.k8s.io", version: "v1", plural: "leases" },
      "kube-node-lease",
      "capstan-node",
    ) as { spec: { holderIdentity: string }; metadata: { ownerReferences: { kind: string }[] } };
    expect(lease.spec.holderIdentity).toBe("capstan-node");
    expect(lease.metadata.ownerReferences[0]?.kind).toBe("Node");
  });

  it("binds a pod and runs it: Pending (ContainerCreating) first, then Running and Ready with container statuses", async () => {
    cluster = await startTestCluster();
    server = cluster.server;
    const watch = recordPods();
    await server.internals.api.create(PODS, "default", pod("web"));
    const running = await waitUntil(() => {
      const p = get("web");
      return p.status.phase === "Running" ? p : undefined;
    });
    watch.stop();

    expect(running.spec.nodeName).toBe("capstan-node");
    for (const type of ["PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"]) {
      expect(condition(running, type), type).toMatchObject({ status: "True" });
      expect(condition(running, type)?.lastTransitionTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    }
    const cs = running.status.containerStatuses?.[0];
    expect(cs).toMatchObject({ name: "app", ready: true, started: true, restartCount: 0 });
    expect(cs?.image).toBe("docker.io/library/nginx:1.27");
    expect(cs?.imageID).toMatch(/^docker\.io\/library\/nginx@sha256:[0-9a-f]{64}$/);
    expect(cs?.containerID).toMatch(/^containerd:\/\/[0-9a-f]{64}$/);
    expect(cs?.state.running?.startedAt).toBeDefined();
    expect(running.status.podIP).toMatch(/^10\.244\.0\.\d+$/);
    expect(running.status.podIPs).toEqual([{ ip: running.status.podIP }]);
    expect(running.status.hostIP).toBe("10.0.0.2");
    expect(running.status.startTime).toBeDefined();
    expect(running.status.qosClass).toBe("BestEffort");

    // The watcher saw the binding, then ContainerCreating, then Running, as separate events.
    expect(watch.events[0]?.type).toBe("ADDED");
    const phases = watch.events.map((e) => [
      e.pod.spec.nodeName ?? "",
      e.pod.status.phase,
      e.pod.status.containerStatuses?.[0]?.state.waiting?.reason ?? "",
    ]);
    expect(phases[0]).toEqual(["", "Pending", ""]);
    expect(phases).toContainEqual(["capstan-node", "Pending", "ContainerCreating"]);
    expect(phases.at(-1)).toEqual(["capstan-node", "Running", ""]);
    const creating = watch.events.find((e) => e.pod.status.containerStatuses?.[0]?.state.waiting)?.pod;
    expect(condition(creating!, "Ready")).toMatchObject({ status: "False", reason: "ContainersNotReady" });
  });

  it("reports init containers completed before the containers run", async () => {
    cluster = await startTestCluster();
    server = cluster.server;
    await server.internals.api.create(
      PODS,
      "default",
      pod("with-init", { initContainers: [{ name: "setup", image: "busybox" }] }),
    );
    const running = await waitUntil(() => {
      const p = get("with-init");
      return p.status.phase === "Running" ? p : undefined;
    });
    expect(running.status.initContainerStatuses?.[0]).toMatchObject({
      name: "setup",
      ready: true,
      state: { terminated: { exitCode: 0, reason: "Completed" } },
    });
    expect(condition(running, "Initialized")?.status).toBe("True");
  });

  it("holds Ready False until every readiness gate's condition is True, then turns it True", async () => {
    cluster = await startTestCluster();
    server = cluster.server;
    await server.internals.api.create(
      PODS,
      "default",
      pod("gated", { readinessGates: [{ conditionType: "example.com/lb" }] }),
    );
    const running = await waitUntil(() => {
      const p = get("gated");
      return p.status.phase === "Running" ? p : undefined;
    });
    expect(condition(running, "ContainersReady")?.status).toBe("True");
    expect(condition(running, "Ready")).toMatchObject({
      status: "False",
      reason: "ReadinessGatesNotReady",
      message: 'corresponding condition of pod readiness gate "example.com/lb" does not exist.',
    });
    const setGate = (status: string) =>
      server!.internals.api.modify(
        PODS,
        "default",
        "gated",
        (p) => {
          const st = p["status"] as { conditions: { type: string; status: string }[] };
          st.conditions = [
            ...st.conditions.filter((c) => c.type !== "example.com/lb"),
            { type: "example.com/lb", status },
          ];
          return p;
        },
        "status",
      );
    await setGate("False");
    await waitUntil(() => {
      const c = condition(get("gated"), "Ready");
      return c?.message === 'the status of pod readiness gate "example.com/lb" is not "True", but False';
    });
    await setGate("True");
    await waitUntil(() => condition(get("gated"), "Ready")?.status === "True");
  });

  it("deletes a pod gracefully: Terminating (deletionTimestamp, deletionGracePeriodSeconds), then gone via the kubelet", async () => {
    cluster = await startTestCluster();
    server = cluster.server;
    await server.internals.api.create(PODS, "default", pod("doomed"));
    await waitUntil(() => get("doomed").status.phase === "Running");
    const watch = recordPods();
    const result = await server.internals.api.delete(PODS, "default", "doomed", { gracePeriodSeconds: 30 });
    expect(result.deleted).toBe(false);
    const terminating = get("doomed");
    expect(terminating.metadata.deletionTimestamp).toBeDefined();
    expect(terminating.metadata.deletionGracePeriodSeconds).toBe(30);
    // Well before the 30 s grace period: the kubelet stopped the containers and deleted the pod.
    await waitUntil(() => watch.events.some((e) => e.type === "DELETED"));
    watch.stop();
    expect(server.internals.api.tryGet(PODS, "default", "doomed")).toBeUndefined();
    expect(watch.events.map((e) => e.type)).toEqual(["MODIFIED", "DELETED"]);
    expect(watch.events[0]?.pod.metadata.deletionTimestamp).toBeDefined();
  });

  it("lets a test make a container exit: terminated is observed, then the container restarts under restartPolicy Always", async () => {
    cluster = await startTestCluster({ server: { kubelet: { restartDelayMs: 50 } } });
    server = cluster.server;
    await server.internals.api.create(PODS, "default", pod("immortal"));
    await waitUntil(() => get("immortal").status.phase === "Running");
    const watch = recordPods();
    const written = (await server.kubelet!.terminateContainer("default", "immortal", "app", {
      exitCode: 137,
      reason: "OOMKilled",
    })) as unknown as Pod;
    expect(written.status.containerStatuses?.[0]?.state.terminated).toMatchObject({
      exitCode: 137,
      reason: "OOMKilled",
    });
    expect(condition(written, "Ready")).toMatchObject({ status: "False", reason: "ContainersNotReady" });

    const restarted = await waitUntil(() => {
      const p = get("immortal");
      return p.status.containerStatuses?.[0]?.restartCount === 1 ? p : undefined;
    });
    watch.stop();
    const cs = restarted.status.containerStatuses![0]!;
    expect(cs.state.running).toBeDefined();
    expect(cs.ready).toBe(true);
    expect(cs.lastState.terminated).toMatchObject({ exitCode: 137, reason: "OOMKilled" });
    expect(cs.containerID).not.toBe(written.status.containerStatuses?.[0]?.containerID);
    expect(restarted.status.phase).toBe("Running");
    // A watcher saw the terminated state as its own event before the restart.
    const states = watch.events.map((e) => Object.keys(e.pod.status.containerStatuses?.[0]?.state ?? {})[0]);
    expect(states).toEqual(["terminated", "running"]);
  });

  it("fails a restartPolicy Never pod whose container exits non-zero, and succeeds an OnFailure pod that exits 0", async () => {
    cluster = await startTestCluster({ server: { kubelet: { restartDelayMs: 10 } } });
    server = cluster.server;
    await server.internals.api.create(PODS, "default", pod("once", { restartPolicy: "Never" }));
    await server.internals.api.create(PODS, "default", pod("job", { restartPolicy: "OnFailure" }));
    await waitUntil(() => get("once").status.phase === "Running" && get("job").status.phase === "Running");

    await server.kubelet!.terminateContainer("default", "once", "app", { exitCode: 2 });
    const failed = get("once");
    expect(failed.status.phase).toBe("Failed");
    expect(failed.status.containerStatuses?.[0]?.state.terminated).toMatchObject({ exitCode: 2, reason: "Error" });
    expect(condition(failed, "Ready")).toMatchObject({ status: "False", reason: "PodCompleted" });

    await server.kubelet!.terminateContainer("default", "job", "app", { exitCode: 0 });
    expect(get("job").status.phase).toBe("Succeeded");
    expect(get("job").status.containerStatuses?.[0]?.state.terminated?.reason).toBe("Completed");
    // Neither is restarted.
    await new Promise((r) => setTimeout(r, 50));
    expect(get("once").status.containerStatuses?.[0]?.restartCount).toBe(0);
    expect(get("job").status.phase).toBe("Succeeded");

    // A terminated pod goes at once on delete (nothing left to stop).
    await server.internals.api.delete(PODS, "default", "once", { gracePeriodSeconds: 30 });
    expect(server.internals.api.tryGet(PODS, "default", "once")).toBeUndefined();
  });

  it("refuses to terminate a container that is not running, with a clear error", async () => {
    cluster = await startTestCluster();
    server = cluster.server;
    await expect(server.kubelet!.terminateContainer("default", "nope", "app", { exitCode: 1 })).rejects.toThrow(
      "pod default/nope not found",
    );
    await server.internals.api.create(PODS, "default", pod("p"));
    await waitUntil(() => get("p").status.phase === "Running");
    await expect(server.kubelet!.terminateContainer("default", "p", "other", { exitCode: 1 })).rejects.toThrow(
      "container other of pod default/p is not running",
    );
  });

  it("with kubelet: false, there is no node, pods stay Pending and unbound, Deployments get no ReplicaSet", async () => {
    cluster = await startTestCluster({ server: { kubelet: false } });
    server = cluster.server;
    expect(server.kubelet).toBeUndefined();
    expect(server.internals.api.list(NODES).items).toHaveLength(0);
    await server.internals.api.create(PODS, "default", pod("idle"));
    const deploy = { group: "apps", version: "v1", plural: "deployments" };
    await server.internals.api.create(deploy, "default", {
      metadata: { name: "d" },
      spec: {
        selector: { matchLabels: { a: "b" } },
        template: { metadata: { labels: { a: "b" } }, spec: pod("x").spec },
      },
    });
    await new Promise((r) => setTimeout(r, 150));
    const p = get("idle");
    expect(p.status.phase).toBe("Pending");
    expect(p.spec.nodeName).toBeUndefined();
    expect(p.status.containerStatuses).toBeUndefined();
    const rss = server.internals.api.list({ group: "apps", version: "v1", plural: "replicasets" }, "default");
    expect(rss.items).toHaveLength(0);
  });

  it("leaves no timer behind after stop(), even with restarts and graceful deletions pending", async () => {
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;
    const before = timers();
    cluster = await startTestCluster({ server: { kubelet: { restartDelayMs: 60_000, stopDelayMs: 60_000 } } });
    server = cluster.server;
    await server.internals.api.create(PODS, "default", pod("a"));
    await server.internals.api.create(PODS, "default", pod("b"));
    await waitUntil(() => get("a").status.phase === "Running" && get("b").status.phase === "Running");
    await server.kubelet!.terminateContainer("default", "a", "app", { exitCode: 1 });
    await server.internals.api.delete(PODS, "default", "b", { gracePeriodSeconds: 30 });
    await server.stop();
    server = undefined;
    expect(timers()).toBeLessThanOrEqual(before);
  });
});

describe("kubelet status helpers", () => {
  it("normalizes image references as containerd reports them", () => {
    expect(normalizeImage("nginx")).toBe("docker.io/library/nginx:latest");
    expect(normalizeImage("bitnami/redis:7")).toBe("docker.io/bitnami/redis:7");
    expect(normalizeImage("registry.k8s.io/pause:3.10")).toBe("registry.k8s.io/pause:3.10");
    expect(normalizeImage("localhost:5000/app")).toBe("localhost:5000/app:latest");
  });

  it("computes the QoS class from requests and limits", () => {
    expect(qosClassOf({ containers: [{ name: "a" }] })).toBe("BestEffort");
    const limits = { cpu: "1", memory: "1Gi" };
    expect(qosClassOf({ containers: [{ name: "a", resources: { limits } }] })).toBe("Guaranteed");
    expect(qosClassOf({ containers: [{ name: "a", resources: { requests: { cpu: "1" } } }] })).toBe("Burstable");
    expect(
      qosClassOf({ containers: [{ name: "a", resources: { requests: { cpu: "500m", memory: "1Gi" }, limits } }] }),
    ).toBe("Burstable");
    // Only cpu and memory count, and a zero quantity is none (ComputePodQOS).
    const storageOnly = { requests: { "ephemeral-storage": "1Gi" }, limits: { cpu: "0", memory: "0Mi" } };
    expect(qosClassOf({ containers: [{ name: "a", resources: storageOnly }] })).toBe("BestEffort");
  });
});
