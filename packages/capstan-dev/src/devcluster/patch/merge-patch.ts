import { ownValue, setOwn } from "../machinery/own-properties.ts";

/** JSON merge patch (RFC 7386): objects merge recursively, `null` deletes, anything else replaces. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== "object" || Array.isArray(patch)) return patch;
  const base: Record<string, unknown> =
    target !== null && typeof target === "object" && !Array.isArray(target)
      ? { ...(target as Record<string, unknown>) }
      : {};
  // Patch keys are user data: `__proto__` or `constructor` must merge as plain keys.
  for (const [key, value] of Object.entries(patch as Record<string, unknown>)) {
    if (value === null) delete base[key];
    else setOwn(base, key, applyMergePatch(ownValue(base, key), value));
  }
  return base;
}
