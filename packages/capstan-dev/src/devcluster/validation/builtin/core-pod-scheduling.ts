/**
 * Where and how a pod runs, as kube-apiserver 1.32 validates it (core `ValidateTolerations`,
 * `validateAffinity`, `validateTopologySpreadConstraints`, `validatePodDNSConfig`,
 * `ValidateHostAliases`, `validateReadinessGates`, `validateSchedulingGates`).
 *
 * Caveats: pod (anti-)affinity terms' matchLabelKeys and mismatchLabelKeys are not checked (kube
 * merges them into the term's selector at create), nor is the tolerations annotation.
 */
import {
  duplicate,
  type FieldError,
  type FieldPath,
  fieldPath,
  forbidden,
  invalid,
  notSupported,
  required,
} from "../field-errors.ts";
import { goQuote, withGoSharpV } from "../go-format.ts";
import { byteLength, isDNS1123Subdomain, isQualifiedName, isValidLabelValue, nameIsDNSLabel } from "../names.ts";
import type { PodValidationOptions } from "./core-pod-options.ts";
import type { Json } from "./kind-validation.ts";
import { validateLabelSelector } from "./label-selector.ts";
import { isValidIP } from "./value-formats.ts";
import { list, num, obj, objects, present, str, strings } from "./zero-values.ts";

/** ValidateLabelName: a qualified name, each problem reported with the name as bad value. */
function validateLabelName(name: string, path: FieldPath): FieldError[] {
  return isQualifiedName(name).map((msg) => invalid(path, name, msg));
}

const TAINT_EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"];
const TOLERATION_OPERATORS = ["Equal", "Exists"];

/** ValidateTolerations. */
export function validateTolerations(tolerations: unknown, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  objects(tolerations).forEach((toleration, i) => {
    const at = path.index(i);
    const key = str(toleration["key"]);
    const operator = str(toleration["operator"]);
    const value = str(toleration["value"]);
    const effect = str(toleration["effect"]);
    if (key !== "") errs.push(...validateLabelName(key, at.child("key")));
    if (key === "" && operator !== "Exists") {
      errs.push(
        invalid(
          at.child("operator"),
          operator,
          'operator must be Exists when `key` is empty, which means "match all values and all keys"',
        ),
      );
    }
    if (present(toleration["tolerationSeconds"]) && effect !== "NoExecute") {
      errs.push(invalid(at.child("effect"), effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    }
    switch (operator) {
      case "Equal":
      case "": {
        const problems = isValidLabelValue(value);
        if (problems.length > 0) errs.push(invalid(at.child("operator"), value, problems.join(";")));
        break;
      }
      case "Exists":
        if (value !== "")
          errs.push(invalid(at.child("operator"), value, "value must be empty when `operator` is 'Exists'"));
        break;
      default:
        errs.push(notSupported(at.child("operator"), operator, TOLERATION_OPERATORS));
    }
    if (effect !== "" && !TAINT_EFFECTS.includes(effect))
      errs.push(notSupported(at.child("effect"), effect, TAINT_EFFECTS));
  });
  return errs;
}

/** ValidateNodeSelectorRequirement: an operator, the values it needs, a label key. */
function validateNodeSelectorRequirement(requirement: Json, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const values = list(requirement["values"]);
  const operator = str(requirement["operator"]);
  switch (operator) {
    case "In":
    case "NotIn":
      if (values.length === 0)
        errs.push(required(path.child("values"), "must be specified when `operator` is 'In' or 'NotIn'"));
      break;
    case "Exists":
    case "DoesNotExist":
      if (values.length > 0) {
        errs.push(
          forbidden(path.child("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"),
        );
      }
      break;
    case "Gt":
    case "Lt":
      if (values.length !== 1) {
        errs.push(required(path.child("values"), "must be specified single value when `operator` is 'Lt' or 'Gt'"));
      }
      break;
    default:
      errs.push(invalid(path.child("operator"), operator, "not a valid selector operator"));
  }
  errs.push(...validateLabelName(str(requirement["key"]), path.child("key")));
  return errs;
}

/** ValidateNodeFieldSelectorRequirement: only metadata.name, with one value, In or NotIn. */
function validateNodeFieldRequirement(requirement: Json, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const operator = str(requirement["operator"]);
  const values = strings(requirement["values"]);
  if (operator === "In" || operator === "NotIn") {
    if (values.length !== 1) {
      errs.push(
        required(
          path.child("values"),
          "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
        ),
      );
    }
  } else {
    errs.push(invalid(path.child("operator"), operator, "not a valid selector operator"));
  }
  const key = str(requirement["key"]);
  if (key !== "metadata.name") errs.push(invalid(path.child("key"), key, "not a valid field selector key"));
  else {
    values.forEach((v, i) => {
      for (const msg of isDNS1123Subdomain(v)) errs.push(invalid(path.child("values").index(i), v, msg));
    });
  }
  return errs;
}

function validateNodeSelectorTerm(term: Json, path: FieldPath): FieldError[] {
  return [
    ...objects(term["matchExpressions"]).flatMap((r, j) =>
      validateNodeSelectorRequirement(r, path.child("matchExpressions").index(j)),
    ),
    ...objects(term["matchFields"]).flatMap((r, j) =>
      validateNodeFieldRequirement(r, path.child("matchFields").index(j)),
    ),
  ];
}

function validateWeight(weight: unknown, path: FieldPath): FieldError[] {
  const w = num(weight);
  return w <= 0 || w > 100 ? [invalid(path, w, "must be in the range 1-100")] : [];
}

function validateNodeAffinity(affinity: Json, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const requiredTerms = obj(affinity["requiredDuringSchedulingIgnoredDuringExecution"]);
  if (requiredTerms !== undefined) {
    const termsPath = path.child("requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms");
    const terms = objects(requiredTerms["nodeSelectorTerms"]);
    if (terms.length === 0) errs.push(required(termsPath, "must have at least one node selector term"));
    else {
      terms.forEach((term, i) => {
        errs.push(...validateNodeSelectorTerm(term, termsPath.index(i)));
      });
    }
  }
  objects(affinity["preferredDuringSchedulingIgnoredDuringExecution"]).forEach((term, i) => {
    const at = path.child("preferredDuringSchedulingIgnoredDuringExecution").index(i);
    errs.push(...validateWeight(term["weight"], at.child("weight")));
    errs.push(...validateNodeSelectorTerm(obj(term["preference"]) ?? {}, at.child("preference")));
  });
  return errs;
}

/** validatePodAffinityTerm: selectors, namespaces, a topology key. */
function validatePodAffinityTerm(term: Json, path: FieldPath, options: PodValidationOptions): FieldError[] {
  const selectorOptions = { allowInvalidLabelValueInSelector: options.allowInvalidLabelValueInSelector };
  const errs = [
    ...validateLabelSelector(term["labelSelector"], path.child("labelSelector"), selectorOptions),
    ...validateLabelSelector(term["namespaceSelector"], path.child("namespaceSelector"), selectorOptions),
  ];
  for (const namespace of strings(term["namespaces"])) {
    for (const msg of nameIsDNSLabel(namespace, false)) errs.push(invalid(path.child("namespace"), namespace, msg));
  }
  const topologyKey = str(term["topologyKey"]);
  if (topologyKey === "") errs.push(required(path.child("topologyKey"), "can not be empty"));
  errs.push(...validateLabelName(topologyKey, path.child("topologyKey")));
  return errs;
}

function validatePodAffinity(affinity: Json, path: FieldPath, options: PodValidationOptions): FieldError[] {
  const errs: FieldError[] = [];
  objects(affinity["requiredDuringSchedulingIgnoredDuringExecution"]).forEach((term, i) => {
    errs.push(
      ...validatePodAffinityTerm(term, path.child("requiredDuringSchedulingIgnoredDuringExecution").index(i), options),
    );
  });
  objects(affinity["preferredDuringSchedulingIgnoredDuringExecution"]).forEach((weighted, i) => {
    const at = path.child("preferredDuringSchedulingIgnoredDuringExecution").index(i);
    errs.push(...validateWeight(weighted["weight"], at.child("weight")));
    errs.push(...validatePodAffinityTerm(obj(weighted["podAffinityTerm"]) ?? {}, at.child("podAffinityTerm"), options));
  });
  return errs;
}

/** validateAffinity. */
export function validateAffinity(affinity: unknown, path: FieldPath, options: PodValidationOptions): FieldError[] {
  const a = obj(affinity);
  if (a === undefined) return [];
  const errs: FieldError[] = [];
  const node = obj(a["nodeAffinity"]);
  if (node !== undefined) errs.push(...validateNodeAffinity(node, path.child("nodeAffinity")));
  for (const key of ["podAffinity", "podAntiAffinity"]) {
    const pod = obj(a[key]);
    if (pod !== undefined) errs.push(...validatePodAffinity(pod, path.child(key), options));
  }
  return errs;
}

/** Whether an affinity's term selectors hold an invalid label value (a stored pod may keep them). */
export function hasInvalidLabelValueInAffinity(affinity: unknown): boolean {
  const strict = validateAffinity(affinity, ROOT, {});
  const lenient = validateAffinity(affinity, ROOT, { allowInvalidLabelValueInSelector: true });
  return strict.length !== lenient.length;
}

/** The path the ratchet checks validate under (their errors are only counted). */
const ROOT = fieldPath("spec");

const SCHEDULE_ACTIONS = ["DoNotSchedule", "ScheduleAnyway"];
const NODE_INCLUSION_POLICIES = ["Honor", "Ignore"];

/** validateTopologySpreadConstraints. */
export function validateTopologySpreadConstraints(
  constraints: unknown,
  path: FieldPath,
  options: PodValidationOptions,
): FieldError[] {
  const errs: FieldError[] = [];
  const items = objects(constraints);
  items.forEach((constraint, i) => {
    const at = path.index(i);
    const maxSkew = num(constraint["maxSkew"]);
    if (maxSkew <= 0) errs.push(invalid(at.child("maxSkew"), maxSkew, "must be greater than zero"));
    const topologyKey = str(constraint["topologyKey"]);
    if (topologyKey === "") errs.push(required(at.child("topologyKey"), "can not be empty"));
    const action = str(constraint["whenUnsatisfiable"]);
    if (!SCHEDULE_ACTIONS.includes(action))
      errs.push(notSupported(at.child("whenUnsatisfiable"), action, SCHEDULE_ACTIONS));
    const repeated = items
      .slice(i + 1)
      .some((other) => str(other["topologyKey"]) === topologyKey && str(other["whenUnsatisfiable"]) === action);
    if (repeated) errs.push(duplicate(at.child("{topologyKey, whenUnsatisfiable}"), `{${topologyKey}, ${action}}`));
    if (present(constraint["minDomains"])) {
      const minDomains = num(constraint["minDomains"]);
      if (minDomains <= 0) errs.push(invalid(at.child("minDomains"), minDomains, "must be greater than zero"));
      if (action !== "DoNotSchedule") {
        errs.push(
          invalid(
            at.child("minDomains"),
            minDomains,
            `can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ${action}`,
          ),
        );
      }
    }
    for (const key of ["nodeAffinityPolicy", "nodeTaintsPolicy"]) {
      if (present(constraint[key]) && !NODE_INCLUSION_POLICIES.includes(str(constraint[key]))) {
        errs.push(notSupported(at.child(key), str(constraint[key]), NODE_INCLUSION_POLICIES));
      }
    }
    const matchLabelKeys = strings(constraint["matchLabelKeys"]);
    if (matchLabelKeys.length > 0) {
      const selector = obj(constraint["labelSelector"]);
      const selectorKeys = new Set<string>();
      if (selector !== undefined) {
        for (const k of Object.keys(obj(selector["matchLabels"]) ?? {})) selectorKeys.add(k);
        for (const e of objects(selector["matchExpressions"])) selectorKeys.add(str(e["key"]));
      } else {
        errs.push(forbidden(at.child("matchLabelKeys"), "must not be specified when labelSelector is not set"));
      }
      matchLabelKeys.forEach((k, j) => {
        errs.push(...validateLabelName(k, at.child("matchLabelKeys").index(j)));
        if (selectorKeys.has(k))
          errs.push(invalid(at.child("matchLabelKeys").index(j), k, "exists in both matchLabelKeys and labelSelector"));
      });
    }
    if (!options.allowInvalidTopologySpreadConstraintLabelSelector) {
      errs.push(...validateLabelSelector(constraint["labelSelector"], at.child("labelSelector")));
    }
  });
  return errs;
}

/** Whether topology spread constraints hold an invalid label selector (a stored pod may keep them). */
export function hasInvalidTopologySpreadSelector(constraints: unknown): boolean {
  return objects(constraints).some((c) => validateLabelSelector(c["labelSelector"], ROOT).length > 0);
}

/** Limits of the resolver (libc): nameservers, search domains and the search list's length. */
const MAX_DNS_NAMESERVERS = 3;
const MAX_DNS_SEARCH_PATHS = 32;
const MAX_DNS_SEARCH_LIST_CHARS = 2048;

function goStringSlice(values: string[]): object {
  return withGoSharpV([...values], `[]string{${values.map(goQuote).join(", ")}}`);
}

/** validatePodDNSConfig. */
export function validateDNSConfig(dnsConfig: unknown, dnsPolicy: string, path: FieldPath): FieldError[] {
  const config = obj(dnsConfig);
  if (dnsPolicy === "None") {
    if (config === undefined) return [required(path, "must provide `dnsConfig` when `dnsPolicy` is None")];
    if (list(config["nameservers"]).length === 0) {
      return [required(path.child("nameservers"), "must provide at least one DNS nameserver when `dnsPolicy` is None")];
    }
  }
  if (config === undefined) return [];
  const errs: FieldError[] = [];
  const nameservers = strings(config["nameservers"]);
  if (nameservers.length > MAX_DNS_NAMESERVERS) {
    errs.push(
      invalid(
        path.child("nameservers"),
        goStringSlice(nameservers),
        `must not have more than ${MAX_DNS_NAMESERVERS} nameservers`,
      ),
    );
  }
  nameservers.forEach((ns, i) => {
    for (const msg of isValidIP(ns)) errs.push(invalid(path.child("nameservers").index(i), ns, msg));
  });
  const searches = strings(config["searches"]);
  if (searches.length > MAX_DNS_SEARCH_PATHS) {
    errs.push(
      invalid(
        path.child("searches"),
        goStringSlice(searches),
        `must not have more than ${MAX_DNS_SEARCH_PATHS} search paths`,
      ),
    );
  }
  if (byteLength(searches.join(" ")) > MAX_DNS_SEARCH_LIST_CHARS) {
    errs.push(
      invalid(
        path.child("searches"),
        goStringSlice(searches),
        `must not have more than ${MAX_DNS_SEARCH_LIST_CHARS} characters (including spaces) in the search list`,
      ),
    );
  }
  searches.forEach((search, i) => {
    const domain = search.endsWith(".") ? search.slice(0, -1) : search;
    for (const msg of isDNS1123Subdomain(domain)) errs.push(invalid(path.child("searches").index(i), domain, msg));
  });
  objects(config["options"]).forEach((option, i) => {
    if (str(option["name"]) === "") errs.push(required(path.child("options").index(i), "must not be empty"));
  });
  return errs;
}

/** ValidateHostAliases. */
export function validateHostAliases(aliases: unknown, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  objects(aliases).forEach((alias, i) => {
    const ip = str(alias["ip"]);
    for (const msg of isValidIP(ip)) errs.push(invalid(path.index(i).child("ip"), ip, msg));
    strings(alias["hostnames"]).forEach((hostname, j) => {
      for (const msg of isDNS1123Subdomain(hostname))
        errs.push(invalid(path.index(i).child("hostnames").index(j), hostname, msg));
    });
  });
  return errs;
}

/** validateReadinessGates: condition types are qualified names. */
export function validateReadinessGates(gates: unknown, path: FieldPath): FieldError[] {
  return objects(gates).flatMap((gate, i) =>
    isQualifiedName(str(gate["conditionType"])).map((msg) =>
      invalid(path.index(i).child("conditionType"), str(gate["conditionType"]), msg),
    ),
  );
}

/** validateSchedulingGates: qualified names, no duplicates. */
export function validateSchedulingGates(gates: unknown, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  objects(gates).forEach((gate, i) => {
    const name = str(gate["name"]);
    for (const msg of isQualifiedName(name)) errs.push(invalid(path.index(i), name, msg));
    if (seen.has(name)) errs.push(duplicate(path.index(i), name));
    seen.add(name);
  });
  return errs;
}
