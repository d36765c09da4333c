/**
 * HorizontalPodAutoscalers: stored as autoscaling/v2 and served as v2 and v1 (hpa-conversion.ts), with
 * the v2 scheme's defaults (pkg/apis/autoscaling/v2/defaults.go) and the strategy's empty status on
 * create. No controller acts on them.
 */
import { record, served } from "./builtin-descriptor.ts";
import { hpaV1ToV2, hpaV2ToV1 } from "./hpa-conversion.ts";
import { bucketOf, type JsonObject, type ServedResource } from "./served-resource.ts";

const scaleUpRules = () => ({
  stabilizationWindowSeconds: 0,
  selectPolicy: "Max",
  policies: [
    { type: "Pods", value: 4, periodSeconds: 15 },
    { type: "Percent", value: 100, periodSeconds: 15 },
  ],
});
// No stabilization window: the controller's --horizontal-pod-autoscaler-downscale-stabilization applies.
const scaleDownRules = () => ({ selectPolicy: "Max", policies: [{ type: "Percent", value: 100, periodSeconds: 15 }] });

/** GenerateHPAScale*Rules: the rules' unset fields (not the whole rule set) from the defaults. */
function fillRules(rules: unknown, defaults: Record<string, unknown>): Record<string, unknown> {
  if (rules === null || typeof rules !== "object") return defaults;
  const given = rules as Record<string, unknown>;
  for (const key of ["selectPolicy", "stabilizationWindowSeconds", "policies"]) {
    if (given[key] !== undefined && given[key] !== null) defaults[key] = given[key];
  }
  return defaults;
}

/** SetDefaults_HorizontalPodAutoscaler (v2): one replica at least, 80% CPU without metrics, behavior filled when set. */
export function defaultHorizontalPodAutoscaler(hpa: JsonObject): void {
  const spec = record(hpa, "spec");
  spec["minReplicas"] ??= 1;
  if (!Array.isArray(spec["metrics"]) || spec["metrics"].length === 0) {
    spec["metrics"] = [
      { type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 80 } } },
    ];
  }
  const behavior = spec["behavior"];
  if (behavior !== null && typeof behavior === "object") {
    const b = behavior as Record<string, unknown>;
    b["scaleUp"] = fillRules(b["scaleUp"], scaleUpRules());
    b["scaleDown"] = fillRules(b["scaleDown"], scaleDownRules());
  }
}

/** autoscaling/v2 (stored, preferred) and autoscaling/v1 over the same objects. */
export function horizontalPodAutoscalers(): ServedResource[] {
  const common = {
    group: "autoscaling",
    kind: "HorizontalPodAutoscaler",
    plural: "horizontalpodautoscalers",
    namespaced: true,
  } as const;
  const v2 = served({
    ...common,
    version: "v2",
    shortNames: ["hpa"],
    categories: ["all"],
    subresources: { status: true },
    defaults: defaultHorizontalPodAutoscaler,
    // PrepareForCreate empties the status; desiredReplicas has no omitempty.
    defaultOnCreate: (hpa) => {
      record(hpa, "status")["desiredReplicas"] ??= 0;
    },
  });
  const v1 = served({
    ...common,
    version: "v1",
    shortNames: ["hpa"],
    categories: ["all"],
    subresources: { status: true },
    storageBucket: bucketOf(v2),
    conversion: { storage: v2, fromStorage: hpaV2ToV1, toStorage: hpaV1ToV2 },
  });
  return [v2, v1];
}
