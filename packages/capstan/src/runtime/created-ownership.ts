/**
 * Field ownership of a child that `ctx.apply` created with a plain create instead of server-side
 * apply (controller.ts). A create is the cheaper request for the API server (docs/runtime.md,
 * "What each write costs the API server"), but it records the controller's fields under an
 * `Update` entry of its field manager, where an apply records them under an `Apply` entry; only
 * an `Apply` entry lets a later apply remove a field the configuration no longer has. So after
 * each apply that is sent, the answer is checked here: if an `Update` entry of the controller's
 * manager still owns fields its `Apply` entry does not (the configuration dropped a field the
 * create had set), that entry is folded into the `Apply` entry and the apply is sent again, which
 * then removes what it no longer applies, as it would have had the child been applied from the
 * start. This is what client-go's `csaupgrade` does for client-side apply.
 *
 * ## Guarantees
 * - After `ctx.apply` returns, the controller's `Apply` entry owns every field it applied and
 *   every field its create set that it has not given up; a field neither the last configuration
 *   nor anyone else holds is removed, as with server-side apply from the start.
 * - Fields that another manager owns (by apply or by update) are never taken: only the entries
 *   of the controller's own manager change.
 *
 * ## Assumptions
 * - An `Update` entry of the controller's field manager without subresource comes from its own
 *   create: Capstan sends no other update under that name. A user who writes with the
 *   controller's name as `fieldManager` through the raw client gives those fields to its apply.
 * - Both entries are of one apiVersion (the version the controller writes); entries of another
 *   version are left alone, as their field paths may differ.
 *
 * ## Caveats
 * - Until the first apply that drops a created field, the child's managedFields show the
 *   controller as `Update` manager (and, after an apply, as both): a non-forced apply of another
 *   manager names it `"<controller>" using v1` in its conflict message.
 * - A kind whose server sets defaults (most built-in kinds) has the defaults in the create's
 *   entry, not in an apply's; its first sent apply after the create folds and applies again (two
 *   more writes, once per child), and the defaults the second apply lets go come back from the
 *   server's defaulting.
 */
import type { KubeObject } from "../client/types.ts";

type FieldsV1 = Record<string, unknown>;
type ManagedFieldsEntry = NonNullable<NonNullable<KubeObject["metadata"]>["managedFields"]>[number];

function isFields(value: unknown): value is FieldsV1 {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Whether `a` holds a field `b` does not (fieldsV1 trees: "." marks a set node, keys are children). */
function hasFieldsBeyond(a: FieldsV1, b: FieldsV1 | undefined): boolean {
  for (const [key, child] of Object.entries(a)) {
    const other = b?.[key];
    if (other === undefined) return true;
    if (isFields(child) && hasFieldsBeyond(child, isFields(other) ? other : undefined)) return true;
  }
  return false;
}

/** The union of two fieldsV1 trees. */
function unionFields(a: FieldsV1, b: FieldsV1): FieldsV1 {
  const out: FieldsV1 = { ...a };
  for (const [key, child] of Object.entries(b)) {
    const mine = out[key];
    out[key] = isFields(mine) && isFields(child) ? unionFields(mine, child) : isFields(mine) ? mine : child;
  }
  return out;
}

function ownEntries(
  entries: readonly ManagedFieldsEntry[],
  manager: string,
): { update?: ManagedFieldsEntry; apply?: ManagedFieldsEntry } {
  let update: ManagedFieldsEntry | undefined;
  let apply: ManagedFieldsEntry | undefined;
  for (const e of entries) {
    if (e.manager !== manager || (e.subresource ?? "") !== "") continue;
    if (e.operation === "Update") update = e;
    else if (e.operation === "Apply") apply = e;
  }
  return { ...(update ? { update } : {}), ...(apply ? { apply } : {}) };
}

/**
 * The child's managedFields with the `Update` entry of `manager` folded into its `Apply` entry,
 * when that `Update` entry owns a field the `Apply` entry does not; undefined when nothing needs
 * folding (the common case: no such entry, or one the apply already covers).
 */
export function foldCreatedFields(written: KubeObject, manager: string): ManagedFieldsEntry[] | undefined {
  const entries = written.metadata?.managedFields;
  if (entries === undefined) return undefined;
  const { update, apply } = ownEntries(entries, manager);
  if (update === undefined || !isFields(update.fieldsV1)) return undefined;
  if (apply !== undefined && apply.apiVersion !== update.apiVersion) return undefined;
  const applied = apply !== undefined && isFields(apply.fieldsV1) ? apply.fieldsV1 : undefined;
  if (!hasFieldsBeyond(update.fieldsV1, applied)) return undefined;
  const folded: ManagedFieldsEntry = {
    manager,
    operation: "Apply",
    apiVersion: update.apiVersion,
    ...((apply?.time ?? update.time) ? { time: apply?.time ?? update.time } : {}),
    fieldsType: "FieldsV1",
    fieldsV1: applied === undefined ? update.fieldsV1 : unionFields(applied, update.fieldsV1),
  };
  const out: ManagedFieldsEntry[] = [];
  let placed = false;
  for (const e of entries) {
    if (e === update || e === apply) {
      if (!placed) out.push(folded);
      placed = true;
    } else {
      out.push(e);
    }
  }
  return out;
}
