/**
 * The apps group's validation as Kubernetes 1.32 runs it (`pkg/apis/apps/validation/validation.go`,
 * called by the strategies in `pkg/registry/apps/<kind>/strategy.go`): Deployments, ReplicaSets,
 * StatefulSets, DaemonSets and ControllerRevisions, on create and update. Errors come in kube's order;
 * where a strategy validates the spec twice on update (ReplicaSet, DaemonSet), its errors are listed
 * twice in `details.causes`, as kube-apiserver lists them (the message drops the repeats).
 *
 * The pod template's own rules are core-pod.ts's (`validatePodTemplateSpec`); a StatefulSet's template
 * gets only its labels and annotations checked, as in 1.32.
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
import { goQuote } from "../go-format.ts";
import { isValidLabelValue, nameIsDNSLabel, regexError } from "../names.ts";
import { validateAnnotations, validateLabels } from "../object-meta.ts";
import { podTemplateValidationOptions, validatePodTemplateSpec } from "./core-pod.ts";
import { semanticEqual, validateImmutable, validateNonnegative } from "./generic-fields.ts";
import { goPointerText, goStructValue, intOrStringValue, labelSelectorValue, labelsValue } from "./go-typed-values.ts";
import type { GroupValidation, Json, KindValidation } from "./kind-validation.ts";
import { record } from "./kind-validation.ts";
import { isEmptySelector, type LabelSelectorOptions, selectsLabels, validateLabelSelector } from "./label-selector.ts";
import { labelSelectorConverts } from "./selector-conversion.ts";

const SPEC = fieldPath("spec");

function str(value: unknown): string {
  return typeof value === "string" ? value : "";
}

/** The spec of a decoded object (absent: an empty one, as Go's zero value). */
function specOf(obj: Json): Json {
  return record(obj["spec"]) ?? {};
}

function templateOf(spec: Json): Json {
  return record(spec["template"]) ?? {};
}

function templateLabels(template: Json): unknown {
  return record(template["metadata"])?.["labels"];
}

function templateSpec(template: Json): Json {
  return record(template["spec"]) ?? {};
}

/** The template's restartPolicy; scheme defaulting gives an absent one `Always`, as Go's always-present PodSpec gets. */
function restartPolicyOf(template: Json): string {
  const policy = templateSpec(template)["restartPolicy"];
  return typeof policy === "string" ? policy : "Always";
}

// --- int-or-percent fields (ValidatePositiveIntOrPercent, IsNotMoreThan100Percent) ---

const PERCENT = /^[0-9]+%$/;
const PERCENT_ERR = "a valid percent string must be a numeric string followed by an ending '%'";

/** Go's strconv.Atoi, with 0 for what it refuses. */
function atoi(text: string): number {
  if (!/^[+-]?[0-9]+$/.test(text)) return 0;
  const n = BigInt(text);
  return n >= -(2n ** 63n) && n < 2n ** 63n ? Number(n) : 0;
}

/** getPercentValue: the number of a valid percent string. */
function percentValue(value: unknown): number | undefined {
  return typeof value === "string" && PERCENT.test(value) ? atoi(value.slice(0, -1)) : undefined;
}

/** getIntOrPercentValue: a percent's number, else IntOrString.IntValue(). */
function intOrPercentValue(value: unknown): number {
  const percent = percentValue(value);
  if (percent !== undefined) return percent;
  if (typeof value === "string") return atoi(value);
  return typeof value === "number" ? value : 0;
}

function validatePositiveIntOrPercent(value: unknown, path: FieldPath): FieldError[] {
  if (typeof value === "string") {
    return PERCENT.test(value)
      ? []
      : [invalid(path, intOrStringValue(value), regexError(PERCENT_ERR, "[0-9]+%", "1%", "93%"))];
  }
  return validateNonnegative(value, path);
}

function isNotMoreThan100Percent(value: unknown, path: FieldPath): FieldError[] {
  const percent = percentValue(value);
  return percent !== undefined && percent > 100
    ? [invalid(path, intOrStringValue(value), "must not be greater than 100%")]
    : [];
}

// --- selectors and templates ---

const STRICT_SELECTOR: LabelSelectorOptions = { allowInvalidLabelValueInSelector: false };

/** The selector rules Deployments, ReplicaSets and StatefulSets share: required, valid, not empty. */
function validateRequiredSelector(selector: unknown, path: FieldPath, kindWord: string): FieldError[] {
  if (record(selector) === undefined) return [required(path)];
  const errs = validateLabelSelector(selector, path, STRICT_SELECTOR);
  if (isEmptySelector(selector))
    errs.push(invalid(path, labelSelectorValue(selector), `empty selector is invalid for ${kindWord}`));
  return errs;
}

/**
 * The template's labels against the selector, where the selector is not `Everything` (an empty one);
 * an absent selector is `Nothing` and matches no labels.
 */
function templateMatchErrors(selector: unknown, template: Json, path: FieldPath): FieldError[] {
  if (record(selector) !== undefined && isEmptySelector(selector)) return [];
  const labels = templateLabels(template);
  return selectsLabels(selector, labels)
    ? []
    : [invalid(path.child("metadata", "labels"), labelsValue(labels), "`selector` does not match template `labels`")];
}

/** ValidatePodTemplateSpecForReplicaSet (Deployments and ReplicaSets). */
function validateTemplateForReplicaSet(
  template: Json,
  oldTemplate: Json | undefined,
  selector: unknown,
  path: FieldPath,
): FieldError[] {
  const errs = templateMatchErrors(selector, template, path);
  errs.push(...validatePodTemplateSpec(template, path, podTemplateValidationOptions(template, oldTemplate)));
  const restartPolicy = restartPolicyOf(template);
  if (restartPolicy !== "Always")
    errs.push(notSupported(path.child("spec", "restartPolicy"), restartPolicy, ["Always"]));
  if (templateSpec(template)["activeDeadlineSeconds"] != null)
    errs.push(
      forbidden(path.child("spec", "activeDeadlineSeconds"), "activeDeadlineSeconds in ReplicaSet is not Supported"),
    );
  return errs;
}

// --- Deployment ---

function validateRollingUpdateDeployment(rolling: Json, path: FieldPath): FieldError[] {
  const maxUnavailable = rolling["maxUnavailable"];
  const maxSurge = rolling["maxSurge"];
  const errs = validatePositiveIntOrPercent(maxUnavailable, path.child("maxUnavailable"));
  errs.push(...validatePositiveIntOrPercent(maxSurge, path.child("maxSurge")));
  if (intOrPercentValue(maxUnavailable) === 0 && intOrPercentValue(maxSurge) === 0)
    errs.push(
      invalid(path.child("maxUnavailable"), intOrStringValue(maxUnavailable), "may not be 0 when `maxSurge` is 0"),
    );
  errs.push(...isNotMoreThan100Percent(maxUnavailable, path.child("maxUnavailable")));
  return errs;
}

function validateDeploymentStrategy(strategy: Json, path: FieldPath): FieldError[] {
  const rolling = record(strategy["rollingUpdate"]);
  switch (strategy["type"]) {
    case "Recreate":
      return rolling === undefined
        ? []
        : [forbidden(path.child("rollingUpdate"), "may not be specified when strategy `type` is 'Recreate'")];
    case "RollingUpdate":
      return rolling === undefined
        ? [required(path.child("rollingUpdate"), "this should be defaulted and never be nil")]
        : validateRollingUpdateDeployment(rolling, path.child("rollingUpdate"));
    default: {
      const text = `apps.DeploymentStrategy{Type:${goQuote(str(strategy["type"]))}, RollingUpdate:${goPointerText("apps.RollingUpdateDeployment", rolling)}}`;
      return [notSupported(path, goStructValue(strategy, text), ["Recreate", "RollingUpdate"])];
    }
  }
}

/** ValidateDeploymentSpec. */
function validateDeploymentSpec(spec: Json, oldSpec: Json | undefined, path: FieldPath): FieldError[] {
  const errs = validateNonnegative(spec["replicas"], path.child("replicas"));
  const selector = spec["selector"];
  errs.push(...validateRequiredSelector(selector, path.child("selector"), "deployment"));
  if (!labelSelectorConverts(selector)) {
    errs.push(invalid(path.child("selector"), labelSelectorValue(selector), "invalid label selector"));
  } else {
    const oldTemplate = oldSpec === undefined ? undefined : templateOf(oldSpec);
    errs.push(...validateTemplateForReplicaSet(templateOf(spec), oldTemplate, selector, path.child("template")));
  }
  errs.push(...validateDeploymentStrategy(record(spec["strategy"]) ?? {}, path.child("strategy")));
  errs.push(...validateNonnegative(spec["minReadySeconds"], path.child("minReadySeconds")));
  errs.push(...validateNonnegative(spec["revisionHistoryLimit"], path.child("revisionHistoryLimit")));
  const progressDeadline = spec["progressDeadlineSeconds"];
  if (typeof progressDeadline === "number") {
    errs.push(...validateNonnegative(progressDeadline, path.child("progressDeadlineSeconds")));
    const minReady = typeof spec["minReadySeconds"] === "number" ? spec["minReadySeconds"] : 0;
    if (progressDeadline <= minReady)
      errs.push(
        invalid(path.child("progressDeadlineSeconds"), progressDeadline, "must be greater than minReadySeconds"),
      );
  }
  return errs;
}

const deployments: KindValidation = {
  create: (obj) => validateDeploymentSpec(specOf(obj), undefined, SPEC),
  update: (next, old) => {
    const spec = specOf(next);
    const oldSpec = specOf(old);
    const errs = validateDeploymentSpec(spec, oldSpec, SPEC);
    // The strategy: apps/v1 (unlike extensions/v1beta1 and apps/v1beta1) keeps the selector.
    errs.push(
      ...validateImmutable(
        spec["selector"],
        oldSpec["selector"],
        SPEC.child("selector"),
        labelSelectorValue(spec["selector"]),
      ),
    );
    return errs;
  },
};

// --- ReplicaSet ---

/** ValidateReplicaSetSpec. */
function validateReplicaSetSpec(spec: Json, oldSpec: Json | undefined, path: FieldPath): FieldError[] {
  const errs = validateNonnegative(spec["replicas"], path.child("replicas"));
  errs.push(...validateNonnegative(spec["minReadySeconds"], path.child("minReadySeconds")));
  const selector = spec["selector"];
  // 1.32 says "deployment" here too.
  errs.push(...validateRequiredSelector(selector, path.child("selector"), "deployment"));
  if (!labelSelectorConverts(selector)) {
    errs.push(invalid(path.child("selector"), labelSelectorValue(selector), "invalid label selector"));
  } else {
    const oldTemplate = oldSpec === undefined ? undefined : templateOf(oldSpec);
    errs.push(...validateTemplateForReplicaSet(templateOf(spec), oldTemplate, selector, path.child("template")));
  }
  return errs;
}

const replicaSets: KindValidation = {
  create: (obj) => validateReplicaSetSpec(specOf(obj), undefined, SPEC),
  update: (next, old) => {
    const spec = specOf(next);
    const oldSpec = specOf(old);
    // ValidateReplicaSet, then ValidateReplicaSetUpdate: the spec is validated twice.
    const errs = validateReplicaSetSpec(spec, oldSpec, SPEC);
    errs.push(...validateReplicaSetSpec(spec, oldSpec, SPEC));
    errs.push(
      ...validateImmutable(
        spec["selector"],
        oldSpec["selector"],
        SPEC.child("selector"),
        labelSelectorValue(spec["selector"]),
      ),
    );
    return errs;
  },
};

// --- StatefulSet ---

function validatePvcRetentionPolicy(policy: unknown, path: FieldPath): FieldError[] {
  const p = record(policy);
  if (p === undefined) return [];
  const errs: FieldError[] = [];
  for (const field of ["whenDeleted", "whenScaled"]) {
    const value = str(p[field]);
    if (value !== "Retain" && value !== "Delete")
      errs.push(notSupported(path.child(field), value, ["Retain", "Delete"]));
  }
  return errs;
}

/**
 * validateRollingUpdateStatefulSet. `maxUnavailable` (MaxUnavailableStatefulSet, alpha and off in
 * 1.32) is dropped by the strategy before validation unless the stored object already has it; it is
 * checked only then.
 */
function validateRollingUpdateStatefulSet(rolling: Json, path: FieldPath, maxUnavailableInUse: boolean): FieldError[] {
  const errs = validateNonnegative(rolling["partition"], path.child("partition"));
  const maxUnavailable = rolling["maxUnavailable"];
  if (maxUnavailableInUse && maxUnavailable != null) {
    const maxPath = path.child("maxUnavailable");
    errs.push(...validatePositiveIntOrPercent(maxUnavailable, maxPath));
    if (intOrPercentValue(maxUnavailable) === 0)
      errs.push(invalid(maxPath, intOrStringValue(maxUnavailable), "cannot be 0"));
    errs.push(...isNotMoreThan100Percent(maxUnavailable, maxPath));
  }
  return errs;
}

function rollingUpdateStatefulSetText(rolling: Json, maxUnavailableInUse: boolean): string {
  const partition = typeof rolling["partition"] === "number" ? rolling["partition"] : 0;
  const maxUnavailable = maxUnavailableInUse ? rolling["maxUnavailable"] : undefined;
  return `apps.RollingUpdateStatefulSetStrategy{Partition:${partition}, MaxUnavailable:${goPointerText("intstr.IntOrString", maxUnavailable)}}`;
}

function validateStatefulSetUpdateStrategy(
  strategy: Json,
  path: FieldPath,
  maxUnavailableInUse: boolean,
): FieldError[] {
  const type = str(strategy["type"]);
  const rolling = record(strategy["rollingUpdate"]);
  switch (type) {
    case "":
      return [required(path)];
    case "OnDelete":
      return rolling === undefined
        ? []
        : [
            invalid(
              path.child("rollingUpdate"),
              goStructValue(rolling, rollingUpdateStatefulSetText(rolling, maxUnavailableInUse)),
              "only allowed for updateStrategy 'RollingUpdate'",
            ),
          ];
    case "RollingUpdate":
      return rolling === undefined
        ? []
        : validateRollingUpdateStatefulSet(rolling, path.child("rollingUpdate"), maxUnavailableInUse);
    default: {
      const text = `apps.StatefulSetUpdateStrategy{Type:${goQuote(type)}, RollingUpdate:${goPointerText("apps.RollingUpdateStatefulSetStrategy", rolling)}}`;
      return [invalid(path, goStructValue(strategy, text), "must be 'RollingUpdate' or 'OnDelete'")];
    }
  }
}

/** ValidatePodTemplateSpecForStatefulSet: the selector match, the template's labels and annotations (no pod spec rules in 1.32). */
function validateTemplateForStatefulSet(template: Json, selector: unknown, path: FieldPath): FieldError[] {
  const errs = templateMatchErrors(selector, template, path);
  const meta = record(template["metadata"]) ?? {};
  errs.push(...validateLabels(meta["labels"], path.child("labels")));
  errs.push(...validateAnnotations(meta["annotations"], path.child("annotations")));
  return errs;
}

/** ValidateStatefulSetSpec. */
function validateStatefulSetSpec(spec: Json, path: FieldPath, maxUnavailableInUse: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const policy = str(spec["podManagementPolicy"]);
  if (policy === "") errs.push(required(path.child("podManagementPolicy")));
  else if (policy !== "OrderedReady" && policy !== "Parallel")
    errs.push(invalid(path.child("podManagementPolicy"), policy, "must be 'OrderedReady' or 'Parallel'"));
  errs.push(
    ...validateStatefulSetUpdateStrategy(
      record(spec["updateStrategy"]) ?? {},
      path.child("updateStrategy"),
      maxUnavailableInUse,
    ),
  );
  errs.push(
    ...validatePvcRetentionPolicy(
      spec["persistentVolumeClaimRetentionPolicy"],
      path.child("persistentVolumeClaimRetentionPolicy"),
    ),
  );
  errs.push(...validateNonnegative(spec["replicas"], path.child("replicas")));
  errs.push(...validateNonnegative(spec["minReadySeconds"], path.child("minReadySeconds")));
  const ordinals = record(spec["ordinals"]);
  if (ordinals !== undefined) errs.push(...validateNonnegative(ordinals["start"], path.child("ordinals.start")));
  const selector = spec["selector"];
  errs.push(...validateRequiredSelector(selector, path.child("selector"), "statefulset"));
  const template = templateOf(spec);
  if (!labelSelectorConverts(selector)) errs.push(invalid(path.child("selector"), labelSelectorValue(selector), ""));
  else errs.push(...validateTemplateForStatefulSet(template, selector, path.child("template")));
  const restartPolicy = restartPolicyOf(template);
  if (restartPolicy !== "Always")
    errs.push(notSupported(path.child("template", "spec", "restartPolicy"), restartPolicy, ["Always"]));
  if (templateSpec(template)["activeDeadlineSeconds"] != null)
    errs.push(
      forbidden(
        path.child("template", "spec", "activeDeadlineSeconds"),
        "activeDeadlineSeconds in StatefulSet is not Supported",
      ),
    );
  return errs;
}

/** The spec members a StatefulSet update may change (ValidateStatefulSetUpdate). */
const STATEFULSET_MUTABLE = [
  "replicas",
  "template",
  "updateStrategy",
  "minReadySeconds",
  "ordinals",
  "persistentVolumeClaimRetentionPolicy",
] as const;

function maxUnavailableInUse(obj: Json | undefined): boolean {
  if (obj === undefined) return false;
  const rolling = record(record(specOf(obj)["updateStrategy"])?.["rollingUpdate"]);
  return rolling?.["maxUnavailable"] != null;
}

const statefulSets: KindValidation = {
  // ValidateStatefulSetName: pods take the set's name as their hostname, so it is a DNS label.
  name: nameIsDNSLabel,
  create: (obj) => validateStatefulSetSpec(specOf(obj), SPEC, false),
  update: (next, old) => {
    const spec = specOf(next);
    const oldSpec = specOf(old);
    const errs = validateStatefulSetSpec(spec, SPEC, maxUnavailableInUse(old));
    const rest = { ...spec };
    const oldRest = { ...oldSpec };
    for (const field of STATEFULSET_MUTABLE) {
      delete rest[field];
      delete oldRest[field];
    }
    if (!semanticEqual(rest, oldRest))
      errs.push(
        forbidden(
          SPEC,
          "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
        ),
      );
    return errs;
  },
};

// --- DaemonSet ---

function validateRollingUpdateDaemonSet(rolling: Json, path: FieldPath): FieldError[] {
  const maxUnavailable = rolling["maxUnavailable"];
  const maxSurge = rolling["maxSurge"];
  const errs = validatePositiveIntOrPercent(maxUnavailable, path.child("maxUnavailable"));
  errs.push(...validatePositiveIntOrPercent(maxSurge, path.child("maxSurge")));
  errs.push(...isNotMoreThan100Percent(maxUnavailable, path.child("maxUnavailable")));
  errs.push(...isNotMoreThan100Percent(maxSurge, path.child("maxSurge")));
  const hasUnavailable = intOrPercentValue(maxUnavailable) !== 0;
  const hasSurge = intOrPercentValue(maxSurge) !== 0;
  if (hasUnavailable && hasSurge)
    errs.push(
      invalid(path.child("maxSurge"), intOrStringValue(maxSurge), "may not be set when maxUnavailable is non-zero"),
    );
  else if (!hasUnavailable && !hasSurge)
    errs.push(required(path.child("maxUnavailable"), "cannot be 0 when maxSurge is 0"));
  return errs;
}

function validateDaemonSetUpdateStrategy(strategy: Json, path: FieldPath): FieldError[] {
  const rolling = record(strategy["rollingUpdate"]);
  switch (strategy["type"]) {
    case "OnDelete":
      return [];
    case "RollingUpdate":
      return rolling === undefined
        ? [required(path.child("rollingUpdate"))]
        : validateRollingUpdateDaemonSet(rolling, path.child("rollingUpdate"));
    default: {
      const text = `apps.DaemonSetUpdateStrategy{Type:${goQuote(str(strategy["type"]))}, RollingUpdate:${goPointerText("apps.RollingUpdateDaemonSet", rolling)}}`;
      return [notSupported(path, goStructValue(strategy, text), ["RollingUpdate", "OnDelete"])];
    }
  }
}

/** ValidateDaemonSetSpec. `templateGeneration` is internal (an annotation in apps/v1) and not checked. */
function validateDaemonSetSpec(
  spec: Json,
  oldSpec: Json | undefined,
  path: FieldPath,
  selectorOptions: LabelSelectorOptions,
): FieldError[] {
  const selector = spec["selector"];
  const template = templateOf(spec);
  const errs = validateLabelSelector(selector, path.child("selector"), selectorOptions);
  if (labelSelectorConverts(selector) && !selectsLabels(selector, templateLabels(template)) && !isEverything(selector))
    errs.push(
      invalid(
        path.child("template", "metadata", "labels"),
        labelsValue(templateLabels(template)),
        "`selector` does not match template `labels`",
      ),
    );
  if (record(selector) !== undefined && isEmptySelector(selector))
    errs.push(invalid(path.child("selector"), labelSelectorValue(selector), "empty selector is invalid for daemonset"));
  const oldTemplate = oldSpec === undefined ? undefined : templateOf(oldSpec);
  errs.push(
    ...validatePodTemplateSpec(template, path.child("template"), podTemplateValidationOptions(template, oldTemplate)),
  );
  const restartPolicy = restartPolicyOf(template);
  if (restartPolicy !== "Always")
    errs.push(notSupported(path.child("template", "spec", "restartPolicy"), restartPolicy, ["Always"]));
  if (templateSpec(template)["activeDeadlineSeconds"] != null)
    errs.push(
      forbidden(
        path.child("template", "spec", "activeDeadlineSeconds"),
        "activeDeadlineSeconds in DaemonSet is not Supported",
      ),
    );
  errs.push(...validateNonnegative(spec["minReadySeconds"], path.child("minReadySeconds")));
  errs.push(...validateDaemonSetUpdateStrategy(record(spec["updateStrategy"]) ?? {}, path.child("updateStrategy")));
  errs.push(...validateNonnegative(spec["revisionHistoryLimit"], path.child("revisionHistoryLimit")));
  return errs;
}

/** An empty (non-absent) selector: `labels.Everything()`, which matches any labels. */
function isEverything(selector: unknown): boolean {
  return record(selector) !== undefined && isEmptySelector(selector);
}

/** LabelSelectorHasInvalidLabelValue: a stored selector with a bad value in an expression keeps passing. */
function selectorHasInvalidLabelValue(selector: unknown): boolean {
  const expressions = record(selector)?.["matchExpressions"];
  if (!Array.isArray(expressions)) return false;
  return expressions.some((e) => {
    const values = record(e)?.["values"];
    return Array.isArray(values) && values.some((v) => isValidLabelValue(str(v)).length > 0);
  });
}

const daemonSets: KindValidation = {
  create: (obj) => validateDaemonSetSpec(specOf(obj), undefined, SPEC, {}),
  update: (next, old) => {
    const spec = specOf(next);
    const oldSpec = specOf(old);
    const options: LabelSelectorOptions = {
      allowInvalidLabelValueInSelector: selectorHasInvalidLabelValue(oldSpec["selector"]),
    };
    // ValidateDaemonSet, then ValidateDaemonSetUpdate: the spec is validated twice.
    const errs = validateDaemonSetSpec(spec, oldSpec, SPEC, options);
    errs.push(...validateDaemonSetSpec(spec, oldSpec, SPEC, options));
    errs.push(
      ...validateImmutable(
        spec["selector"],
        oldSpec["selector"],
        SPEC.child("selector"),
        labelSelectorValue(spec["selector"]),
      ),
    );
    return errs;
  },
};

// --- ControllerRevision ---

const DATA = fieldPath("data");

function validateControllerRevisionData(obj: Json): FieldError[] {
  const data = obj["data"];
  if (data === undefined || data === null) return [required(DATA, "data is mandatory")];
  if (record(data) === undefined) return [required(DATA, "data must be a valid JSON object")];
  return [];
}

/** A runtime.RawExtension as `%#v` prints it: the JSON bytes in hex (compact JSON here; kube keeps the bytes as sent). */
function rawExtensionValue(data: unknown): object {
  const bytes = [...Buffer.from(JSON.stringify(data ?? null), "utf8")].map((b) => "0x" + b.toString(16));
  const raw = data === undefined || data === null ? "[]uint8(nil)" : `[]uint8{${bytes.join(", ")}}`;
  return goStructValue(data, `runtime.RawExtension{Raw:${raw}, Object:runtime.Object(nil)}`);
}

const controllerRevisions: KindValidation = {
  create: (obj) => [
    ...validateNonnegative(obj["revision"], fieldPath("revision")),
    ...validateControllerRevisionData(obj),
  ],
  update: (next, old) => [
    ...validateNonnegative(next["revision"], fieldPath("revision")),
    ...validateImmutable(next["data"], old["data"], DATA, rawExtensionValue(next["data"])),
  ],
};

export const appsValidation: GroupValidation = {
  deployments,
  replicasets: replicaSets,
  statefulsets: statefulSets,
  daemonsets: daemonSets,
  controllerrevisions: controllerRevisions,
};
