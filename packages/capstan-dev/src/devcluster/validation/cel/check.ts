/**
 * A small static check of a parsed rule against the schema it sits on: the compile errors operators
 * actually hit, with cel-go's texts and positions (`ERROR: <input>:1:5: undefined field 'foo'`).
 *
 * Reported (as cel-go's checker reports them):
 * - `undefined field 'x'`: selecting a property the schema does not declare (objects with
 *   `properties`; on a resource root only apiVersion, kind, metadata and the declared properties; of
 *   metadata only name and generateName);
 * - `undeclared reference to 'x' (in container '')`: an identifier that is not `self`, `oldSelf`, a
 *   comprehension variable or a type name;
 * - the result kind, so the caller can refuse a rule that cannot evaluate to a bool (or a
 *   messageExpression that cannot evaluate to a string).
 * Caveats: this is not cel-go's full type checker. Overload mismatches (`'string' + 1`) and unknown
 * function names are found at evaluation instead (`... evaluating rule: ...`), never at CRD creation,
 * so a CRD the real server accepts is never refused here.
 */
import type { parse } from "@bufbuild/cel";
import type { JSONSchemaProps } from "../schema-types.ts";
import { celPropertyNames } from "./values.ts";

type Expr = ReturnType<typeof parse>["expr"];

/** What the check knows of an expression's type: a CEL kind, and the schema node when it has one. */
export interface StaticType {
  kind:
    | "bool"
    | "int"
    | "uint"
    | "double"
    | "string"
    | "bytes"
    | "timestamp"
    | "duration"
    | "list"
    | "map"
    | "object"
    | "null"
    | "dyn";
  schema?: JSONSchemaProps;
  /** A resource root (its metadata is restricted) or the restricted metadata itself. */
  resource?: "root" | "metadata";
}

/** One compile issue at a character offset of the source. */
export interface CheckIssue {
  offset: number;
  message: string;
}

const DYN: StaticType = { kind: "dyn" };
const TYPE_NAMES = new Set([
  "int",
  "uint",
  "double",
  "bool",
  "string",
  "bytes",
  "list",
  "map",
  "null_type",
  "type",
  "dyn",
]);
const BOOL_FUNCTIONS = new Set([
  "_==_",
  "_!=_",
  "_<_",
  "_<=_",
  "_>_",
  "_>=_",
  "_&&_",
  "_||_",
  "!_",
  "@in",
  "@not_strictly_false",
  "matches",
  "startsWith",
  "endsWith",
  "contains",
  "isSorted",
  "sets.contains",
  "sets.equivalent",
  "sets.intersects",
]);
const STRING_FUNCTIONS = new Set([
  "string",
  "lowerAscii",
  "upperAscii",
  "replace",
  "substring",
  "trim",
  "charAt",
  "join",
  "format",
  "find",
]);
const INT_FUNCTIONS = new Set(["size", "int", "indexOf", "lastIndexOf"]);
const CONVERSIONS: Record<string, StaticType["kind"]> = {
  double: "double",
  uint: "uint",
  bytes: "bytes",
  bool: "bool",
};

/** The static type of a value of `schema` (a structural schema node). */
export function schemaStaticType(schema: JSONSchemaProps | undefined, resourceRoot = false): StaticType {
  if (!schema || schema["x-kubernetes-int-or-string"] === true) return DYN;
  switch (schema.type) {
    case "boolean":
      return { kind: "bool", schema };
    case "integer":
      return { kind: "int", schema };
    case "number":
      return { kind: "double", schema };
    case "string":
      if (schema.format === "byte") return { kind: "bytes", schema };
      if (schema.format === "date" || schema.format === "date-time") return { kind: "timestamp", schema };
      if (schema.format === "duration") return { kind: "duration", schema };
      return { kind: "string", schema };
    case "array":
      return { kind: "list", schema };
    case "object": {
      const resource = resourceRoot || schema["x-kubernetes-embedded-resource"] === true;
      if (Object.keys(schema.properties ?? {}).length > 0 || resource) {
        return { kind: "object", schema, ...(resource ? { resource: "root" as const } : {}) };
      }
      if (schema.additionalProperties !== undefined && schema.additionalProperties !== false) {
        return { kind: "map", schema };
      }
      return DYN;
    }
    default:
      return DYN;
  }
}

/** The type of field `name` of an object type, or undefined when the object does not declare it. */
function fieldType(t: StaticType, name: string): StaticType | undefined {
  if (t.resource === "metadata") return name === "name" || name === "generateName" ? { kind: "string" } : undefined;
  if (t.resource === "root") {
    if (name === "apiVersion" || name === "kind") return { kind: "string" };
    if (name === "metadata") return { kind: "object", resource: "metadata" };
  }
  const schema = t.schema!;
  const raw = celPropertyNames(schema).get(name);
  if (raw === undefined) return undefined;
  return schemaStaticType(schema.properties?.[raw]);
}

function elementType(t: StaticType): StaticType {
  if (t.kind === "list" && t.schema?.items && !Array.isArray(t.schema.items)) return schemaStaticType(t.schema.items);
  if (t.kind === "map") return { kind: "string" };
  return DYN;
}

function mapValueType(t: StaticType): StaticType {
  const ap = t.schema?.additionalProperties;
  return typeof ap === "object" ? schemaStaticType(ap) : DYN;
}

/** Whether an expression is a (possibly dotted) name not bound in scope: a qualified function's prefix. */
function isUnboundQualifier(e: Expr | undefined, scope: ReadonlyMap<string, StaticType>): boolean {
  if (!e) return false;
  if (e.exprKind.case === "identExpr") return !scope.has(e.exprKind.value.name);
  if (e.exprKind.case === "selectExpr") return isUnboundQualifier(e.exprKind.value.operand, scope);
  return false;
}

/** Checks `expr`; returns its static type and appends issues (offsets from `positions`). */
export function checkExpr(
  expr: Expr,
  scope: ReadonlyMap<string, StaticType>,
  positions: Readonly<Record<string, number>>,
  issues: CheckIssue[],
): StaticType {
  const at = (e: Expr) => positions[String(e.id)] ?? 0;
  const walk = (e: Expr, sc: ReadonlyMap<string, StaticType>): StaticType => {
    const k = e.exprKind;
    switch (k.case) {
      case "constExpr": {
        const c = k.value.constantKind.case;
        if (c === "boolValue") return { kind: "bool" };
        if (c === "int64Value") return { kind: "int" };
        if (c === "uint64Value") return { kind: "uint" };
        if (c === "doubleValue") return { kind: "double" };
        if (c === "stringValue") return { kind: "string" };
        if (c === "bytesValue") return { kind: "bytes" };
        if (c === "nullValue") return { kind: "null" };
        return DYN;
      }
      case "identExpr": {
        const name = k.value.name;
        const bound = sc.get(name);
        if (bound) return bound;
        if (TYPE_NAMES.has(name)) return DYN;
        issues.push({ offset: at(e), message: `undeclared reference to '${name}' (in container '')` });
        return DYN;
      }
      case "selectExpr": {
        const { operand, field, testOnly } = k.value;
        if (!operand) return DYN;
        const t = walk(operand, sc);
        let out: StaticType = DYN;
        if (t.kind === "object") {
          const f = fieldType(t, field);
          if (f === undefined) issues.push({ offset: at(e), message: `undefined field '${field}'` });
          else out = f;
        } else if (t.kind === "map") out = mapValueType(t);
        return testOnly ? { kind: "bool" } : out;
      }
      case "callExpr": {
        const { target, args } = k.value;
        const fn = k.value.function;
        if (target && !isUnboundQualifier(target, sc)) walk(target, sc);
        const argTypes = args.map((a) => walk(a, sc));
        if (BOOL_FUNCTIONS.has(fn)) return { kind: "bool" };
        if (STRING_FUNCTIONS.has(fn)) return { kind: "string" };
        if (INT_FUNCTIONS.has(fn)) return { kind: "int" };
        if (fn === "split" || fn === "findAll") return { kind: "list" };
        if (CONVERSIONS[fn]) return { kind: CONVERSIONS[fn]! };
        if (fn === "_?_:_") return argTypes[1] ?? DYN;
        if (fn === "_[_]") {
          const container = argTypes[0] ?? DYN;
          return container.kind === "list"
            ? elementType(container)
            : container.kind === "map"
              ? mapValueType(container)
              : DYN;
        }
        if (["_+_", "_-_", "_*_", "_/_", "_%_", "-_"].includes(fn)) {
          const first = argTypes[0] ?? DYN;
          return first.kind === "list" ? { kind: "list" } : { kind: first.kind };
        }
        return DYN;
      }
      case "listExpr":
        for (const el of k.value.elements) walk(el, sc);
        return { kind: "list" };
      case "structExpr":
        for (const entry of k.value.entries) {
          if (entry.keyKind.case === "mapKey") walk(entry.keyKind.value, sc);
          if (entry.value) walk(entry.value, sc);
        }
        return { kind: "map" };
      case "comprehensionExpr": {
        const c = k.value;
        const range = c.iterRange ? walk(c.iterRange, sc) : DYN;
        const accu = c.accuInit ? walk(c.accuInit, sc) : DYN;
        const inner = new Map(sc);
        inner.set(c.iterVar, elementType(range));
        if (c.iterVar2) inner.set(c.iterVar2, DYN);
        inner.set(c.accuVar, accu);
        if (c.loopCondition) walk(c.loopCondition, inner);
        if (c.loopStep) walk(c.loopStep, inner);
        const resultScope = new Map(sc);
        resultScope.set(c.accuVar, accu);
        return c.result ? walk(c.result, resultScope) : DYN;
      }
      default:
        return DYN;
    }
  };
  return walk(expr, scope);
}

/** Whether the expression references the identifier `name` (e.g. oldSelf) outside any shadowing scope. */
export function referencesIdent(expr: Expr, name: string): boolean {
  const walk = (e: Expr | undefined, shadowed: boolean): boolean => {
    if (!e) return false;
    const k = e.exprKind;
    switch (k.case) {
      case "identExpr":
        return !shadowed && k.value.name === name;
      case "selectExpr":
        return walk(k.value.operand, shadowed);
      case "callExpr":
        return walk(k.value.target, shadowed) || k.value.args.some((a) => walk(a, shadowed));
      case "listExpr":
        return k.value.elements.some((x) => walk(x, shadowed));
      case "structExpr":
        return k.value.entries.some(
          (en) => (en.keyKind.case === "mapKey" && walk(en.keyKind.value, shadowed)) || walk(en.value, shadowed),
        );
      case "comprehensionExpr": {
        const c = k.value;
        const inner = shadowed || c.iterVar === name || c.iterVar2 === name || c.accuVar === name;
        return (
          walk(c.iterRange, shadowed) ||
          walk(c.accuInit, shadowed) ||
          walk(c.loopCondition, inner) ||
          walk(c.loopStep, inner) ||
          walk(c.result, shadowed || c.accuVar === name)
        );
      }
      default:
        return false;
    }
  };
  return walk(expr, false);
}
