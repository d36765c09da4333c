/**
 * The batch group's validation as Kubernetes 1.32 runs it (`pkg/apis/batch/validation/validation.go`,
 * called by `pkg/registry/batch/{job,cronjob}/strategy.go`): Jobs and CronJobs, on create and update,
 * with the 1.32 feature gates that are on by default (JobBackoffLimitPerIndex, JobPodReplacementPolicy,
 * JobSuccessPolicy, JobManagedBy). A Job's selector and its template's `controller-uid` / `job-name`
 * labels are generated before validation (registry/builtins.ts, the strategy's PrepareForCreate).
 *
 * On update the Job strategy validates the spec twice (ValidateJob, then ValidateJobUpdate): its errors
 * are listed twice in `details.causes`, as kube-apiserver lists them (the message drops the repeats).
 */
import {
  duplicate,
  type FieldError,
  type FieldPath,
  fieldPath,
  invalid,
  notSupported,
  OMIT_VALUE,
  required,
  tooLong,
  tooMany,
} from "../field-errors.ts";
import { goQuote } from "../go-format.ts";
import {
  byteLength,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
  regexError,
} from "../names.ts";
import { type PodValidationOptions, podTemplateValidationOptions, validatePodTemplateSpec } from "./core-pod.ts";
import { cronScheduleError, loadLocationError } from "./cron-schedule.ts";
import { semanticEqual, validateImmutable, validateNonnegative } from "./generic-fields.ts";
import { goPointerText, goStructValue, int32SliceValue, labelSelectorValue, labelsValue } from "./go-typed-values.ts";
import type { GroupValidation, Json, KindValidation } from "./kind-validation.ts";
import { record } from "./kind-validation.ts";
import { type LabelSelectorOptions, selectsLabels, validateLabelSelector } from "./label-selector.ts";
import { labelSelectorConverts } from "./selector-conversion.ts";

const SPEC = fieldPath("spec");
const METADATA = fieldPath("metadata");

/** The template labels the job controller's selector relies on (batch.LegacyJobNameLabel and co.). */
const LEGACY_CONTROLLER_UID = "controller-uid";
const LEGACY_JOB_NAME = "job-name";
const CONTROLLER_UID = "batch.kubernetes.io/controller-uid";
const JOB_NAME = "batch.kubernetes.io/job-name";

const MAX_PARALLELISM_FOR_INDEXED_JOB = 100_000;
const MAX_FAILED_INDEXES_FOR_INDEXED_JOB = 100_000;
const COMPLETIONS_SOFT_LIMIT = 100_000;
const PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS = 10_000;
const MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS = 10_000;
const MAX_POD_FAILURE_POLICY_RULES = 20;
const MAX_POD_FAILURE_POLICY_ON_EXIT_CODES_VALUES = 255;
const MAX_POD_FAILURE_POLICY_ON_POD_CONDITIONS_PATTERNS = 20;
const MAX_MANAGED_BY_LENGTH = 63;
const MAX_SUCCEEDED_INDEXES_LENGTH = 64 * 1024;
const MAX_SUCCESS_POLICY_RULES = 20;
/** The cronjob controller appends `-<11 characters>` to a CronJob's name to name its Jobs (63 at most). */
const MAX_CRONJOB_NAME_LENGTH = 63 - 11;

/** Sorted as Go's sets.List sorts them. */
const POD_FAILURE_POLICY_ACTIONS = ["Count", "FailIndex", "FailJob", "Ignore"];
const ON_EXIT_CODES_OPERATORS = ["In", "NotIn"];
const CONDITION_STATUSES = ["False", "True", "Unknown"];

function str(value: unknown): string {
  return typeof value === "string" ? value : "";
}

function num(value: unknown): number | undefined {
  return typeof value === "number" ? value : undefined;
}

function specOf(obj: Json): Json {
  return record(obj["spec"]) ?? {};
}

function metaOf(obj: Json): Json {
  return record(obj["metadata"]) ?? {};
}

function templateOf(spec: Json): Json {
  return record(spec["template"]) ?? {};
}

function templateLabels(template: Json): unknown {
  return record(template["metadata"])?.["labels"];
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** `%q` of a []string, as `fmt.Sprintf("valid values: %q", ...)` prints it. */
function quotedList(values: readonly string[]): string {
  return `[${values.map(goQuote).join(" ")}]`;
}

// --- pod failure policy, success policy, indexes ---

function validateOnExitCodes(onExitCodes: Json, path: FieldPath, containerNames: Set<string>): FieldError[] {
  const errs: FieldError[] = [];
  const operator = str(onExitCodes["operator"]);
  if (operator === "")
    errs.push(required(path.child("operator"), `valid values: ${quotedList(ON_EXIT_CODES_OPERATORS)}`));
  else if (!ON_EXIT_CODES_OPERATORS.includes(operator))
    errs.push(notSupported(path.child("operator"), operator, ON_EXIT_CODES_OPERATORS));
  const containerName = onExitCodes["containerName"];
  if (typeof containerName === "string" && !containerNames.has(containerName))
    errs.push(
      invalid(
        path.child("containerName"),
        containerName,
        "must be one of the container or initContainer names in the pod template",
      ),
    );
  const valuesPath = path.child("values");
  const values = list(onExitCodes["values"]).map((v) => (typeof v === "number" ? v : 0));
  if (values.length === 0)
    errs.push(invalid(valuesPath, int32SliceValue(onExitCodes["values"]), "at least one value is required"));
  else if (values.length > MAX_POD_FAILURE_POLICY_ON_EXIT_CODES_VALUES)
    errs.push(tooMany(valuesPath, values.length, MAX_POD_FAILURE_POLICY_ON_EXIT_CODES_VALUES));
  let ordered = true;
  const seen = new Set<number>();
  values.forEach((value, j) => {
    if (operator === "In" && value === 0)
      errs.push(invalid(valuesPath.index(j), value, "must not be 0 for the In operator"));
    if (seen.has(value)) errs.push(duplicate(valuesPath.index(j), value));
    else seen.add(value);
    if (j > 0 && values[j - 1]! > value) ordered = false;
  });
  if (!ordered) errs.push(invalid(valuesPath, int32SliceValue(onExitCodes["values"]), "must be ordered"));
  return errs;
}

function validateOnPodConditions(patterns: unknown[], path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (patterns.length > MAX_POD_FAILURE_POLICY_ON_POD_CONDITIONS_PATTERNS)
    errs.push(tooMany(path, patterns.length, MAX_POD_FAILURE_POLICY_ON_POD_CONDITIONS_PATTERNS));
  patterns.forEach((p, j) => {
    const pattern = record(p) ?? {};
    const type = str(pattern["type"]);
    for (const msg of isQualifiedName(type)) errs.push(invalid(path.index(j).child("type"), type, msg));
    const status = str(pattern["status"]);
    const statusPath = path.index(j).child("status");
    if (status === "") errs.push(required(statusPath, `valid values: ${quotedList(CONDITION_STATUSES)}`));
    else if (!CONDITION_STATUSES.includes(status)) errs.push(notSupported(statusPath, status, CONDITION_STATUSES));
  });
  return errs;
}

function containerNamesOf(template: Json): Set<string> {
  const podSpec = record(template["spec"]) ?? {};
  const names = new Set<string>();
  for (const c of [...list(podSpec["containers"]), ...list(podSpec["initContainers"])])
    names.add(str(record(c)?.["name"]));
  return names;
}

function validatePodFailurePolicy(spec: Json, policy: Json, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const rulesPath = path.child("rules");
  const rules = list(policy["rules"]);
  if (rules.length > MAX_POD_FAILURE_POLICY_RULES)
    errs.push(tooMany(rulesPath, rules.length, MAX_POD_FAILURE_POLICY_RULES));
  const containerNames = containerNamesOf(templateOf(spec));
  rules.forEach((r, i) => {
    const rule = record(r) ?? {};
    const rulePath = rulesPath.index(i);
    const actionPath = rulePath.child("action");
    const action = str(rule["action"]);
    if (action === "") errs.push(required(actionPath, `valid values: ${quotedList(POD_FAILURE_POLICY_ACTIONS)}`));
    else if (action === "FailIndex") {
      if (spec["backoffLimitPerIndex"] == null)
        errs.push(invalid(actionPath, action, "requires the backoffLimitPerIndex to be set"));
    } else if (!POD_FAILURE_POLICY_ACTIONS.includes(action))
      errs.push(notSupported(actionPath, action, POD_FAILURE_POLICY_ACTIONS));
    const onExitCodes = record(rule["onExitCodes"]);
    const onPodConditions = list(rule["onPodConditions"]);
    if (onExitCodes !== undefined)
      errs.push(...validateOnExitCodes(onExitCodes, rulePath.child("onExitCodes"), containerNames));
    if (onPodConditions.length > 0)
      errs.push(...validateOnPodConditions(onPodConditions, rulePath.child("onPodConditions")));
    if (onExitCodes !== undefined && onPodConditions.length > 0)
      errs.push(invalid(rulePath, OMIT_VALUE, "specifying both OnExitCodes and OnPodConditions is not supported"));
    if (onExitCodes === undefined && onPodConditions.length === 0)
      errs.push(invalid(rulePath, OMIT_VALUE, "specifying one of OnExitCodes and OnPodConditions is required"));
  });
  return errs;
}

/** parseIndexInterval: `x` or `x-y`, below `completions`; the interval or the error text. */
function parseIndexInterval(interval: string, completions: number): [number, number] | string {
  const limits = interval.split("-");
  if (limits.length > 2)
    return `the fragment ${goQuote(interval)} violates the requirement that an index interval can have at most two parts separated by '-'`;
  const parse = (s: string): number | undefined => (/^[+-]?[0-9]+$/.test(s) ? Number(s) : undefined);
  const x = parse(limits[0]!);
  if (x === undefined) return `cannot convert string to integer for index: ${goQuote(limits[0]!)}`;
  if (x >= completions) return `too large index: ${goQuote(limits[0]!)}`;
  if (limits.length === 1) return [x, x];
  const y = parse(limits[1]!);
  if (y === undefined) return `cannot convert string to integer for index: ${goQuote(limits[1]!)}`;
  if (y >= completions) return `too large index: ${goQuote(limits[1]!)}`;
  if (x >= y) return `non-increasing order, previous: ${x}, current: ${y}`;
  return [x, y];
}

/** validateIndexesFormat: the number of indexes, or the error text. */
function indexesCount(indexes: string, completions: number): number | string {
  if (indexes === "") return 0;
  let last: number | undefined;
  let total = 0;
  for (const interval of indexes.split(",")) {
    const parsed = parseIndexInterval(interval, completions);
    if (typeof parsed === "string") return parsed;
    const [x, y] = parsed;
    if (last !== undefined && last >= x) return `non-increasing order, previous: ${last}, current: ${x}`;
    total += y - x + 1;
    last = y;
  }
  return total;
}

function validateSuccessPolicy(spec: Json, policy: Json, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const rulesPath = path.child("rules");
  const rules = list(policy["rules"]);
  if (rules.length === 0)
    errs.push(required(rulesPath, "at least one rules must be specified when the successPolicy is specified"));
  if (rules.length > MAX_SUCCESS_POLICY_RULES) errs.push(tooMany(rulesPath, rules.length, MAX_SUCCESS_POLICY_RULES));
  const completions = num(spec["completions"]) ?? 0;
  rules.forEach((r, i) => {
    const rule = record(r) ?? {};
    const rulePath = rulesPath.index(i);
    const indexes = rule["succeededIndexes"];
    const count = rule["succeededCount"];
    if (indexes == null && count == null)
      errs.push(required(rulePath, "at least one of succeededCount or succeededIndexes must be specified"));
    let total = 0;
    if (typeof indexes === "string") {
      const indexesPath = rulePath.child("succeededIndexes");
      if (byteLength(indexes) > MAX_SUCCEEDED_INDEXES_LENGTH)
        errs.push(tooLong(indexesPath, MAX_SUCCEEDED_INDEXES_LENGTH));
      const parsed = indexesCount(indexes, completions);
      if (typeof parsed === "string")
        errs.push(invalid(indexesPath, indexes, `error parsing succeededIndexes: ${parsed}`));
      else total = parsed;
    }
    if (typeof count === "number") {
      const countPath = rulePath.child("succeededCount");
      errs.push(...validateNonnegative(count, countPath));
      if (count > completions)
        errs.push(
          invalid(
            countPath,
            count,
            `must be less than or equal to ${completions} (the number of specified completions)`,
          ),
        );
      if (typeof indexes === "string" && count > total)
        errs.push(
          invalid(
            countPath,
            count,
            `must be less than or equal to ${total} (the number of indexes in the specified succeededIndexes field)`,
          ),
        );
    }
  });
  return errs;
}

/** `%#v` of a batch.SuccessPolicy struct (its pointers as made-up addresses). */
function successPolicyValue(policy: Json): object {
  const rules = policy["rules"];
  const rulesText = Array.isArray(rules)
    ? `[]batch.SuccessPolicyRule{${rules
        .map((r) => {
          const rule = record(r) ?? {};
          return `batch.SuccessPolicyRule{SucceededIndexes:${goPointerText("string", rule["succeededIndexes"])}, SucceededCount:${goPointerText("int32", rule["succeededCount"])}}`;
        })
        .join(", ")}}`
    : "[]batch.SuccessPolicyRule(nil)";
  return goStructValue(policy, `batch.SuccessPolicy{Rules:${rulesText}}`);
}

/** IsDomainPrefixedPath (apimachinery util/validation) of `spec.managedBy`. */
function validateDomainPrefixedPath(value: string, path: FieldPath): FieldError[] {
  if (value === "") return [required(path)];
  const slash = value.indexOf("/");
  const host = slash < 0 ? value : value.slice(0, slash);
  const rest = slash < 0 ? "" : value.slice(slash + 1);
  if (slash < 0 || host === "" || rest === "")
    return [invalid(path, value, 'must be a domain-prefixed path (such as "acme.io/foo")')];
  const errs = isDNS1123Subdomain(host).map((msg) => invalid(path, host, msg));
  const HTTP_PATH_FMT = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+";
  if (!new RegExp(`^${HTTP_PATH_FMT}$`).test(rest))
    errs.push(invalid(path, rest, regexError("Invalid path", HTTP_PATH_FMT)));
  return errs;
}

// --- JobSpec ---

function validatePodReplacementPolicy(spec: Json, path: FieldPath): FieldError[] {
  const policy = spec["podReplacementPolicy"];
  if (typeof policy !== "string") return [];
  if (record(spec["podFailurePolicy"]) !== undefined)
    return policy === "Failed" ? [] : [notSupported(path, policy, ["Failed"])];
  return policy === "Failed" || policy === "TerminatingOrFailed"
    ? []
    : [notSupported(path, policy, ["Failed", "TerminatingOrFailed"])];
}

/** validateJobSpec: what a Job's spec and a CronJob's job template share. */
function validateJobSpecFields(spec: Json, path: FieldPath, options: PodValidationOptions): FieldError[] {
  const errs: FieldError[] = [];
  for (const field of [
    "parallelism",
    "completions",
    "activeDeadlineSeconds",
    "backoffLimit",
    "ttlSecondsAfterFinished",
  ])
    errs.push(...validateNonnegative(spec[field], path.child(field)));
  const parallelism = num(spec["parallelism"]);
  const completions = num(spec["completions"]);
  const backoffLimitPerIndex = num(spec["backoffLimitPerIndex"]);
  const maxFailedIndexes = num(spec["maxFailedIndexes"]);
  errs.push(...validateNonnegative(backoffLimitPerIndex, path.child("backoffLimitPerIndex")));
  if (maxFailedIndexes !== undefined) {
    errs.push(...validateNonnegative(maxFailedIndexes, path.child("maxFailedIndexes")));
    if (backoffLimitPerIndex === undefined)
      errs.push(required(path.child("backoffLimitPerIndex"), "when maxFailedIndexes is specified"));
  }
  const managedBy = spec["managedBy"];
  if (typeof managedBy === "string") {
    errs.push(...validateDomainPrefixedPath(managedBy, path.child("managedBy")));
    if (byteLength(managedBy) > MAX_MANAGED_BY_LENGTH)
      errs.push(tooLong(path.child("managedBy"), MAX_MANAGED_BY_LENGTH));
  }
  const mode = spec["completionMode"];
  if (typeof mode === "string") {
    if (mode !== "NonIndexed" && mode !== "Indexed")
      errs.push(notSupported(path.child("completionMode"), mode, ["NonIndexed", "Indexed"]));
    if (mode === "Indexed") {
      if (completions === undefined) errs.push(required(path.child("completions"), "when completion mode is Indexed"));
      if (parallelism !== undefined && parallelism > MAX_PARALLELISM_FOR_INDEXED_JOB)
        errs.push(
          invalid(
            path.child("parallelism"),
            parallelism,
            `must be less than or equal to ${MAX_PARALLELISM_FOR_INDEXED_JOB} when completion mode is Indexed`,
          ),
        );
      if (completions !== undefined && maxFailedIndexes !== undefined && maxFailedIndexes > completions)
        errs.push(
          invalid(path.child("maxFailedIndexes"), maxFailedIndexes, "must be less than or equal to completions"),
        );
      if (maxFailedIndexes !== undefined && maxFailedIndexes > MAX_FAILED_INDEXES_FOR_INDEXED_JOB)
        errs.push(
          invalid(
            path.child("maxFailedIndexes"),
            maxFailedIndexes,
            `must be less than or equal to ${MAX_FAILED_INDEXES_FOR_INDEXED_JOB}`,
          ),
        );
      if (completions !== undefined && completions > COMPLETIONS_SOFT_LIMIT && backoffLimitPerIndex !== undefined) {
        const suffix = `when completions are above ${COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index`;
        if (maxFailedIndexes === undefined)
          errs.push(
            required(
              path.child("maxFailedIndexes"),
              `must be specified when completions is above ${COMPLETIONS_SOFT_LIMIT}`,
            ),
          );
        if (parallelism !== undefined && parallelism > PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS)
          errs.push(
            invalid(
              path.child("parallelism"),
              parallelism,
              `must be less than or equal to ${PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS} ${suffix}`,
            ),
          );
        if (maxFailedIndexes !== undefined && maxFailedIndexes > MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS)
          errs.push(
            invalid(
              path.child("maxFailedIndexes"),
              maxFailedIndexes,
              `must be less than or equal to ${MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS} ${suffix}`,
            ),
          );
      }
    }
  }
  if (mode === undefined || mode === null || mode === "NonIndexed") {
    if (backoffLimitPerIndex !== undefined)
      errs.push(invalid(path.child("backoffLimitPerIndex"), backoffLimitPerIndex, "requires indexed completion mode"));
    if (maxFailedIndexes !== undefined)
      errs.push(invalid(path.child("maxFailedIndexes"), maxFailedIndexes, "requires indexed completion mode"));
  }
  const podFailurePolicy = record(spec["podFailurePolicy"]);
  if (podFailurePolicy !== undefined)
    errs.push(...validatePodFailurePolicy(spec, podFailurePolicy, path.child("podFailurePolicy")));
  const successPolicy = record(spec["successPolicy"]);
  if (successPolicy !== undefined) {
    if (mode !== "Indexed")
      errs.push(
        invalid(path.child("successPolicy"), successPolicyValue(successPolicy), "requires indexed completion mode"),
      );
    else errs.push(...validateSuccessPolicy(spec, successPolicy, path.child("successPolicy")));
  }
  errs.push(...validatePodReplacementPolicy(spec, path.child("podReplacementPolicy")));
  const template = templateOf(spec);
  errs.push(...validatePodTemplateSpec(template, path.child("template"), options));
  // An absent restartPolicy is what scheme defaulting turns into Always.
  const restartPolicy = str(record(template["spec"])?.["restartPolicy"]);
  const restartPath = path.child("template", "spec", "restartPolicy");
  if (restartPolicy === "Always" || restartPolicy === "")
    errs.push(required(restartPath, 'valid values: "OnFailure", "Never"'));
  else if (restartPolicy !== "OnFailure" && restartPolicy !== "Never")
    errs.push(notSupported(restartPath, restartPolicy, ["OnFailure", "Never"]));
  else if (podFailurePolicy !== undefined && restartPolicy !== "Never")
    errs.push(invalid(restartPath, restartPolicy, 'only "Never" is supported when podFailurePolicy is specified'));
  return errs;
}

/** ValidateJobSpec: the shared fields, then the selector and the template's labels against it. */
function validateJobSpec(
  spec: Json,
  path: FieldPath,
  options: PodValidationOptions,
  selectorOptions: LabelSelectorOptions,
): FieldError[] {
  const errs = validateJobSpecFields(spec, path, options);
  const selector = spec["selector"];
  if (record(selector) === undefined) errs.push(required(path.child("selector")));
  else errs.push(...validateLabelSelector(selector, path.child("selector"), selectorOptions));
  const labels = templateLabels(templateOf(spec));
  if (labelSelectorConverts(selector) && !selectsLabels(selector, labels))
    errs.push(
      invalid(
        path.child("template", "metadata", "labels"),
        labelsValue(labels),
        "`selector` does not match template `labels`",
      ),
    );
  return errs;
}

// --- Job ---

interface JobOptions {
  readonly pod: PodValidationOptions;
  readonly selector: LabelSelectorOptions;
  /** The job has (or had, on update) the `batch.kubernetes.io/` labels: they are then required. */
  readonly requirePrefixedLabels: boolean;
  /** A suspended Job that never started may change its template's scheduling directives. */
  readonly allowMutableSchedulingDirectives: boolean;
}

/** ValidateHasLabel. */
function validateHasLabel(template: Json, key: string, expected: string): FieldError[] {
  const labels = record(templateLabels(template));
  const path = SPEC.child("template", "metadata", "labels").key(key);
  if (labels === undefined || !Object.hasOwn(labels, key)) return [required(path, `must be '${expected}'`)];
  return labels[key] === expected ? [] : [invalid(path, labelsValue(labels), `must be '${expected}'`)];
}

/** validateGeneratedSelector: the generated labels on the template, and a selector that selects them. */
function validateGeneratedSelector(job: Json, requirePrefixedLabels: boolean): FieldError[] {
  const spec = specOf(job);
  if (spec["manualSelector"] === true) return [];
  const selector = spec["selector"];
  if (record(selector) === undefined) return [];
  const meta = metaOf(job);
  const uid = str(meta["uid"]);
  const name = str(meta["name"]);
  const errs: FieldError[] = [];
  if (uid === "") errs.push(required(METADATA.child("uid")));
  const template = templateOf(spec);
  errs.push(...validateHasLabel(template, LEGACY_CONTROLLER_UID, uid));
  errs.push(...validateHasLabel(template, LEGACY_JOB_NAME, name));
  const expected: Record<string, string> = {};
  if (requirePrefixedLabels) {
    errs.push(...validateHasLabel(template, CONTROLLER_UID, uid));
    errs.push(...validateHasLabel(template, JOB_NAME, name));
    expected[CONTROLLER_UID] = uid;
    expected[JOB_NAME] = name;
  }
  expected[LEGACY_CONTROLLER_UID] = uid;
  expected[LEGACY_JOB_NAME] = name;
  if (labelSelectorConverts(selector) && !selectsLabels(selector, expected))
    errs.push(invalid(SPEC.child("selector"), labelSelectorValue(selector), "`selector` not auto-generated"));
  return errs;
}

/** ValidateJob (its metadata is the caller's). */
function validateJob(job: Json, options: JobOptions): FieldError[] {
  const spec = specOf(job);
  const errs = validateGeneratedSelector(job, options.requirePrefixedLabels);
  errs.push(...validateJobSpec(spec, SPEC, options.pod, options.selector));
  const completions = num(spec["completions"]);
  if (spec["completionMode"] === "Indexed" && completions !== undefined && completions > 0) {
    // Pods of an Indexed Job are named `<job>-<index>`, and that is their hostname.
    const name = str(metaOf(job)["name"]);
    const hostname = `${name}-${completions - 1}`;
    if (isDNS1123Label(hostname).length > 0)
      errs.push(
        invalid(METADATA.child("name"), name, `will not able to create pod with invalid DNS label: ${hostname}`),
      );
  }
  return errs;
}

/** validateCompletions: immutable, except an Indexed Job's, which may change with parallelism. */
function validateCompletionsUpdate(spec: Json, oldSpec: Json, path: FieldPath): FieldError[] {
  const completions = spec["completions"];
  if (spec["completionMode"] !== "Indexed") return validateImmutable(completions, oldSpec["completions"], path);
  if (semanticEqual(completions, oldSpec["completions"]) || typeof completions !== "number") return [];
  return completions === spec["parallelism"]
    ? []
    : [invalid(path, completions, "can only be modified in tandem with spec.parallelism")];
}

/**
 * validatePodTemplateUpdate: the template is immutable; a suspended Job that never started may change
 * its node affinity, node selector, tolerations, labels, annotations and scheduling gates.
 */
function validateTemplateUpdate(spec: Json, oldSpec: Json, path: FieldPath, options: JobOptions): FieldError[] {
  const template = templateOf(spec);
  let oldTemplate = templateOf(oldSpec);
  if (options.allowMutableSchedulingDirectives) {
    oldTemplate = structuredClone(oldTemplate);
    const podSpec = record(template["spec"]) ?? {};
    const oldPodSpec = record(oldTemplate["spec"]) ?? {};
    oldTemplate["spec"] = oldPodSpec;
    const affinity = record(podSpec["affinity"]);
    const oldAffinity = record(oldPodSpec["affinity"]);
    if (affinity === undefined && oldAffinity !== undefined) {
      delete oldAffinity["nodeAffinity"];
      if (Object.values(oldAffinity).every((v) => v == null)) delete oldPodSpec["affinity"];
    } else if (affinity !== undefined && oldAffinity === undefined) {
      oldPodSpec["affinity"] = affinity["nodeAffinity"] == null ? {} : { nodeAffinity: affinity["nodeAffinity"] };
    } else if (affinity !== undefined && oldAffinity !== undefined) {
      if (affinity["nodeAffinity"] == null) delete oldAffinity["nodeAffinity"];
      else oldAffinity["nodeAffinity"] = affinity["nodeAffinity"];
    }
    for (const field of ["nodeSelector", "tolerations", "schedulingGates"]) oldPodSpec[field] = podSpec[field];
    const meta = record(template["metadata"]) ?? {};
    const oldMeta = record(oldTemplate["metadata"]) ?? {};
    oldTemplate["metadata"] = oldMeta;
    oldMeta["labels"] = meta["labels"];
    oldMeta["annotations"] = meta["annotations"];
  }
  // 1.32 prints the internal core.PodTemplateSpec with %#v (pointers as addresses); here it is JSON.
  return validateImmutable(template, oldTemplate, path.child("template"));
}

/** ValidateJobSpecUpdate. */
function validateJobSpecUpdate(spec: Json, oldSpec: Json, path: FieldPath, options: JobOptions): FieldError[] {
  const errs = validateJobSpec(spec, path, options.pod, options.selector);
  errs.push(...validateCompletionsUpdate(spec, oldSpec, path.child("completions")));
  errs.push(
    ...validateImmutable(
      spec["selector"],
      oldSpec["selector"],
      path.child("selector"),
      labelSelectorValue(spec["selector"]),
    ),
  );
  errs.push(...validateTemplateUpdate(spec, oldSpec, path, options));
  for (const field of ["completionMode", "podFailurePolicy", "backoffLimitPerIndex", "managedBy", "successPolicy"])
    errs.push(...validateImmutable(spec[field], oldSpec[field], path.child(field)));
  return errs;
}

/** LabelSelectorHasInvalidLabelValue. */
function selectorHasInvalidLabelValue(selector: unknown): boolean {
  return list(record(selector)?.["matchExpressions"]).some((e) =>
    list(record(e)?.["values"]).some((v) => isValidLabelValue(str(v)).length > 0),
  );
}

const jobs: KindValidation = {
  create: (obj) => {
    const template = templateOf(specOf(obj));
    return validateJob(obj, {
      pod: podTemplateValidationOptions(template, undefined),
      selector: {},
      requirePrefixedLabels: true,
      allowMutableSchedulingDirectives: false,
    });
  },
  update: (next, old) => {
    const spec = specOf(next);
    const oldSpec = specOf(old);
    const oldLabels = record(templateLabels(templateOf(oldSpec))) ?? {};
    const options: JobOptions = {
      pod: podTemplateValidationOptions(templateOf(spec), templateOf(oldSpec)),
      selector: { allowInvalidLabelValueInSelector: selectorHasInvalidLabelValue(oldSpec["selector"]) },
      requirePrefixedLabels: Object.hasOwn(oldLabels, JOB_NAME) && Object.hasOwn(oldLabels, CONTROLLER_UID),
      allowMutableSchedulingDirectives: oldSpec["suspend"] === true && record(old["status"])?.["startTime"] == null,
    };
    const errs = validateJob(next, options);
    errs.push(...validateJobSpecUpdate(spec, oldSpec, SPEC, options));
    return errs;
  },
};

// --- CronJob ---

const TIME_ZONE_PART = /^[A-Za-z.\-_0-9+]{1,14}$/;

function validateTimeZone(timeZone: unknown, path: FieldPath): FieldError[] {
  if (typeof timeZone !== "string") return [];
  if (timeZone === "") return [invalid(path, timeZone, "timeZone must be nil or non-empty string")];
  for (const part of timeZone.split("/")) {
    if (part === "." || part === ".." || part.startsWith("-") || !TIME_ZONE_PART.test(part))
      return [invalid(path, timeZone, `unknown time zone ${timeZone}`)];
  }
  const errs: FieldError[] = [];
  if (timeZone.toLowerCase() === "local")
    errs.push(
      invalid(path, timeZone, "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"),
    );
  const error = loadLocationError(timeZone);
  if (error !== undefined) errs.push(invalid(path, timeZone, error));
  return errs;
}

function validateScheduleFormat(
  schedule: string,
  allowTZInSchedule: boolean,
  hasTimeZone: boolean,
  path: FieldPath,
): FieldError[] {
  const errs: FieldError[] = [];
  const error = cronScheduleError(schedule);
  if (error !== undefined) errs.push(invalid(path, schedule, error));
  if (allowTZInSchedule && schedule.includes("TZ") && hasTimeZone)
    errs.push(invalid(path, schedule, "cannot use both timeZone field and TZ or CRON_TZ in schedule"));
  else if (!allowTZInSchedule && schedule.includes("TZ"))
    errs.push(invalid(path, schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"));
  return errs;
}

/** ValidateJobTemplateSpec: the job spec's fields; the selector is always generated. */
function validateJobTemplate(jobTemplate: Json, path: FieldPath, options: PodValidationOptions): FieldError[] {
  const spec = record(jobTemplate["spec"]) ?? {};
  const errs = validateJobSpecFields(spec, path.child("spec"), options);
  if (record(spec["selector"]) !== undefined)
    errs.push(
      invalid(
        path.child("spec", "selector"),
        labelSelectorValue(spec["selector"]),
        "`selector` will be auto-generated",
      ),
    );
  if (spec["manualSelector"] === true)
    errs.push(notSupported(path.child("spec", "manualSelector"), true, ["nil", "false"]));
  return errs;
}

function jobTemplateOf(spec: Json): Json {
  return record(spec["jobTemplate"]) ?? {};
}

/** validateCronJobSpec. */
function validateCronJobSpec(spec: Json, oldSpec: Json | undefined, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const schedule = str(spec["schedule"]);
  if (schedule === "") errs.push(required(path.child("schedule")));
  else {
    const allowTZ = oldSpec !== undefined && str(oldSpec["schedule"]).includes("TZ");
    errs.push(
      ...validateScheduleFormat(schedule, allowTZ, typeof spec["timeZone"] === "string", path.child("schedule")),
    );
  }
  errs.push(...validateNonnegative(spec["startingDeadlineSeconds"], path.child("startingDeadlineSeconds")));
  if (oldSpec === undefined || spec["timeZone"] !== oldSpec["timeZone"])
    errs.push(...validateTimeZone(spec["timeZone"], path.child("timeZone")));
  const policy = str(spec["concurrencyPolicy"]);
  if (policy === "") errs.push(required(path.child("concurrencyPolicy")));
  else if (policy !== "Allow" && policy !== "Forbid" && policy !== "Replace")
    errs.push(notSupported(path.child("concurrencyPolicy"), policy, ["Allow", "Forbid", "Replace"]));
  const template = templateOf(record(jobTemplateOf(spec)["spec"]) ?? {});
  const oldTemplate = oldSpec === undefined ? undefined : templateOf(record(jobTemplateOf(oldSpec)["spec"]) ?? {});
  errs.push(
    ...validateJobTemplate(
      jobTemplateOf(spec),
      path.child("jobTemplate"),
      podTemplateValidationOptions(template, oldTemplate),
    ),
  );
  errs.push(...validateNonnegative(spec["successfulJobsHistoryLimit"], path.child("successfulJobsHistoryLimit")));
  errs.push(...validateNonnegative(spec["failedJobsHistoryLimit"], path.child("failedJobsHistoryLimit")));
  return errs;
}

const cronJobs: KindValidation = {
  create: (obj) => {
    const errs = validateCronJobSpec(specOf(obj), undefined, SPEC);
    const name = str(metaOf(obj)["name"]);
    if (byteLength(name) > MAX_CRONJOB_NAME_LENGTH)
      errs.push(invalid(METADATA.child("name"), name, `must be no more than ${MAX_CRONJOB_NAME_LENGTH} characters`));
    return errs;
  },
  // The 52-character name limit is not checked on update, so that older CronJobs can still be changed.
  update: (next, old) => validateCronJobSpec(specOf(next), specOf(old), SPEC),
};

export const batchValidation: GroupValidation = {
  jobs,
  cronjobs: cronJobs,
};
