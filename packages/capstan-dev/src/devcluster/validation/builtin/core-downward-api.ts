/**
 * The downward API's references as kube-apiserver 1.32 validates them (core
 * `validateObjectFieldSelector`, `validateContainerResourceFieldSelector`,
 * `validateContainerResourceDivisor`, and pkg/apis/core/pods' ConvertDownwardAPIFieldLabel): which pod
 * fields and container resources an environment variable or a downwardAPI volume file may read.
 */
import { type FieldError, type FieldPath, invalid, notSupported, required } from "../field-errors.ts";
import { isQualifiedName } from "../names.ts";
import type { Json } from "./kind-validation.ts";
import { parseQuantity, quantityString } from "./quantity.ts";
import { str } from "./zero-values.ts";

/** validEnvDownwardAPIFieldPathExpressions, sorted as sets.List sorts them. */
export const ENV_FIELD_PATHS = [
  "metadata.name",
  "metadata.namespace",
  "metadata.uid",
  "spec.nodeName",
  "spec.serviceAccountName",
  "status.hostIP",
  "status.hostIPs",
  "status.podIP",
  "status.podIPs",
];

/** validVolumeDownwardAPIFieldPathExpressions, sorted. */
export const VOLUME_FIELD_PATHS = [
  "metadata.annotations",
  "metadata.labels",
  "metadata.name",
  "metadata.namespace",
  "metadata.uid",
];

/** The field labels ConvertDownwardAPIFieldLabel knows for v1 pods. */
const POD_FIELD_LABELS = new Set([
  "metadata.annotations",
  "metadata.labels",
  "metadata.name",
  "metadata.namespace",
  "metadata.uid",
  "spec.nodeName",
  "spec.restartPolicy",
  "spec.serviceAccountName",
  "spec.schedulerName",
  "status.phase",
  "status.hostIP",
  "status.hostIPs",
  "status.podIP",
  "status.podIPs",
]);

/** validContainerResourceFieldPathExpressions, sorted. */
const RESOURCE_FIELD_PATHS = [
  "limits.cpu",
  "limits.ephemeral-storage",
  "limits.memory",
  "requests.cpu",
  "requests.ephemeral-storage",
  "requests.memory",
];
const HUGEPAGES_FIELD_PREFIXES = ["requests.hugepages-", "limits.hugepages-"];

/** fieldpath.SplitMaybeSubscriptedPath: `metadata.labels['key']` as path and subscript. */
function splitSubscript(fieldPath: string): { path: string; subscript: string } | undefined {
  if (!fieldPath.endsWith("']")) return undefined;
  const body = fieldPath.slice(0, -2);
  const at = body.indexOf("['");
  if (at <= 0) return undefined;
  return { path: body.slice(0, at), subscript: body.slice(at + 2) };
}

/** ConvertDownwardAPIFieldLabel: the internal field label, or the error it reports. */
function convertFieldLabel(apiVersion: string, label: string): { label: string } | { error: string } {
  if (apiVersion !== "v1") return { error: `unsupported pod version: ${apiVersion}` };
  const split = splitSubscript(label);
  if (split !== undefined) {
    return split.path === "metadata.annotations" || split.path === "metadata.labels"
      ? { label }
      : { error: `field label does not support subscript: ${label}` };
  }
  if (POD_FIELD_LABELS.has(label)) return { label };
  if (label === "spec.host") return { label: "spec.nodeName" };
  return { error: `field label not supported: ${label}` };
}

/** validateObjectFieldSelector: a fieldRef's apiVersion and fieldPath, among `allowed`. */
export function validateObjectFieldSelector(fieldRef: Json, allowed: readonly string[], path: FieldPath): FieldError[] {
  const apiVersion = str(fieldRef["apiVersion"]);
  const fieldPath = str(fieldRef["fieldPath"]);
  if (apiVersion === "") return [required(path.child("apiVersion"))];
  if (fieldPath === "") return [required(path.child("fieldPath"))];
  const converted = convertFieldLabel(apiVersion, fieldPath);
  if ("error" in converted) {
    return [invalid(path.child("fieldPath"), fieldPath, `error converting fieldPath: ${converted.error}`)];
  }
  const split = splitSubscript(converted.label);
  if (split !== undefined) {
    const key = split.path === "metadata.annotations" ? split.subscript.toLowerCase() : split.subscript;
    if (split.path === "metadata.annotations" || split.path === "metadata.labels") {
      return isQualifiedName(key).map((msg) => invalid(path, key, msg));
    }
    return [invalid(path, split.path, "does not support subscript")];
  }
  return allowed.includes(converted.label) ? [] : [notSupported(path.child("fieldPath"), converted.label, allowed)];
}

const DIVISOR_CPU = new Set(["1m", "1"]);
const DIVISOR_BYTES = new Set(["1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei"]);
const BYTE_DIVISORS_TEXT = "1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei";

/** validateContainerResourceDivisor: a divisor the resource's unit supports. */
function validateDivisor(resource: string, divisor: unknown, path: FieldPath): FieldError[] {
  const q = parseQuantity(divisor);
  if (q === undefined || q.sign === 0) return [];
  const text = quantityString(q);
  const errs: FieldError[] = [];
  const at = path.child("divisor");
  switch (resource) {
    case "limits.cpu":
    case "requests.cpu":
      if (!DIVISOR_CPU.has(text)) {
        errs.push(invalid(at, resource, "only divisor's values 1m and 1 are supported with the cpu resource"));
      }
      break;
    case "limits.memory":
    case "requests.memory":
      if (!DIVISOR_BYTES.has(text)) {
        errs.push(
          invalid(at, resource, `only divisor's values ${BYTE_DIVISORS_TEXT} are supported with the memory resource`),
        );
      }
      break;
    case "limits.ephemeral-storage":
    case "requests.ephemeral-storage":
      if (!DIVISOR_BYTES.has(text)) {
        errs.push(
          invalid(
            at,
            resource,
            `only divisor's values ${BYTE_DIVISORS_TEXT} are supported with the local ephemeral storage resource`,
          ),
        );
      }
      break;
  }
  if (HUGEPAGES_FIELD_PREFIXES.some((prefix) => resource.startsWith(prefix)) && !DIVISOR_BYTES.has(text)) {
    errs.push(
      invalid(at, resource, `only divisor's values ${BYTE_DIVISORS_TEXT} are supported with the hugepages resource`),
    );
  }
  return errs;
}

/** validateContainerResourceFieldSelector: a resourceFieldRef's container (volumes), resource and divisor. */
export function validateResourceFieldSelector(ref: Json, path: FieldPath, volume: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const resource = str(ref["resource"]);
  if (volume && str(ref["containerName"]) === "") errs.push(required(path.child("containerName")));
  else if (resource === "") errs.push(required(path.child("resource")));
  else if (!RESOURCE_FIELD_PATHS.includes(resource) && !HUGEPAGES_FIELD_PREFIXES.some((p) => resource.startsWith(p))) {
    errs.push(notSupported(path.child("resource"), resource, RESOURCE_FIELD_PATHS));
  }
  errs.push(...validateDivisor(resource, ref["divisor"], path));
  return errs;
}
