/**
 * Field-level differences between two JSON values, as handlers receive them in `ctx.diff`.
 *
 * Objects are compared key by key down to the leaves; arrays and scalars are compared as whole
 * values (an array that changed is one `change` of the array's path), as Kopf's `diff` does.
 * Entries come in a stable order: the keys of `old` in their order, then keys only in `new`.
 */
import { isPlainObject } from "./essence.ts";

/** One difference. `path` is the list of keys; `field` the same joined with dots (`spec.size`). */
export interface DiffEntry {
  readonly op: "add" | "change" | "remove";
  readonly path: readonly string[];
  readonly field: string;
  /** The value before (`undefined` for `add`). */
  readonly old: unknown;
  /** The value after (`undefined` for `remove`). */
  readonly new: unknown;
}

/** Every difference between two values; empty when they are equal. */
export type Diff = readonly DiffEntry[];

/** The differences from `oldValue` to `newValue`. */
export function diff(oldValue: unknown, newValue: unknown, path: readonly string[] = []): DiffEntry[] {
  const out: DiffEntry[] = [];
  walk(oldValue, newValue, [...path], out);
  return out;
}

/** `path` is a working stack (pushed and popped); each entry gets its own copy. */
function walk(a: unknown, b: unknown, path: string[], out: DiffEntry[]): void {
  if (isPlainObject(a) && isPlainObject(b)) {
    for (const key of Object.keys(a)) {
      path.push(key);
      walk(a[key], b[key], path, out);
      path.pop();
    }
    for (const key of Object.keys(b)) {
      if (key in a) continue;
      path.push(key);
      walk(undefined, b[key], path, out);
      path.pop();
    }
    return;
  }
  if (jsonEqual(a, b)) return;
  const at = path.slice();
  const field = at.join(".");
  if (a === undefined) out.push({ op: "add", path: at, field, old: undefined, new: b });
  else if (b === undefined) out.push({ op: "remove", path: at, field, old: a, new: undefined });
  else out.push({ op: "change", path: at, field, old: a, new: b });
}

/** Deep equality of JSON values (key order ignored; a key whose value is `undefined` counts as absent). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (isPlainObject(a)) {
    if (!isPlainObject(b)) return false;
    let defined = 0;
    for (const key of Object.keys(a)) {
      const value = a[key];
      if (value === undefined) continue;
      defined++;
      if (!jsonEqual(value, b[key])) return false;
    }
    for (const key of Object.keys(b)) if (b[key] !== undefined) defined--;
    return defined === 0;
  }
  return false;
}

/** The value at `path` inside `value` (undefined when any step is missing). */
export function valueAt(value: unknown, path: readonly string[]): unknown {
  let current = value;
  for (const key of path) {
    if (!isPlainObject(current)) return undefined;
    current = current[key];
  }
  return current;
}

/** Parses a dotted field path (`"spec.size"`) into keys; refuses empty segments. */
export function parseField(field: string): string[] {
  const parts = field.split(".");
  if (field === "" || parts.some((p) => p === "")) {
    throw new Error(`invalid field path "${field}": expected dot-separated keys such as "spec.size"`);
  }
  return parts;
}
