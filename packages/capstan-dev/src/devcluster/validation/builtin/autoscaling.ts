/**
 * autoscaling validation (kube-apiserver `pkg/apis/autoscaling/validation/validation.go`, Kubernetes
 * 1.32) with the HorizontalPodAutoscaler strategy's choices
 * (`pkg/registry/autoscaling/horizontalpodautoscaler/strategy.go`).
 *
 * kube-apiserver validates the internal object, whose shape is autoscaling/v2's: an autoscaling/v1
 * request is converted first, so its errors name v2 fields (a v1 `targetCPUUtilizationPercentage: 0`
 * is refused as `spec.metrics[0].resource.target.averageUtilization`). The devcluster stores v2 and
 * converts a v1 write before the store validates it (registry/hpa-conversion.ts), so what arrives
 * here is always the defaulted v2 object.
 *
 * HPAScaleToZero is alpha and off: minReplicas must be at least 1, unless the stored object already
 * has 0 (then an update may keep it, provided an Object or External metric is present).
 */
import {
  type FieldError,
  type FieldPath,
  fieldPath,
  forbidden,
  invalid,
  notSupported,
  required,
} from "../field-errors.ts";
import { withGoSharpV } from "../go-format.ts";
import { isDNS1123Label, isPathSegmentName } from "../names.ts";
import { validateContainerResourceName } from "./core-resources.ts";
import { type GroupValidation, type Json, type KindValidation, record } from "./kind-validation.ts";
import { parseQuantity } from "./quantity.ts";
import { goQuantitySharpV } from "./quantity-sharp-v.ts";

/** MaxPeriodSeconds: the longest scaling policy period. */
const MAX_PERIOD_SECONDS = 1800;
/** MaxStabilizationWindowSeconds: the longest stabilization window. */
const MAX_STABILIZATION_WINDOW_SECONDS = 3600;

const METRIC_SOURCE_TYPES = ["ContainerResource", "External", "Object", "Pods", "Resource"];
const SELECT_POLICIES = ["Disabled", "Max", "Min"];
const SCALING_POLICY_TYPES = ["Percent", "Pods"];

/** The JSON member of each metric source type, in the order validateMetricSpec looks at them. */
const SOURCE_FIELDS = ["object", "external", "pods", "resource", "containerResource"] as const;
type SourceField = (typeof SOURCE_FIELDS)[number];
const SOURCE_FIELD_OF: Readonly<Record<string, SourceField>> = {
  Object: "object",
  Pods: "pods",
  Resource: "resource",
  External: "external",
  ContainerResource: "containerResource",
};

function str(value: unknown): string {
  return typeof value === "string" ? value : "";
}

function int(value: unknown): number {
  return typeof value === "number" ? value : 0;
}

function present(value: unknown): boolean {
  return value !== undefined && value !== null;
}

// --- references and names ----------------------------------------------------------------------

/** ValidateCrossVersionObjectReference: kind and name required, each a URL path segment. */
function validateReference(ref: Json, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  for (const key of ["kind", "name"]) {
    const value = str(ref[key]);
    if (value === "") errs.push(required(path.child(key)));
    else for (const msg of isPathSegmentName(value)) errs.push(invalid(path.child(key), value, msg));
  }
  return errs;
}

/** validateMetricIdentifier: a metric name, usable in a custom metrics API path. */
function validateMetricIdentifier(id: Json, path: FieldPath): FieldError[] {
  const name = str(id["name"]);
  if (name === "") return [required(path.child("name"), "must specify a metric name")];
  return isPathSegmentName(name).map((msg) => invalid(path.child("name"), name, msg));
}

// --- metric targets ----------------------------------------------------------------------------

/** A quantity field's value as Go prints the *resource.Quantity it decodes to. */
function goQuantity(value: unknown): unknown {
  const text = typeof value === "number" ? String(value) : str(value);
  const sharpV = goQuantitySharpV(text);
  return sharpV === undefined ? value : withGoSharpV({ text }, sharpV);
}

/** Quantity.Sign() of a decoded quantity field. */
function quantitySign(value: unknown): number {
  const text = typeof value === "number" ? String(value) : str(value);
  const parsed = parseQuantity(text);
  if (parsed !== undefined) return parsed.sign;
  // A suffix parseQuantity does not know (n, u) scales the number without changing its sign.
  const [, sign = "", whole = "", fraction = ""] = /^\s*([+-]?)(\d*)(?:\.(\d*))?/.exec(text) ?? [];
  if (!/[1-9]/.test(whole + fraction)) return 0;
  return sign === "-" ? -1 : 1;
}

/** validateMetricTarget. */
function validateMetricTarget(target: Json, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const type = str(target["type"]);
  if (type === "") errs.push(required(path.child("type"), "must specify a metric target type"));
  if (type !== "Utilization" && type !== "Value" && type !== "AverageValue")
    errs.push(invalid(path.child("type"), type, "must be either Utilization, Value, or AverageValue"));
  for (const key of ["value", "averageValue"]) {
    const quantity = target[key];
    if (present(quantity) && quantitySign(quantity) !== 1)
      errs.push(invalid(path.child(key), goQuantity(quantity), "must be positive"));
  }
  const utilization = target["averageUtilization"];
  if (present(utilization) && int(utilization) < 1)
    errs.push(invalid(path.child("averageUtilization"), utilization, "must be greater than 0"));
  return errs;
}

// --- metric sources ----------------------------------------------------------------------------

function validateObjectSource(source: Json, path: FieldPath): FieldError[] {
  const target = record(source["target"]) ?? {};
  const errs = [
    ...validateReference(record(source["describedObject"]) ?? {}, path.child("describedObject")),
    ...validateMetricIdentifier(record(source["metric"]) ?? {}, path.child("metric")),
    ...validateMetricTarget(target, path.child("target")),
  ];
  if (!present(target["value"]) && !present(target["averageValue"]))
    errs.push(required(path.child("target", "averageValue"), "must set either a target value or averageValue"));
  return errs;
}

function validateExternalSource(source: Json, path: FieldPath): FieldError[] {
  const target = record(source["target"]) ?? {};
  const errs = [
    ...validateMetricIdentifier(record(source["metric"]) ?? {}, path.child("metric")),
    ...validateMetricTarget(target, path.child("target")),
  ];
  const value = present(target["value"]);
  const average = present(target["averageValue"]);
  if (!value && !average)
    errs.push(
      required(path.child("target", "averageValue"), "must set either a target value for metric or a per-pod target"),
    );
  if (value && average)
    errs.push(
      forbidden(path.child("target", "value"), "may not set both a target value for metric and a per-pod target"),
    );
  return errs;
}

function validatePodsSource(source: Json, path: FieldPath): FieldError[] {
  const target = record(source["target"]) ?? {};
  const errs = [
    ...validateMetricIdentifier(record(source["metric"]) ?? {}, path.child("metric")),
    ...validateMetricTarget(target, path.child("target")),
  ];
  if (!present(target["averageValue"]))
    errs.push(required(path.child("target", "averageValue"), "must specify a positive target averageValue"));
  return errs;
}

/** The target rules Resource and ContainerResource sources share: a utilization or a raw value, not both. */
function resourceTargetErrors(target: Json, path: FieldPath): FieldError[] {
  const errs = validateMetricTarget(target, path.child("target"));
  const utilization = present(target["averageUtilization"]);
  const average = present(target["averageValue"]);
  if (!utilization && !average)
    errs.push(
      required(
        path.child("target", "averageUtilization"),
        "must set either a target raw value or a target utilization",
      ),
    );
  if (utilization && average)
    errs.push(
      forbidden(path.child("target", "averageValue"), "may not set both a target raw value and a target utilization"),
    );
  return errs;
}

function validateResourceSource(source: Json, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (str(source["name"]) === "") errs.push(required(path.child("name"), "must specify a resource name"));
  errs.push(...resourceTargetErrors(record(source["target"]) ?? {}, path));
  return errs;
}

function validateContainerResourceSource(source: Json, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const name = str(source["name"]);
  if (name === "") errs.push(required(path.child("name"), "must specify a resource name"));
  else errs.push(...validateContainerResourceName(name, path.child("name")));
  const container = str(source["container"]);
  if (container === "") errs.push(required(path.child("container"), "must specify a container"));
  else for (const msg of isDNS1123Label(container)) errs.push(invalid(path.child("container"), container, msg));
  errs.push(...resourceTargetErrors(record(source["target"]) ?? {}, path));
  return errs;
}

const SOURCE_VALIDATORS: Readonly<Record<SourceField, (source: Json, path: FieldPath) => FieldError[]>> = {
  object: validateObjectSource,
  external: validateExternalSource,
  pods: validatePodsSource,
  resource: validateResourceSource,
  containerResource: validateContainerResourceSource,
};

/**
 * validateMetricSpec: a supported type, its source present, no other source. Only the first source
 * present is validated. An unsupported type is reported twice, as Go does (a set check, then the
 * switch's default); Go lists the extra sources in map order, which here is the order above.
 */
function validateMetricSpec(metric: Json, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const type = str(metric["type"]);
  if (type === "") errs.push(required(path.child("type"), "must specify a metric source type"));
  if (!METRIC_SOURCE_TYPES.includes(type)) errs.push(notSupported(path.child("type"), type, METRIC_SOURCE_TYPES));
  const sources = SOURCE_FIELDS.filter((f) => present(metric[f]));
  const first = sources[0];
  if (first !== undefined) errs.push(...SOURCE_VALIDATORS[first](record(metric[first]) ?? {}, path.child(first)));
  const expected = SOURCE_FIELD_OF[type];
  if (expected === undefined) errs.push(notSupported(path.child("type"), type, METRIC_SOURCE_TYPES));
  else if (!present(metric[expected]))
    errs.push(required(path.child(expected), "must populate information for the given metric source"));
  if (sources.length !== 1) {
    for (const extra of sources) {
      if (extra !== expected) errs.push(forbidden(path.child(extra), "must populate the given metric source only"));
    }
  }
  return errs;
}

function validateMetrics(metrics: unknown, minReplicas: unknown, path: FieldPath): FieldError[] {
  const list = Array.isArray(metrics) ? metrics : [];
  const errs = list.flatMap((m, i) => validateMetricSpec(record(m) ?? {}, path.index(i)));
  const scalesToZero = list.some((m) => ["Object", "External"].includes(str(record(m)?.["type"])));
  if (minReplicas === 0 && !scalesToZero)
    errs.push(
      forbidden(path, "must specify at least one Object or External metric to support scaling to zero replicas"),
    );
  return errs;
}

// --- behavior ----------------------------------------------------------------------------------

function validateScalingPolicy(policy: Json, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const type = str(policy["type"]);
  if (!SCALING_POLICY_TYPES.includes(type)) errs.push(notSupported(path.child("type"), type, SCALING_POLICY_TYPES));
  const value = int(policy["value"]);
  if (value <= 0) errs.push(invalid(path.child("value"), value, "must be greater than zero"));
  const period = int(policy["periodSeconds"]);
  if (period <= 0) errs.push(invalid(path.child("periodSeconds"), period, "must be greater than zero"));
  if (period > MAX_PERIOD_SECONDS)
    errs.push(invalid(path.child("periodSeconds"), period, `must be less than or equal to ${MAX_PERIOD_SECONDS}`));
  return errs;
}

function validateScalingRules(value: unknown, path: FieldPath): FieldError[] {
  const rules = record(value);
  if (rules === undefined) return [];
  const errs: FieldError[] = [];
  const window = rules["stabilizationWindowSeconds"];
  if (present(window) && int(window) < 0)
    errs.push(invalid(path.child("stabilizationWindowSeconds"), window, "must be greater than or equal to zero"));
  if (present(window) && int(window) > MAX_STABILIZATION_WINDOW_SECONDS)
    errs.push(
      invalid(
        path.child("stabilizationWindowSeconds"),
        window,
        `must be less than or equal to ${MAX_STABILIZATION_WINDOW_SECONDS}`,
      ),
    );
  const select = rules["selectPolicy"];
  if (present(select) && !SELECT_POLICIES.includes(str(select)))
    errs.push(notSupported(path.child("selectPolicy"), str(select), SELECT_POLICIES));
  const policies = Array.isArray(rules["policies"]) ? rules["policies"] : [];
  if (policies.length === 0) errs.push(required(path.child("policies"), "must specify at least one Policy"));
  policies.forEach((p, i) => {
    errs.push(...validateScalingPolicy(record(p) ?? {}, path.child("policies").index(i)));
  });
  return errs;
}

function validateBehavior(value: unknown, path: FieldPath): FieldError[] {
  const behavior = record(value);
  if (behavior === undefined) return [];
  return [
    ...validateScalingRules(behavior["scaleUp"], path.child("scaleUp")),
    ...validateScalingRules(behavior["scaleDown"], path.child("scaleDown")),
  ];
}

// --- the kind ----------------------------------------------------------------------------------

/** validateHorizontalPodAutoscalerSpec. */
function validateSpec(obj: Json, minReplicasLowerBound: number): FieldError[] {
  const spec = record(obj["spec"]) ?? {};
  const path = fieldPath("spec");
  const errs: FieldError[] = [];
  const minReplicas = spec["minReplicas"];
  const maxReplicas = int(spec["maxReplicas"]);
  if (present(minReplicas) && int(minReplicas) < minReplicasLowerBound)
    errs.push(
      invalid(path.child("minReplicas"), minReplicas, `must be greater than or equal to ${minReplicasLowerBound}`),
    );
  if (maxReplicas < 1) errs.push(invalid(path.child("maxReplicas"), maxReplicas, "must be greater than 0"));
  if (present(minReplicas) && maxReplicas < int(minReplicas))
    errs.push(invalid(path.child("maxReplicas"), maxReplicas, "must be greater than or equal to `minReplicas`"));
  errs.push(...validateReference(record(spec["scaleTargetRef"]) ?? {}, path.child("scaleTargetRef")));
  errs.push(...validateMetrics(spec["metrics"], minReplicas, path.child("metrics")));
  errs.push(...validateBehavior(spec["behavior"], path.child("behavior")));
  return errs;
}

const horizontalPodAutoscalers: KindValidation = {
  create: (obj) => validateSpec(obj, 1),
  // An object stored with minReplicas 0 (by a server with HPAScaleToZero) may keep it.
  update: (next, old) => validateSpec(next, record(old["spec"])?.["minReplicas"] === 0 ? 0 : 1),
};

export const autoscalingValidation: GroupValidation = { horizontalpodautoscalers: horizontalPodAutoscalers };
