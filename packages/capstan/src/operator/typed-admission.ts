/**
 * controller-runtime's `CustomValidator` and `CustomDefaulter`, as objects: `op.validator(Kind,
 * { validateCreate, validateUpdate, validateDelete })` and `op.defaulter(Kind, { default })`. Each
 * becomes one `op.on.validate` / `op.on.mutate` handler (one implementation, one path, one webhook),
 * whose operations are the methods given, so the generated configuration asks only for those.
 */
import type { KubeObject } from "../client/types.ts";
import type { AdmissionContext, MutatingHandler, ValidatingHandler } from "../webhooks/admission.ts";
import type { AdmissionOperation } from "../webhooks/admission-review.ts";

/** What a validation may return: warnings for the client (kubectl prints `Warning: ...`), or nothing. */
// biome-ignore lint/suspicious/noConfusingVoidType: a method that only throws or returns nothing returns void
export type ValidationResult = readonly string[] | undefined | void;

/**
 * A validator: each method allows by returning (optionally warnings) and denies by throwing
 * `AdmissionDenied`. The context is the admission handler's (`api`, `userInfo`, `dryRun`, ...).
 */
export interface Validator<T extends KubeObject> {
  validateCreate?(obj: T, ctx: AdmissionContext<T>): ValidationResult | Promise<ValidationResult>;
  validateUpdate?(oldObj: T, obj: T, ctx: AdmissionContext<T>): ValidationResult | Promise<ValidationResult>;
  /** Gets the object being deleted (the stored one). */
  validateDelete?(obj: T, ctx: AdmissionContext<T>): ValidationResult | Promise<ValidationResult>;
}

/** A defaulter: fills in `obj` (a copy) in place; Capstan answers with the JSON Patch. */
export interface Defaulter<T extends KubeObject> {
  default(obj: T, ctx: AdmissionContext<T>): void | Promise<void>;
}

/** The operations a validator's methods cover, in the API server's order. */
export function validatorOperations<T extends KubeObject>(validator: Validator<T>): AdmissionOperation[] {
  const operations: AdmissionOperation[] = [];
  if (validator.validateCreate) operations.push("CREATE");
  if (validator.validateUpdate) operations.push("UPDATE");
  if (validator.validateDelete) operations.push("DELETE");
  if (operations.length === 0) {
    throw new Error("a validator needs at least one of validateCreate, validateUpdate, validateDelete");
  }
  return operations;
}

/** The validating handler calling the validator's method for the request's operation. */
export function validatorHandler<T extends KubeObject>(validator: Validator<T>): ValidatingHandler<T> {
  return async (ctx) => {
    let warnings: ValidationResult;
    if (ctx.operation === "CREATE") warnings = await validator.validateCreate?.(ctx.obj, ctx);
    else if (ctx.operation === "UPDATE") warnings = await validator.validateUpdate?.(ctx.oldObj as T, ctx.obj, ctx);
    else if (ctx.operation === "DELETE") warnings = await validator.validateDelete?.(ctx.oldObj ?? ctx.obj, ctx);
    for (const warning of warnings ?? []) ctx.warn(warning);
  };
}

/** The mutating handler calling the defaulter. */
export function defaulterHandler<T extends KubeObject>(defaulter: Defaulter<T>): MutatingHandler<T> {
  return async (ctx) => {
    await defaulter.default(ctx.obj, ctx);
  };
}
