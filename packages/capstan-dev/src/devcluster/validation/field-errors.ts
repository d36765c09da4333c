/**
 * Field-level validation errors and the 422 Invalid Status built from them, rendered exactly as
 * apimachinery renders them (`pkg/util/validation/field/errors.go`, `pkg/api/errors/errors.go`
 * NewInvalid, Kubernetes 1.32: counts are always plural, lengths in bytes; a nil bad value prints as
 * `"null"` and a composite one with Go's `%#v`, see go-sharp-v.ts).
 *
 * A FieldError is plain data; `fieldErrorMessage` gives Go's `Error()` text (`path: body`),
 * `fieldErrorBody` Go's `ErrorBody()` (what goes into `causes[].message`).
 */
import type { PathLike } from "./field-path.ts";
import { renderPath } from "./field-path.ts";
import { goQuote, goSprint } from "./go-format.ts";
import { goBadValue } from "./go-sharp-v.ts";

export type { PathLike } from "./field-path.ts";
export { FieldPath, fieldPath } from "./field-path.ts";

/** The machine-readable reason of a field error, equal to the Status cause type. */
export type FieldErrorType =
  | "FieldValueNotFound"
  | "FieldValueRequired"
  | "FieldValueDuplicate"
  | "FieldValueInvalid"
  | "FieldValueNotSupported"
  | "FieldValueForbidden"
  | "FieldValueTooLong"
  | "FieldValueTooMany"
  | "InternalError"
  | "FieldValueTypeInvalid";

/** Marks a bad value Go leaves out of the message (field.TooMany with an unknown quantity). */
export const OMIT_VALUE: unique symbol = Symbol("omit value");

/** One field-level validation error (Go's `field.Error`). */
export interface FieldError {
  type: FieldErrorType;
  /** The rendered field path, e.g. `spec.items[0].name`. */
  field: string;
  /** The offending value as decoded from JSON; `OMIT_VALUE` leaves it out of the message. */
  badValue?: unknown;
  detail?: string;
}

const TYPE_TEXT: Record<FieldErrorType, string> = {
  FieldValueNotFound: "Not found",
  FieldValueRequired: "Required value",
  FieldValueDuplicate: "Duplicate value",
  FieldValueInvalid: "Invalid value",
  FieldValueNotSupported: "Unsupported value",
  FieldValueForbidden: "Forbidden",
  FieldValueTooLong: "Too long",
  FieldValueTooMany: "Too many",
  InternalError: "Internal error",
  FieldValueTypeInvalid: "Invalid value",
};

/** Types whose message never shows the value (ErrorBody's first case). */
const VALUELESS = new Set<FieldErrorType>([
  "FieldValueRequired",
  "FieldValueForbidden",
  "FieldValueTooLong",
  "InternalError",
]);

/** Go's `ErrorBody()`: the message without the field path. This is `causes[].message`. */
export function fieldErrorBody(e: FieldError): string {
  let s = TYPE_TEXT[e.type];
  if (!VALUELESS.has(e.type) && e.badValue !== OMIT_VALUE) {
    s += ": " + goBadValue(e.badValue);
  }
  if (e.detail) s += ": " + e.detail;
  return s;
}

/** Go's `Error()`: `<field>: <body>`. */
export function fieldErrorMessage(e: FieldError): string {
  return e.field + ": " + fieldErrorBody(e);
}

/** field.Required: `path: Required value[: detail]`. */
export function required(path: PathLike, detail = ""): FieldError {
  return { type: "FieldValueRequired", field: renderPath(path), badValue: "", detail };
}

/** field.Invalid: `path: Invalid value: <value>[: detail]`. */
export function invalid(path: PathLike, value: unknown, detail = ""): FieldError {
  return { type: "FieldValueInvalid", field: renderPath(path), badValue: value, detail };
}

/** field.TypeInvalid: same text as Invalid, cause type FieldValueTypeInvalid. */
export function typeInvalid(path: PathLike, value: unknown, detail = ""): FieldError {
  return { type: "FieldValueTypeInvalid", field: renderPath(path), badValue: value, detail };
}

/** field.NotFound: `path: Not found: <value>`. */
export function notFound(path: PathLike, value: unknown): FieldError {
  return { type: "FieldValueNotFound", field: renderPath(path), badValue: value };
}

/** field.Duplicate: `path: Duplicate value: <value>`. */
export function duplicate(path: PathLike, value: unknown): FieldError {
  return { type: "FieldValueDuplicate", field: renderPath(path), badValue: value };
}

/** field.NotSupported: `path: Unsupported value: <value>: supported values: "a", "b"`. */
export function notSupported(path: PathLike, value: unknown, valid: readonly unknown[]): FieldError {
  const detail = valid.length > 0 ? "supported values: " + valid.map((v) => goQuote(goSprint(v))).join(", ") : "";
  return { type: "FieldValueNotSupported", field: renderPath(path), badValue: value, detail };
}

/** field.Forbidden: `path: Forbidden: detail`. */
export function forbidden(path: PathLike, detail = ""): FieldError {
  return { type: "FieldValueForbidden", field: renderPath(path), badValue: "", detail };
}

/** field.TooLong: `path: Too long: may not be more than N bytes` (or `value is too long` when max < 0). */
export function tooLong(path: PathLike, maxLength: number): FieldError {
  const detail = maxLength >= 0 ? `may not be more than ${maxLength} bytes` : "value is too long";
  return { type: "FieldValueTooLong", field: renderPath(path), badValue: "<value omitted>", detail };
}

/** field.TooMany: `path: Too many: <actual>: must have at most N items` (actual < 0 omits it). */
export function tooMany(path: PathLike, actual: number, max: number): FieldError {
  const detail = max >= 0 ? `must have at most ${max} items` : "has too many items";
  return { type: "FieldValueTooMany", field: renderPath(path), badValue: actual >= 0 ? actual : OMIT_VALUE, detail };
}

/** field.InternalError: `path: Internal error: <message>`. */
export function internalError(path: PathLike, message: string): FieldError {
  return { type: "InternalError", field: renderPath(path), badValue: message, detail: message };
}

/** One `details.causes[]` entry of a Status. */
export interface StatusCause {
  reason: FieldErrorType;
  message: string;
  field?: string;
}

/** The metav1.Status of a 422 Invalid answer. */
export interface InvalidStatus {
  kind: "Status";
  apiVersion: "v1";
  metadata: Record<string, never>;
  status: "Failure";
  message: string;
  reason: "Invalid";
  details: { name?: string; group?: string; kind: string; causes: StatusCause[] };
  code: 422;
}

/** Go's aggregate `Error()`: duplicates dropped, one message bare, several as `[a, b]`. */
export function aggregateMessage(errors: readonly FieldError[]): string {
  const seen = new Set<string>();
  for (const e of errors) seen.add(fieldErrorMessage(e));
  const msgs = [...seen];
  return msgs.length === 1 ? msgs[0]! : "[" + msgs.join(", ") + "]";
}

/**
 * apierrors.NewInvalid: the 422 Status for `errors` on object `name` of `kind` in `group`
 * (`""` for the core group, which also drops `details.group` as Go's omitempty does).
 */
export function invalidStatus(group: string, kind: string, name: string, errors: readonly FieldError[]): InvalidStatus {
  const qualified = group === "" ? kind : `${kind}.${group}`;
  const message =
    errors.length === 0
      ? `${qualified} ${goQuote(name)} is invalid`
      : `${qualified} ${goQuote(name)} is invalid: ${aggregateMessage(errors)}`;
  // Key order and omitempty follow metav1.StatusDetails / StatusCause, so the JSON matches Go's byte for byte.
  const causes = errors.map((e): StatusCause => {
    const cause: StatusCause = { reason: e.type, message: fieldErrorBody(e) };
    if (e.field !== "") cause.field = e.field;
    return cause;
  });
  const details: InvalidStatus["details"] = {
    ...(name !== "" ? { name } : {}),
    ...(group !== "" ? { group } : {}),
    kind,
    causes,
  };
  return {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message,
    reason: "Invalid",
    details,
    code: 422,
  };
}
