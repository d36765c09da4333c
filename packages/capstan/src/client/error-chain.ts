/**
 * Recognising an error by its class among the errors it wraps. Every `is*` helper of the client
 * looks through `cause` (as Go's `errors.As` does, and as the client wraps a socket's failure in the
 * failed call's error), and accepts an error of that class's name, so an error made by another
 * copy of this package (an operator module that bundles its own) counts too.
 */

/** Causes are followed this deep at most: a cycle of causes must not hang a check. */
const MAX_CAUSE_DEPTH = 8;

/** Whether `err`, or an error it wraps as its `cause`, is a `type` (by class or by name). */
export function isInChain(err: unknown, type: abstract new (...args: never[]) => unknown, name: string): boolean {
  let e: unknown = err;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && e instanceof Error; depth++) {
    if (e.name === name || e instanceof type) return true;
    e = e.cause;
  }
  return false;
}
