/**
 * rbac.authorization.k8s.io validation (kube-apiserver `pkg/apis/rbac/validation/validation.go`,
 * Kubernetes 1.32) with its strategies' choices (`pkg/registry/rbac/<kind>/strategy.go`):
 *
 * - Names (of the objects and of a binding's roleRef) only need to be URL path segments
 *   (ValidateRBACName): `system:aggregate-to-view` is a valid name.
 * - A Role's or ClusterRole's rules: verbs always; a rule is about either resources (apiGroups and
 *   resources required) or non-resource URLs (ClusterRoles only, and alone).
 * - A ClusterRole's aggregationRule: at least one selector, each a valid label selector.
 * - A binding: roleRef in RBAC's group, of a kind it may refer to, named; its subjects named, of a
 *   known kind, in the API group that kind requires; a ClusterRoleBinding's ServiceAccount subjects
 *   with a namespace. roleRef never changes (`cannot change roleRef`).
 *
 * Every strategy's ValidateUpdate runs the create validation twice (once itself, once inside
 * Validate<Kind>Update), so an invalid update lists each spec error twice in `details.causes` (the
 * message, an aggregate, drops the duplicates): kept here, as kube-apiserver answers it.
 *
 * The escalation check (auth/escalation.ts) throws its 403 from the store's validators while these
 * only return errors, so it wins over a 422 as in kube-apiserver, whose policy-based storage checks
 * escalation before the strategy validates (`pkg/registry/rbac/<kind>/policybased/storage.go`).
 */
import { type FieldError, type FieldPath, fieldPath, invalid, notSupported, required } from "../field-errors.ts";
import { goQuote, withGoSharpV } from "../go-format.ts";
import { isDNS1123Subdomain, isPathSegmentName, nameIsPathSegment } from "../names.ts";
import { type GroupValidation, type Json, type KindValidation, record } from "./kind-validation.ts";
import { type LabelSelectorOptions, validateLabelSelector } from "./label-selector.ts";

const RBAC_GROUP = "rbac.authorization.k8s.io";

function str(value: unknown): string {
  return typeof value === "string" ? value : "";
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.map(str) : [];
}

function items(value: unknown): Json[] {
  return Array.isArray(value) ? value.map((v) => record(v) ?? {}) : [];
}

/** A []string as Go's `%#v` prints it: `[]string{"/a", "/b"}`. */
function goStringSlice(values: string[]): string[] {
  return withGoSharpV([...values], `[]string{${values.map(goQuote).join(", ")}}`);
}

// --- roles -------------------------------------------------------------------------------------

/** ValidatePolicyRule. */
function validatePolicyRule(rule: Json, namespaced: boolean, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (strings(rule["verbs"]).length === 0)
    errs.push(required(path.child("verbs"), "verbs must contain at least one value"));
  const urls = strings(rule["nonResourceURLs"]);
  const apiGroups = strings(rule["apiGroups"]);
  const resources = strings(rule["resources"]);
  if (urls.length > 0) {
    if (namespaced)
      errs.push(
        invalid(
          path.child("nonResourceURLs"),
          goStringSlice(urls),
          "namespaced rules cannot apply to non-resource URLs",
        ),
      );
    if (apiGroups.length > 0 || resources.length > 0 || strings(rule["resourceNames"]).length > 0)
      errs.push(
        invalid(
          path.child("nonResourceURLs"),
          goStringSlice(urls),
          "rules cannot apply to both regular resources and non-resource URLs",
        ),
      );
    return errs;
  }
  if (apiGroups.length === 0)
    errs.push(required(path.child("apiGroups"), "resource rules must supply at least one api group"));
  if (resources.length === 0)
    errs.push(required(path.child("resources"), "resource rules must supply at least one resource"));
  return errs;
}

function validateRules(obj: Json, namespaced: boolean): FieldError[] {
  return items(obj["rules"]).flatMap((rule, i) => validatePolicyRule(rule, namespaced, fieldPath("rules").index(i)));
}

/** ValidateClusterRole's aggregationRule: selectors required when the rule is set, each a valid selector. */
function validateAggregationRule(obj: Json, options: LabelSelectorOptions): FieldError[] {
  const rule = record(obj["aggregationRule"]);
  if (rule === undefined) return [];
  const errs: FieldError[] = [];
  const path = fieldPath("aggregationRule", "clusterRoleSelectors");
  const selectors = Array.isArray(rule["clusterRoleSelectors"]) ? rule["clusterRoleSelectors"] : [];
  if (selectors.length === 0)
    errs.push(required(path, "at least one clusterRoleSelector required if aggregationRule is non-nil"));
  selectors.forEach((selector, i) => {
    errs.push(...validateLabelSelector(selector ?? {}, path.index(i), options));
    // LabelSelectorAsSelector refuses what the full validation refuses (values included, whatever
    // the options); its nil selector is the bad value, which Go prints as "null".
    if (validateLabelSelector(selector ?? {}, path.index(i)).length > 0)
      errs.push(invalid(path.index(i), "null", "invalid label selector."));
  });
  return errs;
}

/** hasInvalidLabelValueInLabelSelector: a stored ClusterRole whose selectors would now be refused. */
function hasInvalidSelector(old: Json): boolean {
  const rule = record(old["aggregationRule"]);
  if (rule === undefined || !Array.isArray(rule["clusterRoleSelectors"])) return false;
  const path = fieldPath("aggregationRule", "clusterRoleSelectors");
  return rule["clusterRoleSelectors"].some((s, i) => validateLabelSelector(s ?? {}, path.index(i)).length > 0);
}

function validateClusterRole(obj: Json, options: LabelSelectorOptions): FieldError[] {
  return [...validateRules(obj, false), ...validateAggregationRule(obj, options)];
}

const roles: KindValidation = {
  name: nameIsPathSegment,
  create: (obj) => validateRules(obj, true),
  update: (next) => [...validateRules(next, true), ...validateRules(next, true)],
};

const clusterRoles: KindValidation = {
  name: nameIsPathSegment,
  create: (obj) => validateClusterRole(obj, {}),
  update: (next, old) => {
    const options = { allowInvalidLabelValueInSelector: hasInvalidSelector(old) };
    return [...validateClusterRole(next, options), ...validateClusterRole(next, options)];
  },
};

// --- bindings ----------------------------------------------------------------------------------

/** ValidateRoleBindingSubject. */
function validateSubject(subject: Json, namespaced: boolean, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const name = str(subject["name"]);
  const apiGroup = str(subject["apiGroup"]);
  if (name === "") errs.push(required(path.child("name")));
  switch (subject["kind"]) {
    case "ServiceAccount":
      // ValidateServiceAccountName is NameIsDNSSubdomain.
      if (name !== "") for (const msg of isDNS1123Subdomain(name)) errs.push(invalid(path.child("name"), name, msg));
      if (apiGroup !== "") errs.push(notSupported(path.child("apiGroup"), apiGroup, [""]));
      if (!namespaced && str(subject["namespace"]) === "") errs.push(required(path.child("namespace")));
      break;
    case "User":
    case "Group":
      if (apiGroup !== RBAC_GROUP) errs.push(notSupported(path.child("apiGroup"), apiGroup, [RBAC_GROUP]));
      break;
    default:
      errs.push(notSupported(path.child("kind"), str(subject["kind"]), ["ServiceAccount", "User", "Group"]));
  }
  return errs;
}

/** ValidateRoleBinding / ValidateClusterRoleBinding. */
function validateBinding(obj: Json, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const ref = record(obj["roleRef"]) ?? {};
  const apiGroup = str(ref["apiGroup"]);
  if (apiGroup !== RBAC_GROUP) errs.push(notSupported(fieldPath("roleRef", "apiGroup"), apiGroup, [RBAC_GROUP]));
  const kinds = namespaced ? ["Role", "ClusterRole"] : ["ClusterRole"];
  const kind = str(ref["kind"]);
  if (!kinds.includes(kind)) errs.push(notSupported(fieldPath("roleRef", "kind"), kind, kinds));
  const name = str(ref["name"]);
  if (name === "") errs.push(required(fieldPath("roleRef", "name")));
  else for (const msg of isPathSegmentName(name)) errs.push(invalid(fieldPath("roleRef", "name"), name, msg));
  items(obj["subjects"]).forEach((subject, i) => {
    errs.push(...validateSubject(subject, namespaced, fieldPath("subjects").index(i)));
  });
  return errs;
}

/** The roleRef as Go's `%#v` prints the internal rbac.RoleRef. */
function goRoleRef(ref: Json): Json {
  const text = `rbac.RoleRef{APIGroup:${goQuote(str(ref["apiGroup"]))}, Kind:${goQuote(str(ref["kind"]))}, Name:${goQuote(str(ref["name"]))}}`;
  return withGoSharpV({ ...ref }, text);
}

/** Validate<Kind>BindingUpdate's own rule: the roleRef is immutable. */
function roleRefChange(next: Json, old: Json): FieldError[] {
  const a = record(next["roleRef"]) ?? {};
  const b = record(old["roleRef"]) ?? {};
  const same = ["apiGroup", "kind", "name"].every((k) => str(a[k]) === str(b[k]));
  return same ? [] : [invalid(fieldPath("roleRef"), goRoleRef(a), "cannot change roleRef")];
}

function bindingValidation(namespaced: boolean): KindValidation {
  return {
    name: nameIsPathSegment,
    create: (obj) => validateBinding(obj, namespaced),
    update: (next, old) => [
      ...validateBinding(next, namespaced),
      ...validateBinding(next, namespaced),
      ...roleRefChange(next, old),
    ],
  };
}

export const rbacValidation: GroupValidation = {
  roles,
  clusterroles: clusterRoles,
  rolebindings: bindingValidation(true),
  clusterrolebindings: bindingValidation(false),
};
