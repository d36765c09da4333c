/**
 * apimachinery's generic field rules as the built-in kinds' validation uses them
 * (`pkg/api/validation/generic.go` ValidateNonnegativeField, `objectmeta.go` ValidateImmutableField),
 * with `apiequality.Semantic.DeepEqual` read on decoded JSON.
 */
import { type FieldError, type FieldPath, invalid } from "../field-errors.ts";

/** apimachinery's IsNegativeErrorMsg. */
export const IS_NEGATIVE_ERROR_MSG = "must be greater than or equal to 0";

/** apimachinery's FieldImmutableErrorMsg. */
export const FIELD_IMMUTABLE_ERROR_MSG = "field is immutable";

/** ValidateNonnegativeField of an integer field; absent or non-numeric values are left to decoding. */
export function validateNonnegative(value: unknown, path: FieldPath): FieldError[] {
  return typeof value === "number" && value < 0 ? [invalid(path, value, IS_NEGATIVE_ERROR_MSG)] : [];
}

function isEmptyContainer(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (Array.isArray(value)) return value.length === 0;
  return false;
}

function isEmptyMapLike(value: unknown): boolean {
  return value !== null && typeof value === "object" && !Array.isArray(value) && Object.keys(value).length === 0;
}

/**
 * Semantic.DeepEqual on decoded JSON: an absent member equals `null`, and an empty list or map equals
 * an absent one (Go's nil and empty slices and maps compare equal).
 *
 * Caveat: JSON does not say which objects are Go maps and which are pointers to structs; an empty
 * object is taken as equal to an absent one, which Go holds only for maps and value structs. Quantities
 * are compared as written (`1Gi` differs from `1024Mi`, which Go's Semantic equality equates).
 */
export function semanticEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if ((isEmptyContainer(a) || isEmptyMapLike(a)) && (isEmptyContainer(b) || isEmptyMapLike(b))) return true;
  if (a === null || b === null || a === undefined || b === undefined) return false;
  if (typeof a !== "object" || typeof b !== "object") return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => semanticEqual(item, b[i]));
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = new Set([...Object.keys(left), ...Object.keys(right)]);
  for (const k of keys) if (!semanticEqual(left[k], right[k])) return false;
  return true;
}

/**
 * ValidateImmutableField: `path: Invalid value: <next>: field is immutable` when `next` differs from
 * `old`. `badValue` is the value as Go prints it (see go-typed-values.ts); by default the JSON value.
 */
export function validateImmutable(next: unknown, old: unknown, path: FieldPath, badValue?: unknown): FieldError[] {
  if (semanticEqual(next, old)) return [];
  return [invalid(path, badValue === undefined ? (next ?? "null") : badValue, FIELD_IMMUTABLE_ERROR_MSG)];
}
