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
import { childType, type TypeNode } from "../patch/patch-meta.ts";
import type { FieldsV1 } from "./field-set.ts";
import {
  compareGoStrings,
  comparePathElements,
  type Json,
  type PathElement,
  serializePathElement,
} from "./path-element.ts";
import { isEmptyContainer, itemElement, shapeOf } from "./typed.ts";

type JsonMap = { [key: string]: Json };

/** Top-level fields nobody owns (stripMetaManager). */
const STRIPPED_TOP = new Set(["apiVersion", "kind"]);
/** metadata fields nobody owns (stripMetaManager); `metadata` itself is not a member either. */
const STRIPPED_META = new Set([
  "name",
  "namespace",
  "creationTimestamp",
  "selfLink",
  "uid",
  "clusterName",
  "generation",
  "managedFields",
  "resourceVersion",
]);

function isMap(v: Json | undefined): v is JsonMap {
  return v !== null && v !== undefined && typeof v === "object" && !Array.isArray(v);
}

/** The entry of one child: `{}` for a leaf, `{".": {}, ...children}` for a container member. */
function entryOf(value: Json, type: TypeNode): FieldsV1 {
  const children = addedChildren(value, type);
  if (children === undefined) return {};
  return { ".": {}, ...children };
}

/** The children a newly added value contributes, or undefined when the value is a leaf. */
function addedChildren(value: Json, type: TypeNode): FieldsV1 | undefined {
  const shape = shapeOf(type, value);
  if (shape.kind === "leaf" || shape.atomic || isEmptyContainer(value)) return undefined;
  if (shape.kind === "list") {
    if (!Array.isArray(value)) return undefined;
    const byKey = new Map<string, { pe: PathElement; item: Json; count: number }>();
    for (const item of value) {
      const r = itemElement(shape, item);
      if (!("pe" in r)) continue;
      const k = serializePathElement(r.pe);
      const seen = byKey.get(k);
      if (seen) seen.count++;
      else byKey.set(k, { pe: r.pe, item, count: 1 });
    }
    const items = [...byKey.entries()].sort((a, b) => comparePathElements(a[1].pe, b[1].pe));
    const out: FieldsV1 = {};
    // Duplicated items are owned as a whole, never descended into.
    for (const [k, { item, count }] of items) out[k] = count > 1 ? {} : entryOf(item, shape.elementType);
    return out;
  }
  if (!isMap(value)) return undefined;
  const out: FieldsV1 = {};
  for (const k of Object.keys(value).sort(compareGoStrings))
    out[`f:${k}`] = entryOf(value[k]!, childType(type, k).type);
  return out;
}

/**
 * The fieldsV1 of what creating `obj` gives its manager (see the file comment), or undefined when it
 * owns nothing (the object then carries no managedFields). `resetFields` are top-level field names.
 */
export function createdFieldsV1(obj: JsonMap, type: TypeNode, resetFields: readonly string[]): FieldsV1 | undefined {
  const out: FieldsV1 = {};
  for (const k of Object.keys(obj).sort(compareGoStrings)) {
    if (STRIPPED_TOP.has(k) || resetFields.includes(k)) continue;
    const value = obj[k]!;
    const { type: childTypeNode } = childType(type, k);
    if (k === "metadata" && isMap(value)) {
      const meta: FieldsV1 = {};
      const metaType = childTypeNode;
      for (const mk of Object.keys(value).sort(compareGoStrings)) {
        if (STRIPPED_META.has(mk)) continue;
        meta[`f:${mk}`] = entryOf(value[mk]!, childType(metaType, mk).type);
      }
      if (Object.keys(meta).length > 0) out["f:metadata"] = meta;
      continue;
    }
    if (k === "metadata") continue;
    out[`f:${k}`] = entryOf(value, childTypeNode);
  }
  return Object.keys(out).length > 0 ? out : undefined;
}
