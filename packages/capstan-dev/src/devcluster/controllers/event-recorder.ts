/**
 * The Events the devcluster's controllers report, as their real counterparts do, so that `kubectl
 * describe deployment` and `kubectl get events` show the same story a cluster tells: the deployment
 * controller's `ScalingReplicaSet`, the ReplicaSet controller's `SuccessfulCreate`/`SuccessfulDelete`,
 * the scheduler's `Scheduled`.
 *
 * Two shapes, as on a real cluster: kube-controller-manager's controllers use client-go's core/v1
 * recorder (`source.component`, first/last timestamps, `count: 1`, name `<object>.<unix nanos hex>`);
 * the scheduler uses the events.k8s.io/v1 recorder (`eventTime`, `action`, `reportingController` and
 * `reportingInstance`, no timestamps or count), stored as the same core/v1 Event.
 *
 * Guarantees: recording never fails the controller's work (a failed write is dropped, as the real
 * recorders drop events they cannot send).
 *
 * Caveats: no aggregation or spam filtering (each occurrence is its own Event).
 */
import { randomUUID } from "node:crypto";
import { rfc3339 } from "../machinery/timestamps.ts";
import type { JsonObject } from "../registry/served-resource.ts";
import type { ControllerContext } from "./cluster-view.ts";
import { metaOf } from "./cluster-view.ts";

const EVENTS = { group: "", version: "v1", plural: "events" };

export interface EventSpec {
  type: "Normal" | "Warning";
  reason: string;
  message: string;
}

/** A legacy (core/v1) recorder's source, or an events.k8s.io/v1 recorder's reporter. */
export type EventSource =
  | { kind: "core"; component: string }
  | { kind: "events.k8s.io"; controller: string; instance: string; action: string };

/** Unix nanoseconds, kept strictly increasing so that names of events made in one millisecond differ. */
let lastNanos = 0n;
function unixNanos(): bigint {
  const now = BigInt(Date.now()) * 1_000_000n;
  lastNanos = now > lastNanos ? now : lastNanos + 1n;
  return lastNanos;
}

/** DNS-1123 subdomain (what an Event's name must be): at most 253 lowercase alphanumerics, `-` and `.`. */
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_SUBDOMAIN_MAX = 253;

/** util.GenerateEventName: `<object>.<unix nanos hex>`, or a UUID when that is no valid name (too long). */
function eventName(objectName: string, nanos: bigint): string {
  const name = `${objectName}.${nanos.toString(16)}`;
  return name.length <= DNS_SUBDOMAIN_MAX && DNS_SUBDOMAIN.test(name) ? name : randomUUID();
}

/**
 * Records one Event about `object`, in the object's namespace or, for a cluster-scoped object, in
 * `default` (as both client-go recorders' makeEvent place it).
 */
export async function recordEvent(
  ctx: ControllerContext,
  object: JsonObject,
  source: EventSource,
  event: EventSpec,
): Promise<void> {
  const meta = metaOf(object);
  const served = ctx.registry.get(EVENTS.group, EVENTS.version, EVENTS.plural);
  if (!served || !meta.name) return;
  const nanos = unixNanos();
  const now = new Date(Number(nanos / 1_000_000n));
  const namespace = meta.namespace || "default";
  const involvedObject = {
    kind: object.kind,
    namespace: meta.namespace,
    name: meta.name,
    uid: meta.uid,
    apiVersion: object.apiVersion,
    resourceVersion: meta.resourceVersion,
  };
  const base = {
    apiVersion: "v1",
    kind: "Event",
    metadata: { name: eventName(meta.name, nanos), namespace },
    involvedObject,
    reason: event.reason,
    message: event.message,
    type: event.type,
  };
  const body: JsonObject =
    source.kind === "core"
      ? {
          ...base,
          source: { component: source.component },
          firstTimestamp: rfc3339(now),
          lastTimestamp: rfc3339(now),
          count: 1,
          reportingComponent: source.component,
          reportingInstance: "",
        }
      : {
          ...base,
          eventTime: now.toISOString().replace(/Z$/, "000Z"),
          action: source.action,
          reportingComponent: source.controller,
          reportingInstance: source.instance,
        };
  try {
    await ctx.store.create(served, namespace, body);
  } catch {
    // Best effort, as client-go's recorders: the namespace may be terminating, the object gone.
  }
}
