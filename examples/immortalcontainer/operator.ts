/**
 * The immortal containers operator (seed 001): for every ImmortalContainer it keeps one pod,
 * `<name>-immortalpod`, running `spec.image`, and starts a new one whenever that pod is deleted or
 * its container terminates, counting the starts in `status.startTimes`.
 *
 * ## Expected flow
 * 1. An ImmortalContainer appears: the controller creates `<name>-immortalpod` (controller owner
 *    reference, `restartPolicy: Never`) and writes `status.currentPod` and `status.startTimes: 1`.
 * 2. The pod is deleted (`kubectl delete pod`): the pod watch maps it to its owner, the owner is
 *    reconciled, finds no pod and starts the next one (`startTimes: 2`).
 * 3. The container exits: with `restartPolicy: Never` the kubelet leaves it terminated and the pod
 *    ends (`Succeeded`/`Failed`). After `restartDelay` the controller deletes it, and step 2 follows.
 * 4. `spec.image` changes: the pod runs the old image, so it is deleted and replaced.
 * 5. The ImmortalContainer is deleted: its pod is garbage-collected with it (owner reference).
 *
 * ## Why restartPolicy Never
 * With the pod's default (`Always`) the kubelet restarts an exited container in place: the pod never
 * ends, the operator never sees a termination and `startTimes` would count nothing but deletions.
 * `Never` hands every restart to the operator, which is the seed's point ("whenever such containers
 * terminate for any reason, they will be restarted"), and it behaves the same on any cluster.
 *
 * ## Guarantees
 * - Level-triggered: each reconcile looks at the ImmortalContainer and its pod as they are and takes
 *   one step; it never depends on having seen a particular event.
 * - At most one pod per ImmortalContainer: the pod has a fixed name, so a second create fails with
 *   AlreadyExists instead of starting a duplicate, and the next pod is created only once the old one
 *   is gone (a terminating pod is waited for, not replaced).
 * - `startTimes` never goes backwards and never counts a start twice: the number of each start is
 *   computed from a fresh read of the ImmortalContainer (the cache may not show our last status
 *   write yet: the pod and ImmortalContainer watches are separate streams) and stamped on the pod
 *   (annotation `immortalcontainer.flugel.it/start`), so a status write lost to a crash is made up
 *   from the pod at the next reconcile.
 * - A container that exits at once is restarted every `restartDelay`, not in a hot loop against the
 *   API server.
 *
 * ## Caveats
 * - A pod started just before a crash and deleted before the operator came back is not counted.
 * - A pod on a lost node stays Terminating until the node is removed or the pod force-deleted
 *   (`kubectl delete pod --force --grace-period=0`); the operator waits, as a StatefulSet does,
 *   because replacing it could run two copies of the container at once.
 * - A pod of the same name that this ImmortalContainer does not control is never touched: a Warning
 *   event says so, and the name is checked again every `recheckInterval`.
 * - Only pods labelled `immortalcontainer.flugel.it/name` are cached (the operator's own), so the
 *   operator does not hold every pod of the cluster in memory. A pod of ours whose label was removed
 *   is found when creating its successor fails with AlreadyExists, and gets its label back.
 */
import {
  type Duration,
  isAlreadyExists,
  isConflict,
  isDeleted,
  isInvalid,
  isNotFound,
  needs,
  type ObjectOf,
  type Operator,
  operator,
  type ReconcileContext,
  type ReconcileResult,
  TerminalError,
  toMilliseconds,
} from "capstan";
import { Pod } from "capstan/core";
import { ImmortalContainer, type ImmortalContainerObject } from "./resources.ts";

export { ImmortalContainer, type ImmortalContainerObject } from "./resources.ts";

type PodObject = ObjectOf<typeof Pod>;

/** Settings of the operator (environment variables of the same meaning: see {@link settingsFromEnv}). */
export interface ImmortalContainerSettings {
  /**
   * How long an ended pod is left in place before it is replaced (env `IMMORTAL_RESTART_DELAY`).
   * Counted from the container's exit.
   */
  restartDelay: Duration;
  /**
   * How often an ImmortalContainer whose pod name is taken by a pod it does not control is looked
   * at again (env `IMMORTAL_RECHECK_INTERVAL`).
   */
  recheckInterval: Duration;
}

/**
 * The kubelet's first CrashLoopBackOff step: an exited container comes back about as fast as the
 * kubelet would bring it back, its logs stay readable meanwhile (`kubectl logs`), and an image that
 * exits at once costs the API server one pod every 10 s instead of a tight loop.
 */
export const DEFAULT_RESTART_DELAY = "10s";

/**
 * A taken pod name is freed by a person (or a slow garbage collection), not by the operator; half a
 * minute notices that quickly enough without polling the API server for nothing.
 */
export const DEFAULT_RECHECK_INTERVAL = "30s";

/** Names and marks the operator puts on its pods. */
export const POD_NAME_SUFFIX = "-immortalpod";
/** The container's name, as in the seed. */
export const CONTAINER_NAME = "acontainer";
/** Label on every pod the operator creates; its value is the ImmortalContainer's name. */
export const NAME_LABEL = "immortalcontainer.flugel.it/name";
/** Annotation on every pod the operator creates: which start (1, 2, ...) the pod is. */
export const START_ANNOTATION = "immortalcontainer.flugel.it/start";

/** The pod an ImmortalContainer named `name` runs. */
export function podNameFor(name: string): string {
  return `${name}${POD_NAME_SUFFIX}`;
}

/**
 * Reads the settings from the environment: `IMMORTAL_RESTART_DELAY` and `IMMORTAL_RECHECK_INTERVAL`
 * (durations such as `500ms`, `10s`, `1m`). Throws naming the variable when one is not a duration.
 */
export function settingsFromEnv(env: Record<string, string | undefined> = process.env): ImmortalContainerSettings {
  const read = (name: string, fallback: string): Duration => {
    const value = env[name]?.trim() || fallback;
    try {
      toMilliseconds(value);
    } catch (err) {
      throw new Error(`${name}: ${(err as Error).message}`);
    }
    return value;
  };
  return {
    restartDelay: read("IMMORTAL_RESTART_DELAY", DEFAULT_RESTART_DELAY),
    recheckInterval: read("IMMORTAL_RECHECK_INTERVAL", DEFAULT_RECHECK_INTERVAL),
  };
}

/** Where an ImmortalContainer's pod is; each state has one next step in {@link reconcile}. */
type PodState =
  | { state: "absent" }
  | { state: "foreign"; pod: PodObject }
  | { state: "terminating"; pod: PodObject }
  | { state: "outdated"; pod: PodObject; image: string | undefined }
  | { state: "ended"; pod: PodObject; finishedAt: number | undefined; exit: string }
  | { state: "alive"; pod: PodObject };

/** Classifies the pod (as cached) for the ImmortalContainer `ic`. */
export function podState(ic: ImmortalContainerObject, pod: PodObject | undefined): PodState {
  if (pod === undefined) return { state: "absent" };
  const controller = pod.metadata?.ownerReferences?.find((r) => r.controller === true);
  if (controller?.uid !== ic.metadata.uid) return { state: "foreign", pod };
  if (pod.metadata?.deletionTimestamp !== undefined) return { state: "terminating", pod };
  const container = pod.status?.containerStatuses?.find((c) => c.name === CONTAINER_NAME);
  const terminated = container?.state?.terminated;
  const phase = pod.status?.phase;
  if (terminated !== undefined || phase === "Succeeded" || phase === "Failed") {
    const finished = terminated?.finishedAt === undefined ? Number.NaN : Date.parse(terminated.finishedAt);
    const exit =
      terminated === undefined
        ? `pod ${phase}${pod.status?.reason ? ` (${pod.status.reason})` : ""}`
        : `container ${CONTAINER_NAME} exited with code ${terminated.exitCode}${terminated.reason ? ` (${terminated.reason})` : ""}`;
    return { state: "ended", pod, finishedAt: Number.isNaN(finished) ? undefined : finished, exit };
  }
  const image = pod.spec?.containers.find((c) => c.name === CONTAINER_NAME)?.image;
  if (image !== ic.spec.image) return { state: "outdated", pod, image };
  return { state: "alive", pod };
}

/** The operator with the given settings (the default export reads them from the environment). */
export function immortalContainerOperator(settings: ImmortalContainerSettings = settingsFromEnv()): Operator {
  const restartDelayMs = toMilliseconds(settings.restartDelay);
  const recheckMs = toMilliseconds(settings.recheckInterval);
  // The reconciler reads, creates, relabels and deletes pods, and reads its ImmortalContainer
  // fresh, through ctx.client: registration cannot see those requests, so they are declared for
  // `capstan generate rbac` (`owns` derives only the watch and what ctx.apply would send).
  const op = operator({
    name: "immortalcontainers",
    permissions: [needs.custom(Pod, ["get", "create", "patch", "delete"]), needs.custom(ImmortalContainer, ["get"])],
  });
  op.controller(ImmortalContainer)
    // Only the operator's own pods are cached; each maps to its controller owner's key.
    .owns(Pod, { labelSelector: NAME_LABEL })
    .reconcile(async (target, ctx) => {
      if (isDeleted(target)) return; // its pod is garbage-collected with it
      const ic = target;
      const podName = podNameFor(ctx.key.name);
      const current = podState(ic, ctx.cache(Pod).get(`${ctx.key.namespace}/${podName}`));
      switch (current.state) {
        case "absent":
          return startPod(ic, ctx, recheckMs);
        case "alive":
          await syncStatus(ic, current.pod, ctx);
          return;
        case "terminating":
          return; // its deletion brings us back
        case "outdated":
          ctx.event(
            "Normal",
            "ImageChanged",
            `pod ${podName} runs ${current.image}, not ${ic.spec.image}: replacing it`,
          );
          await deletePod(current.pod, ctx);
          return;
        case "ended": {
          const waitMs = (current.finishedAt ?? 0) + restartDelayMs - Date.now();
          if (waitMs > 0) return { requeueAfter: waitMs };
          ctx.event("Normal", "Restarting", `${current.exit}: replacing pod ${podName}`);
          await deletePod(current.pod, ctx);
          return;
        }
        case "foreign":
          return waitForName(ic, current.pod, ctx, recheckMs);
      }
    });
  return op;
}

/** Creates the next pod and counts it. */
async function startPod(
  ic: ImmortalContainerObject,
  ctx: ReconcileContext<ImmortalContainerObject>,
  recheckMs: number,
): Promise<ReconcileResult> {
  const { namespace, name } = ctx.key;
  const podName = podNameFor(name);
  // A fresh read: the cached object may not show the last startTimes we wrote yet.
  let live: ImmortalContainerObject;
  try {
    live = await ctx.client.resource(ImmortalContainer, namespace).get(name, { signal: ctx.signal });
  } catch (err) {
    if (isNotFound(err)) return; // deleted meanwhile
    throw err;
  }
  if (live.metadata.uid !== ic.metadata.uid) return; // replaced meanwhile; the new one has its own key event
  const start = (live.status?.startTimes ?? 0) + 1;
  const pod = Pod.make({
    metadata: {
      name: podName,
      namespace,
      labels: { [NAME_LABEL]: name },
      annotations: { [START_ANNOTATION]: String(start) },
    },
    spec: { restartPolicy: "Never", containers: [{ name: CONTAINER_NAME, image: live.spec.image }] },
  });
  try {
    await ctx.client.resource(Pod, namespace).create(ctx.adopt(pod), { signal: ctx.signal });
  } catch (err) {
    if (isAlreadyExists(err)) return checkExisting(ic, ctx, recheckMs);
    // Say why on the ImmortalContainer (`kubectl describe`), as the ReplicaSet controller does:
    // a refused image name, a namespace's quota or Pod Security level, missing permissions.
    const message = `cannot create pod ${podName}: ${(err as Error).message}`;
    ctx.event("Warning", "FailedCreate", message);
    // Retrying cannot fix a pod the API server finds invalid; a change of the object will.
    if (isInvalid(err)) throw new TerminalError(message, { cause: err });
    throw err;
  }
  ctx.event("Normal", "Started", `started pod ${podName} running ${live.spec.image} (start ${start})`);
  await ctx.patchStatus({ currentPod: podName, startTimes: start });
}

/**
 * Create said the name is taken, but the cache shows no pod of ours: either the cache has not seen
 * our pod yet, or the pod is not ours (it may lack our label, so it is not cached).
 */
async function checkExisting(
  ic: ImmortalContainerObject,
  ctx: ReconcileContext<ImmortalContainerObject>,
  recheckMs: number,
): Promise<ReconcileResult> {
  let pod: PodObject;
  try {
    pod = await ctx.client.resource(Pod, ctx.key.namespace).get(podNameFor(ctx.key.name), { signal: ctx.signal });
  } catch (err) {
    if (isNotFound(err)) return { requeue: true }; // gone again meanwhile: start over
    throw err;
  }
  if (podState(ic, pod).state === "foreign") return waitForName(ic, pod, ctx, recheckMs);
  if (pod.metadata?.labels?.[NAME_LABEL] !== ctx.key.name) {
    // Ours, but someone removed our label: the cache (which selects on it) would never show the pod
    // again, and its exit would go unnoticed. Put the label back; the pod's watch event follows.
    // The uid makes the patch fail if the pod was replaced since the read: a merge patch is not a
    // precondition, it would change metadata.uid, which is immutable (422 Invalid, as kube-apiserver's
    // ValidateObjectMetaUpdate answers); a pod deleted meanwhile gives 404.
    const patch = { metadata: { labels: { [NAME_LABEL]: ctx.key.name }, uid: pod.metadata?.uid } };
    try {
      await ctx.client
        .resource(Pod, ctx.key.namespace)
        .patch(podNameFor(ctx.key.name), patch, { type: "merge", signal: ctx.signal });
    } catch (err) {
      if (isNotFound(err) || isInvalid(err)) return { requeue: true };
      throw err;
    }
    return;
  }
  // Ours and labelled: the cache has not seen it yet; its watch event brings us back (the recheck
  // is a safety net).
  return { requeueAfter: recheckMs };
}

/** The pod's name is taken by a pod this ImmortalContainer does not control. */
function waitForName(
  ic: ImmortalContainerObject,
  pod: PodObject,
  ctx: ReconcileContext<ImmortalContainerObject>,
  recheckMs: number,
): ReconcileResult {
  const owner = pod.metadata?.ownerReferences?.find((r) => r.controller === true);
  // A former ImmortalContainer of the same name: its pod is being garbage-collected.
  if (owner?.kind === ImmortalContainer.kind && owner.name === ic.metadata.name) return { requeueAfter: recheckMs };
  ctx.event(
    "Warning",
    "PodNameTaken",
    `pod ${pod.metadata?.name} exists and is not controlled by this ImmortalContainer; delete it to let the operator start its own`,
  );
  return { requeueAfter: recheckMs };
}

/** Brings the status in line with the running pod (also after a status write lost to a crash). */
async function syncStatus(
  ic: ImmortalContainerObject,
  pod: PodObject,
  ctx: ReconcileContext<ImmortalContainerObject>,
): Promise<void> {
  const podName = pod.metadata?.name ?? podNameFor(ctx.key.name);
  const counted = ic.status?.startTimes ?? 0;
  const stamped = Number(pod.metadata?.annotations?.[START_ANNOTATION]);
  const startTimes = Number.isSafeInteger(stamped) && stamped > counted ? stamped : counted;
  if (ic.status?.currentPod === podName && counted === startTimes) return;
  await ctx.patchStatus({ currentPod: podName, startTimes });
}

/** Deletes exactly this pod (by uid): a pod already gone or replaced is fine. */
async function deletePod(pod: PodObject, ctx: ReconcileContext<ImmortalContainerObject>): Promise<void> {
  const name = pod.metadata?.name as string;
  try {
    await ctx.client
      .resource(Pod, ctx.key.namespace)
      .delete(name, { preconditions: { uid: pod.metadata?.uid }, signal: ctx.signal });
  } catch (err) {
    if (!isNotFound(err) && !isConflict(err)) throw err;
  }
}

/** The operator, configured from the environment (`capstan run examples/immortalcontainer/operator.ts`). */
export default immortalContainerOperator();
