/**
 * JSON patch (RFC 6902) as gopkg.in/evanphx/json-patch.v4 v4.12.0 applies it, the version
 * kube-apiserver 1.32 vendors: its quirks are what clients meet, so they are kept.
 * - A path's first segment is dropped unread (`bogus/metadata` is `/metadata`); a path without `/`
 *   (the empty one too) names no container, except for `replace` and `test` of the whole document.
 * - `replace` of a missing object member adds it; `copy` from a missing member copies `null`;
 *   a missing `value` is `null`.
 * - Array indexes are read by Go's strconv.Atoi (`01` and `+1` are 1) and may be negative, counting
 *   from the end; `-` appends, for `add` only.
 * - `null` members and elements are missing when a path goes through them.
 * - `copy` may add at most 3 MiB in all (kube-apiserver's JSONPatchMaxCopyBytes).
 * Errors carry the library's message; kube-apiserver answers every one the same way (rest/patchers.ts).
 */
import { jsonEqual } from "../machinery/semantic-equal.ts";

export class JsonPatchError extends Error {}

/** One operation, its members as decoded (none is checked before it runs, as in the library). */
export type Operation = Record<string, unknown> | null;

/** kube-apiserver's `--json-patch-max-copy-bytes` default. */
const MAX_COPY_BYTES = 3 * 1024 * 1024;

/** Go's `encoding/json` name of a JSON value's kind, for "cannot unmarshal X into ..." messages. */
export function goJsonKind(value: unknown): string {
  if (Array.isArray(value)) return "array";
  if (typeof value === "boolean") return "bool";
  return typeof value === "object" ? "object" : typeof value;
}

/**
 * The library's DecodePatch (json.Unmarshal into `[]map[string]*json.RawMessage`): the document must be
 * an array (or null: no operations) of objects (or nulls).
 */
export function decodeJsonPatch(doc: unknown): Operation[] {
  if (doc === null) return [];
  if (!Array.isArray(doc)) {
    throw new JsonPatchError(`json: cannot unmarshal ${goJsonKind(doc)} into Go value of type jsonpatch.Patch`);
  }
  for (const op of doc) {
    if (op !== null && (typeof op !== "object" || Array.isArray(op))) {
      throw new JsonPatchError(`json: cannot unmarshal ${goJsonKind(op)} into Go value of type jsonpatch.Operation`);
    }
  }
  return doc as Operation[];
}

type Container = Record<string, unknown> | unknown[];

/** Applies `ops` to a copy of `doc`; throws JsonPatchError at the first operation that does not apply. */
export function applyJsonPatch(doc: unknown, ops: readonly Operation[]): unknown {
  const state = { root: structuredClone(doc), copied: 0 };
  for (const op of ops) {
    const kind = stringMember(op, "op") ?? "unknown";
    switch (kind) {
      case "add":
        add(state.root, op, "add");
        break;
      case "remove":
        remove(state.root, op);
        break;
      case "replace":
        state.root = replace(state.root, op);
        break;
      case "move":
        move(state.root, op);
        break;
      case "copy":
        state.copied = copy(state.root, op, state.copied);
        break;
      case "test":
        test(state.root, op);
        break;
      default:
        throw new JsonPatchError(`Unexpected kind: ${kind}`);
    }
  }
  return state.root;
}

/** A string member (`op`, `path`, `from`); undefined when absent or null; an error when of another type. */
function stringMember(op: Operation, name: string): string | undefined {
  const value = op?.[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") {
    if (name === "op") return "unknown";
    throw new JsonPatchError(`json: cannot unmarshal ${goJsonKind(value)} into Go value of type string`);
  }
  return value;
}

function pathOf(op: Operation, what: string): string {
  const path = stringMember(op, "path");
  if (path === undefined) throw new JsonPatchError(`${what}: operation missing path field: missing value`);
  return path;
}

function fromOf(op: Operation, what: string): string {
  const from = stringMember(op, "from");
  if (from === undefined) throw new JsonPatchError(`${what}: operation, missing from field: missing value`);
  return from;
}

/** The operation's value, absent and null both meaning null. */
function operationValue(op: Operation): unknown {
  const value = op?.["value"];
  return value === undefined ? null : structuredClone(value);
}

/** RFC 6901 unescaping of one segment. */
function decodeKey(segment: string): string {
  return segment.replace(/~1/g, "/").replace(/~0/g, "~");
}

/** The container holding the path's last segment, and that segment; undefined when the path does not lead to one. */
function findParent(root: unknown, path: string): { parent: Container; key: string } | undefined {
  const segments = path.split("/");
  if (segments.length < 2) return undefined;
  let node = root;
  for (const segment of segments.slice(1, -1)) {
    const next = Array.isArray(node) || isObject(node) ? childOf(node, decodeKey(segment)) : undefined;
    if (next === undefined || next === null || typeof next !== "object") return undefined;
    node = next;
  }
  if (!Array.isArray(node) && !isObject(node)) return undefined;
  return { parent: node, key: decodeKey(segments[segments.length - 1]!) };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** A member or element, or undefined when there is none (no error: findParent only asks). */
function childOf(node: Container, key: string): unknown {
  if (!Array.isArray(node)) return Object.hasOwn(node, key) ? node[key] : undefined;
  const index = goAtoi(key);
  if (index === undefined || index < -node.length || index >= node.length) return undefined;
  return node[index < 0 ? index + node.length : index];
}

/** Go's strconv.Atoi: optional sign, decimal digits; undefined where Atoi fails. */
function goAtoi(text: string): number | undefined {
  if (!/^[+-]?\d+$/.test(text)) return undefined;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : undefined;
}

function indexOf(key: string, what: string): number {
  const index = goAtoi(key);
  if (index === undefined) throw new JsonPatchError(`${what}: strconv.Atoi: parsing "${key}": invalid syntax`);
  return index;
}

/** An existing element's index (negative ones counting from the end); the library's get/set/remove. */
function existingIndex(array: unknown[], key: string, what: string): number {
  const index = indexOf(key, what);
  if (index < -array.length || index >= array.length) {
    throw new JsonPatchError(`${what}: Unable to access invalid index: ${index}: invalid index referenced`);
  }
  return index < 0 ? index + array.length : index;
}

/** Reads a member or element; a missing member is null (partialDoc.get never fails). */
function getChild(parent: Container, key: string, what: string): unknown {
  if (Array.isArray(parent)) return parent[existingIndex(parent, key, what)];
  return Object.hasOwn(parent, key) ? parent[key] : null;
}

/** Sets an own member: `parent[key] =` would set the prototype for `__proto__`. */
function setMember(parent: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(parent, key, { value, writable: true, enumerable: true, configurable: true });
}

function addChild(parent: Container, key: string, value: unknown, what: string): void {
  if (!Array.isArray(parent)) {
    setMember(parent, key, value);
    return;
  }
  if (key === "-") {
    parent.push(value);
    return;
  }
  const index = goAtoi(key);
  if (index === undefined) {
    throw new JsonPatchError(`${what}: value was not a proper array index: '${key}': strconv.Atoi: invalid syntax`);
  }
  const size = parent.length + 1;
  if (index >= size || index < -size) {
    throw new JsonPatchError(`${what}: Unable to access invalid index: ${index}: invalid index referenced`);
  }
  parent.splice(index < 0 ? index + size : index, 0, value);
}

function removeChild(parent: Container, key: string, what: string): void {
  if (Array.isArray(parent)) {
    parent.splice(existingIndex(parent, key, what), 1);
    return;
  }
  if (!Object.hasOwn(parent, key)) {
    throw new JsonPatchError(`${what}: Unable to remove nonexistent key: ${key}: missing value`);
  }
  delete parent[key];
}

function add(root: unknown, op: Operation, what: string): void {
  const path = pathOf(op, `${what} operation failed to decode path`);
  const found = findParent(root, path);
  if (!found)
    throw new JsonPatchError(`${what} operation does not apply: doc is missing path: "${path}": missing value`);
  addChild(found.parent, found.key, operationValue(op), `error in add for path: '${path}'`);
}

function remove(root: unknown, op: Operation): void {
  const path = pathOf(op, "remove operation failed to decode path");
  const found = findParent(root, path);
  if (!found)
    throw new JsonPatchError(`remove operation does not apply: doc is missing path: "${path}": missing value`);
  removeChild(found.parent, found.key, `error in remove for path: '${path}'`);
}

function replace(root: unknown, op: Operation): unknown {
  const path = pathOf(op, "replace operation failed to decode path");
  if (path === "") {
    const value = operationValue(op);
    if (value === null || typeof value !== "object") {
      throw new JsonPatchError("replace operation value must be object or array");
    }
    return value;
  }
  const found = findParent(root, path);
  if (!found) throw new JsonPatchError(`replace operation does not apply: doc is missing path: ${path}: missing value`);
  const { parent, key } = found;
  if (Array.isArray(parent)) {
    if (childOf(parent, key) === undefined) {
      throw new JsonPatchError(`replace operation does not apply: doc is missing key: ${path}: missing value`);
    }
    parent[existingIndex(parent, key, path)] = operationValue(op);
  } else setMember(parent, key, operationValue(op));
  return root;
}

function move(root: unknown, op: Operation): void {
  const from = fromOf(op, "move operation failed to decode from");
  const source = findParent(root, from);
  if (!source)
    throw new JsonPatchError(`move operation does not apply: doc is missing from path: ${from}: missing value`);
  const value = getChild(source.parent, source.key, `error in move for path: '${source.key}'`);
  removeChild(source.parent, source.key, `error in move for path: '${source.key}'`);
  const path = pathOf(op, "move operation failed to decode path");
  const target = findParent(root, path);
  if (!target) {
    throw new JsonPatchError(`move operation does not apply: doc is missing destination path: ${path}: missing value`);
  }
  addChild(target.parent, target.key, value, `error in move for path: '${path}'`);
}

function copy(root: unknown, op: Operation, copiedSoFar: number): number {
  const from = fromOf(op, "copy operation failed to decode from");
  const source = findParent(root, from);
  if (!source)
    throw new JsonPatchError(`copy operation does not apply: doc is missing from path: ${from}: missing value`);
  const value = getChild(source.parent, source.key, `error in copy for from: '${from}'`);
  const path = pathOf(op, "copy operation failed to decode path");
  const target = findParent(root, path);
  if (!target) {
    throw new JsonPatchError(`copy operation does not apply: doc is missing destination path: ${path}: missing value`);
  }
  // A nil node (a missing or null member) is copied without being counted.
  const copied = copiedSoFar + (value === null ? 0 : Buffer.byteLength(JSON.stringify(value)));
  if (copied > MAX_COPY_BYTES) {
    throw new JsonPatchError(
      `Unable to complete the copy, the accumulated size increase of copy is ${copied}, exceeding the limit ${MAX_COPY_BYTES}`,
    );
  }
  addChild(target.parent, target.key, structuredClone(value), "error while adding value during copy");
  return copied;
}

function test(root: unknown, op: Operation): void {
  const path = pathOf(op, "test operation failed to decode path");
  const hasValue = op !== null && "value" in op;
  if (path === "") {
    if (hasValue && jsonEqual(root, op["value"])) return;
    throw new JsonPatchError(`testing value ${path} failed: test failed`);
  }
  const found = findParent(root, path);
  if (!found) throw new JsonPatchError(`test operation does not apply: is missing path: ${path}: missing value`);
  const actual = getChild(found.parent, found.key, `error in test for path: '${path}'`);
  // A missing or null member equals only an explicit null.
  if (actual === null) {
    if (hasValue && op["value"] === null) return;
  } else if (hasValue && jsonEqual(actual, op["value"])) return;
  throw new JsonPatchError(`testing value ${path} failed: test failed`);
}
