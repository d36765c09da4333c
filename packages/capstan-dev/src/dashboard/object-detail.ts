/**
 * An object's detail panel: its YAML (rendered here, the page has no bundler to load a YAML
 * library with), its conditions and finalizers, who owns it, what it owns among the kinds the
 * dashboard watches, and the Events about it, newest first.
 */

import type { KubeObject } from "capstan";
import { apiVersionOf } from "capstan/internal";
import { stringify as stringifyYaml } from "yaml";
import type { ClusterView } from "./cluster-view.ts";
import type { DashboardKind } from "./kinds.ts";
import { objectKey } from "./object-feed.ts";
import { type ObjectRow, objectRow } from "./object-row.ts";

/** A link to another object the dashboard may show. */
export interface ObjectLink {
  /** The kind's id when the dashboard watches that kind (the page can open it), else absent. */
  kindId?: string;
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  uid: string;
}

/** An owner reference, resolved against the dashboard's kinds. */
export interface OwnerLink extends ObjectLink {
  controller: boolean;
  /** The owner is in the dashboard's view (it exists, as far as the feeds know). */
  present: boolean;
}

/** One Event about the object. */
export interface EventSummary {
  type: string;
  reason: string;
  message: string;
  count: number;
  /** When it last happened (lastTimestamp, eventTime or creation). */
  last?: string;
  source?: string;
}

/** Everything the detail panel shows. */
export interface ObjectDetail {
  kindId: string;
  apiVersion: string;
  kind: string;
  row: ObjectRow;
  yaml: string;
  ownerReferences: OwnerLink[];
  children: ObjectLink[];
  events: EventSummary[];
}

/** The detail of `obj` (of `kind`), with children and events from `view`'s feeds. */
export function objectDetail(view: ClusterView, kind: DashboardKind, obj: KubeObject): ObjectDetail {
  const meta = obj.metadata ?? {};
  const uid = meta.uid ?? "";
  const apiVersion = apiVersionOf(kind);
  const shown = { ...obj, apiVersion, kind: kind.kind, metadata: { ...meta } };
  // What `kubectl get -o yaml` leaves out by default: field ownership bookkeeping, pages long.
  delete shown.metadata.managedFields;
  return {
    kindId: kind.id,
    apiVersion,
    kind: kind.kind,
    row: objectRow(kind, obj),
    yaml: stringifyYaml(shown, { lineWidth: 0 }),
    ownerReferences: (meta.ownerReferences ?? []).map((ref) => {
      const owner = view.kinds().find((k) => apiVersionOf(k.kind) === ref.apiVersion && k.kind.kind === ref.kind);
      const namespace = owner?.kind.namespaced ? meta.namespace : undefined;
      const found = owner?.feed.get(namespace ? `${namespace}/${ref.name}` : ref.name);
      return {
        ...(owner ? { kindId: owner.kind.id } : {}),
        apiVersion: ref.apiVersion,
        kind: ref.kind,
        ...(namespace ? { namespace } : {}),
        name: ref.name,
        uid: ref.uid,
        controller: ref.controller === true,
        present: found?.metadata?.uid === ref.uid,
      };
    }),
    children: uid === "" ? [] : childrenOf(view, uid),
    events: uid === "" ? [] : eventsAbout(view, uid),
  };
}

/** Objects whose ownerReferences name `uid`, among the watched kinds, by kind then key. */
export function childrenOf(view: ClusterView, uid: string): ObjectLink[] {
  const out: ObjectLink[] = [];
  for (const { kind, feed } of view.kinds()) {
    const owned = feed.objects().filter((o) => o.metadata?.ownerReferences?.some((r) => r.uid === uid));
    owned.sort((a, b) => objectKey(a).localeCompare(objectKey(b)));
    for (const o of owned) {
      out.push({
        kindId: kind.id,
        apiVersion: apiVersionOf(kind),
        kind: kind.kind,
        ...(o.metadata?.namespace ? { namespace: o.metadata.namespace } : {}),
        name: o.metadata?.name ?? "",
        uid: o.metadata?.uid ?? "",
      });
    }
  }
  return out;
}

/**
 * The core/v1 Event fields read here. The feed watches core/v1 only: the API server serves an
 * events.k8s.io/v1 Event there converted (`regarding` -> `involvedObject`, `note` -> `message`,
 * `reportingController` -> `reportingComponent`), so the events.k8s.io names never appear.
 */
interface CoreEvent extends KubeObject {
  involvedObject?: { uid?: string };
  type?: string;
  reason?: string;
  message?: string;
  count?: number;
  lastTimestamp?: string;
  eventTime?: string;
  series?: { count?: number; lastObservedTime?: string };
  source?: { component?: string };
  reportingComponent?: string;
}

/** The Events whose involvedObject is `uid`, newest first. */
export function eventsAbout(view: ClusterView, uid: string): EventSummary[] {
  const events = (view.events.objects() as CoreEvent[]).filter((e) => e.involvedObject?.uid === uid);
  const summaries = events.map((e) => {
    const last = e.series?.lastObservedTime ?? e.lastTimestamp ?? e.eventTime ?? e.metadata?.creationTimestamp;
    const source = e.source?.component || e.reportingComponent;
    return {
      type: e.type ?? "",
      reason: e.reason ?? "",
      message: e.message ?? "",
      count: e.series?.count ?? e.count ?? 1,
      ...(last ? { last: String(last) } : {}),
      ...(source ? { source } : {}),
    };
  });
  return summaries.sort((a, b) => timeOf(b.last) - timeOf(a.last));
}

function timeOf(timestamp: string | undefined): number {
  return timestamp ? Date.parse(timestamp) || 0 : 0;
}
