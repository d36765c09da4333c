/**
 * Strategic merge patch (`application/strategic-merge-patch+json`) as kube-apiserver applies it:
 * k8s.io/apimachinery/pkg/util/strategicpatch `StrategicMergeMapPatch` with `MergeParallelList` and
 * `IgnoreUnmatchedNulls` set.
 *
 * Expected flow: the request path decodes the body, looks up the kind's {@link PatchMeta}
 * (patch-meta.ts) and calls {@link strategicMergePatch}(current, patch, meta). Custom resources have no
 * meta: the request path refuses the content type with {@link CUSTOM_RESOURCE_PATCH_TYPES} (415).
 *
 * Guarantees:
 * - Objects merge key by key; `null` deletes a key. Lists with `patchStrategy=merge` merge by their
 *   merge key (objects) or by value (primitives, de-duplicated); other lists are replaced.
 * - Directives: `$patch: replace|delete` in a map, `$patch: delete|replace` elements in a merging list,
 *   `$retainKeys`, `$deleteFromPrimitiveList/<field>`, `$setElementOrder/<field>`; none of them
 *   survive into the result.
 * - Order of merged lists: `$setElementOrder` first, then the patch's order, then the live order, with
 *   the same interleaving as the Go code (new items not in the live list come before server-only ones).
 * - Errors carry the Go messages and the status the handler gives them ({@link StrategicMergePatchError}).
 * - Inputs are not mutated.
 *
 * Assumptions: values are decoded JSON. Numbers that are integers are Go int64, others float64.
 *
 * Caveats: a key the meta does not describe merges like an untagged Go struct field (maps merge,
 * lists replace); the real server would fail to look up metadata for a field its Go type lacks.
 */
import { setOwn } from "../machinery/own-properties.ts";
import { goNumberV } from "../validation/go-format.ts";
import { childType, elementTypeOf, type PatchMeta, type TypeNode } from "./patch-meta.ts";

type Json = null | boolean | number | string | Json[] | JsonMap;
type JsonMap = { [key: string]: Json };

const DIRECTIVE = "$patch";
const RETAIN_KEYS = "$retainKeys";
const DELETE_FROM_PRIMITIVE_LIST = "$deleteFromPrimitiveList";
const SET_ELEMENT_ORDER = "$setElementOrder";

/** Content types a custom resource accepts for PATCH (apiextensions-apiserver leaves strategic merge out). */
export const CUSTOM_RESOURCE_PATCH_TYPES: readonly string[] = [
  "application/json-patch+json",
  "application/merge-patch+json",
  "application/apply-patch+yaml",
];

/** The 415 message kube-apiserver answers when the Content-Type is not one it accepts for the resource. */
export function unsupportedPatchTypeMessage(accepted: readonly string[]): string {
  return `the body of the request was in an unknown format - accepted media types include: ${accepted.join(", ")}`;
}

/** mergepatch.ErrUnsupportedStrategicMergePatchFormat: strategic merge on an object without Go struct tags (400). */
export const UNSUPPORTED_STRATEGIC_MERGE_FORMAT = "strategic merge patch format is not supported";

/**
 * A patch the strategic merge engine rejects. `code` is what kube-apiserver's
 * `interpretStrategicMergePatchError` makes of it: 400 BadRequest for malformed directives, 422 for
 * lists of lists, and 500 (reason unknown) for every other error the library returns as-is.
 */
export class StrategicMergePatchError extends Error {
  readonly code: 400 | 422 | 500;
  constructor(message: string, code: 400 | 422 | 500) {
    super(message);
    this.name = "StrategicMergePatchError";
    this.code = code;
  }
}

const badPatchFormatForPrimitiveList = () =>
  new StrategicMergePatchError("invalid patch format of primitive list", 400);
const badPatchFormatForRetainKeys = () => new StrategicMergePatchError("invalid patch format of retainKeys", 400);
const badPatchFormatForSetElementOrder = () =>
  new StrategicMergePatchError("invalid patch format of setElementOrder list", 400);
const noListOfLists = () => new StrategicMergePatchError("lists of lists are not supported", 422);
const internal = (message: string) => new StrategicMergePatchError(message, 500);

/** Go's reflect type name of a decoded JSON value, for "expected a X, but received a Y" messages. */
function goTypeName(v: Json | undefined): string {
  if (v === null || v === undefined) return "<nil>";
  if (Array.isArray(v)) return "[]interface {}";
  switch (typeof v) {
    case "object":
      return "map[string]interface {}";
    case "string":
      return "string";
    case "boolean":
      return "bool";
    default:
      return Number.isInteger(v) ? "int64" : "float64";
  }
}

/** Go's `%v` of a decoded JSON value: `map[a:1 b:[x y]]`, `<nil>`. */
export function goV(v: Json | undefined): string {
  if (v === null || v === undefined) return "<nil>";
  if (Array.isArray(v)) return `[${v.map(goV).join(" ")}]`;
  switch (typeof v) {
    case "object":
      return `map[${Object.keys(v)
        .sort(compareBytes)
        .map((k) => `${k}:${goV(v[k])}`)
        .join(" ")}]`;
    case "number":
      return goNumberV(v);
    default:
      return String(v);
  }
}

function compareBytes(a: string, b: string): number {
  // Go sorts map keys by bytes (UTF-8), which is code point order, not UTF-16 order.
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

function isMap(v: Json | undefined): v is JsonMap {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** Same Go dynamic type: mergeMap only recurses when original and patch values share one. */
function sameGoType(a: Json, b: Json): boolean {
  return goTypeName(a) === goTypeName(b);
}

function errNoMergeKey(m: JsonMap, key: string): StrategicMergePatchError {
  return internal(`map: ${goV(m)} does not contain declared merge key: ${key}`);
}

function errBadPatchType(t: Json, m: JsonMap): StrategicMergePatchError {
  const shown = typeof t === "string" ? t : `%!s(${goTypeName(t)}=${goV(t)})`;
  return internal(`unknown patch type: ${shown} in map: ${goV(m)}`);
}

function errBadArgType(expected: string, actual: Json | undefined): StrategicMergePatchError {
  return internal(`expected a ${expected}, but received a ${goTypeName(actual)}`);
}

/**
 * Applies a strategic merge patch to `original` (a decoded object) using the kind's patch metadata.
 * Returns a new object; throws {@link StrategicMergePatchError}.
 */
export function strategicMergePatch(
  original: unknown,
  patch: unknown,
  meta: PatchMeta | undefined,
): Record<string, unknown> {
  if (meta === undefined) throw new StrategicMergePatchError(UNSUPPORTED_STRATEGIC_MERGE_FORMAT, 400);
  if (!isMap(patch as Json)) {
    throw new StrategicMergePatchError(
      `json: cannot unmarshal ${jsonKind(patch)} into Go value of type map[string]interface {}`,
      400,
    );
  }
  const base = isMap(original as Json) ? structuredClone(original as JsonMap) : {};
  return mergeMap(base, structuredClone(patch as JsonMap), meta);
}

function jsonKind(v: unknown): string {
  if (Array.isArray(v)) return "array";
  if (v === null) return "null";
  return typeof v === "object" ? "object" : typeof v === "boolean" ? "bool" : typeof v;
}

/** mergeMap: merges `patch` into `original` (both owned copies, mutated). */
function mergeMap(original: JsonMap, patch: JsonMap, meta: TypeNode): JsonMap {
  if (DIRECTIVE in patch) {
    const directive = patch[DIRECTIVE]!;
    if (directive === "replace") {
      delete patch[DIRECTIVE];
      return patch;
    }
    if (directive === "delete") return {};
    throw errBadPatchType(directive, patch);
  }
  applyRetainKeys(original, patch);
  applySetElementOrder(original, patch, meta);

  // Parallel deletion lists first, so that a list and its deletions combine the same way whatever
  // the key order of the patch (Go iterates a map in random order; both orders agree on sane patches).
  const keys = Object.keys(patch).sort(
    (a, b) => Number(!a.startsWith(DELETE_FROM_PRIMITIVE_LIST)) - Number(!b.startsWith(DELETE_FROM_PRIMITIVE_LIST)),
  );
  for (let key of keys) {
    const patchValue = patch[key]!;
    let isDeleteList = false;
    if (key.startsWith(DELETE_FROM_PRIMITIVE_LIST)) {
      key = extractKey(key, DELETE_FROM_PRIMITIVE_LIST);
      isDeleteList = true;
    }
    if (patchValue === null) {
      delete original[key];
      continue;
    }
    // Keys are user data: `constructor` or `__proto__` is absent unless the object owns it.
    if (!Object.hasOwn(original, key)) {
      if (!isDeleteList) setPatchValue(original, key, patchValue);
      continue;
    }
    const originalValue = original[key]!;
    if (!sameGoType(originalValue, patchValue)) {
      if (!isDeleteList) setPatchValue(original, key, patchValue);
      continue;
    }
    const { type } = childType(meta, key);
    if (isMap(originalValue)) {
      original[key] =
        type.kind === "map" && type.replaceOnPatch
          ? (patchValue as JsonMap)
          : mergeMap(originalValue, patchValue as JsonMap, type);
    } else if (Array.isArray(originalValue)) {
      original[key] = mergeSliceHandler(originalValue, patchValue as Json[], type, isDeleteList);
    } else {
      setPatchValue(original, key, patchValue);
    }
  }
  return original;
}

/** Takes a patch value for a key the original lacks (or holds with another type): nulls and directives dropped. */
function setPatchValue(original: JsonMap, key: string, value: Json): void {
  discardNulls(value);
  const [v, keep] = removeDirectives(value);
  if (keep) setOwn(original, key, v);
  else delete original[key];
}

function discardNulls(v: Json): void {
  if (Array.isArray(v)) for (const item of v) discardNulls(item);
  else if (isMap(v)) {
    for (const [k, item] of Object.entries(v)) {
      if (item === null) delete v[k];
      else discardNulls(item);
    }
  }
}

/** removeDirectives: a map carrying `$patch` is dropped entirely; lists drop such elements. */
function removeDirectives(v: Json): [Json, boolean] {
  if (Array.isArray(v)) {
    const out: Json[] = [];
    for (const item of v) {
      const [nv, keep] = removeDirectives(item);
      if (keep) out.push(nv);
    }
    return [out, true];
  }
  if (isMap(v)) {
    if (DIRECTIVE in v) return [null, false];
    for (const [k, item] of Object.entries(v)) {
      const [nv, keep] = removeDirectives(item);
      if (keep) v[k] = nv;
      else delete v[k];
    }
  }
  return [v, true];
}

function extractKey(key: string, prefix: string): string {
  const slash = key.indexOf("/");
  if (slash < 0 || key.slice(0, slash) !== prefix) {
    if (prefix === DELETE_FROM_PRIMITIVE_LIST) throw badPatchFormatForPrimitiveList();
    throw badPatchFormatForSetElementOrder();
  }
  return key.slice(slash + 1);
}

/** `$retainKeys`: keys of the original not listed are cleared; the patch may only set listed keys. */
function applyRetainKeys(original: JsonMap, patch: JsonMap): void {
  if (!(RETAIN_KEYS in patch)) return;
  const retain = patch[RETAIN_KEYS];
  delete patch[RETAIN_KEYS];
  if (!Array.isArray(retain)) throw badPatchFormatForRetainKeys();
  const keep = new Set(retain.map((k) => (typeof k === "string" ? k : JSON.stringify(k))));
  for (const [k, v] of Object.entries(patch)) {
    if (v === null || k.startsWith(DELETE_FROM_PRIMITIVE_LIST) || k.startsWith(SET_ELEMENT_ORDER)) continue;
    if (!keep.has(k)) throw badPatchFormatForRetainKeys();
  }
  for (const k of Object.keys(original)) if (!keep.has(k)) delete original[k];
}

function strategyOf(type: TypeNode): { merge: boolean; mergeKey: string } {
  if (type.kind === "list" && type.strategicMerge) return { merge: true, mergeKey: type.strategicMerge.mergeKey ?? "" };
  return { merge: false, mergeKey: "" };
}

function mergeSliceHandler(original: Json[], patch: Json[], type: TypeNode, isDeleteList: boolean): Json[] {
  const { merge, mergeKey } = strategyOf(type);
  if (merge || isDeleteList) return mergeSlice(original, patch, elementTypeOf(type), mergeKey, isDeleteList, type);
  return patch;
}

/** The common Go type of the elements of some lists (sliceElementType). */
function sliceElementType(...lists: Json[][]): string {
  let prev: string | undefined;
  for (const list of lists) {
    for (const v of list) {
      const t = goTypeName(v);
      if (prev === undefined) {
        prev = t;
        if (t === "[]interface {}") throw noListOfLists();
      } else if (prev !== t) {
        throw internal(`list element types are not identical: [${lists.map((l) => goV(l)).join(" ")}]`);
      }
    }
  }
  if (prev === undefined) throw internal("no elements in any of the given slices");
  return prev;
}

const MAP_TYPE = "map[string]interface {}";

function mergeSlice(
  original: Json[],
  patch: Json[],
  elementType: TypeNode,
  mergeKey: string,
  isDeleteList: boolean,
  listType: TypeNode,
): Json[] {
  if (original.length === 0 && patch.length === 0) return original;
  const kind = sliceElementType(original, patch);
  let merged: Json[];
  let base = original;
  let patchItems = patch;
  if (kind !== MAP_TYPE) {
    if (isDeleteList) return deleteFromSlice(original, patch);
    merged = dedupeScalars([...original, ...patch]);
  } else {
    if (mergeKey === "") throw internal(`cannot merge lists without merge key for ${describe(listType)}`);
    [base, patchItems] = mergeSliceWithSpecialElements(original, patch, mergeKey);
    merged = mergeSliceWithoutSpecialElements([...base], patchItems, mergeKey, elementType);
  }
  const isMapKind = kind === MAP_TYPE;
  const [inPatch, serverOnly] = isMapKind
    ? partitionMaps(merged, patchItems, mergeKey)
    : partitionPrimitives(merged, patchItems);
  return normalizeElementOrder(inPatch, serverOnly, patchItems, base, mergeKey, isMapKind);
}

function describe(type: TypeNode): string {
  return type.kind === "list" ? "list" : type.kind;
}

function deleteFromSlice(current: Json[], toDelete: Json[]): Json[] {
  return current.filter((v) => !toDelete.some((d) => d === v));
}

function dedupeScalars(items: Json[]): Json[] {
  const out: Json[] = [];
  for (const v of items) if (!out.some((o) => o === v)) out.push(v);
  return out;
}

/** Handles `$patch` elements of a merging list of maps: delete by key, replace the whole list. */
function mergeSliceWithSpecialElements(original: Json[], patch: Json[], mergeKey: string): [Json[], Json[]] {
  const plain: Json[] = [];
  let replace = false;
  let base = original;
  for (const v of patch) {
    const item = v as JsonMap;
    if (!(DIRECTIVE in item)) {
      plain.push(v);
      continue;
    }
    const directive = item[DIRECTIVE]!;
    if (directive === "delete") {
      if (!(mergeKey in item)) throw errNoMergeKey(item, mergeKey);
      const value = item[mergeKey];
      base = base.filter((o) => !(isMap(o) && mergeKey in o && o[mergeKey] === value));
    } else if (directive === "replace") {
      replace = true;
    } else if (directive === "merge") {
      throw internal("merging lists cannot yet be specified in the patch");
    } else {
      throw errBadPatchType(directive, item);
    }
  }
  if (replace) return [plain, []];
  return [base, plain];
}

function findByKey(list: Json[], key: string, value: Json): number {
  for (let i = 0; i < list.length; i++) {
    const item = list[i]!;
    if (!isMap(item)) throw internal(`value for key ${i} is not a map`);
    if (key in item && item[key] === value) return i;
  }
  return -1;
}

function mergeSliceWithoutSpecialElements(
  original: Json[],
  patch: Json[],
  mergeKey: string,
  elementType: TypeNode,
): Json[] {
  for (const v of patch) {
    const item = v as JsonMap;
    if (!(mergeKey in item)) throw errNoMergeKey(item, mergeKey);
    const at = findByKey(original, mergeKey, item[mergeKey]!);
    if (at >= 0) original[at] = mergeMap(original[at] as JsonMap, item, elementType);
    else original.push(v);
  }
  return original;
}

function partitionPrimitives(merged: Json[], by: Json[]): [Json[], Json[]] {
  const inPatch: Json[] = [];
  const serverOnly: Json[] = [];
  for (const v of merged) (by.some((b) => b === v) ? inPatch : serverOnly).push(v);
  return [inPatch, serverOnly];
}

function partitionMaps(merged: Json[], by: Json[], mergeKey: string): [Json[], Json[]] {
  const inPatch: Json[] = [];
  const serverOnly: Json[] = [];
  for (const v of merged) {
    if (!isMap(v)) throw errBadArgType(MAP_TYPE, v);
    if (!(mergeKey in v)) throw errNoMergeKey(v, mergeKey);
    (findByKey(by, mergeKey, v[mergeKey]!) >= 0 ? inPatch : serverOnly).push(v);
  }
  return [inPatch, serverOnly];
}

/** Position of `v` in `list`, by merge key value for maps and by value for primitives. */
function indexIn(list: Json[], v: Json, mergeKey: string, isMapKind: boolean): number {
  const identity = (x: Json): Json | undefined => (isMapKind ? (isMap(x) ? x[mergeKey] : undefined) : x);
  const target = identity(v);
  for (let i = 0; i < list.length; i++) if (identity(list[i]!) === target) return i;
  return -1;
}

function normalizeSliceOrder(toSort: Json[], order: Json[], mergeKey: string, isMapKind: boolean): Json[] {
  let items = toSort;
  let deletes: Json[] = [];
  if (isMapKind) {
    for (const list of [toSort, order]) {
      for (const item of list) {
        if (!isMap(item)) throw errBadArgType(MAP_TYPE, item);
        if (!(mergeKey in item)) throw errNoMergeKey(item, mergeKey);
      }
    }
    items = toSort.filter((v) => (v as JsonMap)[DIRECTIVE] !== "delete");
    deletes = toSort.filter((v) => (v as JsonMap)[DIRECTIVE] === "delete");
  }
  const ranked = items.map((v, i) => ({ v, i, at: indexIn(order, v, mergeKey, isMapKind) }));
  // Items missing from `order` keep their place relative to each other (sort.SliceStable, found ones ranked).
  ranked.sort((a, b) => (a.at >= 0 && b.at >= 0 ? a.at - b.at : a.i - b.i));
  return [...ranked.map((r) => r.v), ...deletes];
}

/**
 * Interleaves patch items and server-only items: each side keeps its order; a server-only item goes
 * before a patch item only when both are in the live list and it came first there (mergeSortedSlice).
 */
function normalizeElementOrder(
  patchItems: Json[],
  serverOnly: Json[],
  patchOrder: Json[],
  serverOrder: Json[],
  mergeKey: string,
  isMapKind: boolean,
): Json[] {
  const right = normalizeSliceOrder(patchItems, patchOrder, mergeKey, isMapKind);
  const left = normalizeSliceOrder(serverOnly, serverOrder, mergeKey, isMapKind);
  const out: Json[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (i >= left.length) out.push(right[j++]!);
    else if (j >= right.length) out.push(left[i++]!);
    else {
      const li = indexIn(serverOrder, left[i]!, mergeKey, isMapKind);
      const ri = indexIn(serverOrder, right[j]!, mergeKey, isMapKind);
      if (li >= 0 && ri >= 0 && li < ri) out.push(left[i++]!);
      else out.push(right[j++]!);
    }
  }
  return out;
}

/** Checks that the patch list's order agrees with `$setElementOrder` (deletions ignored). */
function validatePatchWithSetOrderList(patchList: Json[], setOrder: Json[], mergeKey: string): void {
  if (setOrder.length === 0 || patchList.length === 0) return;
  let nonDelete = patchList;
  if (mergeKey !== "") {
    for (const v of patchList) if (!isMap(v)) throw errBadArgType(MAP_TYPE, v);
    nonDelete = patchList.filter((v) => (v as JsonMap)[DIRECTIVE] !== "delete");
  }
  let p = 0;
  let s = 0;
  while (p < nonDelete.length && s < setOrder.length) {
    const item = nonDelete[p]!;
    if (isMap(item) && DIRECTIVE in item) {
      p++;
      continue;
    }
    if (mergeKeyValueEqual(item, setOrder[s]!, mergeKey)) p++;
    s++;
  }
  if (p < nonDelete.length && s >= setOrder.length) {
    throw internal(
      `The order in patch list:\n${goV(patchList)}\n doesn't match ${SET_ELEMENT_ORDER} list:\n${goV(setOrder)}\n`,
    );
  }
}

function mergeKeyValueEqual(left: Json, right: Json, mergeKey: string): boolean {
  if (mergeKey === "") return left === right;
  if (!isMap(left)) throw errBadArgType(MAP_TYPE, left);
  if (!isMap(right)) throw errBadArgType(MAP_TYPE, right);
  if (!(mergeKey in left)) throw errNoMergeKey(left, mergeKey);
  if (!(mergeKey in right)) throw errNoMergeKey(right, mergeKey);
  return left[mergeKey] === right[mergeKey];
}

function isMergingList(type: TypeNode): boolean {
  return type.kind === "list" && type.strategicMerge !== undefined;
}

/**
 * The live list as Go's mergePatchIntoOriginal sees it when it orders by `$setElementOrder`: merging
 * the list shifted deleted items out of, and appended new items into, the same backing array (the
 * server's lists come from ToUnstructured, so capacity equals length). The order of server-only items
 * relative to new ones depends on it, so we replay those in-place edits.
 */
function aliasedServerOrder(live: Json[], patch: Json[], mergeKey: string): Json[] {
  const arr = [...live];
  const capacity = arr.length;
  let length = arr.length;
  const keyOf = (v: Json) => (isMap(v) ? v[mergeKey] : undefined);
  let replaced = false;
  for (const v of patch) {
    if (!isMap(v) || !(DIRECTIVE in v)) continue;
    if (v[DIRECTIVE] === "replace") replaced = true;
    if (v[DIRECTIVE] !== "delete" || !(mergeKey in v)) continue;
    for (;;) {
      const at = arr.slice(0, length).findIndex((o) => isMap(o) && mergeKey in o && o[mergeKey] === v[mergeKey]);
      if (at < 0) break;
      arr.copyWithin(at, at + 1, length);
      length--;
    }
  }
  // After `$patch: replace` the merge appends to the patch's own list, never to this array.
  if (replaced) return arr;
  for (const v of patch) {
    if (isMap(v) && DIRECTIVE in v) continue;
    if (arr.slice(0, length).some((o) => keyOf(o) === keyOf(v))) continue;
    // An append past the capacity moves to a new array: this one is no longer touched.
    if (length === capacity) break;
    arr[length++] = v;
  }
  return arr;
}

/** `$setElementOrder/<field>`: merges that list now and orders it by the directive (mergePatchIntoOriginal). */
function applySetElementOrder(original: JsonMap, patch: JsonMap, meta: TypeNode): void {
  for (const key of Object.keys(patch)) {
    if (!key.startsWith(SET_ELEMENT_ORDER)) continue;
    const order = patch[key]!;
    delete patch[key];
    if (!Array.isArray(order)) throw errBadArgType("[]interface {}", order);
    const field = extractKey(key, SET_ELEMENT_ORDER);
    const foundOriginal = Object.hasOwn(original, field);
    const foundPatch = Object.hasOwn(patch, field);
    const originalList = original[field];
    const patchList = patch[field];
    if (foundOriginal && !Array.isArray(originalList)) throw errBadArgType("[]interface {}", originalList);
    if (foundPatch && !Array.isArray(patchList)) throw errBadArgType("[]interface {}", patchList);
    const originalValue = (foundOriginal ? originalList : []) as Json[];
    const patchValue = (foundPatch ? patchList : []) as Json[];
    const { type } = childType(meta, field);
    const { mergeKey } = strategyOf(type);
    validatePatchWithSetOrderList(patchValue, order, mergeKey);

    let merged: Json[];
    if (foundOriginal && !foundPatch) merged = originalValue;
    else if (!foundOriginal && foundPatch) merged = removeDirectives(patchValue)[0] as Json[];
    else if (foundOriginal && foundPatch) merged = mergeSliceHandler(originalValue, patchValue, type, false);
    else continue;

    const isMapKind = mergeKey !== "";
    const [inPatch, serverOnly] = isMapKind
      ? partitionMaps(merged, order, mergeKey)
      : partitionPrimitives(merged, order);
    // Element kind check as the Go code does before ordering (lists of lists, empty lists refused).
    sliceElementType(originalValue, patchValue);
    const serverOrder =
      foundOriginal && foundPatch && isMapKind && isMergingList(type)
        ? aliasedServerOrder(originalValue, patchValue, mergeKey)
        : originalValue;
    setOwn(original, field, normalizeElementOrder(inPatch, serverOnly, order, serverOrder, mergeKey, isMapKind));
    delete patch[field];
  }
}
