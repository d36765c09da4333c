import { startTestCluster, type TestCluster, waitUntil } from "capstan-dev/testing";
import { afterEach, describe, expect, it } from "vitest";

const DEPLOYS = { group: "apps", version: "v1", plural: "deployments" };
const RSS = { group: "apps", version: "v1", plural: "replicasets" };
const PODS = { group: "", version: "v1", plural: "pods" };

interface Rs {
  metadata: { name: string; annotations?: Record<string, string> };
  spec: { replicas: number };
  status?: { replicas?: number; availableReplicas?: number };
}
interface Deploy {
  metadata: { generation: number };
  status?: {
    observedGeneration?: number;
    updatedReplicas?: number;
    replicas?: number;
    availableReplicas?: number;
    conditions?: { type: string; reason: string }[];
  };
}

let cluster: TestCluster | undefined;
let server: TestCluster["server"] | undefined;
afterEach(async () => {
  await cluster?.stop();
  server = undefined;
});

function deployment(name: string, replicas: number, image: string, strategy: object, extra: object = {}) {
  return {
    metadata: { name },
    spec: {
      replicas,
      strategy,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "app", image }] } },
      ...extra,
    },
  };
}

function rolledOut(name: string, replicas: number): () => Deploy | undefined {
  return () => {
    const d = server!.internals.api.get(DEPLOYS, "default", name) as unknown as Deploy;
    const s = d.status ?? {};
    const done =
      (s.observedGeneration ?? 0) >= d.metadata.generation &&
      s.updatedReplicas === replicas &&
      s.replicas === replicas &&
      s.availableReplicas === replicas &&
      s.conditions?.some((c) => c.type === "Progressing" && c.reason === "NewReplicaSetAvailable");
    return done ? d : undefined;
  };
}

function setImage(name: string, image: string): Promise<unknown> {
  return server!.internals.api.modify(DEPLOYS, "default", name, (d) => {
    const spec = d["spec"] as { template: { spec: { containers: { image: string }[] } } };
    spec.template.spec.containers[0]!.image = image;
    return d;
  });
}

describe("Deployment rollouts", () => {
  it("keeps a RollingUpdate within replicas + maxSurge and above replicas - maxUnavailable at every step", async () => {
    cluster = await startTestCluster();
    server = cluster.server;
    const api = server.internals.api;
    await api.create(
      DEPLOYS,
      "default",
      deployment("surge", 4, "nginx:1", { type: "RollingUpdate", rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } }),
    );
    await waitUntil(rolledOut("surge", 4));

    // After every ReplicaSet write, look at all of them: desired total and available total.
    const totals: { desired: number; available: number }[] = [];
    const rsBucket = api.bucketOf(RSS);
    const unsubscribe = api.subscribe((change) => {
      if (change.bucket !== rsBucket) return;
      const items = api.list(RSS, "default").items as unknown as Rs[];
      totals.push({
        desired: items.reduce((n, rs) => n + rs.spec.replicas, 0),
        available: items.reduce((n, rs) => n + (rs.status?.availableReplicas ?? 0), 0),
      });
    });
    await setImage("surge", "nginx:2");
    await waitUntil(rolledOut("surge", 4));
    unsubscribe();

    expect(totals.length).toBeGreaterThan(4);
    expect(Math.max(...totals.map((t) => t.desired))).toBe(5);
    // Availability is counted from ReplicaSet status, which lags pods by one write: never below 4 - 0.
    expect(Math.min(...totals.map((t) => t.available))).toBeGreaterThanOrEqual(4);
    const rss = api.list(RSS, "default").items as unknown as Rs[];
    expect(rss.map((rs) => rs.spec.replicas).sort()).toEqual([0, 4]);
  });

  it("Recreate scales the old ReplicaSet to zero and waits for its pods to go before starting new ones", async () => {
    cluster = await startTestCluster();
    server = cluster.server;
    const api = server.internals.api;
    await api.create(DEPLOYS, "default", deployment("recreate", 2, "nginx:1", { type: "Recreate" }));
    await waitUntil(rolledOut("recreate", 2));

    const images: string[][] = [];
    const podsBucket = api.bucketOf(PODS);
    const unsubscribe = api.subscribe((change) => {
      if (change.bucket !== podsBucket) return;
      const live = (api.list(PODS, "default").items as { spec: { containers: { image: string }[] } }[]).map(
        (p) => p.spec.containers[0]!.image,
      );
      images.push([...new Set(live)].sort());
    });
    await setImage("recreate", "nginx:2");
    await waitUntil(rolledOut("recreate", 2));
    unsubscribe();
    // Never old and new pods at the same time.
    expect(images.some((set) => set.length > 1)).toBe(false);
    expect(images.at(-1)).toEqual(["nginx:2"]);
  });

  it("counts a pod available only after minReadySeconds", async () => {
    cluster = await startTestCluster();
    server = cluster.server;
    const api = server.internals.api;
    await api.create(
      DEPLOYS,
      "default",
      deployment("slow", 1, "nginx:1", { type: "RollingUpdate" }, { minReadySeconds: 2 }),
    );
    const ready = await waitUntil(() => {
      const rs = (
        api.list(RSS, "default").items as { status?: { readyReplicas?: number; availableReplicas?: number } }[]
      )[0];
      return rs?.status?.readyReplicas === 1 ? rs : undefined;
    });
    expect(ready.status?.availableReplicas ?? 0).toBe(0);
    await waitUntil(rolledOut("slow", 1), { timeout: 8000 });
  });
});
