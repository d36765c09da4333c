/**
 * The fieldsV1 document a creating manager owns, computed in one walk of the new object. Every create
 * records one (kube-apiserver tracks managedFields on create), so this is on the create hot path: the
 * general route (compare an empty object with the new one, build field sets, subtract the stripped
 * metadata, encode) costs about ten times more for the same answer.
 *
 * Guarantees: for an object created without client-sent managedFields, the result equals the fieldsV1
 * of `trackUpdate(undefined, obj, ...)`'s single entry (test/devcluster/apply/created-fields.test.ts
 * compares the two on built-in and custom kinds): structured-merge-diff's Compare of an empty object
 * with `obj` (maps and associative-list items are members with their children, atomic values and empty
 * containers are leaves, duplicated list items are owned whole), minus the fields stripMetaManager
 * strips, minus the reset fields. Keys come out in the real server's order.
 *
 * Assumptions: the reset fields are whole top-level fields (`status` on a main resource, `spec` on
 * `/status`); callers with other reset fields take the general route.
 */
import { DEDUCED, LOOSE, structField, type TypeNode } from "../patch/patch-meta.ts";
import { STRIPPED_METADATA_FIELDS, STRIPPED_TOP_FIELDS } from "./field-manager.ts";
import type { FieldsV1 } from "./field-set.ts";
import {
  compareGoStrings,
  comparePathElements,
  type Json,
  type PathElement,
  serializePathElement,
} from "./path-element.ts";
import { itemElement, shapeOf } from "./typed.ts";

type JsonMap = { [key: string]: Json };

/** Top-level fields nobody owns (stripMetaManager). */
const STRIPPED_TOP = new Set(STRIPPED_TOP_FIELDS);
/** metadata fields nobody owns (stripMetaManager); `metadata` itself is not a member either. */
const STRIPPED_META = new Set(STRIPPED_METADATA_FIELDS);

function isMap(v: Json | undefined): v is JsonMap {
  return v !== null && v !== undefined && typeof v === "object" && !Array.isArray(v);
}

/** Keys in Go's string order; the default sort agrees with it unless a key holds surrogates. */
function sortedKeys(obj: JsonMap): string[] {
  const keys = Object.keys(obj);
  if (keys.length < 2) return keys;
  for (const k of keys) if (SURROGATE.test(k)) return keys.sort(compareGoStrings);
  return keys.sort();
}
const SURROGATE = /[\ud800-\udfff]/;

/** The type of map entry `k` (patch-meta.ts childType, without its result object: this is the hot path). */
function entryType(type: TypeNode, k: string): TypeNode {
  if (type.kind === "map") return structField(type, k) ?? type.elementType ?? LOOSE;
  return type.kind === "deduced" && type.looseStruct ? LOOSE : DEDUCED;
}

/**
 * The entry of a newly added value: `{}` for a leaf (scalar, atomic, empty container), else
 * `{".": {}, ...children}` (structured-merge-diff's Compare adds the container and its children).
 */
function entryOf(value: Json, type: TypeNode): FieldsV1 {
  if (value === null || typeof value !== "object") return {};
  if (Array.isArray(value)) return listEntry(value, type);
  if (type.kind === "scalar" || (type.kind === "map" && type.atomic) || type.kind === "list") return {};
  const keys = sortedKeys(value);
  if (keys.length === 0) return {};
  const out: FieldsV1 = { ".": {} };
  for (const k of keys) out[`f:${k}`] = entryOf(value[k]!, entryType(type, k));
  return out;
}

function listEntry(value: Json[], type: TypeNode): FieldsV1 {
  const shape = shapeOf(type, value);
  if (shape.kind !== "list" || shape.atomic || value.length === 0) return {};
  const byKey = new Map<string, { pe: PathElement; item: Json; count: number }>();
  for (const item of value) {
    const r = itemElement(shape, item);
    if (!("pe" in r)) continue;
    const k = serializePathElement(r.pe);
    const seen = byKey.get(k);
    if (seen) seen.count++;
    else byKey.set(k, { pe: r.pe, item, count: 1 });
  }
  // Items without a path element are skipped; a list left with none is owned as a leaf.
  if (byKey.size === 0) return {};
  const items = [...byKey.entries()].sort((a, b) => comparePathElements(a[1].pe, b[1].pe));
  const out: FieldsV1 = { ".": {} };
  // Duplicated items are owned as a whole, never descended into.
  for (const [k, { item, count }] of items) out[k] = count > 1 ? {} : entryOf(item, shape.elementType);
  return out;
}

/**
 * The fieldsV1 of what creating `obj` gives its manager (see the file comment), or undefined when it
 * owns nothing (the object then carries no managedFields). `resetFields` are top-level field names.
 */
export function createdFieldsV1(obj: JsonMap, type: TypeNode, resetFields: readonly string[]): FieldsV1 | undefined {
  const out: FieldsV1 = {};
  let any = false;
  for (const k of sortedKeys(obj)) {
    if (STRIPPED_TOP.has(k) || resetFields.includes(k)) continue;
    const value = obj[k]!;
    const childTypeNode = entryType(type, k);
    if (k === "metadata") {
      if (!isMap(value)) continue;
      const meta: FieldsV1 = {};
      let anyMeta = false;
      for (const mk of sortedKeys(value)) {
        if (STRIPPED_META.has(mk)) continue;
        meta[`f:${mk}`] = entryOf(value[mk]!, entryType(childTypeNode, mk));
        anyMeta = true;
      }
      if (anyMeta) {
        out["f:metadata"] = meta;
        any = true;
      }
      continue;
    }
    out[`f:${k}`] = entryOf(value, childTypeNode);
    any = true;
  }
  return any ? out : undefined;
}
