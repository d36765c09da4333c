/**
 * events.k8s.io/v1 Events are a second view of the core/v1 Events, stored once, as kube-apiserver stores
 * them (pkg/apis/events/v1 conversion): `regarding` is `involvedObject`, `note` is `message`,
 * `reportingController` is `reportingComponent`, and the old counters carry a `deprecated` prefix.
 */
import type { JsonObject } from "./served-resource.ts";

/** events.k8s.io/v1 field -> core/v1 field; fields of the same name in both are copied as they are. */
const RENAMES: [events: string, core: string][] = [
  ["regarding", "involvedObject"],
  ["note", "message"],
  ["reportingController", "reportingComponent"],
  ["deprecatedSource", "source"],
  ["deprecatedFirstTimestamp", "firstTimestamp"],
  ["deprecatedLastTimestamp", "lastTimestamp"],
  ["deprecatedCount", "count"],
];
const SHARED = ["metadata", "eventTime", "series", "reportingInstance", "action", "reason", "related", "type"];

function rename(obj: JsonObject, pairs: [from: string, to: string][], apiVersion: string): JsonObject {
  const out: JsonObject = { apiVersion, kind: "Event" };
  for (const key of SHARED) if (obj[key] !== undefined) out[key] = obj[key];
  for (const [from, to] of pairs) if (obj[from] !== undefined) out[to] = obj[from];
  return out;
}

/** A core/v1 Event as events.k8s.io/v1 shows it. */
export function coreEventToEventsV1(core: JsonObject): JsonObject {
  return rename(
    core,
    RENAMES.map(([events, c]) => [c, events]),
    "events.k8s.io/v1",
  );
}

/** An events.k8s.io/v1 Event in its stored core/v1 form. */
export function eventsV1ToCoreEvent(event: JsonObject): JsonObject {
  return rename(event, RENAMES, "v1");
}

/** events.k8s.io field selectors, read from the stored core form (the real server's field label mapping). */
export const EVENTS_V1_FIELD_PATHS: Record<string, string> = {
  "regarding.kind": "involvedObject.kind",
  "regarding.namespace": "involvedObject.namespace",
  "regarding.name": "involvedObject.name",
  "regarding.uid": "involvedObject.uid",
  "regarding.apiVersion": "involvedObject.apiVersion",
  "regarding.resourceVersion": "involvedObject.resourceVersion",
  "regarding.fieldPath": "involvedObject.fieldPath",
  reportingController: "reportingComponent",
  source: "source",
  type: "type",
  reason: "reason",
};
