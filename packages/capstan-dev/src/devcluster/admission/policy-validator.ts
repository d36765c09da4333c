/**
 * One ValidatingAdmissionPolicy, compiled, and its decisions for one request and param
 * (k8s.io/apiserver pkg/admission/plugin/policy/validating: plugin.go's compilePolicy, validator.go).
 *
 * Expected flow: {@link compilePolicy} once per policy resourceVersion; {@link policyDecisions} once
 * per (binding, param) of a request, on an activation holding object, oldObject, request, params and
 * namespaceObject.
 *
 * Guarantees (validator.go's rules):
 * - matchConditions first: a false one gives no decision; an error gives one failure decision
 *   (deny under failurePolicy Fail; none under Ignore);
 * - then one decision per validation: an evaluation error (compile errors included) denies under
 *   Fail and admits under Ignore, with the error as its message; a result other than `true` denies
 *   with the validation's `reason` (Invalid when unset) and the first usable message of: the
 *   messageExpression's result (a string, trimmed, non-empty, one line, at most 5 KiB), `message`
 *   (trimmed), `failed expression: <expression>`.
 * Caveats: `auditAnnotations` are not evaluated (no audit log); no CEL cost budget is enforced.
 */
import {
  type AdmissionActivation,
  type AdmissionExpression,
  type CompiledVariable,
  compileAdmissionExpression,
} from "./admission-cel.ts";
import {
  type CompiledMatchCondition,
  compileMatchConditions,
  evaluateMatchConditions,
  type MatchCondition,
} from "./match-conditions.ts";
import type { MatchResources } from "./match-resources.ts";

/** celconfig.MaxEvaluatedMessageExpressionSizeBytes. */
const MAX_MESSAGE_EXPRESSION_BYTES = 5 * 1024;

/** admissionregistration/v1 ValidatingAdmissionPolicySpec, the fields evaluation reads. */
export interface PolicySpec {
  paramKind?: { apiVersion?: string; kind?: string } | null;
  matchConstraints?: MatchResources | null;
  validations?: { expression?: string; message?: string; messageExpression?: string; reason?: string }[];
  failurePolicy?: string;
  matchConditions?: MatchCondition[];
  variables?: { name?: string; expression?: string }[];
}

interface CompiledValidation {
  expression: AdmissionExpression;
  message: string;
  messageExpression: AdmissionExpression | undefined;
  reason: string | undefined;
}

/** A policy ready to evaluate. */
export interface CompiledPolicy {
  spec: PolicySpec;
  variables: CompiledVariable[];
  matchConditions: CompiledMatchCondition[];
  validations: CompiledValidation[];
}

/** One decision (validating.PolicyDecision); `reason` is a Status reason, set on failed validations. */
export interface PolicyDecision {
  action: "admit" | "deny";
  message: string;
  reason?: string;
}

/** Compiles every expression of `spec` (errors are kept and reported when the policy runs). */
export function compilePolicy(spec: PolicySpec): CompiledPolicy {
  const params = spec.paramKind !== undefined && spec.paramKind !== null;
  const names: string[] = [];
  const variables: CompiledVariable[] = [];
  for (const v of spec.variables ?? []) {
    // Each variable sees the ones declared before it (CompileAndStoreVariables, in order).
    const expression = compileAdmissionExpression(String(v.expression ?? ""), scopeOf(params, names), "any");
    const name = String(v.name ?? "");
    variables.push({ name, expression });
    names.push(name);
  }
  const scope = scopeOf(params, names);
  return {
    spec,
    variables,
    matchConditions: compileMatchConditions(spec.matchConditions, scope),
    validations: (spec.validations ?? []).map((v) => ({
      expression: compileAdmissionExpression(String(v.expression ?? ""), scope, "bool"),
      message: typeof v.message === "string" ? v.message : "",
      messageExpression: v.messageExpression
        ? compileAdmissionExpression(v.messageExpression, { ...scope, authorizer: false }, "string")
        : undefined,
      reason: typeof v.reason === "string" && v.reason !== "" ? v.reason : undefined,
    })),
  };
}

function scopeOf(params: boolean, variables: readonly string[]) {
  return { params, namespaceObject: true, variables: [...variables] };
}

/** The decisions of `policy` for one activation (validator.Validate). */
export function policyDecisions(policy: CompiledPolicy, activation: AdmissionActivation): PolicyDecision[] {
  const failurePolicy = policy.spec.failurePolicy ?? "Fail";
  const onError = (message: string): PolicyDecision => ({
    action: failurePolicy === "Ignore" ? "admit" : "deny",
    message,
  });
  if (policy.matchConditions.length > 0) {
    const outcome = evaluateMatchConditions(policy.matchConditions, activation, failurePolicy);
    if ("error" in outcome) return [onError(outcome.error)];
    if (!outcome.matches) return [];
  }
  return policy.validations.map((v) => {
    const result = activation.run(v.expression);
    if (result.error !== undefined) return onError(result.error);
    if (result.value === true) return { action: "admit", message: "" };
    return { action: "deny", reason: v.reason ?? "Invalid", message: failureMessage(v, activation) };
  });
}

function failureMessage(v: CompiledValidation, activation: AdmissionActivation): string {
  if (v.messageExpression !== undefined) {
    const result = activation.run(v.messageExpression);
    if (result.error === undefined && typeof result.value === "string") {
      const message = result.value.trim();
      const usable =
        message !== "" && !message.includes("\n") && Buffer.byteLength(message) <= MAX_MESSAGE_EXPRESSION_BYTES;
      if (usable) return message;
    }
  }
  const message = v.message.trim();
  return message !== "" ? message : `failed expression: ${v.expression.source.trim()}`;
}
