/**
 * autoscaling/v1 HorizontalPodAutoscalers are a view of the stored autoscaling/v2 ones, converted as
 * kube-apiserver converts them (pkg/apis/autoscaling/v1/conversion.go): v1 holds only the CPU
 * utilization target and current value; every other metric, the current metrics and the conditions
 * ride in `autoscaling.alpha.kubernetes.io/*` annotations, written in v1's metric shapes, which a v1
 * write turns back into v2 fields (and drops from the stored object).
 */
import type { JsonObject } from "./served-resource.ts";

type Json = Record<string, unknown>;

export const METRIC_SPECS_ANNOTATION = "autoscaling.alpha.kubernetes.io/metrics";
export const METRIC_STATUSES_ANNOTATION = "autoscaling.alpha.kubernetes.io/current-metrics";
export const CONDITIONS_ANNOTATION = "autoscaling.alpha.kubernetes.io/conditions";
/** Every round-trip annotation, which no stored (v2) object keeps (DropRoundTripHorizontalPodAutoscalerAnnotations). */
const ROUND_TRIP_ANNOTATIONS = [
  METRIC_SPECS_ANNOTATION,
  METRIC_STATUSES_ANNOTATION,
  CONDITIONS_ANNOTATION,
  "autoscaling.alpha.kubernetes.io/behavior",
];

/** autoscaling/v1 formerly defaulted this in the controller; conversion makes it explicit. */
const DEFAULT_CPU_UTILIZATION = 80;

function obj(value: unknown): Json | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Json) : undefined;
}
function list(value: unknown): Json[] {
  return Array.isArray(value) ? value.map((v) => obj(v) ?? {}) : [];
}
/** Copies the keys of `from` that are set, in order, leaving out undefined ones (Go's omitempty). */
function defined(fields: Json): Json {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
}

function isCpuUtilizationSpec(metric: Json): boolean {
  const resource = obj(metric["resource"]);
  return (
    metric["type"] === "Resource" &&
    resource?.["name"] === "cpu" &&
    obj(resource["target"])?.["averageUtilization"] !== undefined
  );
}

// --- metric specs ------------------------------------------------------------------------------

function metricSpecToV1(m: Json): Json {
  const out: Json = { type: m["type"] };
  const object = obj(m["object"]);
  const pods = obj(m["pods"]);
  const resource = obj(m["resource"]);
  const container = obj(m["containerResource"]);
  const external = obj(m["external"]);
  if (object) {
    const target = obj(object["target"]) ?? {};
    const metric = obj(object["metric"]) ?? {};
    out["object"] = defined({
      target: defined({ ...(obj(object["describedObject"]) ?? {}) }),
      metricName: metric["name"] ?? "",
      targetValue: target["value"] ?? "0",
      selector: metric["selector"],
      averageValue: target["averageValue"],
    });
  }
  if (pods) {
    const target = obj(pods["target"]) ?? {};
    const metric = obj(pods["metric"]) ?? {};
    out["pods"] = defined({
      metricName: metric["name"] ?? "",
      targetAverageValue: target["averageValue"] ?? "0",
      selector: metric["selector"],
    });
  }
  if (resource) {
    const target = obj(resource["target"]) ?? {};
    out["resource"] = defined({
      name: resource["name"],
      targetAverageUtilization: target["averageUtilization"],
      targetAverageValue: target["averageValue"],
    });
  }
  if (container) {
    const target = obj(container["target"]) ?? {};
    out["containerResource"] = defined({
      name: container["name"],
      targetAverageUtilization: target["averageUtilization"],
      targetAverageValue: target["averageValue"],
      container: container["container"],
    });
  }
  if (external) {
    const target = obj(external["target"]) ?? {};
    const metric = obj(external["metric"]) ?? {};
    out["external"] = defined({
      metricName: metric["name"] ?? "",
      metricSelector: metric["selector"],
      targetValue: target["value"],
      targetAverageValue: target["averageValue"],
    });
  }
  return out;
}

function metricSpecFromV1(m: Json): Json {
  const out: Json = { type: m["type"] };
  const object = obj(m["object"]);
  const pods = obj(m["pods"]);
  const resource = obj(m["resource"]);
  const container = obj(m["containerResource"]);
  const external = obj(m["external"]);
  if (object) {
    out["object"] = {
      describedObject: obj(object["target"]) ?? {},
      target: defined({
        type: object["averageValue"] === undefined ? "Value" : "AverageValue",
        value: object["targetValue"] ?? "0",
        averageValue: object["averageValue"],
      }),
      metric: defined({ name: object["metricName"] ?? "", selector: object["selector"] }),
    };
  }
  if (pods) {
    out["pods"] = {
      metric: defined({ name: pods["metricName"] ?? "", selector: pods["selector"] }),
      target: { type: "AverageValue", averageValue: pods["targetAverageValue"] ?? "0" },
    };
  }
  for (const [key, source] of [
    ["resource", resource],
    ["containerResource", container],
  ] as const) {
    if (!source) continue;
    const utilization = source["targetAverageUtilization"];
    out[key] = defined({
      name: source["name"],
      target: defined({
        type: utilization === undefined ? "AverageValue" : "Utilization",
        averageUtilization: utilization,
        averageValue: source["targetAverageValue"],
      }),
      container: key === "containerResource" ? source["container"] : undefined,
    });
  }
  if (external) {
    const value = external["targetValue"];
    out["external"] = {
      metric: defined({ name: external["metricName"] ?? "", selector: external["metricSelector"] }),
      target: defined({
        type: value === undefined ? "AverageValue" : "Value",
        value,
        averageValue: external["targetAverageValue"],
      }),
    };
  }
  return out;
}

// --- metric statuses ---------------------------------------------------------------------------

function metricStatusToV1(m: Json): Json {
  const out: Json = { type: m["type"] };
  const object = obj(m["object"]);
  const pods = obj(m["pods"]);
  const resource = obj(m["resource"]);
  const container = obj(m["containerResource"]);
  const external = obj(m["external"]);
  if (object) {
    const current = obj(object["current"]) ?? {};
    const metric = obj(object["metric"]) ?? {};
    out["object"] = defined({
      target: obj(object["describedObject"]) ?? {},
      metricName: metric["name"] ?? "",
      currentValue: current["value"] ?? "0",
      selector: metric["selector"],
      averageValue: current["averageValue"],
    });
  }
  if (pods) {
    const metric = obj(pods["metric"]) ?? {};
    out["pods"] = defined({
      metricName: metric["name"] ?? "",
      currentAverageValue: obj(pods["current"])?.["averageValue"] ?? "0",
      selector: metric["selector"],
    });
  }
  for (const [key, source] of [
    ["resource", resource],
    ["containerResource", container],
  ] as const) {
    if (!source) continue;
    const current = obj(source["current"]) ?? {};
    out[key] = defined({
      name: source["name"],
      currentAverageUtilization: current["averageUtilization"],
      currentAverageValue: current["averageValue"] ?? "0",
      container: key === "containerResource" ? source["container"] : undefined,
    });
  }
  if (external) {
    const current = obj(external["current"]) ?? {};
    const metric = obj(external["metric"]) ?? {};
    out["external"] = defined({
      metricName: metric["name"] ?? "",
      metricSelector: metric["selector"],
      currentValue: current["value"] ?? "0",
      currentAverageValue: current["averageValue"],
    });
  }
  return out;
}

function metricStatusFromV1(m: Json): Json {
  const out: Json = { type: m["type"] };
  const object = obj(m["object"]);
  const pods = obj(m["pods"]);
  const resource = obj(m["resource"]);
  const container = obj(m["containerResource"]);
  const external = obj(m["external"]);
  if (object) {
    out["object"] = {
      metric: defined({ name: object["metricName"] ?? "", selector: object["selector"] }),
      current: defined({ value: object["currentValue"] ?? "0", averageValue: object["averageValue"] }),
      describedObject: obj(object["target"]) ?? {},
    };
  }
  if (pods) {
    out["pods"] = {
      metric: defined({ name: pods["metricName"] ?? "", selector: pods["selector"] }),
      current: { averageValue: pods["currentAverageValue"] ?? "0" },
    };
  }
  for (const [key, source] of [
    ["resource", resource],
    ["containerResource", container],
  ] as const) {
    if (!source) continue;
    out[key] = defined({
      name: source["name"],
      current: defined({
        averageValue: source["currentAverageValue"] ?? "0",
        averageUtilization: source["currentAverageUtilization"],
      }),
      container: key === "containerResource" ? source["container"] : undefined,
    });
  }
  if (external) {
    out["external"] = {
      metric: defined({ name: external["metricName"] ?? "", selector: external["metricSelector"] }),
      current: defined({ value: external["currentValue"] ?? "0", averageValue: external["currentAverageValue"] }),
    };
  }
  return out;
}

// --- objects -----------------------------------------------------------------------------------

/** A stored autoscaling/v2 HorizontalPodAutoscaler as autoscaling/v1 shows it. */
export function hpaV2ToV1(v2: JsonObject): JsonObject {
  const spec = obj(v2["spec"]) ?? {};
  const status = obj(v2["status"]);
  const metrics = list(spec["metrics"]);
  const currentMetrics = list(status?.["currentMetrics"]);
  const conditions = list(status?.["conditions"]);
  const meta: Json = { ...(obj(v2.metadata) ?? {}) };
  const annotations: Json = { ...(obj(meta["annotations"]) ?? {}) };
  const others = metrics.filter((m) => !isCpuUtilizationSpec(m)).map(metricSpecToV1);
  if (others.length > 0) annotations[METRIC_SPECS_ANNOTATION] = JSON.stringify(others);
  if (currentMetrics.length > 0)
    annotations[METRIC_STATUSES_ANNOTATION] = JSON.stringify(currentMetrics.map(metricStatusToV1));
  if (conditions.length > 0) annotations[CONDITIONS_ANNOTATION] = JSON.stringify(conditions);
  // Go writes a map's keys sorted.
  if (Object.keys(annotations).length > 0)
    meta["annotations"] = Object.fromEntries(Object.entries(annotations).sort(([a], [b]) => (a < b ? -1 : 1)));

  // The first CPU resource metric decides the v1 target (a CPU metric by value gives none).
  const cpu = metrics.find((m) => m["type"] === "Resource" && obj(m["resource"])?.["name"] === "cpu");
  const cpuTarget = obj(obj(cpu?.["resource"])?.["target"])?.["averageUtilization"];
  const out: JsonObject = { apiVersion: "autoscaling/v1", kind: "HorizontalPodAutoscaler", metadata: meta };
  out["spec"] = defined({
    scaleTargetRef: spec["scaleTargetRef"],
    minReplicas: spec["minReplicas"],
    maxReplicas: spec["maxReplicas"],
    targetCPUUtilizationPercentage: cpuTarget,
  });
  if (status) {
    // Every CPU resource status counts: the last one with a utilization wins, as in the Go loop.
    let currentCpu: unknown;
    for (const m of currentMetrics) {
      const resource = obj(m["resource"]);
      const utilization = obj(resource?.["current"])?.["averageUtilization"];
      if (m["type"] === "Resource" && resource?.["name"] === "cpu" && utilization !== undefined)
        currentCpu = utilization;
    }
    out["status"] = defined({
      observedGeneration: status["observedGeneration"],
      lastScaleTime: status["lastScaleTime"],
      currentReplicas: status["currentReplicas"] ?? 0,
      desiredReplicas: status["desiredReplicas"] ?? 0,
      currentCPUUtilizationPercentage: currentCpu,
    });
  }
  return out;
}

function parseList(text: unknown): Json[] {
  if (typeof text !== "string") return [];
  try {
    return list(JSON.parse(text));
  } catch {
    return [];
  }
}

/** An autoscaling/v1 HorizontalPodAutoscaler in its stored autoscaling/v2 form. */
export function hpaV1ToV2(v1: JsonObject): JsonObject {
  const spec = obj(v1["spec"]) ?? {};
  const status = obj(v1["status"]);
  const meta: Json = { ...(obj(v1.metadata) ?? {}) };
  const annotations: Json = { ...(obj(meta["annotations"]) ?? {}) };
  const cpu = spec["targetCPUUtilizationPercentage"];
  const cpuMetric = (utilization: unknown): Json => ({
    type: "Resource",
    resource: { name: "cpu", target: { type: "Utilization", averageUtilization: utilization } },
  });
  // The other metrics come first, then the CPU one (the Go conversion's order).
  const metrics = parseList(annotations[METRIC_SPECS_ANNOTATION]).map(metricSpecFromV1);
  if (typeof cpu === "number") metrics.push(cpuMetric(cpu));
  if (metrics.length === 0) metrics.push(cpuMetric(DEFAULT_CPU_UTILIZATION));
  const out: JsonObject = { apiVersion: "autoscaling/v2", kind: "HorizontalPodAutoscaler", metadata: meta };
  out["spec"] = defined({
    scaleTargetRef: spec["scaleTargetRef"],
    minReplicas: spec["minReplicas"],
    maxReplicas: spec["maxReplicas"],
    metrics,
  });
  if (
    status ||
    annotations[METRIC_STATUSES_ANNOTATION] !== undefined ||
    annotations[CONDITIONS_ANNOTATION] !== undefined
  ) {
    const s = status ?? {};
    let currentMetrics: Json[] | undefined;
    if (typeof s["currentCPUUtilizationPercentage"] === "number") {
      currentMetrics = [
        {
          type: "Resource",
          resource: { name: "cpu", current: { averageUtilization: s["currentCPUUtilizationPercentage"] } },
        },
      ];
    }
    // The annotation has more than the CPU percentage: it wins.
    if (annotations[METRIC_STATUSES_ANNOTATION] !== undefined)
      currentMetrics = parseList(annotations[METRIC_STATUSES_ANNOTATION]).map(metricStatusFromV1);
    const conditions =
      annotations[CONDITIONS_ANNOTATION] !== undefined ? parseList(annotations[CONDITIONS_ANNOTATION]) : undefined;
    out["status"] = defined({
      observedGeneration: s["observedGeneration"],
      lastScaleTime: s["lastScaleTime"],
      // v2's currentReplicas is omitempty, its desiredReplicas is not.
      currentReplicas: s["currentReplicas"] === 0 ? undefined : s["currentReplicas"],
      desiredReplicas: s["desiredReplicas"] ?? 0,
      currentMetrics,
      conditions,
    });
  }
  for (const key of ROUND_TRIP_ANNOTATIONS) delete annotations[key];
  if (Object.keys(annotations).length > 0) meta["annotations"] = annotations;
  else delete meta["annotations"];
  return out;
}
