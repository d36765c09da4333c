/**
 * The ReplicaSet controller (kube-controller-manager's pkg/controller/replicaset), simplified.
 *
 * Expected flow: a ReplicaSet key is queued when the ReplicaSet changes or when a pod it controls
 * (controller ownerReference) changes or goes. A sync lists the namespace's pods it controls that
 * are active (no deletionTimestamp, phase neither Succeeded nor Failed), creates the missing ones
 * from the template (generateName `<rs-name>-`, the template's labels, a controller ownerReference
 * with blockOwnerDeletion) or deletes the surplus (least useful first: unscheduled, then pending,
 * then not ready, then the newest), then writes status: replicas, fullyLabeledReplicas,
 * readyReplicas, availableReplicas (ready for at least minReadySeconds), observedGeneration.
 *
 * Guarantees: the controller reads the store directly (no informer cache), so it never acts on a
 * stale view and needs none of the real controller's expectations; a pod becoming available after
 * minReadySeconds requeues the ReplicaSet at that moment; a ReplicaSet being deleted is left alone
 * (the garbage collector deletes its pods).
 *
 * Assumptions: pods are in the `/pods` bucket, ReplicaSets in `apps/replicasets`.
 *
 * Orphan pods (no controller ownerReference) that the selector matches are adopted, as the real
 * controller's ControllerRefManager claims them.
 *
 * Caveats: pods the ReplicaSet no longer selects are not released; pod creation is not batched
 * (slow start) and failures are retried by the loop's backoff.
 */
import type { JsonObject } from "../registry/served-resource.ts";
import { type LabelSelector, selectorMatches } from "../rest/label-selector.ts";
import type { Change } from "../storage/storage.ts";
import {
  type Controller,
  type ControllerContext,
  ignoreGoneOrChanged,
  metaOf,
  type OwnerReference,
  readObject,
  splitKey,
  watchAll,
} from "./cluster-view.ts";
import { type EventSource, recordEvent } from "./event-recorder.ts";
import { LoopController } from "./reconcile-loop.ts";

/** kube-controller-manager's ReplicaSet controller reports through client-go's core/v1 recorder. */
const CONTROLLER_SOURCE: EventSource = { kind: "core", component: "replicaset-controller" };

const PODS_BUCKET = "/pods";
const RS_BUCKET = "apps/replicasets";
const POD_REF = { group: "", version: "v1", plural: "pods" };
const RS_REF = { group: "apps", version: "v1", plural: "replicasets" };

/** The controller ownerReference of an object, if any. */
export function controllerRefOf(obj: JsonObject): OwnerReference | undefined {
  return metaOf(obj).ownerReferences?.find((r) => r.controller === true);
}

interface PodCondition {
  type: string;
  status: string;
  lastTransitionTime?: string;
}

function podConditions(pod: JsonObject): PodCondition[] {
  return ((pod["status"] as { conditions?: PodCondition[] } | undefined)?.conditions ?? []) as PodCondition[];
}

export function isPodReady(pod: JsonObject): boolean {
  return podConditions(pod).some((c) => c.type === "Ready" && c.status === "True");
}

/**
 * podutil.IsPodAvailable: ready, and ready for at least minReadySeconds. Returns the ms until it
 * becomes available when it is ready but not yet long enough (so the caller can requeue).
 */
export function podAvailability(
  pod: JsonObject,
  minReadySeconds: number,
  now: number,
): { available: boolean; inMs?: number } {
  const ready = podConditions(pod).find((c) => c.type === "Ready" && c.status === "True");
  if (!ready) return { available: false };
  if (minReadySeconds <= 0) return { available: true };
  const since = ready.lastTransitionTime ? Date.parse(ready.lastTransitionTime) : Number.NaN;
  if (Number.isNaN(since)) return { available: false };
  const at = since + minReadySeconds * 1000;
  return at <= now ? { available: true } : { available: false, inMs: at - now };
}

function isActive(pod: JsonObject): boolean {
  const phase = (pod["status"] as { phase?: string } | undefined)?.phase;
  return !metaOf(pod).deletionTimestamp && phase !== "Succeeded" && phase !== "Failed";
}

/** Lower sorts first = deleted first (a simplified controller.ActivePods ordering). */
function deletionRank(pod: JsonObject): [number, number, number, number] {
  const spec = (pod["spec"] ?? {}) as { nodeName?: string };
  const phase = (pod["status"] as { phase?: string } | undefined)?.phase;
  const created = Date.parse((pod.metadata as { creationTimestamp?: string }).creationTimestamp ?? "") || 0;
  return [
    spec.nodeName ? 1 : 0,
    phase === "Pending" ? 0 : phase === "Running" ? 2 : 1,
    isPodReady(pod) ? 1 : 0,
    -created,
  ];
}

function compareRank(a: JsonObject, b: JsonObject): number {
  const ra = deletionRank(a);
  const rb = deletionRank(b);
  for (let i = 0; i < ra.length; i++) if (ra[i] !== rb[i]) return (ra[i] ?? 0) - (rb[i] ?? 0);
  return 0;
}

interface ReplicaSetSpec {
  replicas?: number;
  minReadySeconds?: number;
  selector?: LabelSelector;
  template?: { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec?: unknown };
}

export class ReplicaSetController extends LoopController implements Controller {
  constructor(private readonly ctx: ControllerContext) {
    super("replicaset-controller");
  }

  start(): this {
    this.unsubscribe = watchAll(this.ctx.store, (change) => this.onChange(change));
    for (const stored of this.ctx.store.storage.list(RS_BUCKET, "")) this.loop.add(stored.key);
    return this;
  }

  private onChange(change: Change): void {
    if (change.bucket === RS_BUCKET) {
      if (change.type !== "DELETED") this.loop.add(change.key);
      return;
    }
    if (change.bucket !== PODS_BUCKET) return;
    const pod = JSON.parse(change.data) as JsonObject;
    const ref = controllerRefOf(pod);
    const namespace = metaOf(pod).namespace ?? "";
    if (!ref) {
      // An orphan: every ReplicaSet selecting it may adopt it.
      if (change.type === "DELETED" || metaOf(pod).deletionTimestamp) return;
      for (const stored of this.ctx.store.storage.list(RS_BUCKET, `${namespace}/`)) {
        const rs = JSON.parse(stored.data) as JsonObject;
        if (selectorMatches((rs["spec"] as ReplicaSetSpec | undefined)?.selector, metaOf(pod).labels)) {
          this.loop.add(stored.key);
        }
      }
      return;
    }
    if (ref.kind !== "ReplicaSet" || !ref.apiVersion.startsWith("apps/")) return;
    this.loop.add(`${namespace}/${ref.name}`);
  }

  private served(ref: typeof POD_REF) {
    const served = this.ctx.registry.get(ref.group, ref.version, ref.plural);
    if (!served) throw new Error(`${ref.plural} are not served`);
    return served;
  }

  protected async handle(key: string): Promise<{ requeueAfterMs?: number } | undefined> {
    const rs = readObject(this.ctx.store, RS_BUCKET, key);
    if (!rs) return undefined;
    const meta = metaOf(rs);
    const { namespace, name } = splitKey(key);
    const spec = (rs["spec"] ?? {}) as ReplicaSetSpec;
    if (!meta.deletionTimestamp) await this.adoptOrphans(namespace, name, meta.uid ?? "", spec.selector);
    const owned = this.ctx.store.storage
      .list(PODS_BUCKET, `${namespace}/`)
      .map((s) => JSON.parse(s.data) as JsonObject)
      .filter((p) => controllerRefOf(p)?.uid === meta.uid);
    let active = owned.filter(isActive);

    if (!meta.deletionTimestamp) {
      const want = spec.replicas ?? 1;
      if (active.length < want) {
        for (let i = active.length; i < want; i++) await this.createPod(rs, namespace, name, spec);
      } else if (active.length > want) {
        const victims = [...active].sort(compareRank).slice(0, active.length - want);
        for (const pod of victims) {
          const podMeta = metaOf(pod);
          await ignoreGoneOrChanged(() =>
            this.ctx.store.delete(this.served(POD_REF), namespace, podMeta.name ?? "", {
              preconditions: { uid: podMeta.uid },
            }),
          );
          await this.podEvent(rs, "SuccessfulDelete", `Deleted pod: ${podMeta.name ?? ""}`);
        }
      }
      active = this.ctx.store.storage
        .list(PODS_BUCKET, `${namespace}/`)
        .map((s) => JSON.parse(s.data) as JsonObject)
        .filter((p) => controllerRefOf(p)?.uid === meta.uid && isActive(p));
    }
    return this.writeStatus(rs, namespace, name, spec, active);
  }

  /**
   * Adopts pods the selector matches that have no controller (ControllerRefManager.ClaimPods): they
   * get this ReplicaSet as controller owner and count towards its replicas.
   */
  private async adoptOrphans(
    namespace: string,
    name: string,
    uid: string,
    selector: LabelSelector | undefined,
  ): Promise<void> {
    // An empty selector would claim every pod of the namespace; the API refuses one for ReplicaSets anyway.
    if (!selector || (Object.keys(selector.matchLabels ?? {}).length === 0 && !selector.matchExpressions?.length))
      return;
    for (const stored of this.ctx.store.storage.list(PODS_BUCKET, `${namespace}/`)) {
      const pod = JSON.parse(stored.data) as JsonObject;
      const podMeta = metaOf(pod);
      if (controllerRefOf(pod) || podMeta.deletionTimestamp || !selectorMatches(selector, podMeta.labels)) continue;
      await ignoreGoneOrChanged(() =>
        this.ctx.store.guaranteedUpdate(this.served(POD_REF), namespace, podMeta.name ?? "", "main", (current) => {
          const m = current.metadata as { uid?: string; ownerReferences?: unknown[] };
          if (m.uid !== podMeta.uid || controllerRefOf(current)) return current;
          const reference = {
            apiVersion: "apps/v1",
            kind: "ReplicaSet",
            name,
            uid,
            controller: true,
            blockOwnerDeletion: true,
          };
          m.ownerReferences = [...(m.ownerReferences ?? []), reference];
          return current;
        }),
      );
    }
  }

  private async createPod(rs: JsonObject, namespace: string, name: string, spec: ReplicaSetSpec): Promise<void> {
    const template = structuredClone(spec.template ?? {});
    const meta = metaOf(rs);
    const pod: JsonObject = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        generateName: `${name}-`,
        namespace,
        ...(template.metadata?.labels ? { labels: template.metadata.labels } : {}),
        ...(template.metadata?.annotations ? { annotations: template.metadata.annotations } : {}),
        ownerReferences: [
          {
            apiVersion: "apps/v1",
            kind: "ReplicaSet",
            name,
            uid: meta.uid ?? "",
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: template.spec ?? {},
    };
    const created = JSON.parse(await this.ctx.store.create(this.served(POD_REF), namespace, pod)) as JsonObject;
    await this.podEvent(rs, "SuccessfulCreate", `Created pod: ${metaOf(created).name ?? ""}`);
  }

  /** controller_utils.go's pod control events, reported on the ReplicaSet. */
  private podEvent(rs: JsonObject, reason: string, message: string): Promise<void> {
    return recordEvent(this.ctx, rs, CONTROLLER_SOURCE, { type: "Normal", reason, message });
  }

  private async writeStatus(
    rs: JsonObject,
    namespace: string,
    name: string,
    spec: ReplicaSetSpec,
    active: JsonObject[],
  ): Promise<{ requeueAfterMs?: number } | undefined> {
    const now = Date.now();
    let available = 0;
    let nextAvailableInMs: number | undefined;
    for (const pod of active) {
      const a = podAvailability(pod, spec.minReadySeconds ?? 0, now);
      if (a.available) available++;
      else if (a.inMs !== undefined) nextAvailableInMs = Math.min(nextAvailableInMs ?? a.inMs, a.inMs);
    }
    const templateLabels = spec.template?.metadata?.labels ?? {};
    const next = {
      replicas: active.length,
      fullyLabeledReplicas: active.filter((p) =>
        Object.entries(templateLabels).every(([k, v]) => metaOf(p).labels?.[k] === v),
      ).length,
      readyReplicas: active.filter(isPodReady).length,
      availableReplicas: available,
      observedGeneration: (rs.metadata as { generation?: number }).generation ?? 0,
    };
    const status = (rs["status"] ?? {}) as Record<string, unknown>;
    const changed = Object.entries(next).some(([k, v]) => (status[k] ?? 0) !== v);
    if (changed) {
      await ignoreGoneOrChanged(() =>
        this.ctx.store.guaranteedUpdate(this.served(RS_REF), namespace, name, "status", (current) => {
          const cur = (current["status"] ?? {}) as Record<string, unknown>;
          // The API omits zero counts (omitempty); replicas is always present.
          const merged: Record<string, unknown> = { ...cur, ...next };
          for (const k of ["fullyLabeledReplicas", "readyReplicas", "availableReplicas"] as const) {
            if (merged[k] === 0) delete merged[k];
          }
          current["status"] = merged;
          return current;
        }),
      );
    }
    return nextAvailableInMs === undefined ? undefined : { requeueAfterMs: nextAvailableInMs };
  }
}
