/**
 * The Events the devcluster's workload controllers report, in the shapes of their real counterparts:
 * client-go's core/v1 recorder for the deployment and ReplicaSet controllers, the events.k8s.io/v1
 * recorder for the scheduler.
 */

import { startTestCluster, type TestCluster, waitUntil } from "capstan-dev/testing";
import { afterEach, describe, expect, it } from "vitest";
import { recordEvent } from "../../../packages/capstan-dev/src/devcluster/controllers/event-recorder.ts";

const DEPLOYS = { group: "apps", version: "v1", plural: "deployments" };
const EVENTS = { group: "", version: "v1", plural: "events" };
const EVENTS_V1 = { group: "events.k8s.io", version: "v1", plural: "events" };

interface CoreEvent {
  metadata: { name: string };
  involvedObject: { kind: string; name: string; uid: string; apiVersion: string };
  reason: string;
  message: string;
  type: string;
  source?: { component?: string };
  count?: number;
  firstTimestamp?: string;
  eventTime?: string;
  action?: string;
  reportingComponent?: string;
  reportingInstance?: string;
}

let cluster: TestCluster | undefined;
let server: TestCluster["server"] | undefined;
afterEach(async () => {
  await cluster?.stop();
  server = undefined;
});

function events(): CoreEvent[] {
  return server!.internals.api.list(EVENTS, "default").items as unknown as CoreEvent[];
}

describe("controller events", () => {
  it("a Deployment scaled up then down tells its story: ScalingReplicaSet, SuccessfulCreate/Delete, Scheduled", async () => {
    cluster = await startTestCluster();
    server = cluster.server;
    const api = server.internals.api;
    const d = await api.create(DEPLOYS, "default", {
      metadata: { name: "web" },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: "web" } },
        template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "app", image: "nginx" }] } },
      },
    });
    const rsName = await waitUntil(() => {
      const scaled = events().find((e) => e.reason === "ScalingReplicaSet");
      return scaled?.message.match(/^Scaled up replica set (web-[a-z0-9]+) from 0 to 2$/)?.[1];
    });
    await waitUntil(() => events().filter((e) => e.reason === "Scheduled").length === 2);
    await api.modify(DEPLOYS, "default", "web", (obj) => {
      (obj["spec"] as { replicas: number }).replicas = 1;
      return obj;
    });
    await waitUntil(() => events().some((e) => e.reason === "SuccessfulDelete"));

    const all = events();
    const scaling = all.filter((e) => e.reason === "ScalingReplicaSet");
    expect(scaling.map((e) => e.message)).toEqual([
      `Scaled up replica set ${rsName} from 0 to 2`,
      `Scaled down replica set ${rsName} from 2 to 1`,
    ]);
    const scaledUp = scaling[0]!;
    expect(scaledUp.involvedObject).toMatchObject({
      kind: "Deployment",
      apiVersion: "apps/v1",
      name: "web",
      uid: (d["metadata"] as { uid: string }).uid,
    });
    // client-go's core/v1 recorder: source, count, timestamps, and a `<object>.<nanos hex>` name.
    expect(scaledUp).toMatchObject({ type: "Normal", source: { component: "deployment-controller" }, count: 1 });
    expect(scaledUp.firstTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(scaledUp.metadata.name).toMatch(/^web\.[0-9a-f]{16}$/);

    const created = all.filter((e) => e.reason === "SuccessfulCreate");
    expect(created).toHaveLength(2);
    for (const e of created) {
      expect(e.message).toMatch(new RegExp(`^Created pod: ${rsName}-[a-z0-9]{5}$`));
      expect(e.involvedObject).toMatchObject({ kind: "ReplicaSet", name: rsName });
      expect(e.source?.component).toBe("replicaset-controller");
    }
    const deleted = all.find((e) => e.reason === "SuccessfulDelete")!;
    expect(deleted.message).toMatch(new RegExp(`^Deleted pod: ${rsName}-[a-z0-9]{5}$`));

    // The scheduler's events.k8s.io/v1 shape: eventTime, action and reporter, no source or count.
    const scheduled = all.filter((e) => e.reason === "Scheduled");
    for (const e of scheduled) {
      expect(e.message).toBe(`Successfully assigned default/${e.involvedObject.name} to capstan-node`);
      expect(e).toMatchObject({
        action: "Binding",
        reportingComponent: "default-scheduler",
        reportingInstance: "default-scheduler-capstan",
      });
      expect(e.eventTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
      expect(e.count).toBeUndefined();
    }
    // Readable through events.k8s.io/v1 too, where the scheduler's event names its reporting controller.
    const v1 = api.list(EVENTS_V1, "default").items as { reason: string; reportingController?: string }[];
    expect(v1.find((e) => e.reason === "Scheduled")?.reportingController).toBe("default-scheduler");
  });
  it("puts the Event of a cluster-scoped object in default, and names one whose name would be too long by UUID", async () => {
    cluster = await startTestCluster();
    server = cluster.server;
    const { store, registry } = server.internals;
    const source = { kind: "core", component: "test-controller" } as const;
    const node = { apiVersion: "v1", kind: "Node", metadata: { name: "n1", uid: "u1" } };
    await recordEvent({ store, registry }, node, source, { type: "Normal", reason: "Seen", message: "node seen" });
    const long = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x".repeat(250), namespace: "default" } };
    await recordEvent({ store, registry }, long, source, { type: "Normal", reason: "Long", message: "long name" });
    const seen = events().find((e) => e.reason === "Seen");
    expect(seen?.involvedObject).toMatchObject({ kind: "Node", name: "n1" });
    expect(seen?.metadata.name).toMatch(/^n1\.[0-9a-f]+$/);
    expect(events().find((e) => e.reason === "Long")?.metadata.name).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-/);
  });
});
