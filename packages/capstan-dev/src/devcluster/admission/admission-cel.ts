/**
 * The CEL of admission (k8s.io/apiserver pkg/admission/plugin/cel): compiling an expression over the
 * variables ValidatingAdmissionPolicies and webhook matchConditions see, and running it on one request.
 *
 * Variables: `object`, `oldObject` (null on CREATE), `request` (the AdmissionRequest's fields, without
 * its objects), `params` (policies with a paramKind), `namespaceObject` (policies; null outside a
 * namespace), `variables` (a policy's named expressions, each evaluated at most once per activation,
 * when first read) and `authorizer`.
 *
 * Guarantees: never throws; compile errors have the real server's detail (`compilation failed: ERROR:
 * <input>:1:5: ...`, `must evaluate to bool but got string`), evaluation errors its wording
 * (`expression '<expr>' resulted in error: no such key: x`); a variable that failed makes every
 * expression reading it fail with its error.
 * Caveats:
 * - `authorizer` is declared (a policy using it is accepted) but not bound: an expression calling it
 *   fails at evaluation, and its failurePolicy decides.
 * - Objects are untyped (cel-go's dynamic values): no schema-typed compile errors such as
 *   `undefined field 'foo'` on `object.spec.foo`, and no type-checking warnings in a policy's status.
 * - A result of unknown static type (`object.spec.enabled`) is accepted where a bool or string is due.
 */
import { isCelError } from "@bufbuild/cel";
import type { JsonObject } from "../registry/served-resource.ts";
import type { StaticType } from "../validation/cel/check.ts";
import { type CelProgram, compileExpression } from "../validation/cel/compile.ts";
import { celGoErrorText } from "../validation/cel/evaluate.ts";
import { toCelValue } from "../validation/cel/values.ts";
import { type AdmissionAttributes, admissionRequestFields } from "./webhook-call.ts";

const DYN: StaticType = { kind: "dyn" };

/** Which optional variables an expression may use (cel.OptionalVariableDeclarations). */
export interface AdmissionScope {
  /** The policy has a paramKind: `params` is declared. */
  params?: boolean;
  /** Policies: `namespaceObject` is declared (webhook matchConditions do not have it). */
  namespaceObject?: boolean;
  /** The names of the policy's variables declared before this expression. */
  variables?: readonly string[];
  /** messageExpressions do not get `authorizer`. */
  authorizer?: boolean;
}

/** One compiled expression: its program, or the compile error detail the real server gives. */
export interface AdmissionExpression {
  source: string;
  program: CelProgram | undefined;
  error: string | undefined;
}

/** Compiles `source` for `scope`, to return a `returns` (bool for conditions, string for messages). */
export function compileAdmissionExpression(
  source: string,
  scope: AdmissionScope,
  returns: "bool" | "string" | "any",
): AdmissionExpression {
  const declared = new Map<string, StaticType>([
    ["object", DYN],
    ["oldObject", DYN],
    ["request", DYN],
  ]);
  if (scope.params) declared.set("params", DYN);
  if (scope.namespaceObject) declared.set("namespaceObject", DYN);
  if (scope.authorizer !== false) declared.set("authorizer", DYN);
  if (scope.variables !== undefined) {
    // An object type declaring only the variables so far: `variables.later` is `undefined field 'later'`.
    const properties = Object.fromEntries(scope.variables.map((name) => [name, {}]));
    declared.set("variables", { kind: "object", schema: { type: "object", properties } });
  }
  const checked = compileExpression(source, declared);
  if (checked.issues !== undefined) {
    return { source, program: undefined, error: `compilation failed: ${checked.issues}` };
  }
  const kind = checked.type?.kind ?? "dyn";
  if (returns !== "any" && kind !== returns && kind !== "dyn") {
    return { source, program: undefined, error: `must evaluate to ${returns} but got ${celTypeName(kind)}` };
  }
  return { source, program: checked.program, error: undefined };
}

/** cel-go's name of a static type, as a return-type error shows it. */
function celTypeName(kind: StaticType["kind"]): string {
  if (kind === "list") return "list(dyn)";
  if (kind === "map" || kind === "object") return "map(dyn, dyn)";
  if (kind === "timestamp") return "google.protobuf.Timestamp";
  if (kind === "duration") return "google.protobuf.Duration";
  if (kind === "null") return "null_type";
  return kind;
}

/** The outcome of one expression: its value, or the error text the real server reports. */
export type Evaluation = { value: unknown; error?: undefined } | { error: string };

/** A policy variable: its name and compiled expression. */
export interface CompiledVariable {
  name: string;
  expression: AdmissionExpression;
}

/** The values one request binds (the JSON forms; converted to CEL once per activation). */
export interface ActivationInput {
  attributes: AdmissionAttributes;
  params?: JsonObject | null;
  namespaceObject?: JsonObject | null;
  variables?: readonly CompiledVariable[];
}

/** Thrown by a variable read from an expression: the expression fails with the variable's error. */
class VariableFailed extends Error {}

/**
 * The variables of one evaluation (cel.evaluationActivation): built once per request and param,
 * shared by a policy's matchConditions, validations and messageExpressions.
 */
export class AdmissionActivation {
  private readonly bindings: Record<string, unknown>;

  constructor(input: ActivationInput) {
    const { attributes } = input;
    this.bindings = {
      object: toCelValue(attributes.object, undefined),
      oldObject: toCelValue(attributes.oldObject, undefined),
      request: toCelValue(celRequest(attributes), undefined),
      params: toCelValue(input.params ?? null, undefined),
      namespaceObject: toCelValue(input.namespaceObject ?? null, undefined),
    };
    if (input.variables !== undefined) this.bindings["variables"] = new LazyVariables(input.variables, this);
  }

  /** Runs a compiled expression (a compile error is reported as kube reports it at evaluation). */
  run(expression: AdmissionExpression): Evaluation {
    if (expression.program === undefined) return { error: `compilation error: ${expression.error ?? ""}` };
    const result = expression.program(this.bindings);
    if (!isCelError(result)) return { value: result };
    const cause = (result as { cause?: unknown }).cause;
    const text = cause instanceof VariableFailed ? cause.message : celGoErrorText(result.message);
    return { error: `expression '${expression.source}' resulted in error: ${text}` };
  }
}

/**
 * `variables`, evaluated when an expression first reads one (composition.go's lazy map): a variable
 * nothing reads costs nothing and cannot fail the request.
 */
class LazyVariables extends Map<string, unknown> {
  private readonly results = new Map<string, Evaluation>();
  private readonly byName: Map<string, CompiledVariable>;

  constructor(
    variables: readonly CompiledVariable[],
    private readonly activation: AdmissionActivation,
  ) {
    super();
    this.byName = new Map(variables.map((v) => [v.name, v]));
  }

  override has(name: string): boolean {
    return this.byName.has(name);
  }

  override get(name: string): unknown {
    const variable = this.byName.get(name);
    if (variable === undefined) return undefined;
    let result = this.results.get(name);
    if (result === undefined) {
      result =
        variable.expression.program === undefined
          ? { error: `composited variable "${name}" fails to compile: ${variable.expression.error ?? ""}` }
          : this.activation.run(variable.expression);
      this.results.set(name, result);
    }
    if (result.error !== undefined) throw new VariableFailed(result.error);
    return result.value;
  }
}

/** cel.CreateAdmissionRequest: the request's fields without its objects, as CEL's `request` sees them. */
function celRequest(attrs: AdmissionAttributes): Record<string, unknown> {
  const { userInfo } = attrs;
  return {
    ...admissionRequestFields(attrs),
    // Empty fields left out, as the Go struct's omitempty tags leave them.
    userInfo: {
      ...(userInfo.username ? { username: userInfo.username } : {}),
      ...(userInfo.uid ? { uid: userInfo.uid } : {}),
      ...(userInfo.groups?.length ? { groups: userInfo.groups } : {}),
      ...(userInfo.extra ? { extra: userInfo.extra } : {}),
    },
    dryRun: attrs.dryRun,
    ...(attrs.options ? { options: attrs.options } : {}),
  };
}
