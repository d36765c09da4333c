/**
 * The descriptor of a built-in kind with the defaults every built-in shares (singular, list kind, all
 * verbs, no generation), and the small object helpers the kinds' create-time preparation uses.
 */
import { ALL_VERBS, type JsonObject, type ServedResource } from "./served-resource.ts";

export type BuiltinSpec = Partial<ServedResource> &
  Pick<ServedResource, "group" | "version" | "kind" | "plural" | "namespaced">;

/** A built-in kind's descriptor: what the spec leaves out is the common case. */
export function served(spec: BuiltinSpec): ServedResource {
  return {
    listKind: `${spec.kind}List`,
    singular: spec.kind.toLowerCase(),
    shortNames: [],
    categories: [],
    verbs: ALL_VERBS,
    subresources: {},
    generation: "none",
    ...spec,
  };
}

/** `obj[key]` as an object, created (and set) when missing or not an object. */
export function record(obj: Record<string, unknown>, key: string): Record<string, unknown> {
  const value = obj[key];
  if (value !== null && typeof value === "object" && !Array.isArray(value)) return value as Record<string, unknown>;
  const fresh: Record<string, unknown> = {};
  obj[key] = fresh;
  return fresh;
}

/** `obj[key]` as an object when it is one. */
export function recordOrUndefined(
  obj: JsonObject | Record<string, unknown>,
  key: string,
): Record<string, unknown> | undefined {
  const value = obj[key];
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
