/**
 * Schema-aware walks over objects, as structured-merge-diff's `typed` package does them: the field set
 * of a value, the comparison of two values (added / modified / removed paths), the merge of an applied
 * configuration into a live object, and the removal of a set of paths from a value.
 *
 * Type information is the {@link TypeNode} tree of patch-meta.ts: maps are granular unless atomic, lists
 * are atomic, sets (`v:` elements) or associative by key (`k:` elements), untyped values are deduced
 * (maps granular, lists atomic).
 *
 * Caveats:
 * - Scalars are not type-checked (kube-apiserver's schema would reject `replicas: "x"` here); the
 *   object validation that runs after the field manager reports such values instead.
 * - A value whose JSON kind does not match its schema node (a string where a map is declared) is
 *   treated as an atomic leaf rather than refused.
 */
import { setOwn } from "../machinery/own-properties.ts";
import { childType, DEDUCED, LOOSE, structField, type TypeNode } from "../patch/patch-meta.ts";
import { goQuote } from "../validation/go-format.ts";
import { type FieldSet, FieldSetBuilder } from "./field-set.ts";
import {
  compareGoStrings,
  type Json,
  type Path,
  type PathElement,
  pathToString,
  serializePathElement,
} from "./path-element.ts";

type JsonMap = { [key: string]: Json };

function isMap(v: Json | undefined): v is JsonMap {
  return v !== null && v !== undefined && typeof v === "object" && !Array.isArray(v);
}

/** How one node is walked, given its schema node and the value found there. */
export type Shape =
  | { readonly kind: "leaf" }
  | { readonly kind: "map"; readonly atomic: boolean; readonly node: TypeNode }
  | {
      readonly kind: "list";
      readonly atomic: boolean;
      readonly elementType: TypeNode;
      readonly keys?: readonly string[];
      readonly keyDefaults?: Readonly<Record<string, unknown>>;
    };

export function shapeOf(type: TypeNode, value: Json | undefined): Shape {
  switch (type.kind) {
    case "scalar":
      return { kind: "leaf" };
    case "deduced":
      if (isMap(value)) return { kind: "map", atomic: false, node: type };
      if (Array.isArray(value)) return { kind: "list", atomic: true, elementType: type.looseStruct ? LOOSE : DEDUCED };
      return { kind: "leaf" };
    case "map":
      if (value !== null && value !== undefined && !isMap(value)) return { kind: "leaf" };
      return { kind: "map", atomic: type.atomic === true, node: type };
    case "list":
      if (value !== null && value !== undefined && !Array.isArray(value)) return { kind: "leaf" };
      return {
        kind: "list",
        atomic: type.listType === "atomic",
        elementType: type.elementType,
        ...(type.listType === "map" ? { keys: type.keys ?? [], keyDefaults: type.keyDefaults } : {}),
      };
  }
}

/** Validation errors in structured-merge-diff's form (`.spec.x: message`). */
export class TypedValueError extends Error {
  constructor(readonly errors: { path: string; message: string }[]) {
    super(
      errors.length === 1 ? formatOne(errors[0]!) : ["errors:", ...errors.map((e) => "  " + formatOne(e))].join("\n"),
    );
    this.name = "TypedValueError";
  }
}

function formatOne(e: { path: string; message: string }): string {
  return e.path === "" ? e.message : `${e.path}: ${e.message}`;
}

/** The path element of a list item (listItemToPathElement), or an error message. */
export function itemElement(
  shape: Extract<Shape, { kind: "list" }>,
  item: Json,
): { pe: PathElement } | { error: string } {
  if (shape.keys && shape.keys.length > 0) {
    if (item === null) return { error: "associative list with keys may not have a null element" };
    if (!isMap(item)) return { error: "associative list with keys may not have non-map elements" };
    const fields: [string, Json][] = [];
    for (const k of shape.keys) {
      if (Object.hasOwn(item, k)) fields.push([k, item[k]!]);
      else if (shape.keyDefaults && Object.hasOwn(shape.keyDefaults, k)) fields.push([k, shape.keyDefaults[k] as Json]);
      // structured-merge-diff v4.4 (Kubernetes 1.32) requires every key; optional keys came later.
      else
        return {
          error: `associative list with keys has an element that omits key field ${goQuote(k)} (and doesn't have default value)`,
        };
    }
    fields.sort((a, b) => compareGoStrings(a[0], b[0]));
    return { pe: { key: fields } };
  }
  if (isMap(item)) return { error: "associative list without keys has an element that's a map type" };
  if (Array.isArray(item)) return { error: "not supported: associative list with lists as elements" };
  if (item === null) return { error: "associative list without keys has an element that's an explicit null" };
  return { pe: { value: item } };
}

/** Identity of a path element within one list (its fieldsV1 key). */
function peKey(pe: PathElement): string {
  return serializePathElement(pe);
}

/**
 * Validates a value against its type as the typed conversion does: list items must yield path
 * elements, duplicates are refused unless `allowDuplicates` (live objects may hold them), closed
 * structs refuse unknown fields. Throws {@link TypedValueError}.
 */
export function validateTyped(value: Json, type: TypeNode, allowDuplicates: boolean): void {
  const errors: { path: string; message: string }[] = [];
  const walk = (v: Json, t: TypeNode, path: Path): void => {
    const shape = shapeOf(t, v);
    if (shape.kind === "map" && isMap(v)) {
      for (const [k, child] of Object.entries(v)) {
        if (t.kind === "map" && t.closed && !structField(t, k) && !t.elementType) {
          errors.push({ path: pathToString([...path, { field: k }]), message: "field not declared in schema" });
          return;
        }
        walk(child, childType(t, k).type, [...path, { field: k }]);
      }
    } else if (shape.kind === "list" && Array.isArray(v) && !shape.atomic) {
      const seen = new Set<string>();
      v.forEach((item, i) => {
        const r = itemElement(shape, item);
        if ("error" in r) {
          errors.push({ path: pathToString(path), message: `element ${i}: ${r.error}` });
          return;
        }
        const k = peKey(r.pe);
        if (seen.has(k) && !allowDuplicates) {
          errors.push({ path: pathToString(path), message: `duplicate entries for key ${pathToString([r.pe])}` });
        }
        seen.add(k);
        walk(item, shape.elementType, [...path, r.pe]);
      });
    }
  };
  walk(value, type, []);
  if (errors.length > 0) throw new TypedValueError(errors);
}

/** ToFieldSet: the paths a value sets (leaves, list items, map entries that are not struct fields). */
export function toFieldSet(value: Json, type: TypeNode): FieldSet {
  const b = new FieldSetBuilder();
  const walk = (v: Json, t: TypeNode, path: PathElement[]): void => {
    const shape = shapeOf(t, v);
    if (shape.kind === "leaf" || shape.atomic) {
      b.insert(path);
      return;
    }
    if (shape.kind === "list") {
      if (!Array.isArray(v)) return;
      const items = v.map((item) => itemElement(shape, item));
      const counts = new Map<string, number>();
      for (const r of items) if ("pe" in r) counts.set(peKey(r.pe), (counts.get(peKey(r.pe)) ?? 0) + 1);
      const duplicateDone = new Set<string>();
      items.forEach((r, i) => {
        if (!("pe" in r)) return;
        const k = peKey(r.pe);
        if ((counts.get(k) ?? 0) > 1) {
          // Duplicated items are owned as a whole, never descended into.
          if (!duplicateDone.has(k)) b.insert([...path, r.pe]);
          duplicateDone.add(k);
          return;
        }
        walk(v[i]!, shape.elementType, [...path, r.pe]);
        b.insert([...path, r.pe]);
      });
      return;
    }
    if (!isMap(v)) return;
    for (const [k, child] of Object.entries(v)) {
      const { type: ct, isField } = childType(t, k);
      const childPath = [...path, { field: k }];
      walk(child, ct, childPath);
      if (child === null || (isMap(child) && Object.keys(child).length === 0) || !isField) b.insert(childPath);
    }
  };
  walk(value, type, []);
  return b.build();
}

/** The result of comparing two versions of an object. No path is in more than one set. */
export interface Comparison {
  added: FieldSet;
  modified: FieldSet;
  removed: FieldSet;
}

export function isEmptyContainer(v: Json | undefined): boolean {
  if (v === undefined || v === null) return true;
  if (Array.isArray(v)) return v.length === 0;
  if (isMap(v)) return Object.keys(v).length === 0;
  return false;
}

/** Deep equality of decoded JSON values (key order ignored). */
export function jsonEqual(a: Json | undefined, b: Json | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => jsonEqual(x, b[i]));
  }
  if (typeof a === "object") {
    if (typeof b !== "object" || Array.isArray(b)) return false;
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    return ka.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], (b as JsonMap)[k]));
  }
  return false;
}

/** Groups list items by path element, keeping first-seen order; items without one are skipped. */
function indexItems(shape: Extract<Shape, { kind: "list" }>, list: Json[] | undefined) {
  const order: PathElement[] = [];
  const byKey = new Map<string, Json[]>();
  for (const item of list ?? []) {
    const r = itemElement(shape, item);
    if (!("pe" in r)) continue;
    const k = peKey(r.pe);
    const existing = byKey.get(k);
    if (existing) existing.push(item);
    else {
      byKey.set(k, [item]);
      order.push(r.pe);
    }
  }
  return { order, byKey };
}

/** Compare: which paths the right-hand value added, modified or removed relative to the left. */
export function compareTyped(lhs: Json | undefined, rhs: Json | undefined, type: TypeNode): Comparison {
  const added = new FieldSetBuilder();
  const modified = new FieldSetBuilder();
  const removed = new FieldSetBuilder();

  const leaf = (l: Json | undefined, r: Json | undefined, path: PathElement[]): void => {
    if (l === undefined) added.insert(path);
    else if (r === undefined) removed.insert(path);
    else if (!jsonEqual(l, r)) modified.insert(path);
  };

  const walk = (l: Json | undefined, r: Json | undefined, t: TypeNode, path: PathElement[]): void => {
    const ls = shapeOf(t, l);
    const rs = shapeOf(t, r);
    const shape = r === undefined ? ls : rs;
    const kindsDiffer = l !== undefined && r !== undefined && ls.kind !== rs.kind;
    if (kindsDiffer || shape.kind === "leaf" || shape.atomic || (isEmptyContainer(l) && isEmptyContainer(r))) {
      leaf(l, r, path);
      return;
    }
    if (shape.kind === "list") {
      const left = indexItems(shape, Array.isArray(l) ? l : undefined);
      const right = indexItems(shape, Array.isArray(r) ? r : undefined);
      const all = [...left.order, ...right.order.filter((pe) => !left.byKey.has(peKey(pe)))];
      for (const pe of all) {
        const ll = left.byKey.get(peKey(pe)) ?? [];
        const rl = right.byKey.get(peKey(pe)) ?? [];
        const itemPath = [...path, pe];
        if (ll.length <= 1 && rl.length <= 1) {
          walk(ll[0], rl[0], shape.elementType, itemPath);
        } else if (ll.length >= 2 && rl.length >= 2) {
          if (!(ll.length === rl.length && ll.every((x, i) => jsonEqual(x, rl[i])))) modified.insert(itemPath);
        } else if (ll.length >= 2) {
          if (rl.length !== 0) walk(undefined, rl[0], shape.elementType, itemPath);
          removed.insert(itemPath);
        } else {
          if (ll.length !== 0) walk(ll[0], undefined, shape.elementType, itemPath);
          added.insert(itemPath);
        }
      }
    } else {
      const lm = isMap(l) ? l : {};
      const rm = isMap(r) ? r : {};
      // Keys are user data: a key one side lacks is undefined there, never an Object.prototype member.
      for (const k of Object.keys(lm)) {
        walk(lm[k], Object.hasOwn(rm, k) ? rm[k] : undefined, childType(t, k).type, [...path, { field: k }]);
      }
      for (const k of Object.keys(rm)) {
        if (!Object.hasOwn(lm, k)) walk(undefined, rm[k], childType(t, k).type, [...path, { field: k }]);
      }
    }
    if (l === undefined) added.insert(path);
    else if (r === undefined) removed.insert(path);
  };

  walk(lhs, rhs, type, []);
  return { added: added.build(), modified: modified.build(), removed: removed.build() };
}

/**
 * Merge: the applied configuration (`rhs`) merged into the live object (`lhs`). Leaves and atomic
 * values take the configuration's value; maps merge by key; associative lists merge by element, in
 * structured-merge-diff's order (configuration order, live-only items kept where they were).
 * Throws {@link TypedValueError} for duplicate keys in the configuration.
 */
export function mergeTyped(lhs: Json | undefined, rhs: Json | undefined, type: TypeNode): Json | undefined {
  const errors: { path: string; message: string }[] = [];

  const walk = (l: Json | undefined, r: Json | undefined, t: TypeNode, path: Path): Json | undefined => {
    const ls = shapeOf(t, l);
    const rs = shapeOf(t, r);
    const shape = r === undefined ? ls : rs;
    const kindsDiffer = l !== undefined && r !== undefined && ls.kind !== rs.kind;
    if (kindsDiffer || shape.kind === "leaf" || shape.atomic || (isEmptyContainer(l) && isEmptyContainer(r))) {
      return r !== undefined ? r : l;
    }
    if (shape.kind === "list") {
      const out = mergeList(shape, Array.isArray(l) ? l : [], Array.isArray(r) ? r : [], path);
      return out.length > 0 ? out : undefined;
    }
    const lm = isMap(l) ? l : {};
    const rm = isMap(r) ? r : {};
    const out: JsonMap = {};
    // As in compareTyped; `out` gets `__proto__` as a key, not as its prototype.
    for (const k of Object.keys(lm)) {
      const v = walk(lm[k], Object.hasOwn(rm, k) ? rm[k] : undefined, childType(t, k).type, [...path, { field: k }]);
      if (v !== undefined) setOwn(out, k, v);
    }
    for (const k of Object.keys(rm)) {
      if (Object.hasOwn(lm, k)) continue;
      const v = walk(undefined, rm[k], childType(t, k).type, [...path, { field: k }]);
      if (v !== undefined) setOwn(out, k, v);
    }
    return Object.keys(out).length > 0 ? out : undefined;
  };

  const mergeList = (shape: Extract<Shape, { kind: "list" }>, lhsList: Json[], rhsList: Json[], path: Path): Json[] => {
    const rhsPEs: PathElement[] = [];
    const rhsBy = new Map<string, Json>();
    rhsList.forEach((item, i) => {
      const r = itemElement(shape, item);
      if ("error" in r) {
        errors.push({ path: pathToString(path), message: `element ${i}: ${r.error}` });
        return;
      }
      const k = peKey(r.pe);
      if (rhsBy.has(k)) {
        errors.push({ path: pathToString(path), message: `duplicate entries for key ${pathToString([r.pe])}` });
        return;
      }
      rhsBy.set(k, item);
      rhsPEs.push(r.pe);
    });
    const lhsPEs: PathElement[] = [];
    const lhsBy = new Map<string, Json | undefined>();
    lhsList.forEach((item, i) => {
      const r = itemElement(shape, item);
      if ("error" in r) {
        errors.push({ path: pathToString(path), message: `element ${i}: ${r.error}` });
        return;
      }
      const k = peKey(r.pe);
      // Duplicated live items merge as absent: the configuration's item replaces them all.
      lhsBy.set(k, lhsBy.has(k) ? undefined : item);
      lhsPEs.push(r.pe);
    });
    if (errors.length > 0) return [];

    const out: Json[] = [];
    const shared = rhsPEs.filter((pe) => lhsBy.has(peKey(pe))).map(peKey);
    let nextShared: string | undefined = shared.shift();
    const mergedRhs = new Set<string>();
    const item = (pe: PathElement, l: Json | undefined, r: Json | undefined) => {
      const v = walk(l, r, shape.elementType, [...path, pe]);
      if (v !== undefined) out.push(v);
    };
    let li = 0;
    let ri = 0;
    while (li < lhsPEs.length || ri < rhsPEs.length) {
      if (li < lhsPEs.length && ri < rhsPEs.length) {
        const lk = peKey(lhsPEs[li]!);
        if (lk === peKey(rhsPEs[ri]!)) {
          mergedRhs.add(lk);
          item(lhsPEs[li]!, lhsBy.get(lk), rhsBy.get(lk));
          li++;
          ri++;
          nextShared = shared.shift();
          continue;
        }
        if (rhsBy.has(lk) && nextShared !== undefined && nextShared !== lk) {
          li++;
          continue;
        }
      }
      if (li < lhsPEs.length) {
        const lk = peKey(lhsPEs[li]!);
        if (!rhsBy.has(lk)) {
          item(lhsPEs[li]!, lhsList[li], undefined);
          li++;
          continue;
        }
        if (mergedRhs.has(lk)) li++;
      }
      if (ri < rhsPEs.length) {
        const rk = peKey(rhsPEs[ri]!);
        mergedRhs.add(rk);
        item(rhsPEs[ri]!, lhsBy.get(rk), rhsBy.get(rk));
        ri++;
        if (nextShared !== undefined && nextShared === rk) nextShared = shared.shift();
      }
    }
    return out;
  };

  const result = walk(lhs, rhs, type, []);
  if (errors.length > 0) throw new TypedValueError(errors);
  return result;
}

/**
 * RemoveItems: the value without the paths of `toRemove` (a path removes its whole subtree). A map or
 * list left empty by the removal disappears (kube-apiserver's typed round trip drops it for built-in
 * kinds; custom resources get it as a non-nullable null that defaulting prunes).
 */
export function removeTyped(value: Json | undefined, toRemove: FieldSet, type: TypeNode): Json | undefined {
  if (value === undefined) return undefined;
  const shape = shapeOf(type, value);
  if (shape.kind === "leaf") return value;
  if (isEmptyContainer(value)) return value;
  if (shape.atomic) return undefined;
  if (shape.kind === "list") {
    const out: Json[] = [];
    for (const item of value as Json[]) {
      const r = itemElement(shape, item);
      if (!("pe" in r)) {
        out.push(item);
        continue;
      }
      if (toRemove.has([r.pe])) continue;
      const sub = toRemove.withPrefix(r.pe);
      const v = sub.isEmpty() ? item : removeTyped(item, sub, shape.elementType);
      if (v !== undefined) out.push(v);
    }
    return out.length > 0 ? out : undefined;
  }
  const out: JsonMap = {};
  for (const [k, v] of Object.entries(value as JsonMap)) {
    const pe = { field: k };
    if (toRemove.has([pe])) continue;
    const sub = toRemove.withPrefix(pe);
    const nv = sub.isEmpty() ? v : removeTyped(v, sub, childType(type, k).type);
    if (nv !== undefined) setOwn(out, k, nv);
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * EnsureNamedFieldsAreMembers: every struct field that has children in the set also becomes a member,
 * so that removing the set removes the struct when nothing else keeps it.
 */
export function ensureNamedFieldsAreMembers(set: FieldSet, type: TypeNode): FieldSet {
  // Unlisted keys of a built-in struct (LOOSE) count as named fields: in Go they are declared fields.
  return set.mapLevel(
    (pe) => "field" in pe && childType(type, pe.field).isField,
    (pe, sub) => {
      let ct: TypeNode = DEDUCED;
      if ("field" in pe) ct = childType(type, pe.field).type;
      else if ("key" in pe && type.kind === "list") ct = type.elementType;
      return ensureNamedFieldsAreMembers(sub, ct);
    },
  );
}
