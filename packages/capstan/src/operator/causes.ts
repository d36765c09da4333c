/**
 * Detecting the changing cause of an object that is not being deleted, as Kopf's `causes.py` does:
 * `create` when no essence is stored on the object, `update` when the stored essence differs from
 * the current one (with `resume` handlers mixed in on the first sight in this process), `resume`
 * on the first sight of an unchanged object, otherwise nothing. Deletion (`delete`, decided by the
 * finalizer) is processing.ts's, since it goes with adding and removing the finalizer.
 */
import type { KubeObject } from "../client/types.ts";
import { type Diff, diff, jsonEqual, valueAt } from "./diff.ts";
import { type Essence, essenceOf } from "./essence.ts";
import type { ChangeHandlerSpec } from "./handlers.ts";
import type { OperatorNames } from "./naming.ts";
import { type Purpose, readEssence } from "./progress.ts";

/** A changing cause: its purpose, the handlers to run for it, and what changed. */
export interface ChangingCause {
  purpose: Purpose;
  /** The handlers of the cause (plus field handlers whose field changed), in registration order. */
  handlers: ChangeHandlerSpec[];
  /** The essence stored on the object when the last cause ended (undefined before the first). */
  stored: Essence | undefined;
  /** The object's essence now. */
  current: Essence;
  changes: Diff;
}

/**
 * The cause of `obj` among the `relevant` handlers (those whose filters match), or undefined when
 * nothing changed; `handledOnce`: a cause of the object already ended in this process.
 */
export function detectCause(
  obj: KubeObject,
  relevant: readonly ChangeHandlerSpec[],
  names: OperatorNames,
  handledOnce: boolean,
): ChangingCause | undefined {
  const stored = readEssence(obj, names);
  const current = essenceOf(obj);
  let purpose: Purpose;
  let changes: Diff;
  if (stored === undefined) {
    purpose = "create";
    changes = diff(undefined, current);
  } else {
    changes = diff(stored, current);
    if (changes.length > 0) purpose = "update";
    else if (!handledOnce) purpose = "resume";
    else return undefined;
  }
  const resumeToo = !handledOnce && purpose === "update";
  const handlers = relevant.filter(
    (h) =>
      h.cause === purpose ||
      (resumeToo && h.cause === "resume") ||
      (h.cause === "field" &&
        (purpose === "create" || purpose === "update") &&
        !jsonEqual(valueAt(stored, h.field ?? []), valueAt(current, h.field ?? []))),
  );
  return { purpose, handlers, stored, current, changes };
}
