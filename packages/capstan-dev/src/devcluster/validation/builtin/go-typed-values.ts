/**
 * Bad values as Kubernetes 1.32 prints them in the workload kinds' field errors. field.Error's
 * ErrorBody dereferences a pointer and prints a composite value with Go's `%#v`, which names the
 * value's Go type: `map[string]string{"app":"y"}`, `v1.LabelSelector{...}`,
 * `intstr.IntOrString{Type:1, IntVal:0, StrVal:"5x"}`. JSON carries no types, so each helper here knows
 * the Go type of the field it is given; the value it returns prints as that text (`withGoSharpV`).
 *
 * Caveat: a pointer inside a struct prints as its address (`(*int32)(0xc000123456)`), which differs on
 * every run of kube-apiserver; these texts write a fixed made-up address instead.
 */
import { goQuote, withGoSharpV } from "../go-format.ts";
import { record } from "./kind-validation.ts";

/** The address a non-nil pointer inside a struct prints here (the real one varies from run to run). */
const MADE_UP_ADDRESS = "0xc000000000";

/** `%#v` of a `*T` field inside a struct: `(*T)(nil)` or `(*T)(0xc...)`. */
export function goPointerText(goType: string, value: unknown): string {
  return value === undefined || value === null ? `(*${goType})(nil)` : `(*${goType})(${MADE_UP_ADDRESS})`;
}

function stringMapText(value: unknown): string {
  const map = record(value);
  if (map === undefined) return "map[string]string(nil)";
  const keys = Object.keys(map).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const entries = keys.map((k) => `${goQuote(k)}:${goQuote(typeof map[k] === "string" ? (map[k] as string) : "")}`);
  return `map[string]string{${entries.join(", ")}}`;
}

function stringSliceText(value: unknown): string {
  if (!Array.isArray(value)) return "[]string(nil)";
  return `[]string{${value.map((v) => goQuote(typeof v === "string" ? v : "")).join(", ")}}`;
}

/** A `map[string]string` (labels, annotations, a selector's matchLabels) as a bad value. */
export function labelsValue(value: unknown): object {
  const copy = record(value) ? { ...record(value) } : {};
  return withGoSharpV(copy, stringMapText(value));
}

/** `%#v` of a metav1.LabelSelector struct. */
function labelSelectorText(value: unknown): string {
  const sel = record(value) ?? {};
  const expressions = sel["matchExpressions"];
  let exprText = "[]v1.LabelSelectorRequirement(nil)";
  if (Array.isArray(expressions)) {
    const items = expressions.map((e) => {
      const expr = record(e) ?? {};
      const key = typeof expr["key"] === "string" ? expr["key"] : "";
      const op = typeof expr["operator"] === "string" ? expr["operator"] : "";
      return `v1.LabelSelectorRequirement{Key:${goQuote(key)}, Operator:${goQuote(op)}, Values:${stringSliceText(expr["values"])}}`;
    });
    exprText = `[]v1.LabelSelectorRequirement{${items.join(", ")}}`;
  }
  return `v1.LabelSelector{MatchLabels:${stringMapText(sel["matchLabels"])}, MatchExpressions:${exprText}}`;
}

/**
 * A `*metav1.LabelSelector` as a bad value: the struct's `%#v` (ErrorBody dereferences the pointer),
 * or `"null"` when absent.
 */
export function labelSelectorValue(value: unknown): unknown {
  const sel = record(value);
  if (sel === undefined) return "null";
  return withGoSharpV({ ...sel }, labelSelectorText(sel));
}

/** `%#v` of an intstr.IntOrString held by value: Type 0 with IntVal, or Type 1 with StrVal. */
function intOrStringText(value: unknown): string {
  if (typeof value === "string") return `intstr.IntOrString{Type:1, IntVal:0, StrVal:${goQuote(value)}}`;
  const n = typeof value === "number" ? value : 0;
  return `intstr.IntOrString{Type:0, IntVal:${n}, StrVal:""}`;
}

/** An intstr.IntOrString as a bad value (its String method has a pointer receiver, so Go prints `%#v`). */
export function intOrStringValue(value: unknown): object {
  return withGoSharpV({ value }, intOrStringText(value));
}

/** A value whose `%#v` text is given whole (a struct of the internal API, e.g. `apps.DeploymentStrategy{...}`). */
export function goStructValue(value: unknown, text: string): object {
  const copy = record(value) ? { ...record(value) } : {};
  return withGoSharpV(copy, text);
}

/** A `[]int32` as a bad value: `[]int32{1, 2}`, `[]int32{}` or `[]int32(nil)`. */
export function int32SliceValue(value: unknown): object {
  const items = Array.isArray(value) ? value : undefined;
  const text =
    items === undefined ? "[]int32(nil)" : `[]int32{${items.map((v) => (typeof v === "number" ? v : 0)).join(", ")}}`;
  return withGoSharpV(items ? [...items] : [], text);
}
