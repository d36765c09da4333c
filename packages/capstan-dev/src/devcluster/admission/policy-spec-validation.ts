/**
 * The cheap part of kube-apiserver's validation of ValidatingAdmissionPolicies and their bindings
 * (pkg/apis/admissionregistration/validation): a policy whose expressions do not compile, or that
 * lacks what evaluation needs, is refused with a 422 naming the field, as on a real cluster, instead
 * of being stored and failing every matching write.
 *
 * Checked: failurePolicy; paramKind's apiVersion and kind; matchConstraints and its resourceRules and
 * matchPolicy; validations or auditAnnotations present; each validation's expression (required,
 * compiles to a bool), messageExpression (compiles to a string), message (one line) and reason;
 * matchConditions (names unique, expressions compile); variables (names are CEL identifiers,
 * expressions compile). Bindings: policyName, paramRef (name or selector, not both;
 * parameterNotFoundAction), validationActions (known, no duplicates, not both Deny and Warn, one at
 * least).
 * Not checked: name formats, label selector syntax, rule contents, audit annotation keys, cost limits.
 */
import type { ServedResource } from "../registry/served-resource.ts";
import {
  duplicate,
  type FieldError,
  type FieldPath,
  fieldPath,
  forbidden,
  invalid,
  notSupported,
  required,
} from "../validation/field-errors.ts";
import { goPrinted, goSharpStrings } from "../validation/go-sharp-v.ts";
import { compileAdmissionExpression } from "./admission-cel.ts";
import type { PolicySpec } from "./policy-validator.ts";

const GROUP = "admissionregistration.k8s.io";
const REASONS = ["Forbidden", "Invalid", "RequestEntityTooLarge", "Unauthorized"];
const ACTIONS = ["Audit", "Deny", "Warn"];
const CEL_RESERVED = new Set(
  "true false null in as break const continue else for function if import let loop package namespace return var void while".split(
    " ",
  ),
);

/** An ObjectValidator for the store: the errors of a policy or binding, none for other kinds. */
export function admissionPolicyErrors(served: ServedResource, obj: Record<string, unknown>): FieldError[] {
  if (served.group !== GROUP) return [];
  const spec = (obj["spec"] ?? {}) as Record<string, unknown>;
  if (served.plural === "validatingadmissionpolicies") return policyErrors(spec as PolicySpec, fieldPath("spec"));
  if (served.plural === "validatingadmissionpolicybindings") return bindingErrors(spec, fieldPath("spec"));
  return [];
}

/** The compile error of one expression as validateCELCondition reports it. */
function expressionErrors(
  path: FieldPath,
  source: string,
  returns: "bool" | "string" | "any",
  scope: Parameters<typeof compileAdmissionExpression>[1],
): FieldError[] {
  const compiled = compileAdmissionExpression(source, scope, returns);
  return compiled.error === undefined ? [] : [invalid(path, source, compiled.error)];
}

function policyErrors(spec: PolicySpec, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (spec.failurePolicy === undefined) errs.push(required(path.child("failurePolicy")));
  else if (spec.failurePolicy !== "Fail" && spec.failurePolicy !== "Ignore") {
    errs.push(notSupported(path.child("failurePolicy"), spec.failurePolicy, ["Fail", "Ignore"]));
  }
  const params = spec.paramKind !== undefined && spec.paramKind !== null;
  if (params) {
    if (!spec.paramKind?.apiVersion) errs.push(required(path.child("paramKind", "apiVersion")));
    if (!spec.paramKind?.kind) errs.push(required(path.child("paramKind", "kind")));
  }
  const match = spec.matchConstraints;
  if (match === undefined || match === null) errs.push(required(path.child("matchConstraints")));
  else {
    if (match.matchPolicy !== undefined && match.matchPolicy !== "Exact" && match.matchPolicy !== "Equivalent") {
      errs.push(
        notSupported(path.child("matchConstraints", "matchPolicy"), match.matchPolicy, ["Equivalent", "Exact"]),
      );
    }
    // At least one resource rule, which gives the expressions their types on a real server.
    if ((match.resourceRules ?? []).length === 0) errs.push(required(path.child("matchConstraints", "resourceRules")));
  }
  const conditionNames = new Set<string>();
  (spec.matchConditions ?? []).forEach((c, i) => {
    const at = path.child("matchConditions").index(i);
    const expression = String(c.expression ?? "");
    if (expression.trim() === "") errs.push(required(at.child("expression")));
    else
      errs.push(
        ...expressionErrors(at.child("expression"), expression.trim(), "bool", { params, namespaceObject: true }),
      );
    if (!c.name) errs.push(required(at.child("name")));
    else if (conditionNames.has(c.name)) errs.push(duplicate(at.child("name"), c.name));
    conditionNames.add(c.name ?? "");
  });
  const variables: string[] = [];
  (spec.variables ?? []).forEach((v, i) => {
    const at = path.child("variables").index(i);
    const name = String(v.name ?? "");
    if (name.trim() === "") errs.push(required(at.child("name"), "name is not specified"));
    else if (!/^[_a-zA-Z][_a-zA-Z0-9]*$/.test(name) || CEL_RESERVED.has(name)) {
      errs.push(invalid(at.child("name"), name, "name is not a valid CEL identifier"));
    }
    const expression = String(v.expression ?? "");
    if (expression.trim() === "") errs.push(required(at.child("expression"), "expression is not specified"));
    else errs.push(...expressionErrors(at.child("expression"), expression, "any", scopeOf(params, variables)));
    variables.push(name);
  });
  const validations = spec.validations ?? [];
  const audits = (spec as { auditAnnotations?: unknown[] }).auditAnnotations ?? [];
  if (validations.length === 0 && audits.length === 0) {
    const why = "validations or auditAnnotations must contain at least one item";
    errs.push(required(path.child("validations"), why), required(path.child("auditAnnotations"), why));
  }
  validations.forEach((v, i) => {
    const at = path.child("validations").index(i);
    const expression = String(v.expression ?? "");
    if (expression.trim() === "") errs.push(required(at.child("expression"), "expression is not specified"));
    else errs.push(...expressionErrors(at.child("expression"), expression, "bool", scopeOf(params, variables)));
    const messageExpression = String(v.messageExpression ?? "");
    if (messageExpression !== "" && messageExpression.trim() === "") {
      errs.push(invalid(at.child("messageExpression"), messageExpression, "must be non-empty if specified"));
    } else if (messageExpression !== "") {
      const scope = { ...scopeOf(params, variables), authorizer: false };
      errs.push(...expressionErrors(at.child("messageExpression"), messageExpression, "string", scope));
    }
    const message = String(v.message ?? "");
    if (message !== "" && message.trim() === "") {
      errs.push(invalid(at.child("message"), message, "message must be non-empty if specified"));
    } else if (/[\n\r]/.test(message.trim())) {
      errs.push(invalid(at.child("message"), message, "message must not contain line breaks"));
    }
    if (v.reason !== undefined && v.reason !== null && !REASONS.includes(v.reason)) {
      errs.push(notSupported(at.child("reason"), v.reason, REASONS));
    }
  });
  return errs;
}

function scopeOf(params: boolean, variables: readonly string[]) {
  return { params, namespaceObject: true, variables: [...variables] };
}

function bindingErrors(spec: Record<string, unknown>, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (!spec["policyName"]) errs.push(required(path.child("policyName")));
  const paramRef = spec["paramRef"] as
    | { name?: string; selector?: unknown; parameterNotFoundAction?: string }
    | null
    | undefined;
  if (paramRef !== undefined && paramRef !== null) {
    const at = path.child("paramRef");
    const hasSelector = paramRef.selector !== undefined && paramRef.selector !== null;
    if (paramRef.name && hasSelector) {
      errs.push(forbidden(at.child("name"), "name and selector are mutually exclusive"));
      errs.push(forbidden(at.child("selector"), "name and selector are mutually exclusive"));
    }
    if (!paramRef.name && !hasSelector) errs.push(required(at, "one of name or selector must be specified"));
    const action = paramRef.parameterNotFoundAction;
    if (!action) errs.push(required(at.child("parameterNotFoundAction")));
    else if (action !== "Deny" && action !== "Allow") {
      errs.push(notSupported(at.child("parameterNotFoundAction"), action, ["Deny", "Allow"]));
    }
  }
  const actions = Array.isArray(spec["validationActions"]) ? (spec["validationActions"] as string[]) : [];
  const at = path.child("validationActions");
  const seen = new Set<string>();
  actions.forEach((action, i) => {
    if (!ACTIONS.includes(action)) errs.push(notSupported(at.index(i), action, ACTIONS));
    if (seen.has(action)) errs.push(duplicate(at.index(i), action));
    seen.add(action);
  });
  if (seen.has("Deny") && seen.has("Warn")) {
    errs.push(
      invalid(
        at,
        // A []admissionregistration.ValidationAction, printed with %#v by 1.32.
        goPrinted(goSharpStrings(actions, "[]admissionregistration.ValidationAction")),
        "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)",
      ),
    );
  }
  if (seen.size === 0) errs.push(required(at, "at least one validation action is required"));
  return errs;
}
