/**
 * metav1.LabelSelector as the built-in kinds' validation uses it (apimachinery
 * `pkg/apis/meta/v1/validation/validation.go` ValidateLabelSelector, and `helpers.go`
 * LabelSelectorAsSelector for matching): the selector's own rules, and whether it selects a set of
 * labels (a Deployment's template must be selected by its selector).
 */
import { type FieldError, type FieldPath, forbidden, invalid, required } from "../field-errors.ts";
import { isQualifiedName, isValidLabelValue } from "../names.ts";
import { validateLabels } from "../object-meta.ts";

type Json = Record<string, unknown>;

/** LabelSelectorValidationOptions. */
export interface LabelSelectorOptions {
  /** Skip the label-value syntax of `values` (kept for objects stored before that check existed). */
  allowInvalidLabelValueInSelector?: boolean;
}

function record(value: unknown): Json | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Json) : undefined;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.map((v) => (typeof v === "string" ? v : "")) : [];
}

/** ValidateLabelSelector: matchLabels as labels, each matchExpressions entry as a requirement. */
export function validateLabelSelector(
  selector: unknown,
  path: FieldPath,
  options: LabelSelectorOptions = {},
): FieldError[] {
  const sel = record(selector);
  if (sel === undefined) return [];
  const errs = validateLabels(sel["matchLabels"], path.child("matchLabels"));
  const expressions = Array.isArray(sel["matchExpressions"]) ? sel["matchExpressions"] : [];
  expressions.forEach((expr, i) => {
    errs.push(...validateRequirement(record(expr) ?? {}, path.child("matchExpressions").index(i), options));
  });
  return errs;
}

function validateRequirement(req: Json, path: FieldPath, options: LabelSelectorOptions): FieldError[] {
  const errs: FieldError[] = [];
  const values = strings(req["values"]);
  const operator = req["operator"];
  switch (operator) {
    case "In":
    case "NotIn":
      if (values.length === 0)
        errs.push(required(path.child("values"), "must be specified when `operator` is 'In' or 'NotIn'"));
      break;
    case "Exists":
    case "DoesNotExist":
      if (values.length > 0)
        errs.push(
          forbidden(path.child("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"),
        );
      break;
    default:
      errs.push(
        invalid(path.child("operator"), typeof operator === "string" ? operator : "", "not a valid selector operator"),
      );
  }
  const key = typeof req["key"] === "string" ? req["key"] : "";
  for (const msg of isQualifiedName(key)) errs.push(invalid(path.child("key"), key, msg));
  if (!options.allowInvalidLabelValueInSelector) {
    values.forEach((value, i) => {
      for (const msg of isValidLabelValue(value)) errs.push(invalid(path.child("values").index(i), value, msg));
    });
  }
  return errs;
}

/** Whether a selector has neither matchLabels nor matchExpressions (it then selects everything). */
export function isEmptySelector(selector: unknown): boolean {
  const sel = record(selector);
  if (sel === undefined) return true;
  const labels = record(sel["matchLabels"]);
  const expressions = sel["matchExpressions"];
  return (
    (labels === undefined || Object.keys(labels).length === 0) &&
    !(Array.isArray(expressions) && expressions.length > 0)
  );
}

/** Whether `selector` (LabelSelectorAsSelector) selects `labels`; an absent selector selects nothing. */
export function selectsLabels(selector: unknown, labels: unknown): boolean {
  const sel = record(selector);
  if (sel === undefined) return false;
  const have = record(labels) ?? {};
  for (const [k, v] of Object.entries(record(sel["matchLabels"]) ?? {})) if (have[k] !== v) return false;
  const expressions = Array.isArray(sel["matchExpressions"]) ? sel["matchExpressions"] : [];
  for (const e of expressions) {
    const expr = record(e) ?? {};
    const key = typeof expr["key"] === "string" ? expr["key"] : "";
    const values = strings(expr["values"]);
    const present = Object.hasOwn(have, key);
    const value = have[key];
    switch (expr["operator"]) {
      case "In":
        if (!present || !values.includes(String(value))) return false;
        break;
      case "NotIn":
        if (present && values.includes(String(value))) return false;
        break;
      case "Exists":
        if (!present) return false;
        break;
      case "DoesNotExist":
        if (present) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}
