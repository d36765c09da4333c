/**
 * The `scale` subresource: an autoscaling/v1 Scale view of an object whose replicas live at the paths
 * its ServedResource names (`.spec.replicas` for Deployments, a CRD's specReplicasPath otherwise).
 */

import { ownValue, setOwn } from "../machinery/own-properties.ts";
import { resourceNotServed } from "../machinery/status.ts";
import type { JsonObject, ServedResource } from "./served-resource.ts";

function pathParts(jsonPath: string): string[] {
  return jsonPath.replace(/^\./, "").split(".");
}

// The paths are the CRD author's and may name `__proto__` or `constructor`: own members only, so that a
// /scale write never walks into (and writes) Object.prototype.
function readPath(obj: unknown, jsonPath: string): unknown {
  let node = obj;
  for (const part of pathParts(jsonPath)) {
    if (node === null || typeof node !== "object") return undefined;
    node = ownValue(node as Record<string, unknown>, part);
  }
  return node;
}

function writePath(obj: Record<string, unknown>, jsonPath: string, value: unknown): void {
  const parts = pathParts(jsonPath);
  let node = obj;
  for (const part of parts.slice(0, -1)) {
    const next = ownValue(node, part);
    if (next === null || typeof next !== "object") setOwn(node, part, {});
    node = node[part] as Record<string, unknown>;
  }
  setOwn(node, parts[parts.length - 1]!, value);
}

/** A label selector object in its string form (metav1.FormatLabelSelector). */
function formatSelector(selector: unknown): string | undefined {
  if (selector === null || typeof selector !== "object") return undefined;
  const s = selector as {
    matchLabels?: Record<string, string>;
    matchExpressions?: { key: string; operator: string; values?: string[] }[];
  };
  const terms: string[] = [];
  for (const [k, v] of Object.entries(s.matchLabels ?? {})) terms.push(`${k}=${v}`);
  for (const e of s.matchExpressions ?? []) {
    const values = [...(e.values ?? [])].sort().join(",");
    if (e.operator === "In") terms.push(`${e.key} in (${values})`);
    else if (e.operator === "NotIn") terms.push(`${e.key} notin (${values})`);
    else if (e.operator === "Exists") terms.push(e.key);
    else if (e.operator === "DoesNotExist") terms.push(`!${e.key}`);
  }
  return terms.join(",");
}

/** The Scale object of `obj`. */
export function scaleOf(served: ServedResource, obj: JsonObject): JsonObject {
  const scale = served.subresources.scale;
  if (!scale) throw resourceNotServed();
  const meta = (obj.metadata ?? {}) as Record<string, unknown>;
  const replicas = readPath(obj, scale.specReplicasPath);
  const observed = readPath(obj, scale.statusReplicasPath);
  const status: Record<string, unknown> = { replicas: typeof observed === "number" ? observed : 0 };
  const selector = scale.labelSelectorPath
    ? readPath(obj, scale.labelSelectorPath)
    : formatSelector((obj["spec"] as Record<string, unknown> | undefined)?.["selector"]);
  if (typeof selector === "string" && selector !== "") status["selector"] = selector;
  const scaleMeta: Record<string, unknown> = { name: meta["name"] };
  for (const key of ["namespace", "uid", "resourceVersion", "creationTimestamp"]) {
    if (meta[key] !== undefined) scaleMeta[key] = meta[key];
  }
  return {
    kind: "Scale",
    apiVersion: "autoscaling/v1",
    metadata: scaleMeta,
    spec: typeof replicas === "number" ? { replicas } : {},
    status,
  };
}

/** The current Scale, as a patch base. */
export const readScale = scaleOf;

/** `current` with the replicas of `scale` written back (and its resourceVersion as the write's precondition). */
export function writeScale(served: ServedResource, current: JsonObject, scale: JsonObject): JsonObject {
  const paths = served.subresources.scale;
  if (!paths) throw resourceNotServed();
  const next = structuredClone(current) as Record<string, unknown> & JsonObject;
  const replicas = (scale["spec"] as { replicas?: unknown } | undefined)?.replicas;
  writePath(next, paths.specReplicasPath, typeof replicas === "number" ? replicas : 0);
  const rv = (scale.metadata as { resourceVersion?: string } | undefined)?.resourceVersion;
  const meta = { ...(next.metadata ?? {}) } as Record<string, unknown>;
  if (rv) meta["resourceVersion"] = rv;
  else delete meta["resourceVersion"];
  next.metadata = meta;
  return next;
}
