/**
 * A container's resource requirements as kube-apiserver 1.32 validates them (core
 * `ValidateContainerResourceRequirements`, `validateContainerResourceName`,
 * `ValidateResourceQuantityValue` and pkg/apis/core/helper's resource-name predicates): standard or
 * extended resource names, non-negative quantities (integers for extended resources), requests at most
 * their limits (equal for resources that cannot be overcommitted), hugepages in whole pages.
 *
 * Quantities are printed in messages as Go's Quantity.String() prints them (quantity.ts).
 */
import { type FieldError, type FieldPath, forbidden, invalid, required } from "../field-errors.ts";
import { withGoSharpV } from "../go-format.ts";
import { isQualifiedName } from "../names.ts";
import {
  compareQuantities,
  parseQuantity,
  type Quantity,
  quantityGoSharpV,
  quantityMilliValue,
  quantityString,
  quantityValue,
} from "./quantity.ts";
import { entries, objOrEmpty } from "./zero-values.ts";

/** pkg/apis/core/helper standardResources: the names a resource list may use unprefixed. */
const STANDARD_RESOURCES = new Set([
  "cpu",
  "memory",
  "ephemeral-storage",
  "requests.cpu",
  "requests.memory",
  "requests.ephemeral-storage",
  "limits.cpu",
  "limits.memory",
  "limits.ephemeral-storage",
  "pods",
  "resourcequotas",
  "services",
  "replicationcontrollers",
  "secrets",
  "configmaps",
  "persistentvolumeclaims",
  "storage",
  "requests.storage",
  "services.nodeports",
  "services.loadbalancers",
]);
const STANDARD_CONTAINER_RESOURCES = new Set(["cpu", "memory", "ephemeral-storage"]);
/** Counted resources: whole numbers only. */
const INTEGER_RESOURCES = new Set([
  "pods",
  "resourcequotas",
  "services",
  "replicationcontrollers",
  "secrets",
  "configmaps",
  "persistentvolumeclaims",
  "services.nodeports",
  "services.loadbalancers",
]);
const HUGEPAGES_PREFIX = "hugepages-";
const QUOTA_HUGEPAGES_PREFIX = "requests.hugepages-";
const QOS_COMPUTE_RESOURCES = new Set(["cpu", "memory"]);

function isHugePageResourceName(name: string): boolean {
  return name.startsWith(HUGEPAGES_PREFIX);
}

/** IsNativeResource: unprefixed, or in the kubernetes.io domain. */
function isNativeResource(name: string): boolean {
  return !name.includes("/") || name.includes("kubernetes.io/");
}

/** IsExtendedResourceName: a domain-prefixed name outside kubernetes.io that still qualifies under `requests.`. */
function isExtendedResourceName(name: string): boolean {
  if (isNativeResource(name) || name.startsWith("requests.")) return false;
  return isQualifiedName(`requests.${name}`).length === 0;
}

/** IsOvercommitAllowed: requests may be below limits (native resources but hugepages). */
function isOvercommitAllowed(name: string): boolean {
  return isNativeResource(name) && !isHugePageResourceName(name);
}

function isIntegerResourceName(name: string): boolean {
  return INTEGER_RESOURCES.has(name) || isExtendedResourceName(name);
}

/** validateResourceName: a qualified name, and unprefixed only when standard. */
function validateResourceName(name: string, path: FieldPath): FieldError[] {
  const errs = isQualifiedName(name).map((msg) => invalid(path, name, msg));
  if (errs.length > 0) return errs;
  const standard =
    STANDARD_RESOURCES.has(name) || name.startsWith(HUGEPAGES_PREFIX) || name.startsWith(QUOTA_HUGEPAGES_PREFIX);
  if (!name.includes("/") && !standard)
    errs.push(invalid(path, name, "must be a standard resource type or fully qualified"));
  return errs;
}

/** validateContainerResourceName: cpu, memory, ephemeral-storage, hugepages-*, or an extended resource. */
export function validateContainerResourceName(name: string, path: FieldPath): FieldError[] {
  const errs = validateResourceName(name, path);
  if (!name.includes("/")) {
    if (!STANDARD_CONTAINER_RESOURCES.has(name) && !isHugePageResourceName(name)) {
      errs.push(invalid(path, name, "must be a standard resource for containers"));
    }
  } else if (!isNativeResource(name) && !isExtendedResourceName(name)) {
    errs.push(invalid(path, name, "doesn't follow extended resource name standard"));
  }
  return errs;
}

/** ValidateNonnegativeQuantity: `must be greater than or equal to 0`, the value as Quantity.String(). */
export function validateNonnegativeQuantity(q: Quantity, path: FieldPath): FieldError[] {
  return q.sign < 0 ? [invalid(path, quantityString(q), "must be greater than or equal to 0")] : [];
}

/** ValidatePositiveQuantityValue: `must be greater than zero`. */
export function validatePositiveQuantity(q: Quantity, path: FieldPath): FieldError[] {
  return q.sign <= 0 ? [invalid(path, quantityString(q), "must be greater than zero")] : [];
}

/** ValidateResourceQuantityValue: non-negative, and whole for counted and extended resources. */
export function validateResourceQuantityValue(resource: string, q: Quantity, path: FieldPath): FieldError[] {
  const errs = validateNonnegativeQuantity(q, path);
  if (isIntegerResourceName(resource) && quantityMilliValue(q) % 1000n !== 0n) {
    // Go passes the Quantity itself, which field errors print with %#v.
    errs.push(invalid(path, withGoSharpV({ quantity: quantityString(q) }, quantityGoSharpV(q)), "must be an integer"));
  }
  return errs;
}

/** IsHugePageResourceValueDivisible: a whole number of pages of the size the name gives. */
function hugePageValueError(name: string, q: Quantity): string | undefined {
  const pageSize = parseQuantity(name.slice(HUGEPAGES_PREFIX.length));
  const divisible =
    pageSize !== undefined &&
    pageSize.sign > 0 &&
    quantityMilliValue(pageSize) % 1000n === 0n &&
    quantityValue(q) % quantityValue(pageSize) === 0n;
  return divisible ? undefined : `${quantityString(q)} is not positive integer multiple of ${name}`;
}

/** How a container's resource list is checked; overhead and pod templates share the rules. */
export interface ResourceOptions {
  /** Allow a hugepages quantity that is not a whole number of pages (the stored pod already had one). */
  allowIndivisibleHugePagesValues?: boolean;
}

/** ValidateContainerResourceRequirements: limits, then requests against them, then the hugepages rule. */
export function validateResourceRequirements(
  requirements: unknown,
  path: FieldPath,
  options: ResourceOptions = {},
): FieldError[] {
  const errs: FieldError[] = [];
  const reqs = objOrEmpty(requirements);
  const limitsPath = path.child("limits");
  const requestsPath = path.child("requests");
  const limits = new Map<string, Quantity>();
  let computeResources = false;
  let hugePages = false;
  const checkHugePages = (name: string, q: Quantity, at: FieldPath) => {
    if (!isHugePageResourceName(name)) return;
    hugePages = true;
    const problem = options.allowIndivisibleHugePagesValues ? undefined : hugePageValueError(name, q);
    if (problem !== undefined) errs.push(invalid(at, quantityString(q), problem));
  };
  for (const [name, value] of entries(reqs["limits"])) {
    const at = limitsPath.key(name);
    errs.push(...validateContainerResourceName(name, at));
    const q = parseQuantity(value);
    if (q === undefined) continue;
    limits.set(name, q);
    errs.push(...validateResourceQuantityValue(name, q, at));
    checkHugePages(name, q, at);
    if (QOS_COMPUTE_RESOURCES.has(name)) computeResources = true;
  }
  for (const [name, value] of entries(reqs["requests"])) {
    const at = requestsPath.key(name);
    errs.push(...validateContainerResourceName(name, at));
    const q = parseQuantity(value);
    if (q === undefined) continue;
    errs.push(...validateResourceQuantityValue(name, q, at));
    const limit = limits.get(name);
    if (limit !== undefined) {
      const cmp = compareQuantities(q, limit);
      if (cmp !== 0 && !isOvercommitAllowed(name)) {
        errs.push(
          invalid(requestsPath, quantityString(q), `must be equal to ${name} limit of ${quantityString(limit)}`),
        );
      } else if (cmp > 0) {
        errs.push(
          invalid(
            requestsPath,
            quantityString(q),
            `must be less than or equal to ${name} limit of ${quantityString(limit)}`,
          ),
        );
      }
    } else if (!isOvercommitAllowed(name)) {
      errs.push(required(limitsPath, "Limit must be set for non overcommitable resources"));
    }
    checkHugePages(name, q, at);
    if (QOS_COMPUTE_RESOURCES.has(name)) computeResources = true;
  }
  if (!computeResources && hugePages) errs.push(forbidden(path, "HugePages require cpu or memory"));
  return errs;
}

/** Whether a pod spec's resource lists hold a hugepages quantity that is not a whole number of pages. */
export function usesIndivisibleHugePages(requirementsList: readonly unknown[]): boolean {
  for (const requirements of requirementsList) {
    const reqs = objOrEmpty(requirements);
    for (const list of [reqs["limits"], reqs["requests"]]) {
      for (const [name, value] of entries(list)) {
        const q = parseQuantity(value);
        if (q !== undefined && isHugePageResourceName(name) && hugePageValueError(name, q) !== undefined) return true;
      }
    }
  }
  return false;
}
