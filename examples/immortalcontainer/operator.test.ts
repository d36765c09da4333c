/**
 * The seed's scenario through the typed client: the pod is created, comes back after a delete and
 * after its container exits, follows an image change, and goes with its ImmortalContainer.
 */
import { isInvalid } from "capstan";
import { Event, Pod } from "capstan/core";
import { missingCapability, startTestCluster, type TestCluster } from "capstan-dev/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  CONTAINER_NAME,
  ImmortalContainer,
  immortalContainerOperator,
  NAME_LABEL,
  podState,
  START_ANNOTATION,
  settingsFromEnv,
} from "./operator.ts";

let cluster: TestCluster;
/** The cluster's namespace for the test's objects: `default` on the embedded server, the run's own on a shared cluster. */
let NS = "default";
/** Why a test that makes a container exit cannot run here (a real cluster's kubelet takes no orders). */
const noKubelet = missingCapability("simulatedKubelet");
/** Why pods do not run here (envtest has no kubelet), once the cluster is known; `undefined` where they do. */
let noPods: string | undefined;

beforeAll(async () => {
  cluster = await startTestCluster();
  NS = cluster.namespace;
  noPods = missingCapability("runningPods", cluster.capabilities);
  // No restart delay: an ended pod is replaced at once. The delay has its own test below.
  await cluster.run(immortalContainerOperator({ restartDelay: 0, recheckInterval: "200ms" }));
});
afterAll(() => cluster.stop());

const ics = () => cluster.client.resource(ImmortalContainer, NS);
const pods = () => cluster.client.resource(Pod, NS);

async function create(name: string, image: string): Promise<void> {
  await ics().create(ImmortalContainer.make({ metadata: { name, namespace: NS }, spec: { image } }));
}

/**
 * Waits until the operator's pod exists, is not being deleted and is not the pod with `previousUid`,
 * and, where pods run, until it runs. Without a kubelet (envtest) a pod stays Pending: the operator's
 * part (creating, replacing, counting) is what these tests prove, and it is the same there.
 */
function waitForPod(name: string, previousUid?: string) {
  return cluster.waitFor(
    Pod,
    `${NS}/${name}-immortalpod`,
    (p) =>
      p.metadata?.uid !== previousUid &&
      p.metadata?.deletionTimestamp === undefined &&
      (noPods !== undefined || p.status?.phase === "Running"),
  );
}

function waitForStarts(name: string, startTimes: number) {
  return cluster.waitFor(ImmortalContainer, `${NS}/${name}`, (ic) => ic.status?.startTimes === startTimes);
}

/** Reasons of the Events about the ImmortalContainer `name`, once `expected` is among them. */
async function waitForEventReason(name: string, expected: string): Promise<string[]> {
  return vi.waitFor(
    async () => {
      const events = await cluster.client.resource(Event, NS).list();
      const reasons = events.items.filter((e) => e.involvedObject.name === name).map((e) => e.reason ?? "");
      expect(reasons).toContain(expected);
      return reasons;
    },
    { timeout: 5_000, interval: 50 },
  );
}

describe("ImmortalContainer operator", () => {
  it("creates <name>-immortalpod controlled by the ImmortalContainer and records it in the status", async () => {
    await create("web", "nginx:latest");
    const pod = await waitForPod("web");
    const ic = await waitForStarts("web", 1);

    expect(ic.status).toEqual({ currentPod: "web-immortalpod", startTimes: 1 });
    expect(pod.metadata?.ownerReferences).toEqual([
      expect.objectContaining({
        apiVersion: "immortalcontainer.flugel.it/v1alpha1",
        kind: "ImmortalContainer",
        name: "web",
        uid: ic.metadata.uid,
        controller: true,
      }),
    ]);
    expect(pod.metadata?.labels?.[NAME_LABEL]).toBe("web");
    expect(pod.metadata?.annotations?.[START_ANNOTATION]).toBe("1");
    // Never: an exited container ends the pod, so the operator (not the kubelet) restarts it.
    expect(pod.spec?.restartPolicy).toBe("Never");
    expect(pod.spec?.containers.map((c) => [c.name, c.image])).toEqual([[CONTAINER_NAME, "nginx:latest"]]);
    expect(await waitForEventReason("web", "Started")).toContain("Started");
  });

  it("gets its pod running", async (ctx) => {
    ctx.skip(noPods !== undefined, noPods);
    const pod = await waitForPod("web");
    expect(pod.status?.phase).toBe("Running");
    expect(pod.status?.containerStatuses?.map((c) => [c.name, c.state?.running !== undefined])).toEqual([
      [CONTAINER_NAME, true],
    ]);
  });

  it("recreates the pod after it is deleted, counting startTimes", async () => {
    const first = await waitForPod("web");
    await pods().delete("web-immortalpod");
    const second = await waitForPod("web", first.metadata?.uid);
    const ic = await waitForStarts("web", 2);

    expect(ic.status?.currentPod).toBe("web-immortalpod");
    expect(second.metadata?.annotations?.[START_ANNOTATION]).toBe("2");
  });

  it("replaces the pod when its container terminates", async (ctx) => {
    ctx.skip(noKubelet !== undefined, noKubelet);
    const before = await waitForPod("web");
    const exited = await cluster.kubelet?.terminateContainer(NS, "web-immortalpod", CONTAINER_NAME, {
      exitCode: 1,
    });
    expect(exited).toBeDefined();

    const after = await waitForPod("web", before.metadata?.uid);
    await waitForStarts("web", 3);
    expect(after.metadata?.annotations?.[START_ANNOTATION]).toBe("3");
    await waitForEventReason("web", "Restarting");
  });

  /** How many times the operator has started `name`'s pod so far: the counts below follow on from it. */
  const startsOf = async (name: string) => (await ics().get(name)).status?.startTimes ?? 0;

  it("replaces the pod when spec.image changes", async () => {
    const before = await waitForPod("web");
    const starts = await startsOf("web");
    await ics().patch("web", { spec: { image: "nginx:1.27" } }, { type: "merge" });

    const after = await cluster.waitFor(
      Pod,
      `${NS}/web-immortalpod`,
      (p) => p.metadata?.uid !== before.metadata?.uid && p.spec?.containers[0]?.image === "nginx:1.27",
    );
    await waitForStarts("web", starts + 1);
    expect(after.metadata?.annotations?.[START_ANNOTATION]).toBe(String(starts + 1));
    await waitForEventReason("web", "ImageChanged");
  });

  it("restores a lost status from the start number stamped on the running pod", async () => {
    const pod = await waitForPod("web");
    const starts = await startsOf("web");
    // As if the operator had crashed between creating the pod and writing the status.
    await ics().patchStatus("web", { status: { currentPod: null, startTimes: null } });

    const ic = await cluster.waitFor(ImmortalContainer, `${NS}/web`, (o) => o.status?.startTimes !== undefined);
    expect(ic.status).toEqual({ currentPod: "web-immortalpod", startTimes: starts });
    expect((await pods().get("web-immortalpod")).metadata?.uid).toBe(pod.metadata?.uid);
  });

  it("puts its label back on its pod when someone removes it, and keeps watching the pod", async (ctx) => {
    ctx.skip(noKubelet !== undefined, noKubelet);
    const starts = await startsOf("web");
    const pod = await waitForPod("web");
    await pods().patch("web-immortalpod", { metadata: { labels: { [NAME_LABEL]: null } } }, { type: "merge" });

    const relabelled = await cluster.waitFor(
      Pod,
      `${NS}/web-immortalpod`,
      (p) => p.metadata?.labels?.[NAME_LABEL] === "web",
    );
    expect(relabelled.metadata?.uid).toBe(pod.metadata?.uid);
    // Watched again: an exit is noticed and the pod replaced.
    await cluster.kubelet?.terminateContainer(NS, "web-immortalpod", CONTAINER_NAME, { exitCode: 2 });
    await waitForPod("web", pod.metadata?.uid);
    await waitForStarts("web", starts + 1);
  });

  it("leaves a pod of the same name that it does not control alone, and starts its own once it is gone", async () => {
    await pods().create(
      Pod.make({
        metadata: { name: "taken-immortalpod", namespace: NS },
        spec: { containers: [{ name: "other", image: "busybox" }] },
      }),
    );
    await create("taken", "nginx");
    await waitForEventReason("taken", "PodNameTaken");
    const foreign = await pods().get("taken-immortalpod");
    expect(foreign.metadata?.ownerReferences).toBeUndefined();

    await pods().delete("taken-immortalpod");
    const own = await waitForPod("taken", foreign.metadata?.uid);
    expect(own.metadata?.ownerReferences?.[0]?.name).toBe("taken");
    await waitForStarts("taken", 1);
  });

  it("lets the pod be garbage-collected with its ImmortalContainer", async () => {
    await waitForPod("web");
    await ics().delete("web");
    await cluster.waitForDeletion(Pod, `${NS}/web-immortalpod`, { timeout: cluster.timeouts.garbageCollection });
    await cluster.waitForDeletion(ImmortalContainer, `${NS}/web`);
  });

  it("refuses an image that is empty or missing, and a name too long to label the pod with", async () => {
    const invalid = async (obj: unknown) => {
      const err = await ics()
        .create(obj as ReturnType<typeof ImmortalContainer.make>)
        .catch((e: unknown) => e);
      expect(isInvalid(err)).toBe(true);
      return (err as Error).message;
    };
    expect(await invalid({ metadata: { name: "empty", namespace: NS }, spec: { image: "" } })).toContain("spec.image");
    expect(await invalid({ metadata: { name: "missing", namespace: NS }, spec: {} })).toContain("spec.image");
    expect(
      await invalid(
        ImmortalContainer.make({ metadata: { name: "n".repeat(64), namespace: NS }, spec: { image: "x" } }),
      ),
    ).toContain("no more than 63 characters");
  });
});

describe("ImmortalContainer operator with a restart delay", () => {
  let slow: TestCluster;
  afterAll(() => slow?.stop());

  it("keeps an ended pod until the restart delay has passed since its container exited", async (ctx) => {
    ctx.skip(noKubelet !== undefined, noKubelet);
    slow = await startTestCluster();
    // finishedAt has second precision, so the replacement may come up to 1 s early: 1.5 s still
    // leaves a lower bound that only a missing delay can break.
    await slow.run(immortalContainerOperator({ restartDelay: "1500ms", recheckInterval: "200ms" }));
    await slow.client
      .resource(ImmortalContainer, slow.namespace)
      .create(
        ImmortalContainer.make({ metadata: { name: "slow", namespace: slow.namespace }, spec: { image: "busybox" } }),
      );
    const first = await slow.waitFor(Pod, `${slow.namespace}/slow-immortalpod`, (p) => p.status?.phase === "Running");

    const exitedAt = Date.now();
    await slow.kubelet?.terminateContainer(slow.namespace, "slow-immortalpod", CONTAINER_NAME, { exitCode: 0 });
    const ended = await slow.waitFor(Pod, `${slow.namespace}/slow-immortalpod`, (p) => p.status?.phase === "Succeeded");
    expect(ended.metadata?.uid).toBe(first.metadata?.uid);

    await slow.waitFor(
      Pod,
      `${slow.namespace}/slow-immortalpod`,
      (p) => p.metadata?.uid !== first.metadata?.uid && p.status?.phase === "Running",
    );
    expect(Date.now() - exitedAt).toBeGreaterThanOrEqual(500);
    const ic = await slow.waitFor(ImmortalContainer, `${slow.namespace}/slow`, (o) => o.status?.startTimes === 2);
    expect(ic.status?.currentPod).toBe("slow-immortalpod");
  });
});

describe("settingsFromEnv", () => {
  it("reads the durations from the environment and falls back to the defaults", () => {
    expect(settingsFromEnv({ IMMORTAL_RESTART_DELAY: "2s" })).toEqual({ restartDelay: "2s", recheckInterval: "30s" });
    expect(settingsFromEnv({})).toEqual({ restartDelay: "10s", recheckInterval: "30s" });
  });

  it("names the variable that holds something other than a duration", () => {
    expect(() => settingsFromEnv({ IMMORTAL_RECHECK_INTERVAL: "soon" })).toThrow(
      /^IMMORTAL_RECHECK_INTERVAL: invalid duration "soon"/,
    );
  });
});

describe("podState", () => {
  const ic = ImmortalContainer.make({
    metadata: { name: "web", namespace: NS, uid: "ic-uid" },
    spec: { image: "nginx" },
  });
  const ours = (extra: { deletionTimestamp?: string; status?: object; image?: string }) =>
    Pod.make({
      metadata: {
        name: "web-immortalpod",
        uid: "pod-uid",
        ownerReferences: [
          { apiVersion: "v1", kind: "ImmortalContainer", name: "web", uid: "ic-uid", controller: true },
        ],
        ...(extra.deletionTimestamp ? { deletionTimestamp: extra.deletionTimestamp } : {}),
      },
      spec: { containers: [{ name: CONTAINER_NAME, image: extra.image ?? "nginx" }] },
      ...(extra.status ? { status: extra.status } : {}),
    });

  it("treats an evicted pod (Failed, no container exit time) as ended long ago, to be replaced at once", () => {
    const state = podState(ic, ours({ status: { phase: "Failed", reason: "Evicted" } }));
    expect(state).toMatchObject({ state: "ended", finishedAt: undefined, exit: "pod Failed (Evicted)" });
  });

  it("waits for a terminating pod even when its container has exited or its image is outdated", () => {
    const exited = {
      phase: "Failed",
      containerStatuses: [{ name: CONTAINER_NAME, state: { terminated: { exitCode: 137 } } }],
    };
    const state = podState(ic, ours({ deletionTimestamp: "2026-01-01T00:00:00Z", status: exited, image: "old" }));
    expect(state.state).toBe("terminating");
  });

  it("reads the exit time and code of the terminated container", () => {
    const finishedAt = "2026-01-01T00:00:05Z";
    const status = {
      phase: "Running",
      containerStatuses: [
        { name: CONTAINER_NAME, state: { terminated: { exitCode: 3, reason: "Error", finishedAt } } },
      ],
    };
    expect(podState(ic, ours({ status }))).toMatchObject({
      state: "ended",
      finishedAt: Date.parse(finishedAt),
      exit: `container ${CONTAINER_NAME} exited with code 3 (Error)`,
    });
  });

  it("tells a pod controlled by another object, or by a former ImmortalContainer of the same name, from its own", () => {
    const former = ours({});
    const refs = former.metadata?.ownerReferences ?? [];
    const replaced = {
      ...former,
      metadata: { ...former.metadata, ownerReferences: refs.map((r) => ({ ...r, uid: "old" })) },
    };
    expect(podState(ic, replaced).state).toBe("foreign");
    expect(podState(ic, { ...former, metadata: { ...former.metadata, ownerReferences: [] } }).state).toBe("foreign");
    expect(podState(ic, ours({ status: { phase: "Pending" } })).state).toBe("alive");
    expect(podState(ic, ours({ image: "nginx:1.27" })).state).toBe("outdated");
    expect(podState(ic, undefined).state).toBe("absent");
  });
});
