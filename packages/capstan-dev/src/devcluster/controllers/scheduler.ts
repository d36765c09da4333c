/**
 * The scheduler of a one-node cluster: binds every pending pod to the simulated kubelet's node.
 *
 * Expected flow: a pod with no `spec.nodeName`, no deletionTimestamp and `spec.schedulerName`
 * `default-scheduler` (kube-scheduler only binds pods that name it) is bound as the pods/binding
 * subresource binds one (pkg/registry/core/pod/storage, setPodNodeAndMetadata): in ONE write,
 * `spec.nodeName` is set and the `PodScheduled` condition becomes True. That write goes straight to
 * storage, as the binding registry's GuaranteedUpdate does — the pod update strategy would refuse a
 * spec change, and a status write could not set `nodeName`.
 *
 * Guarantees: a pod is bound at most once (the write re-checks `nodeName` on the current revision
 * and retries on conflicts); a pod being deleted is never bound (the binding's "being deleted" rule).
 *
 * Assumptions: the node exists and accepts every pod (no resources, taints or affinity are
 * evaluated); the pods bucket is `/pods` and stores objects as their JSON.
 *
 * Caveats: the devcluster does not serve `pods/binding`, so an external scheduler cannot bind.
 */

import { nowRfc3339 } from "../machinery/timestamps.ts";
import type { JsonObject } from "../registry/served-resource.ts";
import { StorageError } from "../storage/storage.ts";
import { type Controller, type ControllerContext, metaOf, watchAll } from "./cluster-view.ts";
import { type EventSource, recordEvent } from "./event-recorder.ts";
import { LoopController } from "./reconcile-loop.ts";

/** The scheduler reports through the events.k8s.io/v1 recorder, as `default-scheduler`. */
const SCHEDULER_SOURCE: EventSource = {
  kind: "events.k8s.io",
  controller: "default-scheduler",
  instance: "default-scheduler-capstan",
  action: "Binding",
};

const PODS_BUCKET = "/pods";
const DEFAULT_SCHEDULER = "default-scheduler";

export class Scheduler extends LoopController implements Controller {
  constructor(
    private readonly ctx: ControllerContext,
    private readonly nodeName: string,
  ) {
    super("scheduler", "kube-scheduler");
  }

  start(): this {
    this.unsubscribe = watchAll(this.ctx.store, (change) => {
      if (
        change.bucket === PODS_BUCKET &&
        change.type !== "DELETED" &&
        unbound(JSON.parse(change.data) as JsonObject)
      ) {
        this.loop.add(change.key);
      }
    });
    for (const stored of this.ctx.store.storage.list(PODS_BUCKET, "")) {
      if (unbound(JSON.parse(stored.data) as JsonObject)) this.loop.add(stored.key);
    }
    return this;
  }

  protected async handle(key: string): Promise<undefined> {
    const storage = this.ctx.store.storage;
    const current = storage.get(PODS_BUCKET, key);
    if (!current) return undefined;
    const pod = JSON.parse(current.data) as JsonObject;
    if (!unbound(pod)) return undefined;
    const spec = pod["spec"] as Record<string, unknown>;
    spec["nodeName"] = this.nodeName;
    const status = (pod["status"] ?? {}) as { conditions?: { type: string }[] };
    const scheduled = {
      type: "PodScheduled",
      status: "True",
      lastProbeTime: null,
      lastTransitionTime: nowRfc3339(),
    };
    pod["status"] = {
      ...status,
      conditions: [...(status.conditions ?? []).filter((c) => c.type !== "PodScheduled"), scheduled],
    };
    try {
      await storage.update(PODS_BUCKET, key, current.rev, (rev) => {
        (pod.metadata as Record<string, unknown>)["resourceVersion"] = String(rev);
        return JSON.stringify(pod);
      });
      const meta = metaOf(pod);
      await recordEvent(this.ctx, pod, SCHEDULER_SOURCE, {
        type: "Normal",
        reason: "Scheduled",
        message: `Successfully assigned ${meta.namespace}/${meta.name} to ${this.nodeName}`,
      });
    } catch (err) {
      // Changed under us: handle the key again from its new revision (the change re-queued it too).
      if (err instanceof StorageError && (err.code === "Conflict" || err.code === "KeyNotFound")) {
        this.loop.add(key);
        return undefined;
      }
      throw err;
    }
    return undefined;
  }
}

function unbound(pod: JsonObject): boolean {
  const spec = (pod["spec"] ?? {}) as { nodeName?: string; schedulerName?: string };
  if (spec.nodeName) return false;
  if ((spec.schedulerName ?? DEFAULT_SCHEDULER) !== DEFAULT_SCHEDULER) return false;
  return !metaOf(pod).deletionTimestamp;
}
