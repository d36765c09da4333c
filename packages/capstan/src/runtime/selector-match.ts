/**
 * Whether an object falls inside a watch's label and field selectors, judged on the client side
 * the way the API server judges it for a watch (apimachinery's `labels.Parse` and field
 * selectors). The runtime uses it to know which informers will ever see an object it wrote
 * (write-visibility.ts).
 *
 * ## Guarantees
 * - Label selectors: `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`, `k>n`, `k<n`,
 *   comma-separated, all of which must hold. A missing label fails `=`, `in`, `k`, `>`, `<` and
 *   satisfies `!=`, `notin`, `!k`, as in apimachinery.
 * - Field selectors: `path=v`, `path==v`, `path!=v`, comma-separated; `path` is a dotted path into
 *   the object (`metadata.name`, `spec.nodeName`, `status.phase`), a missing field reads as `""`.
 * - A selector that cannot be parsed answers `undefined`: the caller decides (the runtime assumes
 *   "matches", so it waits for what it cannot rule out).
 */
import type { KubeObject } from "../client/types.ts";

type Requirement = (labels: Readonly<Record<string, string>>) => boolean;

/** Splits at commas outside parentheses: `a in (x,y),b` -> [`a in (x,y)`, `b`]. */
function splitTopLevel(selector: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i];
    if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (c === "," && depth === 0) {
      parts.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(selector.slice(start));
  return parts.map((p) => p.trim()).filter((p) => p !== "");
}

function labelRequirement(text: string): Requirement | undefined {
  let m = /^([^\s!=<>(),]+)\s+(in|notin)\s*\(([^)]*)\)$/.exec(text);
  if (m !== null) {
    const [, key, op, list] = m as unknown as [string, string, string, string];
    const values = new Set(list.split(",").map((v) => v.trim()));
    return op === "in"
      ? (labels) => key in labels && values.has(labels[key] as string)
      : (labels) => !(key in labels) || !values.has(labels[key] as string);
  }
  m = /^([^\s!=<>(),]+)\s*(==|=|!=|>|<)\s*([^\s!=<>(),]*)$/.exec(text);
  if (m !== null) {
    const [, key, op, value] = m as unknown as [string, string, string, string];
    switch (op) {
      case "!=":
        return (labels) => labels[key] !== value;
      case ">":
      case "<": {
        const bound = Number(value);
        if (!Number.isInteger(bound)) return undefined;
        return (labels) => {
          const v = labels[key];
          if (v === undefined || !/^-?\d+$/.test(v)) return false;
          return op === ">" ? Number(v) > bound : Number(v) < bound;
        };
      }
      default:
        return (labels) => labels[key] === value;
    }
  }
  m = /^(!?)\s*([^\s!=<>(),]+)$/.exec(text);
  if (m !== null) {
    const [, not, key] = m as unknown as [string, string, string];
    return not === "!" ? (labels) => !(key in labels) : (labels) => key in labels;
  }
  return undefined;
}

/** Whether `labels` satisfy `selector`; `undefined` when it cannot be parsed. An empty selector matches all. */
export function labelSelectorMatches(
  selector: string,
  labels: Readonly<Record<string, string>> = {},
): boolean | undefined {
  let all = true;
  for (const part of splitTopLevel(selector)) {
    const requirement = labelRequirement(part);
    if (requirement === undefined) return undefined;
    if (!requirement(labels)) all = false;
  }
  return all;
}

function fieldValue(obj: KubeObject, path: string): string {
  let value: unknown = obj;
  for (const segment of path.split(".")) {
    if (typeof value !== "object" || value === null) return "";
    value = (value as Record<string, unknown>)[segment];
  }
  return value === undefined || value === null ? "" : String(value);
}

/** Whether `obj` satisfies the field selector; `undefined` when it cannot be parsed. An empty one matches all. */
export function fieldSelectorMatches(selector: string, obj: KubeObject): boolean | undefined {
  let all = true;
  for (const part of splitTopLevel(selector)) {
    const m = /^([^\s!=]+)\s*(==|=|!=)\s*(.*)$/.exec(part);
    if (m === null) return undefined;
    const [, path, op, value] = m as unknown as [string, string, string, string];
    const equal = fieldValue(obj, path) === value.trim();
    if (op === "!=" ? equal : !equal) all = false;
  }
  return all;
}
