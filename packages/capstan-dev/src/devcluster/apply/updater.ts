/**
 * Ownership bookkeeping of server-side apply (structured-merge-diff `merge.Updater`): how an update or
 * an apply moves field ownership between managers, finds conflicts, and prunes the fields an applier
 * stopped applying.
 *
 * Expected flow: field-manager.ts decodes `metadata.managedFields` into {@link Managers}, calls
 * {@link updateOwnership} for create/update/patch or {@link applyOwnership} for apply, and encodes the
 * result back.
 *
 * Guarantees:
 * - Update: the updating manager owns what it added or modified; other managers lose the fields that
 *   changed (no conflicts for updates) and every manager loses removed fields; empty managers vanish.
 * - Apply: the applier owns exactly the fields of its configuration. A field another manager owns and
 *   whose value the apply changes is a conflict, unless `force` (then ownership moves to the applier).
 *   Fields the applier applied last time, no longer applies, and nobody else owns are removed.
 *
 * Assumptions: one schema for every version of a kind (the devcluster converts versions by renaming
 * apiVersion only), so managers of other versions are compared on the same object.
 */
import type { TypeNode } from "../patch/patch-meta.ts";
import { FieldSet } from "./field-set.ts";
import type { Json, Path } from "./path-element.ts";
import {
  type Comparison,
  compareTyped,
  ensureNamedFieldsAreMembers,
  jsonEqual,
  mergeTyped,
  removeTyped,
  toFieldSet,
} from "./typed.ts";

/** The fields one manager owns, at the apiVersion it used, and whether it owns them by applying. */
export interface VersionedSet {
  readonly set: FieldSet;
  readonly apiVersion: string;
  readonly applied: boolean;
}

/** Managers by identifier (see managed-fields.ts); iteration order is insertion order. */
export type Managers = Map<string, VersionedSet>;

/** One conflicting field: the manager that owns it and the path. */
export interface Conflict {
  readonly manager: string;
  readonly path: Path;
}

/** Thrown by apply without force when other managers own fields it would change. */
export class ConflictsError extends Error {
  constructor(readonly conflicts: readonly Conflict[]) {
    super(`${conflicts.length} conflict(s)`);
    this.name = "ConflictsError";
  }
}

/** Fields excluded from ownership tracking (a resource's reset fields, e.g. `status` on the main resource). */
export interface UpdaterOptions {
  readonly ignored?: FieldSet;
}

function filtered(c: Comparison, ignored: FieldSet | undefined): Comparison {
  if (!ignored || ignored.isEmpty()) return c;
  return {
    added: c.added.recursiveDifference(ignored),
    modified: c.modified.recursiveDifference(ignored),
    removed: c.removed.recursiveDifference(ignored),
  };
}

/** Shared step of update and apply: conflicts, and removal of changed/removed fields from other managers. */
function reconcile(
  oldObj: Json,
  newObj: Json,
  type: TypeNode,
  managers: Managers,
  workflow: string,
  force: boolean,
  options: UpdaterOptions,
): Comparison {
  const compare = filtered(compareTyped(oldObj, newObj, type), options.ignored);
  const changed = compare.modified.union(compare.added);
  const conflicts = new Map<string, FieldSet>();
  for (const [manager, vs] of managers) {
    if (manager === workflow) continue;
    const conflictSet = vs.set.intersection(changed);
    if (!conflictSet.isEmpty()) conflicts.set(manager, conflictSet);
  }
  if (!force && conflicts.size > 0) {
    const list: Conflict[] = [];
    for (const [manager, set] of conflicts) for (const path of set.paths()) list.push({ manager, path });
    throw new ConflictsError(list);
  }
  for (const [manager, set] of conflicts) {
    const vs = managers.get(manager)!;
    managers.set(manager, { ...vs, set: vs.set.difference(set) });
  }
  if (!compare.removed.isEmpty()) {
    for (const [manager, vs] of managers) {
      if (manager === workflow) continue;
      managers.set(manager, { ...vs, set: vs.set.difference(compare.removed) });
    }
  }
  for (const [manager, vs] of managers) if (vs.set.isEmpty()) managers.delete(manager);
  return compare;
}

/**
 * Update (create, update, non-apply patch): `manager` takes ownership of what changed between `live`
 * and `next`. Mutates and returns `managers`.
 */
export function updateOwnership(
  live: Json,
  next: Json,
  type: TypeNode,
  apiVersion: string,
  managers: Managers,
  manager: string,
  options: UpdaterOptions = {},
): Managers {
  const compare = reconcile(live, next, type, managers, manager, true, options);
  const previous = managers.get(manager)?.set ?? FieldSet.empty();
  let set = previous.difference(compare.removed).union(compare.modified).union(compare.added);
  if (options.ignored) set = set.recursiveDifference(options.ignored);
  if (set.isEmpty()) managers.delete(manager);
  else managers.set(manager, { set, apiVersion, applied: false });
  return managers;
}

/** The outcome of an apply: the new object (undefined when nothing changed) and the managers. */
export interface ApplyOutcome {
  readonly object: Json | undefined;
  readonly managers: Managers;
}

/**
 * Apply: merges `config` into `live`, gives `manager` exactly the fields of `config`, prunes what it
 * stopped applying, and checks conflicts. Throws {@link ConflictsError} without `force`.
 */
export function applyOwnership(
  live: Json,
  config: Json,
  type: TypeNode,
  apiVersion: string,
  managers: Managers,
  manager: string,
  force: boolean,
  options: UpdaterOptions = {},
): ApplyOutcome {
  let merged: Json = mergeTyped(live, config, type) ?? {};
  const lastSet = managers.get(manager);
  let set = toFieldSet(config, type);
  if (options.ignored) set = set.recursiveDifference(options.ignored);
  managers.set(manager, { set, apiVersion, applied: true });
  merged = prune(merged, type, managers, lastSet, set);
  reconcile(live, merged, type, managers, manager, force, options);
  return { object: jsonEqual(live, merged) ? undefined : merged, managers };
}

/**
 * Removes a field, list item or map entry iff the applier applied it last time, does not apply it
 * now, and no other manager owns it (prune + addBackOwnedItems + addBackDanglingItems).
 */
function prune(
  merged: Json,
  type: TypeNode,
  managers: Managers,
  lastSet: VersionedSet | undefined,
  applied: FieldSet,
): Json {
  if (!lastSet || lastSet.set.isEmpty()) return merged;
  // Re-applying a superset of last time removes nothing: every candidate is still owned by the applier
  // (ensureNamedFieldsAreMembers is monotone). The common case, and the walks below are the costly part.
  if (lastSet.set.difference(applied).isEmpty()) return merged;
  const ensure = (s: FieldSet) => ensureNamedFieldsAreMembers(s, type);
  const last = ensure(lastSet.set);
  let pruned = removeTyped(merged, last, type) ?? {};

  let managed = FieldSet.empty();
  for (const vs of managers.values()) managed = managed.union(vs.set);
  const mergedSet = ensure(toFieldSet(merged, type));
  pruned =
    removeTyped(merged, mergedSet.difference(ensure(toFieldSet(pruned, type)).union(ensure(managed))), type) ?? {};

  const prunedSet = ensure(toFieldSet(pruned, type));
  return removeTyped(merged, mergedSet.difference(prunedSet).intersection(last), type) ?? {};
}
