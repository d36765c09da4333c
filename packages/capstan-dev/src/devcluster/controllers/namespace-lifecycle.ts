/**
 * Namespace deletion, as kube-controller-manager's namespace controller
 * (pkg/controller/namespace/deletion/namespaced_resources_deleter.go) performs it.
 *
 * Expected flow: `DELETE /api/v1/namespaces/x` marks the namespace (deletionTimestamp, phase
 * Terminating) and keeps it, held by the `kubernetes` entry of `spec.finalizers`. This controller
 * then, for every namespaced resource served, deletes the namespace's objects (background
 * propagation, as the real deleter's deletecollection), counts what remains and which finalizers
 * hold it, and records the outcome in the namespace's five deletion conditions. While anything
 * remains it waits (any change inside the namespace wakes it; a slow timer is the safety net).
 * When the namespace is empty it removes `kubernetes` from `spec.finalizers` through the finalize
 * path, which deletes the namespace once no metadata finalizer holds it either.
 *
 * Guarantees:
 * - objects with finalizers are not forced: the namespace waits for them, and its
 *   `NamespaceFinalizersRemaining` condition names the finalizers and their counts;
 * - conditions use the real types, reasons and messages (`Some resources are remaining: configmaps. has 1 resource instances`).
 *
 * Assumptions: every namespaced resource is in the registry (custom resources included), and the
 * namespace's own DELETE set deletionTimestamp and the Terminating phase (the namespace strategy).
 *
 * Caveats: pods bound to a node wait out their grace period (there is no kubelet to confirm them
 * gone before the simulated one of part 2); the real controller's discovery-failure conditions can
 * never be True here (discovery is in-process).
 */

import { nowRfc3339 } from "../machinery/timestamps.ts";
import type { JsonObject, ServedResource } from "../registry/served-resource.ts";
import { bucketOf } from "../registry/served-resource.ts";
import type { Change } from "../storage/storage.ts";
import {
  type Controller,
  type ControllerContext,
  ignoreGoneOrChanged,
  metaOf,
  readObject,
  splitKey,
  watchAll,
} from "./cluster-view.ts";
import { LoopController } from "./reconcile-loop.ts";

const NAMESPACES_BUCKET = "/namespaces";
const KUBERNETES_FINALIZER = "kubernetes";

/**
 * How long to wait before re-checking a namespace whose content is still going when no change wakes
 * us first. Changes inside the namespace normally wake the controller at once; this only covers
 * things that end without a write we see (none today), so it can be slow.
 */
const RECHECK_MS = 2000;

type ConditionType =
  | "NamespaceDeletionDiscoveryFailure"
  | "NamespaceDeletionGroupVersionParsingFailure"
  | "NamespaceDeletionContentFailure"
  | "NamespaceContentRemaining"
  | "NamespaceFinalizersRemaining";

/** The condition types the deleter maintains, in the order it writes them. */
const CONDITION_TYPES: ConditionType[] = [
  "NamespaceDeletionDiscoveryFailure",
  "NamespaceDeletionGroupVersionParsingFailure",
  "NamespaceDeletionContentFailure",
  "NamespaceContentRemaining",
  "NamespaceFinalizersRemaining",
];

const OK: Record<ConditionType, { reason: string; message: string }> = {
  NamespaceDeletionDiscoveryFailure: {
    reason: "ResourcesDiscovered",
    message: "All resources successfully discovered",
  },
  NamespaceDeletionGroupVersionParsingFailure: {
    reason: "ParsedGroupVersions",
    message: "All legacy kube types successfully parsed",
  },
  NamespaceDeletionContentFailure: {
    reason: "ContentDeleted",
    message: "All content successfully deleted, may be waiting on finalization",
  },
  NamespaceContentRemaining: { reason: "ContentRemoved", message: "All content successfully removed" },
  NamespaceFinalizersRemaining: {
    reason: "ContentHasNoFinalizers",
    message: "All content-preserving finalizers finished",
  },
};

export interface NamespaceCondition {
  type: string;
  status: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

/** What is left in a namespace after a deletion pass. */
export interface RemainingContent {
  /** `plural.group` -> number of objects left. */
  resources: Map<string, number>;
  /** finalizer -> number of objects it holds. */
  finalizers: Map<string, number>;
  /** Delete failures, as messages. */
  errors: string[];
}

/** The conditions the deleter wants, failures first, the "ok" variant for everything else. */
export function desiredConditions(
  remaining: RemainingContent,
): Map<ConditionType, { status: string; reason: string; message: string }> {
  const out = new Map<ConditionType, { status: string; reason: string; message: string }>();
  for (const type of CONDITION_TYPES) out.set(type, { status: "False", ...OK[type] });
  if (remaining.errors.length > 0) {
    const msgs = [...remaining.errors].sort();
    out.set("NamespaceDeletionContentFailure", {
      status: "True",
      reason: "ContentDeletionFailed",
      message: `Failed to delete all resource types, ${msgs.length} remaining: ${msgs.join(", ")}`,
    });
  }
  const resources = [...remaining.resources]
    .filter(([, n]) => n > 0)
    .map(([gr, n]) => `${gr} has ${n} resource instances`)
    .sort();
  if (resources.length > 0) {
    out.set("NamespaceContentRemaining", {
      status: "True",
      reason: "SomeResourcesRemain",
      message: `Some resources are remaining: ${resources.join(", ")}`,
    });
  }
  const finalizers = [...remaining.finalizers]
    .filter(([, n]) => n > 0)
    .map(([f, n]) => `${f} in ${n} resource instances`)
    .sort();
  if (finalizers.length > 0) {
    out.set("NamespaceFinalizersRemaining", {
      status: "True",
      reason: "SomeFinalizersRemain",
      message: `Some content in the namespace has finalizers remaining: ${finalizers.join(", ")}`,
    });
  }
  return out;
}

/**
 * Merges the desired conditions into `existing` as updateConditions does: a condition keeps its
 * lastTransitionTime unless its status flips. Returns the new list and whether anything changed.
 */
export function mergeConditions(
  existing: NamespaceCondition[],
  desired: Map<ConditionType, { status: string; reason: string; message: string }>,
  now: string,
): { conditions: NamespaceCondition[]; changed: boolean } {
  const conditions = existing.map((c) => ({ ...c }));
  let changed = false;
  for (const [type, want] of desired) {
    const old = conditions.find((c) => c.type === type);
    if (!old) {
      conditions.push({
        type,
        status: want.status,
        lastTransitionTime: now,
        reason: want.reason,
        message: want.message,
      });
      changed = true;
    } else if (old.status !== want.status || old.reason !== want.reason || old.message !== want.message) {
      if (old.status !== want.status) old.lastTransitionTime = now;
      old.status = want.status;
      old.reason = want.reason;
      old.message = want.message;
      changed = true;
    }
  }
  return { conditions, changed };
}

export class NamespaceLifecycle extends LoopController implements Controller {
  /** Namespaces being deleted: changes inside them wake the controller. */
  private readonly terminating = new Set<string>();

  constructor(private readonly ctx: ControllerContext) {
    super("namespace-lifecycle");
  }

  start(): this {
    for (const stored of this.ctx.store.storage.list(NAMESPACES_BUCKET, "")) {
      const ns = JSON.parse(stored.data) as JsonObject;
      if (metaOf(ns).deletionTimestamp) {
        this.terminating.add(stored.key);
        this.loop.add(stored.key);
      }
    }
    this.unsubscribe = watchAll(this.ctx.store, (change) => this.onChange(change));
    return this;
  }

  private onChange(change: Change): void {
    if (change.bucket === NAMESPACES_BUCKET) {
      if (change.type === "DELETED") {
        this.terminating.delete(change.key);
        return;
      }
      if (change.data.includes('"deletionTimestamp"')) {
        this.terminating.add(change.key);
        this.loop.add(change.key);
      }
      return;
    }
    if (this.terminating.size === 0) return;
    const slash = change.key.indexOf("/");
    if (slash < 0) return;
    const namespace = change.key.slice(0, slash);
    if (this.terminating.has(namespace)) this.loop.add(namespace);
  }

  /** Namespaced resources, one per storage bucket (versions of one resource share it). */
  private namespacedResources(): ServedResource[] {
    const seen = new Set<string>();
    const out: ServedResource[] = [];
    for (const served of this.ctx.registry.all()) {
      if (!served.namespaced) continue;
      const bucket = bucketOf(served);
      if (seen.has(bucket)) continue;
      seen.add(bucket);
      out.push(served);
    }
    return out;
  }

  protected async handle(name: string): Promise<{ requeueAfterMs?: number } | undefined> {
    const ns = readObject(this.ctx.store, NAMESPACES_BUCKET, name);
    if (!ns || !metaOf(ns).deletionTimestamp) return undefined;
    const nsServed = this.ctx.registry.get("", "v1", "namespaces");
    if (!nsServed) return undefined;

    const remaining: RemainingContent = { resources: new Map(), finalizers: new Map(), errors: [] };
    for (const served of this.namespacedResources()) {
      const bucket = bucketOf(served);
      for (const stored of this.ctx.store.storage.list(bucket, `${name}/`)) {
        const obj = JSON.parse(stored.data) as JsonObject;
        if (metaOf(obj).deletionTimestamp) continue; // already going
        const { name: objName } = splitKey(stored.key);
        try {
          await ignoreGoneOrChanged(() =>
            this.ctx.store.delete(served, name, objName, { propagationPolicy: "Background" }),
          );
        } catch (err) {
          remaining.errors.push((err as Error).message);
        }
      }
      const left = this.ctx.store.storage.list(bucket, `${name}/`);
      if (left.length > 0) remaining.resources.set(`${served.plural}.${served.group}`, left.length);
      for (const stored of left) {
        for (const finalizer of metaOf(JSON.parse(stored.data) as JsonObject).finalizers ?? []) {
          remaining.finalizers.set(finalizer, (remaining.finalizers.get(finalizer) ?? 0) + 1);
        }
      }
    }

    await this.writeConditions(nsServed, name, remaining);
    if (remaining.resources.size > 0 || remaining.errors.length > 0) return { requeueAfterMs: RECHECK_MS };

    // Empty: drop our finalizer through the finalize path; with no metadata finalizers left, the namespace goes.
    await ignoreGoneOrChanged(() =>
      this.ctx.store.guaranteedUpdate(nsServed, "", name, "finalize", (current) => {
        const spec = (current["spec"] ?? {}) as { finalizers?: string[] };
        current["spec"] = { ...spec, finalizers: (spec.finalizers ?? []).filter((f) => f !== KUBERNETES_FINALIZER) };
        return current;
      }),
    );
    return undefined;
  }

  private async writeConditions(nsServed: ServedResource, name: string, remaining: RemainingContent): Promise<void> {
    const now = nowRfc3339();
    await ignoreGoneOrChanged(() =>
      this.ctx.store.guaranteedUpdate(nsServed, "", name, "status", (current) => {
        const status = (current["status"] ?? {}) as { phase?: string; conditions?: NamespaceCondition[] };
        const merged = mergeConditions(status.conditions ?? [], desiredConditions(remaining), now);
        current["status"] = { ...status, phase: "Terminating", conditions: merged.conditions };
        return current;
      }),
    );
  }
}
