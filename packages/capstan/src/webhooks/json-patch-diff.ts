/**
 * The RFC 6902 JSON Patch that turns one JSON value into another: what a mutating webhook answers
 * (the handler changes a copy of the object; the API server applies the patch to the original).
 *
 * Objects are compared key by key (`add` for new keys, `remove` for gone ones, recursion into
 * both); arrays of the same length element by element, arrays whose length changed as one
 * `replace` (a patch that shifts indexes is hard to read in an audit log and easy to get wrong);
 * everything else by value. Keys are escaped as RFC 6901 says (`~` -> `~0`, `/` -> `~1`). The
 * patch applied to `before` gives `after`, exactly (kube-apiserver applies it with json-patch).
 */

/** One JSON Patch operation. */
export type JsonPatchOperation =
  | { op: "add"; path: string; value: unknown }
  | { op: "replace"; path: string; value: unknown }
  | { op: "remove"; path: string };

/** The operations that turn `before` into `after` (both JSON values); empty when they are equal. */
export function jsonPatchBetween(before: unknown, after: unknown): JsonPatchOperation[] {
  const ops: JsonPatchOperation[] = [];
  diffInto(ops, "", before, after);
  return ops;
}

function diffInto(ops: JsonPatchOperation[], path: string, before: unknown, after: unknown): void {
  if (isObject(before) && isObject(after)) {
    for (const key of Object.keys(before)) {
      if (!Object.hasOwn(after, key)) ops.push({ op: "remove", path: `${path}/${escapeKey(key)}` });
    }
    for (const [key, value] of Object.entries(after)) {
      const child = `${path}/${escapeKey(key)}`;
      if (!Object.hasOwn(before, key)) ops.push({ op: "add", path: child, value });
      else diffInto(ops, child, before[key], value);
    }
    return;
  }
  if (Array.isArray(before) && Array.isArray(after) && before.length === after.length) {
    for (let i = 0; i < after.length; i++) diffInto(ops, `${path}/${i}`, before[i], after[i]);
    return;
  }
  if (!jsonEqual(before, after)) ops.push({ op: "replace", path, value: after });
}

function escapeKey(key: string): string {
  return key.replace(/~/g, "~0").replace(/\//g, "~1");
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
  }
  return false;
}
