/**
 * Status conditions as Kubernetes writes them (`metav1.Condition`): the schema to put in a status,
 * and helpers with apimachinery's `meta.SetStatusCondition` semantics.
 *
 * ```ts
 * status: Type.Object({ conditions: Type.Optional(Conditions) }),
 * // in a reconcile:
 * const { conditions, changed } = setCondition(obj.status?.conditions, {
 *   type: "Ready", status: "True", reason: "Scheduled", message: "next run at 10:00",
 *   observedGeneration: obj.metadata.generation,
 * }, ctx.now());
 * if (changed) await ctx.patchStatus({ conditions });
 * ```
 *
 * ## Guarantees
 * - {@link Condition} validates as controller-gen's schema for `metav1.Condition` does: the same
 *   types, patterns, bounds, enum and required fields; {@link Conditions} is a list keyed by `type`
 *   (`x-kubernetes-list-type: map`), as `+listType=map +listMapKey=type` makes it.
 * - The helpers never modify the array they are given (it is usually the informer cache's copy):
 *   they return a new one.
 * - `lastTransitionTime` moves only when a condition is new or its `status` changes; a change of
 *   reason, message or observedGeneration alone keeps it.
 *
 * ## Caveats
 * - The time comes from the caller (`ctx.now()` in a reconcile or handler), so it follows the
 *   operator's clock, and a test that moves that clock moves it too. It is written as `metav1.Time`
 *   is, RFC 3339 in UTC to the second (`2030-01-01T10:00:00Z`).
 * - The status is merge-patched as a whole array: two writers of different condition types on one
 *   object must not both patch `conditions` from stale copies (server-side apply merges by `type`).
 */
import { type Static, Type } from "typebox";
import { Kube } from "./kube-extensions.ts";

/** `status` of a condition: `"True"`, `"False"` or `"Unknown"` (strings, as in Kubernetes). */
export type ConditionStatus = "True" | "False" | "Unknown";

/**
 * One condition (`metav1.Condition`), with controller-gen's validation of it: `type` CamelCase or
 * `example.com/CamelCase` (at most 316 characters), `status` one of True/False/Unknown, `reason` a
 * non-empty CamelCase identifier (at most 1024), `message` at most 32768 characters,
 * `observedGeneration` at least 0, `lastTransitionTime` a date-time.
 */
export const Condition = Type.Object(
  {
    type: Type.String({
      description: "The condition's type, in CamelCase or as example.com/CamelCase.",
      maxLength: 316,
      pattern:
        "^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$",
    }),
    status: Type.Enum(["True", "False", "Unknown"], { description: "True, False or Unknown." }),
    observedGeneration: Type.Optional(
      Type.Integer({
        description: "The metadata.generation the condition was set from.",
        format: "int64",
        minimum: 0,
      }),
    ),
    lastTransitionTime: Type.String({
      description: "When the status last changed.",
      format: "date-time",
    }),
    reason: Type.String({
      description: "Why the condition last changed, as a CamelCase identifier.",
      maxLength: 1024,
      minLength: 1,
      pattern: "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$",
    }),
    message: Type.String({ description: "Details of the last change, for humans; may be empty.", maxLength: 32768 }),
  },
  { description: "One aspect of the object's current state." },
);

/** A condition as stored (`metav1.Condition`). */
export type Condition = Static<typeof Condition>;

/**
 * `status.conditions`: {@link Condition}s keyed by `type` (`x-kubernetes-list-type: map`), so
 * server-side apply merges them by type. Wrap it in `Type.Optional` in a status schema.
 */
export const Conditions = Type.Array(Condition, {
  description: "The object's conditions, one per type.",
  ...Kube.listMap(["type"]),
});

/**
 * What {@link setCondition} is given: a condition without `lastTransitionTime` (the helper sets it),
 * `message` empty unless given, `observedGeneration` absent unless given.
 */
export interface NewCondition {
  type: string;
  status: ConditionStatus;
  reason: string;
  message?: string;
  observedGeneration?: number;
  /** Used instead of `now` when the condition's status changes (or it is new). */
  lastTransitionTime?: string;
}

/** What {@link setCondition} and {@link removeCondition} return. */
export interface ConditionsUpdate {
  /** The conditions after the change: a new array, the given one untouched. */
  conditions: Condition[];
  /** Whether anything differs from the given conditions (nothing to write if not). */
  changed: boolean;
}

/**
 * Sets the condition of `condition.type` (apimachinery's `meta.SetStatusCondition`): a new type is
 * appended with `lastTransitionTime` = `now`; an existing one takes the new status, reason, message
 * and observedGeneration, and its `lastTransitionTime` becomes `now` only if the status changed.
 * `now` is the operator's time: pass `ctx.now()`. An explicit `lastTransitionTime` on `condition`
 * is used instead of `now` where a time is set.
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  condition: NewCondition,
  now: Date,
): ConditionsUpdate {
  const list = conditions ?? [];
  const transition = condition.lastTransitionTime ?? metaTime(now);
  const index = list.findIndex((c) => c.type === condition.type);
  const existing = list[index];
  if (existing === undefined) {
    return { conditions: [...list, stored(condition, transition)], changed: true };
  }
  const next = stored(condition, condition.status === existing.status ? existing.lastTransitionTime : transition);
  const changed =
    next.status !== existing.status ||
    next.reason !== existing.reason ||
    next.message !== existing.message ||
    // metav1.Condition omits a zero observedGeneration: absent and 0 are the same value.
    (next.observedGeneration ?? 0) !== (existing.observedGeneration ?? 0);
  if (!changed) return { conditions: [...list], changed: false };
  return { conditions: list.map((c, i) => (i === index ? next : c)), changed: true };
}

/** The condition of this type, or `undefined` (apimachinery's `meta.FindStatusCondition`). */
export function findCondition(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/** The conditions without the one of this type; `changed` if there was one (`meta.RemoveStatusCondition`). */
export function removeCondition(conditions: readonly Condition[] | undefined, type: string): ConditionsUpdate {
  const list = conditions ?? [];
  const kept = list.filter((c) => c.type !== type);
  return { conditions: kept, changed: kept.length !== list.length };
}

/** Whether the condition of this type is present with status `"True"` (`meta.IsStatusConditionTrue`). */
export function isConditionTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return findCondition(conditions, type)?.status === "True";
}

/** Whether the condition of this type is present with status `"False"` (`meta.IsStatusConditionFalse`). */
export function isConditionFalse(conditions: readonly Condition[] | undefined, type: string): boolean {
  return findCondition(conditions, type)?.status === "False";
}

/** The condition as stored: message always present, a zero or absent observedGeneration left out. */
function stored(condition: NewCondition, lastTransitionTime: string): Condition {
  const out: Condition = {
    type: condition.type,
    status: condition.status,
    lastTransitionTime,
    reason: condition.reason,
    message: condition.message ?? "",
  };
  if (condition.observedGeneration) out.observedGeneration = condition.observedGeneration;
  return out;
}

/** `metav1.Time`'s wire form: RFC 3339 in UTC, whole seconds. */
function metaTime(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}
