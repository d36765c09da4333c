/**
 * Field paths as structured-merge-diff names them: a path is a list of path elements, each a struct
 * field (`f:name`), an associative-list key (`k:{"name":"c"}`), a set value (`v:"x"`) or a list index
 * (`i:0`). This file orders, serializes (fieldsV1 keys) and prints (`.spec.containers[name="c"]`) them
 * exactly as sigs.k8s.io/structured-merge-diff/fieldpath does.
 */
import { goJSON, goNumberV, goQuote } from "../validation/go-format.ts";

/** A decoded JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export type PathElement =
  | { readonly field: string }
  /** Key fields of an associative-list item, sorted by name. */
  | { readonly key: readonly (readonly [string, Json])[] }
  | { readonly value: Json }
  | { readonly index: number };

export type Path = readonly PathElement[];

/** Compares strings as Go does (bytes of UTF-8, i.e. code point order). */
export function compareGoStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (astral code points) sort after every BMP code unit in UTF-8 order.
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
    return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

function rank(v: Json): number {
  if (typeof v === "number") return 0;
  if (typeof v === "string") return 1;
  if (typeof v === "boolean") return 2;
  if (Array.isArray(v)) return 3;
  if (v !== null) return 4;
  return 5;
}

/** value.Compare: a total order over values (numbers, strings, booleans, lists, maps, null). */
export function compareValues(a: Json, b: Json): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  switch (ra) {
    case 0:
      return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
    case 1:
      return Math.sign(compareGoStrings(a as string, b as string));
    case 2:
      return a === b ? 0 : a ? 1 : -1;
    case 3: {
      const x = a as Json[];
      const y = b as Json[];
      for (let i = 0; i < Math.min(x.length, y.length); i++) {
        const c = compareValues(x[i]!, y[i]!);
        if (c !== 0) return c;
      }
      return Math.sign(x.length - y.length);
    }
    case 4: {
      const x = Object.keys(a as object).sort(compareGoStrings);
      const y = Object.keys(b as object).sort(compareGoStrings);
      for (let i = 0; i < Math.min(x.length, y.length); i++) {
        const c = compareGoStrings(x[i]!, y[i]!);
        if (c !== 0) return Math.sign(c);
        const d = compareValues((a as Record<string, Json>)[x[i]!]!, (b as Record<string, Json>)[y[i]!]!);
        if (d !== 0) return d;
      }
      return Math.sign(x.length - y.length);
    }
    default:
      return 0;
  }
}

/** PathElement.Compare: fields < keys < values < indexes, then by content. */
export function comparePathElements(a: PathElement, b: PathElement): number {
  if ("field" in a) return "field" in b ? Math.sign(compareGoStrings(a.field, b.field)) : -1;
  if ("field" in b) return 1;
  if ("key" in a) {
    if (!("key" in b)) return -1;
    for (let i = 0; i < Math.min(a.key.length, b.key.length); i++) {
      const c = compareGoStrings(a.key[i]![0], b.key[i]![0]);
      if (c !== 0) return Math.sign(c);
      const d = compareValues(a.key[i]![1], b.key[i]![1]);
      if (d !== 0) return d;
    }
    return Math.sign(a.key.length - b.key.length);
  }
  if ("key" in b) return 1;
  if ("value" in a) return "value" in b ? compareValues(a.value, b.value) : -1;
  if ("value" in b) return 1;
  return Math.sign(a.index - (b as { index: number }).index);
}

const PLAIN_STRING = /^[\x20-\x7e]*$/;
const NEEDS_ESCAPE = /["\\<>&]/;

/** goJSON with a fast path for the common key values (printable ASCII strings, integers). */
function keyJSON(v: Json): string {
  if (typeof v === "string" && PLAIN_STRING.test(v) && !NEEDS_ESCAPE.test(v)) return `"${v}"`;
  if (typeof v === "number" && Number.isSafeInteger(v)) return String(v);
  return goJSON(v);
}

/** Serialized keys by element object: walks reuse the same element objects for every path below them. */
const serialized = new WeakMap<PathElement, string>();

/** The fieldsV1 key of a path element: `f:name`, `k:{"name":"c"}`, `v:"x"`, `i:0`. */
export function serializePathElement(pe: PathElement): string {
  if ("field" in pe) return `f:${pe.field}`;
  let s = serialized.get(pe);
  if (s === undefined) {
    if ("key" in pe) s = `k:{${pe.key.map(([name, v]) => `${keyJSON(name)}:${keyJSON(v)}`).join(",")}}`;
    else if ("value" in pe) s = `v:${keyJSON(pe.value)}`;
    else s = `i:${pe.index}`;
    serialized.set(pe, s);
  }
  return s;
}

/** Thrown for a fieldsV1 key that cannot be parsed. */
export class PathElementSyntaxError extends Error {}

/** An unknown element type: readers skip such keys, as structured-merge-diff does. */
export const UNKNOWN_PATH_ELEMENT = Symbol("unknown path element type");

/** Parses a fieldsV1 key (DeserializePathElement). */
export function parsePathElement(s: string): PathElement | typeof UNKNOWN_PATH_ELEMENT {
  if (s.length < 2) throw new PathElementSyntaxError("key must be 2 characters long:");
  if (s[1] !== ":") throw new PathElementSyntaxError(`missing colon: ${s}`);
  const rest = s.slice(2);
  switch (s[0]) {
    case "f":
      return { field: rest };
    case "v":
      return { value: parseJson(rest) };
    case "k": {
      const obj = parseJson(rest);
      if (obj === null || typeof obj !== "object" || Array.isArray(obj)) {
        throw new PathElementSyntaxError(`invalid key element: ${rest}`);
      }
      const fields = Object.entries(obj).sort((x, y) => compareGoStrings(x[0], y[0]));
      return { key: fields };
    }
    case "i": {
      if (!/^[+-]?\d+$/.test(rest))
        throw new PathElementSyntaxError(`strconv.Atoi: parsing ${goQuote(rest)}: invalid syntax`);
      return { index: Number(rest) };
    }
    default:
      return UNKNOWN_PATH_ELEMENT;
  }
}

function parseJson(s: string): Json {
  try {
    return JSON.parse(s) as Json;
  } catch (err) {
    throw new PathElementSyntaxError((err as Error).message);
  }
}

/** value.ToString: how a value is printed inside a path (`"x"` for strings). */
function valueToString(v: Json): string {
  if (v === null) return "null";
  if (typeof v === "number") return goNumberV(v);
  if (typeof v === "string") return goQuote(v);
  if (typeof v === "boolean") return String(v);
  if (Array.isArray(v)) return `[${v.map(valueToString).join(",")}]`;
  return Object.entries(v)
    .map(([k, x]) => `${k}=${valueToString(x)}`)
    .join("");
}

/** PathElement.String: `.name`, `[name="c",port=80]`, `[="x"]`, `[0]`. */
export function pathElementToString(pe: PathElement): string {
  if ("field" in pe) return `.${pe.field}`;
  if ("key" in pe) return `[${pe.key.map(([k, v]) => `${k}=${valueToString(v)}`).join(",")}]`;
  if ("value" in pe) return `[=${valueToString(pe.value)}]`;
  return `[${pe.index}]`;
}

/** Path.String: the concatenation of its elements, e.g. `.spec.containers[name="app"].image`. */
export function pathToString(path: Path): string {
  return path.map(pathElementToString).join("");
}

/** Parses a dotted field path (`spec.replicas`) into field elements; for tables and tests. */
export function fieldPath(...names: string[]): Path {
  return names.map((field) => ({ field }));
}
