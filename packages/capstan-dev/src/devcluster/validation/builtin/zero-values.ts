/**
 * Reads a decoded (defaulted) object's members as Go reads the struct it decodes into, for the
 * built-in kinds' validation: an absent or null member, or one of another JSON type, is the Go zero
 * value (`""`, `0`, `false`, an empty list or map); `present` tells a set pointer from a nil one.
 */
import type { Json } from "./kind-validation.ts";

/** A string member ("" when absent). */
export function str(value: unknown): string {
  return typeof value === "string" ? value : "";
}

/** A number member (0 when absent). */
export function num(value: unknown): number {
  return typeof value === "number" ? value : 0;
}

/** A boolean member (false when absent). */
export function bool(value: unknown): boolean {
  return value === true;
}

/** An object member, or undefined (a nil pointer) when absent, null or not an object. */
export function obj(value: unknown): Json | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Json) : undefined;
}

/** An object member, or an empty one (a struct held by value). */
export function objOrEmpty(value: unknown): Json {
  return obj(value) ?? {};
}

/** A list member ([] when absent). */
export function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** A list of structs: each item an object (a non-object item reads as an empty struct). */
export function objects(value: unknown): Json[] {
  return list(value).map(objOrEmpty);
}

/** A list of strings. */
export function strings(value: unknown): string[] {
  return list(value).map(str);
}

/** A map member's entries ([] when absent). */
export function entries(value: unknown): Array<[string, unknown]> {
  const o = obj(value);
  return o === undefined ? [] : Object.entries(o);
}

/** Whether a pointer member is set (present and not null). */
export function present(value: unknown): boolean {
  return value !== undefined && value !== null;
}
