/**
 * What the generated built-in schema modules use to give a referenced schema the referring field's
 * own description (`PodSpec.containers` items are a `Container`; the field says what it is for).
 */
import type { TSchema } from "typebox";

/**
 * A copy of `schema` with another description. A function, not `{ ...schema, description }` in the
 * generated code: a spread may run getters, so a bundler keeps it even when nothing uses the
 * result, while a call marked pure is dropped.
 */
export function described<T extends TSchema>(schema: T, description: string): T {
  return { ...schema, description };
}
