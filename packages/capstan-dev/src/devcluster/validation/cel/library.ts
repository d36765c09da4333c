/**
 * The Kubernetes CEL libraries CRD rules use, on top of @bufbuild/cel's standard library (size, has,
 * matches, startsWith/endsWith/contains, all/exists/exists_one/map/filter, timestamp/duration,
 * int/uint/double/string conversions).
 *
 * Provided here, with apiserver `pkg/cel/library` semantics and error texts:
 * - strings extension (cel-go ext.Strings): charAt, indexOf, lastIndexOf, lowerAscii, upperAscii,
 *   replace, split, substring, trim, join, format (from @bufbuild/cel/ext);
 * - lists (lists.go): isSorted, sum, min, max, indexOf, lastIndexOf;
 * - regex (regex.go): find, findAll (RE2 patterns run by JavaScript's engine, see go-regexp.ts);
 * - sets (cel-go ext.Sets): sets.contains, sets.equivalent, sets.intersects.
 * Not provided: quantity, url, ip/cidr, semver, format.named, optional types (`?.`, `orValue`);
 * a rule calling them fails at evaluation (`unbound function`), not at CRD creation.
 */
import {
  type CelFunc,
  type CelList,
  CelScalar,
  type CelValue,
  celFunc,
  celMethod,
  isCelList,
  listType,
} from "@bufbuild/cel";
import { strings } from "@bufbuild/cel/ext";
import { compileGoRegExp } from "../go-regexp.ts";

const DYN_LIST = listType(CelScalar.DYN);

/** A thrown Error becomes the rule's evaluation error (`<message> evaluating rule: ...`). */
function fail(message: string): never {
  throw new Error(message);
}

type Orderable = bigint | number | string | boolean;

function orderable(v: CelValue): v is Orderable {
  return typeof v === "bigint" || typeof v === "number" || typeof v === "string" || typeof v === "boolean";
}

/** CEL's ordering for the scalar kinds lists.go accepts (int, uint, double, string, bool). */
function compare(a: CelValue, b: CelValue): number {
  if (!orderable(a) || !orderable(b)) fail("no such overload");
  if (typeof a === "string" || typeof b === "string") {
    if (typeof a !== typeof b) fail("no such overload");
    return a < b ? -1 : a > b ? 1 : 0;
  }
  const x = typeof a === "boolean" ? Number(a) : a;
  const y = typeof b === "boolean" ? Number(b) : b;
  return x < y ? -1 : x > y ? 1 : 0;
}

/** CEL equality of two values (numbers compare across int/double, lists and maps deeply). */
function celEquals(a: CelValue, b: CelValue): boolean {
  if ((typeof a === "bigint" || typeof a === "number") && (typeof b === "bigint" || typeof b === "number")) {
    return Number(a) === Number(b);
  }
  if (isCelList(a) && isCelList(b)) {
    if (a.size !== b.size) return false;
    for (let i = 0; i < a.size; i++) if (!celEquals(a.get(i)!, b.get(i)!)) return false;
    return true;
  }
  if (a instanceof Map && b instanceof Map) {
    if (a.size !== b.size) return false;
    for (const [k, v] of a) if (!b.has(k) || !celEquals(v as CelValue, b.get(k) as CelValue)) return false;
    return true;
  }
  return a === b;
}

function items(list: CelList): CelValue[] {
  return [...list];
}

function extreme(name: string, list: CelList, wantSign: number): CelValue {
  const xs = items(list);
  if (xs.length === 0) fail(`${name} called on empty list`);
  let best: CelValue = xs[0]!;
  for (const x of xs.slice(1)) if (Math.sign(compare(x, best)) === wantSign) best = x;
  return best;
}

const lists: CelFunc[] = [
  celMethod("isSorted", DYN_LIST, [], CelScalar.BOOL, function () {
    const xs = items(this);
    for (let i = 1; i < xs.length; i++) if (compare(xs[i - 1]!, xs[i]!) > 0) return false;
    return true;
  }),
  celMethod("sum", DYN_LIST, [], CelScalar.DYN, function () {
    const xs = items(this);
    if (xs.length === 0) return 0n;
    if (xs.every((x) => typeof x === "bigint")) return (xs as bigint[]).reduce((s, x) => s + x, 0n);
    if (xs.every((x) => typeof x === "number")) return (xs as number[]).reduce((s, x) => s + x, 0);
    return fail("no such overload");
  }),
  celMethod("min", DYN_LIST, [], CelScalar.DYN, function () {
    return extreme("min", this, -1);
  }),
  celMethod("max", DYN_LIST, [], CelScalar.DYN, function () {
    return extreme("max", this, 1);
  }),
  celMethod("indexOf", DYN_LIST, [CelScalar.DYN], CelScalar.INT, function (item) {
    return BigInt(items(this).findIndex((x) => celEquals(x, item)));
  }),
  celMethod("lastIndexOf", DYN_LIST, [CelScalar.DYN], CelScalar.INT, function (item) {
    const xs = items(this);
    for (let i = xs.length - 1; i >= 0; i--) if (celEquals(xs[i]!, item)) return BigInt(i);
    return -1n;
  }),
];

function regexOf(pattern: string): RegExp {
  const compiled = compileGoRegExp(pattern);
  if (!compiled.re) return fail(`Illegal regex: ${compiled.error ?? "invalid pattern"}`);
  return new RegExp(compiled.re.source, compiled.re.flags.includes("g") ? compiled.re.flags : compiled.re.flags + "g");
}

function findAll(s: string, pattern: string, limit: bigint): string[] {
  const out: string[] = [];
  if (limit === 0n) return out;
  const re = regexOf(pattern);
  for (const m of s.matchAll(re)) {
    // Go's FindAllString skips an empty match right after a previous match.
    if (m[0] === "" && out.length > 0 && m.index === (re.lastIndex ?? 0)) continue;
    out.push(m[0]);
    if (limit > 0n && BigInt(out.length) >= limit) break;
  }
  return out;
}

const regex: CelFunc[] = [
  celMethod("find", CelScalar.STRING, [CelScalar.STRING], CelScalar.STRING, function (pattern) {
    const m = regexOf(pattern).exec(this);
    return m ? m[0] : "";
  }),
  celMethod("findAll", CelScalar.STRING, [CelScalar.STRING], DYN_LIST, function (pattern) {
    return findAll(this, pattern, -1n);
  }),
  celMethod("findAll", CelScalar.STRING, [CelScalar.STRING, CelScalar.INT], DYN_LIST, function (pattern, limit) {
    return findAll(this, pattern, limit);
  }),
];

const includesAll = (list: CelList, sub: CelList): boolean => {
  const xs = items(list);
  return items(sub).every((y) => xs.some((x) => celEquals(x, y)));
};

/** cel-go ext.Sets (in the Kubernetes base environment since 1.28). */
const sets: CelFunc[] = [
  celFunc("sets.contains", [DYN_LIST, DYN_LIST], CelScalar.BOOL, (list, sub) => includesAll(list, sub)),
  celFunc("sets.equivalent", [DYN_LIST, DYN_LIST], CelScalar.BOOL, (a, b) => includesAll(a, b) && includesAll(b, a)),
  celFunc("sets.intersects", [DYN_LIST, DYN_LIST], CelScalar.BOOL, (a, b) => {
    const xs = items(a);
    return items(b).some((y) => xs.some((x) => celEquals(x, y)));
  }),
];

/** Every function a CRD rule can call beyond the standard library. */
export const KUBERNETES_FUNCS: CelFunc[] = [...strings, ...lists, ...regex, ...sets];
