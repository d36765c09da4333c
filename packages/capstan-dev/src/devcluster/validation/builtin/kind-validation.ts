/**
 * The shape of one built-in kind's validation (the strategy's Validate and ValidateUpdate in
 * kube-apiserver's `pkg/registry/<group>/<kind>/strategy.go`, which call
 * `pkg/apis/<group>/validation`). Each API group's module exports a table of these by plural.
 */
import type { FieldError } from "../field-errors.ts";
import type { NameValidator } from "../names.ts";

/** A decoded object (defaults applied). */
export type Json = Record<string, unknown>;

/** One kind's checks. Metadata (ObjectMeta and its update rules) is checked by the caller. */
export interface KindValidation {
  /** ValidateObjectMeta's name rule for the kind; default NameIsDNSSubdomain. */
  readonly name?: NameValidator;
  /** Validate: the object about to be created. */
  create(obj: Json): FieldError[];
  /** ValidateUpdate: the object about to be stored, and what may not change since `old`; default `create(next)`. */
  update?(next: Json, old: Json): FieldError[];
}

/** A group's kinds by plural. */
export type GroupValidation = Readonly<Record<string, KindValidation>>;

/** A member of a decoded object as a record (absent or of another JSON type: undefined). */
export function record(value: unknown): Json | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Json) : undefined;
}
