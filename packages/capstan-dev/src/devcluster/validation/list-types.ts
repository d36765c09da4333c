/**
 * Uniqueness of `x-kubernetes-list-type: set` and `map` lists in custom objects, as the real server
 * checks it on every write (apiextensions-apiserver `pkg/apiserver/schema/listtype/validation.go`).
 *
 * Guarantees: a duplicated set element or map key is reported once, at its second occurrence, as
 * `path[i]: Duplicate value: <value>` (for maps the value is the key object, printed by 1.32 with Go's
 * `%#v`: `map[string]interface {}{"name":"a"}`);
 * a non-object element of a map list is `must be an object for an array of list-type map`.
 */
import { duplicate, type FieldError, FieldPath, invalid } from "./field-errors.ts";
import { goJSON } from "./go-format.ts";
import { sanitizeSchema } from "./schema-sanitize.ts";
import type { JSONSchemaProps } from "./schema-types.ts";

type Json = Record<string, unknown>;

function isMap(x: unknown): x is Json {
  return x !== null && typeof x === "object" && !Array.isArray(x);
}

function child(parent: FieldPath | undefined, name: string): FieldPath {
  return parent === undefined ? FieldPath.of(name) : parent.child(name);
}

/** Indices of the second occurrence of every repeated value (compound values compared by their JSON). */
function nonUniqueIndices(values: unknown[]): number[] {
  if (values.length <= 1) return [];
  const seen = new Map<string, number>();
  const out: number[] = [];
  for (let i = 0; i < values.length; i++) {
    const x = values[i];
    // Scalars compare by Go interface equality (type and value); compounds by their JSON text.
    const key = isMap(x) || Array.isArray(x) ? "c:" + goJSON(x) : `s:${typeof x}:${String(x)}`;
    const times = seen.get(key) ?? 0;
    if (times === 1) out.push(i);
    seen.set(key, times + 1);
  }
  return out;
}

const UNSPECIFIED = Symbol("unspecified key");

function validateListMap(path: FieldPath, s: JSONSchemaProps, list: unknown[]): FieldError[] {
  for (let i = 0; i < list.length; i++) {
    const x = list[i];
    if (x !== null && !isMap(x)) return [invalid(path.index(i), x, "must be an object for an array of list-type map")];
  }
  if (list.length <= 1) return [];
  const keyFields = s["x-kubernetes-list-map-keys"] ?? [];
  if (keyFields.length === 1) {
    const keyField = keyFields[0]!;
    const keys = list.map((x) => (isMap(x) && Object.hasOwn(x, keyField) ? x[keyField] : UNSPECIFIED));
    const comparable = keys.map((k) => (k === UNSPECIFIED ? { "\u0000unspecified": true } : k));
    return nonUniqueIndices(comparable).map((i) =>
      duplicate(path.index(i), keys[i] === UNSPECIFIED ? {} : { [keyField]: keys[i] }),
    );
  }
  const keys = list.map((x) => {
    const key: Json = {};
    if (isMap(x)) for (const f of keyFields) if (Object.hasOwn(x, f)) key[f] = x[f];
    return key;
  });
  return nonUniqueIndices(keys).map((i) => duplicate(path.index(i), keys[i]));
}

function validateArray(path: FieldPath, s: JSONSchemaProps, list: unknown[]): FieldError[] {
  const errs: FieldError[] = [];
  const listType = s["x-kubernetes-list-type"];
  if (listType === "set") {
    for (const i of nonUniqueIndices(list)) errs.push(duplicate(path.index(i), list[i]));
  } else if (listType === "map") {
    errs.push(...validateListMap(path, s, list));
  }
  const items = s.items && !Array.isArray(s.items) ? s.items : undefined;
  if (items) for (let i = 0; i < list.length; i++) errs.push(...validateValue(path.index(i), items, list[i]));
  return errs;
}

function validateValue(path: FieldPath, s: JSONSchemaProps, x: unknown): FieldError[] {
  if (Array.isArray(x)) return validateArray(path, s, x);
  if (isMap(x)) return validateObject(path, s, x);
  return [];
}

function validateObject(path: FieldPath | undefined, s: JSONSchemaProps, obj: Json): FieldError[] {
  const errs: FieldError[] = [];
  const ap = s.additionalProperties;
  if (ap && typeof ap === "object") {
    for (const [k, v] of Object.entries(obj)) {
      // The real server keys additionalProperties values by index syntax: spec.labels[a] ([a] at the root).
      const p = path === undefined ? FieldPath.of("").key(k) : path.key(k);
      errs.push(...validateValue(p, ap, v));
    }
  }
  if (s.properties) {
    for (const [k, v] of Object.entries(obj)) {
      const sub = s.properties[k];
      if (sub) errs.push(...validateValue(child(path, k), sub, v));
    }
  }
  return errs;
}

/** ValidateListSetsAndMaps: duplicate elements of set lists and duplicate keys of map lists in `obj`. */
export function validateListSetsAndMaps(schema: JSONSchemaProps, obj: unknown): FieldError[] {
  return isMap(obj) ? validateObject(undefined, sanitizeSchema(schema), obj) : [];
}
