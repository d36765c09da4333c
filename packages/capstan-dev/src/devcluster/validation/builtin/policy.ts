/**
 * policy validation (kube-apiserver `pkg/apis/policy/validation/validation.go`, Kubernetes 1.32) with
 * the PodDisruptionBudget strategy's choices (`pkg/registry/policy/poddisruptionbudget/strategy.go`):
 * the spec is validated on create and on every update (it has been mutable since 1.15), with a
 * stored selector's invalid label values tolerated on update.
 *
 * ValidatePodDisruptionBudget does not validate the ObjectMeta: only the generic store's check with
 * the path-segment name rule applies, so a PDB may be named `My_PDB` (kube-apiserver 1.32 accepts it).
 */
import { type FieldError, type FieldPath, fieldPath, invalid, notSupported } from "../field-errors.ts";
import { goQuote, withGoSharpV } from "../go-format.ts";
import { nameIsPathSegment, regexError } from "../names.ts";
import { type GroupValidation, type Json, type KindValidation, record } from "./kind-validation.ts";
import { type LabelSelectorOptions, validateLabelSelector } from "./label-selector.ts";

/** apimachinery IsValidPercent. */
const PERCENT_FMT = "[0-9]+%";
const PERCENT_RE = /^[0-9]+%$/;
const PERCENT_ERR = "a valid percent string must be a numeric string followed by an ending '%'";

/** ValidateNonnegativeField's message. */
const NEGATIVE_ERR = "must be greater than or equal to 0";

const UNHEALTHY_POD_EVICTION_POLICIES = ["AlwaysAllow", "IfHealthyBudget"];

/**
 * Go prints the heap address of a pointer field in `%#v`: the message cannot match byte for byte, so
 * these stand in for the addresses (one per field, as distinct allocations would be).
 */
const STAND_IN_ADDRESSES = { minAvailable: "0xc000a1c0e8", selector: "0xc000b2d180", maxUnavailable: "0xc000a1c100" };

/** An intstr.IntOrString as Go's `%#v` prints it (IntOrString's String() has a pointer receiver). */
function goIntOrString(value: number | string): Json {
  const text =
    typeof value === "number"
      ? `intstr.IntOrString{Type:0, IntVal:${value}, StrVal:""}`
      : `intstr.IntOrString{Type:1, IntVal:0, StrVal:${goQuote(value)}}`;
  return withGoSharpV({ value }, text);
}

/** apps' ValidatePositiveIntOrPercent and IsNotMoreThan100Percent, which PDBs use. */
function validateIntOrPercent(value: unknown, path: FieldPath): FieldError[] {
  if (typeof value === "number") return value < 0 ? [invalid(path, value, NEGATIVE_ERR)] : [];
  if (typeof value !== "string") return [];
  if (!PERCENT_RE.test(value))
    return [invalid(path, goIntOrString(value), regexError(PERCENT_ERR, PERCENT_FMT, "1%", "93%"))];
  // Go's Atoi saturates past int64: any valid percent above 100 is refused.
  return Number(value.slice(0, -1)) > 100 ? [invalid(path, goIntOrString(value), "must not be greater than 100%")] : [];
}

function present(value: unknown): boolean {
  return value !== undefined && value !== null;
}

/** The internal policy.PodDisruptionBudgetSpec as Go's `%#v` prints it. */
function goPdbSpec(spec: Json): Json {
  const pointer = (type: string, value: unknown, address: string) => `(*${type})(${present(value) ? address : "nil"})`;
  const text =
    "policy.PodDisruptionBudgetSpec{" +
    `MinAvailable:${pointer("intstr.IntOrString", spec["minAvailable"], STAND_IN_ADDRESSES.minAvailable)}, ` +
    `Selector:${pointer("v1.LabelSelector", spec["selector"], STAND_IN_ADDRESSES.selector)}, ` +
    `MaxUnavailable:${pointer("intstr.IntOrString", spec["maxUnavailable"], STAND_IN_ADDRESSES.maxUnavailable)}, ` +
    `UnhealthyPodEvictionPolicy:(*policy.UnhealthyPodEvictionPolicyType)(${present(spec["unhealthyPodEvictionPolicy"]) ? "0xc000a1c118" : "nil"})}`;
  return withGoSharpV({ ...spec }, text);
}

/** ValidatePodDisruptionBudgetSpec. */
function validateSpec(obj: Json, options: LabelSelectorOptions): FieldError[] {
  const spec = record(obj["spec"]) ?? {};
  const path = fieldPath("spec");
  const errs: FieldError[] = [];
  const { minAvailable, maxUnavailable, unhealthyPodEvictionPolicy } = spec;
  if (present(minAvailable) && present(maxUnavailable))
    errs.push(invalid(path, goPdbSpec(spec), "minAvailable and maxUnavailable cannot be both set"));
  if (present(minAvailable)) errs.push(...validateIntOrPercent(minAvailable, path.child("minAvailable")));
  if (present(maxUnavailable)) errs.push(...validateIntOrPercent(maxUnavailable, path.child("maxUnavailable")));
  errs.push(...validateLabelSelector(spec["selector"], path.child("selector"), options));
  if (
    present(unhealthyPodEvictionPolicy) &&
    !UNHEALTHY_POD_EVICTION_POLICIES.includes(String(unhealthyPodEvictionPolicy))
  )
    errs.push(
      notSupported(
        path.child("unhealthyPodEvictionPolicy"),
        unhealthyPodEvictionPolicy,
        UNHEALTHY_POD_EVICTION_POLICIES,
      ),
    );
  return errs;
}

/** hasInvalidLabelValueInLabelSelector: a stored selector the full rules would now refuse. */
function hasInvalidSelector(old: Json): boolean {
  const selector = record(old["spec"])?.["selector"];
  return present(selector) && validateLabelSelector(selector, fieldPath("spec", "selector")).length > 0;
}

const podDisruptionBudgets: KindValidation = {
  name: nameIsPathSegment,
  create: (obj) => validateSpec(obj, {}),
  update: (next, old) => validateSpec(next, { allowInvalidLabelValueInSelector: hasInvalidSelector(old) }),
};

export const policyValidation: GroupValidation = { poddisruptionbudgets: podDisruptionBudgets };
