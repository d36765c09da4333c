/**
 * JSON patch (RFC 6902): add, remove, replace, move, copy, test over JSON pointers (RFC 6901).
 * Error messages follow evanphx/json-patch, the library kube-apiserver uses, since they reach clients.
 */
import { jsonEqual } from "../machinery/semantic-equal.ts";

export class JsonPatchError extends Error {}

interface Operation {
  op: string;
  path: string;
  from?: string;
  value?: unknown;
}

/** Checks the shape of a decoded patch document; throws JsonPatchError for a malformed one. */
export function decodeJsonPatch(doc: unknown): Operation[] {
  if (!Array.isArray(doc)) {
    throw new JsonPatchError("json: cannot unmarshal object into Go value of type jsonpatch.Patch");
  }
  return doc.map((op) => {
    if (op === null || typeof op !== "object") throw new JsonPatchError("invalid operation");
    return op as Operation;
  });
}

/** Applies `ops` to a copy of `doc`. */
export function applyJsonPatch(doc: unknown, ops: Operation[]): unknown {
  let root = structuredClone(doc);
  for (const op of ops) {
    if (typeof op.path !== "string") throw new JsonPatchError(`Unexpected kind: ${op.op}`);
    switch (op.op) {
      case "add":
        root = add(root, op.path, clone(requireValue(op)));
        break;
      case "remove":
        root = remove(root, op.path).root;
        break;
      case "replace": {
        const value = clone(requireValue(op));
        if (op.path === "") {
          root = value;
          break;
        }
        const { parent, key } = resolveParent(root, op.path, "replace");
        if (Array.isArray(parent)) {
          const index = arrayIndex(key, parent.length - 1, "replace");
          parent[index] = value;
        } else {
          if (!Object.hasOwn(parent, key)) {
            throw new JsonPatchError(`replace operation does not apply: doc is missing key: ${op.path}: missing value`);
          }
          parent[key] = value;
        }
        break;
      }
      case "move": {
        if (typeof op.from !== "string") throw new JsonPatchError("move operation missing from");
        const taken = remove(root, op.from);
        root = add(taken.root, op.path, taken.value);
        break;
      }
      case "copy": {
        if (typeof op.from !== "string") throw new JsonPatchError("copy operation missing from");
        root = add(root, op.path, clone(get(root, op.from, "copy")));
        break;
      }
      case "test": {
        let actual: unknown;
        try {
          actual = get(root, op.path, "test");
        } catch {
          actual = undefined;
        }
        if (!jsonEqual(actual, op.value)) {
          throw new JsonPatchError(`testing value ${op.path} failed: test failed`);
        }
        break;
      }
      default:
        throw new JsonPatchError(`Unexpected kind: ${op.op}`);
    }
  }
  return root;
}

function requireValue(op: Operation): unknown {
  if (!("value" in op)) throw new JsonPatchError(`${op.op} operation missing value`);
  return op.value;
}

function clone<T>(v: T): T {
  return v === undefined ? v : structuredClone(v);
}

function tokens(path: string): string[] {
  if (path === "") return [];
  if (!path.startsWith("/")) throw new JsonPatchError(`JSON pointer must be empty or start with a "/": ${path}`);
  return path
    .slice(1)
    .split("/")
    .map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"));
}

type Container = Record<string, unknown> | unknown[];

function resolveParent(
  root: unknown,
  path: string,
  op: string,
): { parent: Container & Record<string, unknown>; key: string } {
  const parts = tokens(path);
  const key = parts.pop()!;
  let node: unknown = root;
  for (const part of parts) {
    if (Array.isArray(node)) node = node[arrayIndex(part, node.length - 1, op)];
    else if (node !== null && typeof node === "object" && Object.hasOwn(node, part))
      node = (node as Record<string, unknown>)[part];
    else throw new JsonPatchError(`${op} operation does not apply: doc is missing path: "${path}": missing value`);
  }
  if (node === null || typeof node !== "object") {
    throw new JsonPatchError(`${op} operation does not apply: doc is missing path: "${path}": missing value`);
  }
  return { parent: node as Container & Record<string, unknown>, key };
}

function arrayIndex(token: string, max: number, op: string): number {
  if (!/^(0|[1-9]\d*)$/.test(token))
    throw new JsonPatchError(`${op} operation does not apply: invalid array index: ${token}`);
  const index = Number(token);
  if (index > max) throw new JsonPatchError(`${op} operation does not apply: index out of range: ${index}`);
  return index;
}

function get(root: unknown, path: string, op: string): unknown {
  if (path === "") return root;
  const { parent, key } = resolveParent(root, path, op);
  if (Array.isArray(parent)) return parent[arrayIndex(key, parent.length - 1, op)];
  if (!Object.hasOwn(parent, key))
    throw new JsonPatchError(`${op} operation does not apply: doc is missing key: ${path}: missing value`);
  return parent[key];
}

function add(root: unknown, path: string, value: unknown): unknown {
  if (path === "") return value;
  const { parent, key } = resolveParent(root, path, "add");
  if (Array.isArray(parent)) {
    const index = key === "-" ? parent.length : arrayIndex(key, parent.length, "add");
    parent.splice(index, 0, value);
  } else parent[key] = value;
  return root;
}

function remove(root: unknown, path: string): { root: unknown; value: unknown } {
  if (path === "") return { root: null, value: root };
  const { parent, key } = resolveParent(root, path, "remove");
  if (Array.isArray(parent)) {
    const index = arrayIndex(key, parent.length - 1, "remove");
    const [value] = parent.splice(index, 1);
    return { root, value };
  }
  if (!Object.hasOwn(parent, key)) {
    throw new JsonPatchError(`Unable to remove nonexistent key: ${key}: missing value`);
  }
  const value = parent[key];
  delete parent[key];
  return { root, value };
}
