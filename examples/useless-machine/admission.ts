/**
 * The useless machine's admission handlers: what its schema cannot say, checked or written by the
 * API server before an object is stored (served by the operator's webhook server; see
 * docs/webhooks.md).
 *
 * - {@link switchMachineExists} (validating, Switch): a Switch's `machine` label names a Machine of
 *   its namespace. A schema sees one object at a time; this needs a read of another.
 * - {@link recordCreator} (mutating, Machine, CREATE): who created the machine, in the
 *   {@link CREATED_BY_ANNOTATION} annotation, from the request's user: something only the API
 *   server knows, so no client can forge it.
 * - {@link keepCreator} (mutating, Machine, UPDATE): the annotation keeps the value it was created
 *   with, as the API server keeps `metadata.creationTimestamp`: a write that changes or drops it
 *   is admitted with the old value put back (and a warning), rather than refused, so a `kubectl
 *   replace` of a manifest without the annotation still works.
 */
import { type AdmissionContext, AdmissionDenied, isNotFound, type ObjectOf } from "capstan";
import { MACHINE_LABEL, Machine, type Switch } from "./resources.ts";

type MachineObject = ObjectOf<typeof Machine>;
type SwitchObject = ObjectOf<typeof Switch>;

/** Annotation holding the user name of whoever created a Machine (set by the API server's call to us). */
export const CREATED_BY_ANNOTATION = "useless.container.training/created-by";

/**
 * Refuses a Switch whose `machine` label names no Machine in its namespace, when it is created or
 * its label changes.
 *
 * A Switch without the label is allowed: the reconciler expects such Switches, it releases one
 * whose label was removed (the seed's relabelling corner case) and leaves it alone, so refusing
 * them would only forbid releasing a switch by hand.
 *
 * An update that keeps the label is allowed without a look-up: the Machine may have gone since
 * (its Switches are garbage-collected after it), and the writes made meanwhile (the reconciler of
 * the old owner releasing a Switch relabelled to a machine since deleted, the garbage collector)
 * must not be refused for a label they did not set.
 */
export async function switchMachineExists({
  obj,
  oldObj,
  namespace,
  api,
  signal,
}: AdmissionContext<SwitchObject>): Promise<void> {
  const machine = obj.metadata.labels?.[MACHINE_LABEL];
  if (machine === undefined) return;
  if (oldObj !== undefined && oldObj.metadata.labels?.[MACHINE_LABEL] === machine) return;
  // A create with generateName has no name yet, but the request always has the namespace.
  const ns = namespace ?? obj.metadata.namespace ?? "";
  try {
    await api.resource(Machine, ns).get(machine, { signal });
  } catch (err) {
    if (isNotFound(err)) throw new AdmissionDenied(`no Machine "${machine}" in namespace "${ns}"`);
    // Anything else (a 403, a timeout) is not an answer: the handler fails, which denies with 500.
    throw err;
  }
}

/** Writes the creating user's name into {@link CREATED_BY_ANNOTATION}, over any value the creator sent. */
export function recordCreator({ obj, userInfo }: AdmissionContext<MachineObject>): void {
  // Every authenticated request has a user name; an empty one would record nothing worth keeping.
  if (userInfo.username === undefined || userInfo.username === "") return;
  obj.metadata.annotations = { ...obj.metadata.annotations, [CREATED_BY_ANNOTATION]: userInfo.username };
}

/**
 * Puts back the stored {@link CREATED_BY_ANNOTATION} (or its absence, for a Machine created while
 * the webhook was not called) when an update changes it.
 */
export function keepCreator({ obj, oldObj, warn }: AdmissionContext<MachineObject>): void {
  const recorded = oldObj?.metadata.annotations?.[CREATED_BY_ANNOTATION];
  const sent = obj.metadata.annotations?.[CREATED_BY_ANNOTATION];
  if (sent === recorded) return;
  const { [CREATED_BY_ANNOTATION]: _dropped, ...others } = obj.metadata.annotations ?? {};
  obj.metadata.annotations = recorded === undefined ? others : { ...others, [CREATED_BY_ANNOTATION]: recorded };
  warn(`${CREATED_BY_ANNOTATION} records who created the machine and cannot be changed; it was kept`);
}
