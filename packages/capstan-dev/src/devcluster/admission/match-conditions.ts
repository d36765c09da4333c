/**
 * `matchConditions` (admissionregistration/v1 MatchCondition), for webhooks and ValidatingAdmissionPolicies
 * alike, as k8s.io/apiserver pkg/admission/plugin/webhook/matchconditions/matcher.go decides them:
 *
 * - conditions run in their order; the first that is false skips the webhook or policy, whatever
 *   the others gave (even errors);
 * - none false but some failed: under failurePolicy Fail the request fails with the errors (one
 *   error's text, or several as `[a, b]`, utilerrors.NewAggregate's form); under Ignore the webhook or
 *   policy is skipped;
 * - all true: it is called or evaluated.
 * A condition whose result is not a boolean counts as true (only `false` skips), as in the matcher.
 */
import {
  type AdmissionActivation,
  type AdmissionExpression,
  type AdmissionScope,
  compileAdmissionExpression,
} from "./admission-cel.ts";

/** admissionregistration/v1 MatchCondition. */
export interface MatchCondition {
  name: string;
  expression: string;
}

/** A condition ready to run. */
export interface CompiledMatchCondition {
  name: string;
  expression: AdmissionExpression;
}

/** What the conditions decided for one request. */
export type MatchOutcome = { matches: true } | { matches: false; failedCondition?: string } | { error: string };

/** Compiles a webhook's or policy's conditions (once per configuration version: callers cache). */
export function compileMatchConditions(
  conditions: readonly MatchCondition[] | undefined,
  scope: AdmissionScope,
): CompiledMatchCondition[] {
  return (conditions ?? []).map((c) => ({
    name: c.name,
    expression: compileAdmissionExpression(String(c.expression ?? ""), scope, "bool"),
  }));
}

/** Decides `conditions` for one request; `failurePolicy` is the webhook's or policy's (Fail when unset). */
export function evaluateMatchConditions(
  conditions: readonly CompiledMatchCondition[],
  activation: AdmissionActivation,
  failurePolicy: string | undefined,
): MatchOutcome {
  const errors: string[] = [];
  for (const condition of conditions) {
    const result = activation.run(condition.expression);
    if (result.error !== undefined) errors.push(result.error);
    else if (result.value === false) return { matches: false, failedCondition: condition.name };
  }
  if (errors.length === 0) return { matches: true };
  if (failurePolicy === "Ignore") return { matches: false };
  return { error: aggregate(errors) };
}

/** utilerrors.NewAggregate(...).Error(): one message alone, several distinct ones as `[a, b]`. */
function aggregate(messages: readonly string[]): string {
  const distinct = [...new Set(messages)];
  return distinct.length === 1 ? distinct[0]! : `[${distinct.join(", ")}]`;
}
