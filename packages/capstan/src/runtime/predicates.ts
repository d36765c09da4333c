/**
 * Event filters of a watch, with controller-runtime's `predicate` semantics: a predicate decides,
 * per informer event, whether the event may enqueue a reconcile. Create and delete events pass
 * unless a predicate says otherwise; the built-in predicates only judge updates.
 *
 * A predicate is either an object with optional `create` / `update` / `delete` methods (a missing
 * method lets the event through), or a plain function `(old, new) => boolean` that judges updates
 * only.
 */
import type { KubeObject } from "../client/types.ts";

/** Filters the events of one watch. */
export interface EventPredicate<T extends KubeObject = KubeObject> {
  create?(obj: T): boolean;
  update?(oldObj: T, newObj: T): boolean;
  /** `obj` is the last known state; after a missed deletion it may be stale. */
  delete?(obj: T): boolean;
}

/** A predicate object, or an update-only function. */
export type Predicate<T extends KubeObject = KubeObject> = EventPredicate<T> | ((oldObj: T, newObj: T) => boolean);

function asObject<T extends KubeObject>(p: Predicate<T>): EventPredicate<T> {
  return typeof p === "function" ? { update: p } : p;
}

/** Whether every predicate lets a create of `obj` through. */
export function allowsCreate<T extends KubeObject>(predicates: readonly Predicate<T>[], obj: T): boolean {
  for (const p of predicates) {
    const f = asObject(p).create;
    if (f !== undefined && !f(obj)) return false;
  }
  return true;
}

/** Whether every predicate lets an update from `oldObj` to `newObj` through. */
export function allowsUpdate<T extends KubeObject>(predicates: readonly Predicate<T>[], oldObj: T, newObj: T): boolean {
  for (const p of predicates) {
    const f = asObject(p).update;
    if (f !== undefined && !f(oldObj, newObj)) return false;
  }
  return true;
}

/** Whether every predicate lets a delete of `obj` through. */
export function allowsDelete<T extends KubeObject>(predicates: readonly Predicate<T>[], obj: T): boolean {
  for (const p of predicates) {
    const f = asObject(p).delete;
    if (f !== undefined && !f(obj)) return false;
  }
  return true;
}

/**
 * Updates pass only when `metadata.generation` changed, i.e. the spec changed (the API server
 * bumps it on spec writes, never on status or metadata writes). Filters out the controller's own
 * status patches. Caveat (as in controller-runtime): kinds without a generation (ConfigMap) never
 * pass an update through this predicate.
 */
export function generationChanged<T extends KubeObject = KubeObject>(): EventPredicate<T> {
  return { update: (o, n) => o.metadata?.generation !== n.metadata?.generation };
}

/** Updates pass only when `metadata.labels` changed. */
export function labelsChanged<T extends KubeObject = KubeObject>(): EventPredicate<T> {
  return { update: (o, n) => !sameStringMap(o.metadata?.labels, n.metadata?.labels) };
}

/** Updates pass only when `metadata.annotations` changed. */
export function annotationsChanged<T extends KubeObject = KubeObject>(): EventPredicate<T> {
  return { update: (o, n) => !sameStringMap(o.metadata?.annotations, n.metadata?.annotations) };
}

/** Updates pass only when `metadata.resourceVersion` changed (drops resync re-deliveries). */
export function resourceVersionChanged<T extends KubeObject = KubeObject>(): EventPredicate<T> {
  return { update: (o, n) => o.metadata?.resourceVersion !== n.metadata?.resourceVersion };
}

/** Every event kind passes only if `fn(obj)` holds (for updates: of the new object). */
export function matching<T extends KubeObject = KubeObject>(fn: (obj: T) => boolean): EventPredicate<T> {
  return { create: fn, update: (_o, n) => fn(n), delete: fn };
}

/** Passes an event only when every predicate passes it. */
export function and<T extends KubeObject = KubeObject>(...predicates: Predicate<T>[]): EventPredicate<T> {
  return {
    create: (obj) => allowsCreate(predicates, obj),
    update: (o, n) => allowsUpdate(predicates, o, n),
    delete: (obj) => allowsDelete(predicates, obj),
  };
}

/** Passes an event when at least one predicate passes it. */
export function or<T extends KubeObject = KubeObject>(...predicates: Predicate<T>[]): EventPredicate<T> {
  return {
    create: (obj) => predicates.some((p) => allowsCreate([p], obj)),
    update: (o, n) => predicates.some((p) => allowsUpdate([p], o, n)),
    delete: (obj) => predicates.some((p) => allowsDelete([p], obj)),
  };
}

/** Passes exactly the events `predicate` blocks. */
export function not<T extends KubeObject = KubeObject>(predicate: Predicate<T>): EventPredicate<T> {
  return {
    create: (obj) => !allowsCreate([predicate], obj),
    update: (o, n) => !allowsUpdate([predicate], o, n),
    delete: (obj) => !allowsDelete([predicate], obj),
  };
}

function sameStringMap(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  if (a === b) return true;
  const ak = a === undefined ? [] : Object.keys(a);
  const bk = b === undefined ? [] : Object.keys(b);
  if (ak.length !== bk.length) return false;
  for (const k of ak) if (a?.[k] !== b?.[k] || !(b !== undefined && k in b)) return false;
  return true;
}
