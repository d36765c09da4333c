/**
 * What the immutability checks of pods and claims compare and print: apimachinery's
 * Semantic.DeepEqual over decoded specs, and a diff in the shape of go-cmp's `cmp.Diff` that
 * kube-apiserver appends to "pod updates may not change fields other than ..." and to a claim's
 * "spec is immutable after creation ...".
 *
 * Caveats: go-cmp's output is deliberately unstable (it randomly indents with U+00A0 or spaces, per
 * process) and prints Go's internal types, so no client can rely on it byte for byte; this diff keeps
 * its frame (`-`/`+` lines, `... // N identical fields`) but prints values as JSON and names fields
 * from their JSON names. Empty lists and maps equal absent ones (Semantic.DeepEqual's rule); so do
 * empty objects, which Go would tell apart from a nil pointer.
 */
import { goJSON, goQuote } from "../go-format.ts";
import { compareQuantities, parseQuantity } from "./quantity.ts";

/** Resource lists: their values compare as quantities (`1Gi` equals `1024Mi`). */
const QUANTITY_MAPS = new Set(["limits", "requests", "capacity", "overhead"]);
/** Single quantities. */
const QUANTITY_FIELDS = new Set(["sizeLimit", "divisor"]);

function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === "object" && Object.keys(value).length === 0;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function quantitiesEqual(a: unknown, b: unknown): boolean | undefined {
  const qa = parseQuantity(a);
  const qb = parseQuantity(b);
  return qa !== undefined && qb !== undefined ? compareQuantities(qa, qb) === 0 : undefined;
}

/** Semantic.DeepEqual on decoded JSON: `key` and `parentKey` say whether a value is a quantity. */
export function semanticEqual(a: unknown, b: unknown, key = "", parentKey = ""): boolean {
  if (isEmpty(a) && isEmpty(b)) return true;
  if (QUANTITY_FIELDS.has(key) || QUANTITY_MAPS.has(parentKey)) {
    const equal = quantitiesEqual(a, b);
    if (equal !== undefined) return equal;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, i) => semanticEqual(item, b[i], "", key));
  }
  if (isObject(a) && isObject(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) if (!semanticEqual(a[k], b[k], k, key)) return false;
    return true;
  }
  return a === b;
}

/** Go field names whose acronyms a plain capitalisation gets wrong. */
const GO_NAMES: Readonly<Record<string, string>> = {
  dnsPolicy: "DNSPolicy",
  dnsConfig: "DNSConfig",
  hostPID: "HostPID",
  hostIPC: "HostIPC",
  httpGet: "HTTPGet",
  tcpSocket: "TCPSocket",
  grpc: "GRPC",
  tty: "TTY",
  hostIP: "HostIP",
  uid: "UID",
};

function goName(jsonName: string): string {
  return GO_NAMES[jsonName] ?? jsonName.charAt(0).toUpperCase() + jsonName.slice(1);
}

function render(value: unknown): string {
  if (value === undefined || value === null) return "nil";
  if (typeof value === "string") return goQuote(value);
  return goJSON(value);
}

function identical(lines: string[], depth: number, count: number, what: string): void {
  if (count > 0) lines.push(`  ${"\t".repeat(depth)}... // ${count} identical ${what}`);
}

function diffMembers(lines: string[], depth: number, a: unknown, b: unknown, parentKey: string): void {
  if (Array.isArray(a) && Array.isArray(b)) {
    let same = 0;
    a.forEach((item, i) => {
      if (semanticEqual(item, b[i], "", parentKey)) {
        same++;
        return;
      }
      identical(lines, depth, same, "elements");
      same = 0;
      diffValue(lines, depth, "", item, b[i], parentKey);
    });
    identical(lines, depth, same, "elements");
    return;
  }
  const oa = isObject(a) ? a : {};
  const ob = isObject(b) ? b : {};
  let same = 0;
  for (const k of new Set([...Object.keys(oa), ...Object.keys(ob)])) {
    if (semanticEqual(oa[k], ob[k], k, parentKey)) {
      same++;
      continue;
    }
    identical(lines, depth, same, "fields");
    same = 0;
    diffValue(lines, depth, goName(k), oa[k], ob[k], k);
  }
  identical(lines, depth, same, "fields");
}

function diffValue(lines: string[], depth: number, name: string, a: unknown, b: unknown, key: string): void {
  const indent = "\t".repeat(depth);
  const label = name === "" ? "" : `${name}: `;
  const bothObjects = isObject(a) && isObject(b);
  const sameLengthLists = Array.isArray(a) && Array.isArray(b) && a.length === b.length;
  if (bothObjects || sameLengthLists) {
    lines.push(`  ${indent}${label}${Array.isArray(a) ? "[]" : ""}{`);
    diffMembers(lines, depth + 1, a, b, key);
    lines.push(`  ${indent}},`);
    return;
  }
  lines.push(`- ${indent}${label}${render(a)},`);
  lines.push(`+ ${indent}${label}${render(b)},`);
}

/** cmp.Diff(old, next) of two specs of Go type `typeName`, in go-cmp's frame. */
export function goCmpDiff(typeName: string, old: unknown, next: unknown): string {
  const lines = [`  ${typeName}{`];
  diffMembers(lines, 1, old, next, "");
  lines.push("  }");
  return `${lines.join("\n")}\n`;
}
