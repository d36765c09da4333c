/**
 * The Deployment controller (kube-controller-manager's pkg/controller/deployment), simplified.
 *
 * Expected flow: a Deployment key is queued when the Deployment changes or when a ReplicaSet it
 * controls changes or goes. A sync:
 * 1. finds its ReplicaSets (controller ownerReference) and the *new* one: the one labelled
 *    `pod-template-hash=<hash of the current template and collisionCount>`; creates it when missing
 *    (name `<deployment>-<hash>`, selector and template labels plus `pod-template-hash`, revision
 *    annotation = highest old revision + 1). An old ReplicaSet whose template comes back (a
 *    rollback) becomes the new one and gets the next revision;
 * 2. copies the new ReplicaSet's revision to the Deployment's `deployment.kubernetes.io/revision`
 *    annotation (through `/status`, as the real controller's UpdateStatus: no generation bump);
 * 3. scales: Recreate scales old ReplicaSets to 0 and the new one up once no old pod is left
 *    (Terminating ones included; a pod's deletion wakes the Deployment);
 *    RollingUpdate scales the new ReplicaSet up within replicas + maxSurge and old ones down while
 *    at least replicas - maxUnavailable pods stay available (old unhealthy replicas first), as
 *    rolling.go does; with no old pods a change of `spec.replicas` scales the new ReplicaSet directly;
 * 4. deletes old, empty ReplicaSets beyond revisionHistoryLimit;
 * 5. writes status (observedGeneration, replicas, updatedReplicas, readyReplicas,
 *    availableReplicas, unavailableReplicas) and the Available/Progressing conditions with the real
 *    reasons and messages (MinimumReplicasAvailable, NewReplicaSetCreated, FoundNewReplicaSet,
 *    ReplicaSetUpdated, NewReplicaSetAvailable), which is what `kubectl rollout status` reads.
 *
 * Guarantees: every write goes through the object store (validation, resourceVersions); a
 * Deployment being deleted or paused is not rolled (status is still written for a paused one);
 * a name collision with a ReplicaSet the Deployment does not own bumps `status.collisionCount`.
 *
 * Assumptions: ReplicaSets are in `apps/replicasets`; the ReplicaSet controller
 * (replicaset-controller.ts) keeps their status; templates are compared by their hash only.
 *
 * Caveats: the template hash is FNV-32a over our JSON of the template, not the real controller's
 * hash over Go's printed struct, so names differ from a real cluster's; no proportional scaling of
 * several old ReplicaSets during a rollout (a mid-rollout scale changes the new ReplicaSet's
 * target only); no ProgressDeadlineExceeded (no deadline timer); annotations other than the
 * revision ones are not copied to ReplicaSets.
 */

import { nowRfc3339 } from "../machinery/timestamps.ts";
import type { JsonObject } from "../registry/served-resource.ts";
import type { LabelSelector } from "../rest/label-selector.ts";
import type { Change } from "../storage/storage.ts";
import {
  type Controller,
  type ControllerContext,
  ignoreGoneOrChanged,
  isStatus,
  metaOf,
  readObject,
  splitKey,
  watchAll,
} from "./cluster-view.ts";
import { type EventSource, recordEvent } from "./event-recorder.ts";
import { LoopController } from "./reconcile-loop.ts";
import { controllerRefOf } from "./replicaset-controller.ts";

/** kube-controller-manager's deployment controller reports through client-go's core/v1 recorder. */
const CONTROLLER_SOURCE: EventSource = { kind: "core", component: "deployment-controller" };

const RS_BUCKET = "apps/replicasets";
const DEPLOYMENTS_BUCKET = "apps/deployments";
const PODS_BUCKET = "/pods";
const RS_REF = { group: "apps", version: "v1", plural: "replicasets" };
const DEPLOYMENT_REF = { group: "apps", version: "v1", plural: "deployments" };

export const HASH_LABEL = "pod-template-hash";
export const REVISION_ANNOTATION = "deployment.kubernetes.io/revision";
const DESIRED_REPLICAS_ANNOTATION = "deployment.kubernetes.io/desired-replicas";
const MAX_REPLICAS_ANNOTATION = "deployment.kubernetes.io/max-replicas";

/** utilrand.SafeEncodeString's alphabet: no vowels (no words), no 0/1/3 (look like letters). */
const SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789";

/** The pod-template-hash: FNV-32a of the template (and collisionCount), its decimal digits safe-encoded. */
export function templateHash(template: unknown, collisionCount?: number): string {
  let h = 0x811c9dc5;
  const text = stableJson(template) + (collisionCount === undefined ? "" : String(collisionCount));
  for (const byte of Buffer.from(text, "utf8")) {
    h ^= byte;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  let out = "";
  for (const ch of String(h)) out += SAFE_ALPHABET[ch.charCodeAt(0) % SAFE_ALPHABET.length];
  return out;
}

/**
 * JSON with object keys sorted and null fields dropped, so equal templates hash equally whatever their
 * key order (a Go struct has no key order, and a null field is its zero value: `kubectl rollout undo`
 * sends `creationTimestamp: null` in the template it restores).
 */
function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined && v !== null)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** intstr.GetScaledValueFromIntOrPercent: an integer, or "N%" of total rounded up or down. */
export function scaledValue(value: unknown, total: number, roundUp: boolean): number {
  if (typeof value === "number") return value;
  if (typeof value === "string") {
    const m = /^(\d+)%$/.exec(value);
    if (m) {
      const exact = (Number(m[1]) * total) / 100;
      return roundUp ? Math.ceil(exact) : Math.floor(exact);
    }
    if (/^\d+$/.test(value)) return Number(value);
  }
  throw new Error(`invalid int-or-percent value ${JSON.stringify(value)}`);
}

interface DeploymentSpec {
  replicas?: number;
  selector?: LabelSelector;
  template?: { metadata?: { labels?: Record<string, string> } } & Record<string, unknown>;
  strategy?: { type?: string; rollingUpdate?: { maxSurge?: unknown; maxUnavailable?: unknown } };
  minReadySeconds?: number;
  revisionHistoryLimit?: number;
  paused?: boolean;
}

interface DeploymentCondition {
  type: string;
  status: string;
  lastUpdateTime: string;
  lastTransitionTime: string;
  reason: string;
  message: string;
}

interface RsView {
  obj: JsonObject;
  name: string;
  /** Desired replicas, as we will have written them. */
  replicas: number;
  available: number;
  current: number;
  ready: number;
  revision: number;
  created: number;
}

function view(rs: JsonObject): RsView {
  const spec = (rs["spec"] ?? {}) as { replicas?: number };
  const status = (rs["status"] ?? {}) as { replicas?: number; availableReplicas?: number; readyReplicas?: number };
  const meta = rs.metadata as { name?: string; annotations?: Record<string, string>; creationTimestamp?: string };
  return {
    obj: rs,
    name: meta.name ?? "",
    replicas: spec.replicas ?? 0,
    available: status.availableReplicas ?? 0,
    current: status.replicas ?? 0,
    ready: status.readyReplicas ?? 0,
    revision: Number(meta.annotations?.[REVISION_ANNOTATION] ?? "0") || 0,
    created: Date.parse(meta.creationTimestamp ?? "") || 0,
  };
}

/** The rollout limits of a Deployment (deploymentutil.ResolveFenceposts / MaxUnavailable). */
export function rolloutLimits(spec: DeploymentSpec): { maxSurge: number; maxUnavailable: number } {
  const replicas = spec.replicas ?? 1;
  if (spec.strategy?.type === "Recreate") return { maxSurge: 0, maxUnavailable: 0 };
  const rolling = spec.strategy?.rollingUpdate ?? {};
  const maxSurge = scaledValue(rolling.maxSurge ?? "25%", replicas, true);
  let maxUnavailable = scaledValue(rolling.maxUnavailable ?? "25%", replicas, false);
  // Both zero would never make progress: the real controller then allows one unavailable pod.
  if (maxSurge === 0 && maxUnavailable === 0) maxUnavailable = 1;
  return { maxSurge, maxUnavailable: Math.min(maxUnavailable, replicas) };
}

export class DeploymentController extends LoopController implements Controller {
  constructor(private readonly ctx: ControllerContext) {
    super("deployment-controller");
  }

  start(): this {
    this.unsubscribe = watchAll(this.ctx.store, (change) => this.onChange(change));
    for (const stored of this.ctx.store.storage.list(DEPLOYMENTS_BUCKET, "")) this.loop.add(stored.key);
    return this;
  }

  private onChange(change: Change): void {
    if (change.bucket === DEPLOYMENTS_BUCKET) {
      if (change.type !== "DELETED") this.loop.add(change.key);
      return;
    }
    if (change.bucket === PODS_BUCKET) {
      // Recreate waits for old pods to be gone: their deletion wakes the Deployment (as deletePod does).
      if (change.type !== "DELETED") return;
      const podRef = controllerRefOf(JSON.parse(change.data) as JsonObject);
      if (podRef?.kind !== "ReplicaSet") return;
      const namespace = change.key.slice(0, change.key.indexOf("/"));
      const owner = readObject(this.ctx.store, RS_BUCKET, `${namespace}/${podRef.name}`);
      const deployRef = owner ? controllerRefOf(owner) : undefined;
      if (deployRef?.kind === "Deployment") this.loop.add(`${namespace}/${deployRef.name}`);
      return;
    }
    if (change.bucket !== RS_BUCKET) return;
    const rs = JSON.parse(change.data) as JsonObject;
    const ref = controllerRefOf(rs);
    if (ref?.kind !== "Deployment" || !ref.apiVersion.startsWith("apps/")) return;
    this.loop.add(`${metaOf(rs).namespace ?? ""}/${ref.name}`);
  }

  private served(ref: typeof RS_REF) {
    const served = this.ctx.registry.get(ref.group, ref.version, ref.plural);
    if (!served) throw new Error(`${ref.plural} are not served`);
    return served;
  }

  private ownedReplicaSets(namespace: string, uid: string | undefined): RsView[] {
    return this.ctx.store.storage
      .list(RS_BUCKET, `${namespace}/`)
      .map((s) => JSON.parse(s.data) as JsonObject)
      .filter((rs) => controllerRefOf(rs)?.uid === uid)
      .map(view);
  }

  protected async handle(key: string): Promise<undefined> {
    let d = readObject(this.ctx.store, DEPLOYMENTS_BUCKET, key);
    if (!d || metaOf(d).deletionTimestamp) return undefined;
    const { namespace, name } = splitKey(key);
    const spec = (d["spec"] ?? {}) as DeploymentSpec;
    const status = (d["status"] ?? {}) as { collisionCount?: number; conditions?: DeploymentCondition[] };
    const replicas = spec.replicas ?? 1;
    const hash = templateHash(spec.template ?? {}, status.collisionCount);
    let all = this.ownedReplicaSets(namespace, metaOf(d).uid);
    let newRs = all.find((rs) => metaOf(rs.obj).labels?.[HASH_LABEL] === hash);
    const maxOldRevision = Math.max(0, ...all.filter((rs) => rs !== newRs).map((rs) => rs.revision));
    const limits = rolloutLimits(spec);
    let progressReason: "NewReplicaSetCreated" | "FoundNewReplicaSet" | undefined;

    if (spec.paused) return this.writeStatus(d, namespace, name, newRs, limits, undefined);

    if (!newRs) {
      const created = await this.createReplicaSet(d, namespace, name, spec, hash, maxOldRevision + 1, all, limits);
      if (created === "collision") return undefined;
      all = this.ownedReplicaSets(namespace, metaOf(d).uid);
      newRs = all.find((rs) => rs.name === created);
      progressReason = "NewReplicaSetCreated";
    } else if (newRs.revision <= maxOldRevision) {
      // An old template came back (rollback): it is the newest revision again.
      await this.patchReplicaSet(namespace, newRs.name, undefined, String(maxOldRevision + 1));
      newRs.revision = maxOldRevision + 1;
    }
    if (!newRs) return undefined;
    if (!status.conditions?.some((c) => c.type === "Progressing")) progressReason ??= "FoundNewReplicaSet";

    // The Deployment carries its current revision, written with UpdateStatus as the real controller
    // does (sync.go getNewReplicaSet): the status strategy keeps the annotation and the generation.
    const revision = String(newRs.revision);
    if ((d.metadata as { annotations?: Record<string, string> }).annotations?.[REVISION_ANNOTATION] !== revision) {
      const updated = await this.ctx.store.guaranteedUpdate(
        this.served(DEPLOYMENT_REF),
        namespace,
        name,
        "status",
        (c) => {
          const meta = c.metadata as { annotations?: Record<string, string> };
          meta.annotations = { ...meta.annotations, [REVISION_ANNOTATION]: revision };
          return c;
        },
      );
      d = JSON.parse(updated) as JsonObject;
    }

    const olds = all.filter((rs) => rs !== newRs);
    const target = new Map<RsView, number>(all.map((rs) => [rs, rs.replicas]));
    if (spec.strategy?.type === "Recreate") {
      for (const rs of olds) target.set(rs, 0);
      if (!this.oldPodsRunning(namespace, olds)) target.set(newRs, replicas);
    } else {
      this.planRolling(newRs, olds, replicas, limits, target);
    }
    for (const [rs, want] of target) {
      if (want !== rs.replicas) {
        await this.patchReplicaSet(namespace, rs.name, {
          replicas: want,
          desired: replicas,
          max: replicas + limits.maxSurge,
        });
        await this.scalingEvent(d, rs.name, rs.replicas, want);
        rs.replicas = want;
      }
    }
    await this.cleanupHistory(namespace, olds, spec.revisionHistoryLimit ?? 10);
    return this.writeStatus(d, namespace, name, newRs, limits, progressReason);
  }

  /** rolling.go's reconcileNewReplicaSet and reconcileOldReplicaSets, on planned replica counts. */
  private planRolling(
    newRs: RsView,
    olds: RsView[],
    replicas: number,
    limits: { maxSurge: number; maxUnavailable: number },
    target: Map<RsView, number>,
  ): void {
    const total = () => [...target.values()].reduce((a, b) => a + b, 0);
    const newReplicas = target.get(newRs) ?? 0;
    if (newReplicas > replicas) {
      target.set(newRs, replicas);
    } else if (newReplicas < replicas) {
      const room = replicas + limits.maxSurge - total();
      if (room > 0) target.set(newRs, newReplicas + Math.min(room, replicas - newReplicas));
    }
    const oldTotal = olds.reduce((sum, rs) => sum + (target.get(rs) ?? 0), 0);
    if (oldTotal === 0) return;
    const minAvailable = replicas - limits.maxUnavailable;
    const newUnavailable = newRs.replicas - newRs.available;
    let maxScaledDown = total() - minAvailable - newUnavailable;
    if (maxScaledDown <= 0) return;
    const oldestFirst = [...olds].sort((a, b) => a.created - b.created || (a.name < b.name ? -1 : 1));
    // Old replicas that are not available go first: scaling them down costs no availability.
    for (const rs of oldestFirst) {
      if (maxScaledDown <= 0) break;
      const want = target.get(rs) ?? 0;
      const unhealthy = want - Math.min(want, rs.available);
      const down = Math.min(maxScaledDown, unhealthy);
      if (down > 0) {
        target.set(rs, want - down);
        maxScaledDown -= down;
      }
    }
    const available = [newRs, ...olds].reduce((sum, rs) => sum + Math.min(rs.available, target.get(rs) ?? 0), 0);
    let scaleDown = Math.min(available - minAvailable, maxScaledDown);
    for (const rs of oldestFirst) {
      if (scaleDown <= 0) break;
      const want = target.get(rs) ?? 0;
      const down = Math.min(want, scaleDown);
      target.set(rs, want - down);
      scaleDown -= down;
    }
  }

  /**
   * recreate.go's oldPodsRunning: old ReplicaSets still report pods, or a pod they own exists and has
   * not finished (a Terminating pod still runs until the kubelet confirms it gone).
   */
  private oldPodsRunning(namespace: string, olds: RsView[]): boolean {
    if (olds.some((rs) => rs.current > 0)) return true;
    const uids = new Set(olds.map((rs) => metaOf(rs.obj).uid));
    return this.ctx.store.storage.list(PODS_BUCKET, `${namespace}/`).some((stored) => {
      const pod = JSON.parse(stored.data) as JsonObject;
      const phase = (pod["status"] as { phase?: string } | undefined)?.phase;
      return uids.has(controllerRefOf(pod)?.uid) && phase !== "Succeeded" && phase !== "Failed";
    });
  }

  private async createReplicaSet(
    d: JsonObject,
    namespace: string,
    name: string,
    spec: DeploymentSpec,
    hash: string,
    revision: number,
    existing: RsView[],
    limits: { maxSurge: number; maxUnavailable: number },
  ): Promise<string | "collision"> {
    const replicas = spec.replicas ?? 1;
    const template = structuredClone(spec.template ?? {});
    template.metadata = { ...template.metadata, labels: { ...template.metadata?.labels, [HASH_LABEL]: hash } };
    const selector = structuredClone(spec.selector ?? {});
    selector.matchLabels = { ...selector.matchLabels, [HASH_LABEL]: hash };
    let initial: number;
    if (spec.strategy?.type === "Recreate") {
      initial = this.oldPodsRunning(namespace, existing) ? 0 : replicas;
    } else {
      const current = existing.reduce((sum, rs) => sum + rs.replicas, 0);
      initial = current === 0 ? replicas : Math.max(0, Math.min(replicas + limits.maxSurge - current, replicas));
    }
    const rsName = `${name}-${hash}`;
    const rs: JsonObject = {
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      metadata: {
        name: rsName,
        namespace,
        labels: { ...spec.template?.metadata?.labels, [HASH_LABEL]: hash },
        annotations: {
          [DESIRED_REPLICAS_ANNOTATION]: String(replicas),
          [MAX_REPLICAS_ANNOTATION]: String(replicas + limits.maxSurge),
          [REVISION_ANNOTATION]: String(revision),
        },
        ownerReferences: [
          {
            apiVersion: "apps/v1",
            kind: "Deployment",
            name,
            uid: metaOf(d).uid ?? "",
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: { replicas: initial, minReadySeconds: spec.minReadySeconds ?? 0, selector, template },
    };
    try {
      await this.ctx.store.create(this.served(RS_REF), namespace, rs);
      if (initial > 0) await this.scalingEvent(d, rsName, 0, initial);
      return rsName;
    } catch (err) {
      if (!isStatus(err, 409)) throw err;
      // A ReplicaSet of that name that is not ours (or not our template): try the next hash.
      await ignoreGoneOrChanged(() =>
        this.ctx.store.guaranteedUpdate(this.served(DEPLOYMENT_REF), namespace, name, "status", (c) => {
          const s = (c["status"] ?? {}) as { collisionCount?: number };
          c["status"] = { ...s, collisionCount: (s.collisionCount ?? 0) + 1 };
          return c;
        }),
      );
      return "collision";
    }
  }

  /** sync.go scaleReplicaSet's event (and getNewReplicaSet's, for a new ReplicaSet created scaled up). */
  private scalingEvent(d: JsonObject, rsName: string, from: number, to: number): Promise<void> {
    return recordEvent(this.ctx, d, CONTROLLER_SOURCE, {
      type: "Normal",
      reason: "ScalingReplicaSet",
      message: `Scaled ${to > from ? "up" : "down"} replica set ${rsName} from ${from} to ${to}`,
    });
  }

  private async patchReplicaSet(
    namespace: string,
    name: string,
    scale: { replicas: number; desired: number; max: number } | undefined,
    revision?: string,
  ): Promise<void> {
    await ignoreGoneOrChanged(() =>
      this.ctx.store.guaranteedUpdate(this.served(RS_REF), namespace, name, "main", (c) => {
        const meta = c.metadata as { annotations?: Record<string, string> };
        const annotations = { ...meta.annotations };
        if (scale) {
          (c["spec"] as Record<string, unknown>)["replicas"] = scale.replicas;
          annotations[DESIRED_REPLICAS_ANNOTATION] = String(scale.desired);
          annotations[MAX_REPLICAS_ANNOTATION] = String(scale.max);
        }
        if (revision !== undefined) annotations[REVISION_ANNOTATION] = revision;
        meta.annotations = annotations;
        return c;
      }),
    );
  }

  /** Deletes the oldest empty old ReplicaSets beyond revisionHistoryLimit (cleanupDeployment). */
  private async cleanupHistory(namespace: string, olds: RsView[], limit: number): Promise<void> {
    const empty = olds
      .filter((rs) => rs.replicas === 0 && rs.current === 0 && !metaOf(rs.obj).deletionTimestamp)
      .sort((a, b) => a.revision - b.revision);
    const surplus = olds.length - limit;
    for (const rs of empty.slice(0, Math.max(0, surplus))) {
      await ignoreGoneOrChanged(() =>
        this.ctx.store.delete(this.served(RS_REF), namespace, rs.name, { preconditions: { uid: metaOf(rs.obj).uid } }),
      );
    }
  }

  private async writeStatus(
    d: JsonObject,
    namespace: string,
    name: string,
    newRs: RsView | undefined,
    limits: { maxSurge: number; maxUnavailable: number },
    progressReason: "NewReplicaSetCreated" | "FoundNewReplicaSet" | undefined,
  ): Promise<undefined> {
    // Re-read the ReplicaSets: their status is what the counts come from.
    const fresh = this.ownedReplicaSets(namespace, metaOf(d).uid);
    const newFresh = newRs ? fresh.find((rs) => rs.name === newRs.name) : undefined;
    const spec = (d["spec"] ?? {}) as DeploymentSpec;
    const replicas = spec.replicas ?? 1;
    const totalDesired = fresh.reduce((s, rs) => s + rs.replicas, 0);
    const counts = {
      observedGeneration: (d.metadata as { generation?: number }).generation ?? 0,
      replicas: fresh.reduce((s, rs) => s + rs.current, 0),
      updatedReplicas: newFresh?.current ?? 0,
      readyReplicas: fresh.reduce((s, rs) => s + rs.ready, 0),
      availableReplicas: fresh.reduce((s, rs) => s + rs.available, 0),
      unavailableReplicas: 0,
    };
    counts.unavailableReplicas = Math.max(0, totalDesired - counts.availableReplicas);

    const now = nowRfc3339();
    const old = (d["status"] ?? {}) as Record<string, unknown> & { conditions?: DeploymentCondition[] };
    const conditions = structuredClone(old.conditions ?? []);
    const set = (type: string, status: string, reason: string, message: string, touch: boolean) => {
      const existing = conditions.find((c) => c.type === type);
      if (existing && existing.status === status && existing.reason === reason && existing.message === message) {
        if (touch) existing.lastUpdateTime = now;
        return;
      }
      const next: DeploymentCondition = {
        type,
        status,
        lastUpdateTime: now,
        lastTransitionTime: existing && existing.status === status ? existing.lastTransitionTime : now,
        reason,
        message,
      };
      if (existing) Object.assign(existing, next);
      else conditions.push(next);
    };
    if (counts.availableReplicas >= replicas - limits.maxUnavailable) {
      set("Available", "True", "MinimumReplicasAvailable", "Deployment has minimum availability.", false);
    } else {
      set("Available", "False", "MinimumReplicasUnavailable", "Deployment does not have minimum availability.", false);
    }
    if (newFresh && !spec.paused) {
      const complete =
        counts.updatedReplicas === replicas &&
        counts.replicas === replicas &&
        counts.availableReplicas === replicas &&
        newFresh.replicas === replicas;
      const rsName = newFresh.name;
      if (complete) {
        set(
          "Progressing",
          "True",
          "NewReplicaSetAvailable",
          `ReplicaSet "${rsName}" has successfully progressed.`,
          false,
        );
      } else if (progressReason === "NewReplicaSetCreated") {
        set("Progressing", "True", "NewReplicaSetCreated", `Created new replica set "${rsName}"`, false);
      } else if (progressReason === "FoundNewReplicaSet") {
        set("Progressing", "True", "FoundNewReplicaSet", `Found new replica set "${rsName}"`, false);
      } else {
        const progressed = (["updatedReplicas", "readyReplicas", "availableReplicas", "replicas"] as const).some(
          (k) => (old[k] ?? 0) !== counts[k],
        );
        const current = conditions.find((c) => c.type === "Progressing");
        if (progressed || current?.reason === "NewReplicaSetAvailable" || !current) {
          set("Progressing", "True", "ReplicaSetUpdated", `ReplicaSet "${rsName}" is progressing.`, true);
        }
      }
    }
    // The real controller writes Available before Progressing once both exist.
    conditions.sort((a, b) => (a.type === "Available" ? -1 : b.type === "Available" ? 1 : 0));

    const next: Record<string, unknown> = { ...old, ...counts, conditions };
    // omitempty: zero counts are absent from a real Deployment's status.
    for (const k of ["replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "unavailableReplicas"]) {
      if (next[k] === 0) delete next[k];
    }
    if (JSON.stringify(next) === JSON.stringify(old)) return undefined;
    await ignoreGoneOrChanged(() =>
      this.ctx.store.guaranteedUpdate(this.served(DEPLOYMENT_REF), namespace, name, "status", (c) => {
        c["status"] = next;
        return c;
      }),
    );
    return undefined;
  }
}
