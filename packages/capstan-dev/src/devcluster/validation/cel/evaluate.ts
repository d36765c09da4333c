/**
 * Running `x-kubernetes-validations` rules over a custom object, as apiextensions-apiserver's
 * `cel.Validator` does (pkg/apiserver/schema/cel/validation.go).
 *
 * Expected flow: the object validator calls `evaluateCelRules(schema, obj, oldObj)` after the schema
 * checks found no blocking error (schema-validate.ts decides that). The walk follows the structural
 * schema: a node's rules run with `self` bound to its value, then allOf branches, then properties,
 * additionalProperties values and list items.
 *
 * Guarantees:
 * - null and absent values are not validated (a rule on a nullable field sees only non-null values);
 * - transition rules (those referencing `oldSelf`) run only on update and only where an old value
 *   correlates: object properties and map values by key, items of `x-kubernetes-list-type: map` lists
 *   by their map keys; items of other lists never have an oldSelf;
 * - on update, a failing rule that does not use oldSelf on a value unchanged from the stored object is
 *   not reported (CRDValidationRatcheting, beta and on in 1.32; the real server turns it into a warning),
 *   except on `/status` writes, which 1.32 does not ratchet (evaluateCelRulesWithoutRatcheting);
 * - errors carry the real texts: `failed rule: <rule>` when there is no message, messageExpression
 *   results (trimmed; a failed, empty, multi-line or over-5 KiB result falls back to the message),
 *   `<error> evaluating rule: <rule>` for evaluation errors, `reason` mapping to Forbidden/Required/
 *   Duplicate, `fieldPath` appended to the node's path, and the schema's type as the bad value
 *   (`Invalid value: "string"`, as 1.32 shows it; later releases show a scalar's own value).
 * Caveats: no cost budget (per-call limit, per-object budget) is enforced; `optionalOldSelf` rules are
 * skipped on create (optional types are not supported); error texts of a few evaluation errors are
 * @bufbuild/cel's (the common ones, no such key and division by zero, are mapped to cel-go's).
 */
import { isCelError } from "@bufbuild/cel";
import { ownValue } from "../../machinery/own-properties.ts";
import { jsonEqual } from "../../machinery/semantic-equal.ts";
import { resolveFieldPath } from "../crd.ts";
import {
  duplicate,
  type FieldError,
  type FieldPath,
  fieldPath,
  forbidden,
  invalid,
  required,
} from "../field-errors.ts";
import type { JSONSchemaProps } from "../schema-types.ts";
import { type CompiledRule, compiledRulesOf } from "./compile.ts";
import { schemaTypeName, toCelValue } from "./values.ts";

/** celconfig.MaxEvaluatedMessageExpressionSizeBytes: longer messageExpression results fall back to the message. */
const MAX_MESSAGE_EXPRESSION_BYTES = 5 * 1024;

/** A path under construction; undefined is the object root, which Go renders as `<nil>`. */
type Path = FieldPath | undefined;

const childOf = (p: Path, name: string): FieldPath => (p ? p.child(name) : fieldPath(name));
const render = (p: Path): string => (p ? p.toString() : "<nil>");

/** Where the value being validated came from in the old object, for ratcheting (common.CorrelatedObject). */
interface Ratchet {
  /** The correlated old value of this node, when it has one. */
  current: { value: unknown; old: unknown } | undefined;
  /** Whether the nearest correlated ancestor is unchanged (decides for uncorrelated nodes). */
  parentUnchanged: boolean;
}

function shouldRatchet(r: Ratchet | undefined): boolean {
  if (!r) return false;
  return r.current ? jsonEqual(r.current.value, r.current.old) : r.parentUnchanged;
}

function ratchetChild(
  r: Ratchet | undefined,
  value: unknown,
  old: { value: unknown } | undefined,
): Ratchet | undefined {
  if (!r) return undefined;
  if (!r.current) return r;
  return {
    current: old ? { value, old: old.value } : undefined,
    parentUnchanged: jsonEqual(r.current.value, r.current.old),
  };
}

/** The declared property `name`: object keys such as `constructor` must not find Object.prototype's. */
function ownSchema(props: Record<string, JSONSchemaProps> | undefined, name: string): JSONSchemaProps | undefined {
  return props !== undefined && Object.hasOwn(props, name) ? props[name] : undefined;
}

function asRecord(v: unknown): Record<string, unknown> | undefined {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

function ruleErrorString(c: CompiledRule): string {
  const msg = typeof c.rule.message === "string" ? c.rule.message : "";
  return msg.length > 0 ? msg.trim() : (c.rule.rule ?? "").trim();
}

/** cel-go's texts for the evaluation errors rules commonly hit. */
export function celGoErrorText(message: string): string {
  const noKey = /^field not found: (.*)$/.exec(message);
  if (noKey) return `no such key: ${noKey[1]}`;
  if (/divide by zero$/.test(message)) return "division by zero";
  if (/^(int|uint) overflow/.test(message)) return "integer overflow";
  if (/^found no matching overload/.test(message)) return "no such overload";
  return message;
}

function messageFromExpression(c: CompiledRule, bindings: Record<string, unknown>): string | undefined {
  if (!c.messageProgram) return undefined;
  const out = c.messageProgram(bindings);
  if (isCelError(out) || typeof out !== "string") return undefined;
  const trimmed = out.trim();
  if (trimmed.length === 0 || trimmed.includes("\n")) return undefined;
  if (Buffer.byteLength(trimmed) > MAX_MESSAGE_EXPRESSION_BYTES) return undefined;
  return trimmed;
}

function normalizedFieldPath(c: CompiledRule, schema: JSONSchemaProps): string | undefined {
  const fp = typeof c.rule.fieldPath === "string" ? c.rule.fieldPath.trim() : "";
  if (fp === "") return undefined;
  const resolved = resolveFieldPath(fp, schema, true);
  if ("error" in resolved) return undefined;
  // ValidFieldPath: declared properties are children (`a.b`), additionalProperties keys are keys (`a[k]`).
  let out = "";
  let current: JSONSchemaProps | undefined = schema;
  for (const name of resolved.path) {
    const prop: JSONSchemaProps | undefined = ownSchema(current?.properties, name);
    if (prop) {
      out += out === "" ? name : `.${name}`;
      current = prop;
    } else {
      out += `[${name}]`;
      current = typeof current?.additionalProperties === "object" ? current.additionalProperties : undefined;
    }
  }
  return out;
}

function ruleFailure(c: CompiledRule, schema: JSONSchemaProps, path: Path, detail: string): FieldError {
  const sub = normalizedFieldPath(c, schema);
  const at = sub !== undefined ? render(childOf(path, sub)) : render(path);
  // 1.32 shows the schema's type as the bad value (later releases show scalars' values).
  const shown = schemaTypeName(schema);
  switch (c.rule.reason) {
    case "FieldValueForbidden":
      return forbidden(at, detail);
    case "FieldValueRequired":
      return required(at, detail);
    case "FieldValueDuplicate":
      return duplicate(at, shown);
    default:
      return invalid(at, shown, detail);
  }
}

function validateExpressions(
  schema: JSONSchemaProps,
  path: Path,
  obj: unknown,
  old: { value: unknown } | undefined,
  isRoot: boolean,
  ratchet: Ratchet | undefined,
): FieldError[] {
  const rules = compiledRulesOf(schema, isRoot);
  if (rules.length === 0) return [];
  const errs: FieldError[] = [];
  const type = schemaTypeName(schema);
  let self: unknown;
  let oldSelf: unknown;
  for (const c of rules) {
    if (c.error !== undefined) {
      errs.push(invalid(render(path), type, `rule compile error: ${c.error}`));
      continue;
    }
    if (!c.program) continue;
    if (c.usesOldSelf && old === undefined) continue;
    self ??= toCelValue(obj, schema, isRoot);
    const bindings: Record<string, unknown> = { self };
    if (old !== undefined) {
      oldSelf ??= toCelValue(old.value, schema, isRoot);
      bindings["oldSelf"] = oldSelf;
    }
    const result = c.program(bindings);
    if (isCelError(result)) {
      const text = celGoErrorText(result.message);
      const detail = text.startsWith("no such overload")
        ? `'${text}': call arguments did not match a supported operator, function or macro signature for rule: ${ruleErrorString(c)}`
        : `${text} evaluating rule: ${ruleErrorString(c)}`;
      errs.push(invalid(render(path), type, detail));
      continue;
    }
    if (result === true) continue;
    if (!c.usesOldSelf && shouldRatchet(ratchet)) continue;
    const message = typeof c.rule.message === "string" ? c.rule.message : "";
    const detail =
      messageFromExpression(c, bindings) ??
      (message.length > 0 ? message.trim() : `failed rule: ${ruleErrorString(c)}`);
    errs.push(ruleFailure(c, schema, path, detail));
  }
  return errs;
}

/** The old item a new item of a `map` list correlates with (same values of every map key). */
function correlatedListItem(schema: JSONSchemaProps, oldList: unknown, item: unknown): { value: unknown } | undefined {
  if (schema["x-kubernetes-list-type"] !== "map" || !Array.isArray(oldList)) return undefined;
  const keys = schema["x-kubernetes-list-map-keys"] ?? [];
  const rec = asRecord(item);
  if (!rec || keys.length === 0) return undefined;
  const found = oldList.find((o) => {
    const orec = asRecord(o);
    return orec !== undefined && keys.every((k) => jsonEqual(ownValue(orec, k), ownValue(rec, k)));
  });
  return found === undefined ? undefined : { value: found };
}

/** The old item a ratcheting correlation finds (map lists by key, sets by value; atomic lists none). */
function ratchetListItem(schema: JSONSchemaProps, oldList: unknown, item: unknown): { value: unknown } | undefined {
  if (schema["x-kubernetes-list-type"] === "set" && Array.isArray(oldList)) {
    return oldList.some((o) => jsonEqual(o, item)) ? { value: item } : undefined;
  }
  return correlatedListItem(schema, oldList, item);
}

/** Whether a schema node or anything below it carries rules (cached: most of a schema has none). */
const subtreeRules = new WeakMap<JSONSchemaProps, boolean>();
function hasRulesBelow(schema: JSONSchemaProps): boolean {
  const cached = subtreeRules.get(schema);
  if (cached !== undefined) return cached;
  subtreeRules.set(schema, false); // a schema reachable from itself terminates here
  const children: unknown[] = [
    ...Object.values(schema.properties ?? {}),
    schema.additionalProperties,
    schema.items,
    ...(schema.allOf ?? []),
  ];
  const has =
    (schema["x-kubernetes-validations"] ?? []).length > 0 ||
    children.some(
      (c) => c !== null && typeof c === "object" && !Array.isArray(c) && hasRulesBelow(c as JSONSchemaProps),
    );
  subtreeRules.set(schema, has);
  return has;
}

function validateNode(
  schema: JSONSchemaProps | undefined,
  path: Path,
  obj: unknown,
  old: { value: unknown } | undefined,
  isRoot: boolean,
  ratchet: Ratchet | undefined,
): FieldError[] {
  if (!schema || obj === null || obj === undefined || !hasRulesBelow(schema)) return [];
  const oldValue = old && old.value !== null && old.value !== undefined ? old : undefined;
  const errs = validateExpressions(schema, path, obj, oldValue, isRoot, ratchet);
  for (const sub of schema.allOf ?? []) {
    // allOf branches are never ratcheted (validation.go passes only the parent correlation).
    const r = ratchet ? { current: undefined, parentUnchanged: shouldRatchet(ratchet) } : undefined;
    errs.push(...validateNode(sub, path, obj, oldValue, false, r));
  }
  if (Array.isArray(obj)) {
    const items = schema.items !== undefined && !Array.isArray(schema.items) ? schema.items : undefined;
    if (!items) return errs;
    obj.forEach((item, i) => {
      const oldItem = correlatedListItem(schema, oldValue?.value, item);
      const r = ratchetChild(ratchet, item, ratchetListItem(schema, oldValue?.value, item));
      const at = path ? path.index(i) : fieldPath(`[${i}]`);
      errs.push(...validateNode(items, at, item, oldItem, false, r));
    });
    return errs;
  }
  const rec = asRecord(obj);
  if (!rec) return errs;
  const oldRec = asRecord(oldValue?.value);
  const additional = typeof schema.additionalProperties === "object" ? schema.additionalProperties : undefined;
  for (const [k, v] of Object.entries(rec)) {
    const oldChild = oldRec && Object.hasOwn(oldRec, k) ? { value: oldRec[k] } : undefined;
    // apiVersion and kind of the root are never ratcheted (they are not visible to the correlation).
    const r = isRoot && (k === "apiVersion" || k === "kind") ? undefined : ratchetChild(ratchet, v, oldChild);
    if (additional)
      errs.push(...validateNode(additional, path ? path.key(k) : fieldPath(`[${k}]`), v, oldChild, false, r));
    const prop = ownSchema(schema.properties, k);
    if (prop) errs.push(...validateNode(prop, childOf(path, k), v, oldChild, false, r));
  }
  return errs;
}

/**
 * schema-validate.ts's ValidationRulesEvaluator: every `x-kubernetes-validations` failure of `obj`
 * (a whole custom object; `oldObj` is the stored one on update, undefined on create).
 */
export function evaluateCelRules(schema: JSONSchemaProps, obj: unknown, oldObj: unknown): FieldError[] {
  const old = oldObj === undefined || oldObj === null ? undefined : { value: oldObj };
  const ratchet: Ratchet | undefined = old
    ? { current: { value: obj, old: oldObj }, parentUnchanged: false }
    : undefined;
  return validateNode(schema, undefined, obj, old, true, ratchet);
}

/**
 * evaluateCelRules without ratcheting, as 1.32's status strategy runs the rules on a `/status` write
 * (it passes the stored object for oldSelf but no correlation, so unchanged values are not spared;
 * status ratcheting came in 1.33).
 */
export function evaluateCelRulesWithoutRatcheting(
  schema: JSONSchemaProps,
  obj: unknown,
  oldObj: unknown,
): FieldError[] {
  const old = oldObj === undefined || oldObj === null ? undefined : { value: oldObj };
  return validateNode(schema, undefined, obj, old, true, undefined);
}
