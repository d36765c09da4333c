/**
 * Whether metav1.LabelSelectorAsSelector (apimachinery `pkg/apis/meta/v1/helpers.go`) converts a
 * selector without error. The workload kinds check their template against the selector only when it
 * converts: a Deployment whose selector does not convert gets `invalid label selector` and no
 * template checks at all.
 */
import { isQualifiedName, isValidLabelValue } from "../names.ts";
import { record } from "./kind-validation.ts";

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.map((v) => (typeof v === "string" ? v : "")) : [];
}

/** LabelSelectorAsSelector's error, as a boolean: an absent selector converts (to Nothing). */
export function labelSelectorConverts(selector: unknown): boolean {
  const sel = record(selector);
  if (sel === undefined) return true;
  // labels.NewRequirement: the key is a qualified name, the values label values, their count fits the operator.
  for (const [key, value] of Object.entries(record(sel["matchLabels"]) ?? {})) {
    if (isQualifiedName(key).length > 0) return false;
    if (isValidLabelValue(typeof value === "string" ? value : "").length > 0) return false;
  }
  const expressions = Array.isArray(sel["matchExpressions"]) ? sel["matchExpressions"] : [];
  for (const e of expressions) {
    const expr = record(e) ?? {};
    const values = stringList(expr["values"]);
    switch (expr["operator"]) {
      case "In":
      case "NotIn":
        if (values.length === 0) return false;
        break;
      case "Exists":
      case "DoesNotExist":
        if (values.length > 0) return false;
        break;
      default:
        return false;
    }
    if (isQualifiedName(typeof expr["key"] === "string" ? expr["key"] : "").length > 0) return false;
    if (values.some((v) => isValidLabelValue(v).length > 0)) return false;
  }
  return true;
}
