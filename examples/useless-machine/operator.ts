/**
 * The useless machine (seed 002, after tilt-dev's uselessoperator): whenever a switch is not down,
 * the operator moves it back down, a few seconds later.
 *
 * A Machine has its own switch (`spec.switchPosition`, the seed's first version) and
 * `spec.switches` Switch objects (the seed's second version): created with `generateName:
 * switch-`, labelled `machine=<name>`, owned by the Machine (so they are garbage-collected with
 * it), deleted last-created first when the machine is scaled down. A Switch relabelled to another
 * machine is released by the old one and adopted by the new one. `status.positions` shows the
 * first letter of each Switch's position (`kubectl get machines`: SWITCHES, POSITIONS).
 *
 * It is a level-triggered reconciler, as the seed ends up being: it never sleeps. When it first
 * sees a switch of a machine up it writes `status.seenAt` and asks to be called again after the
 * flip delay (`requeueAfter`); once the delay has passed it flips one switch down, writes
 * `status.lastFlipAt`, and waits the delay again before the next one. So a machine never has more
 * than one switch flipped per delay, whatever happens meanwhile.
 *
 * Settings (environment variables, read when this module is imported):
 * - `USELESS_MACHINE_FLIP_DELAY`: how long a switch stays up before it is flipped down, and the
 *   least time between two flips of one machine (a duration, `"5s"`, `"200ms"`; default `5s`).
 *
 * Admission handlers (admission.ts) guard what the schema cannot: a Switch's `machine` label must
 * name a Machine of its namespace (refused otherwise, `failurePolicy: Fail`: the reconciler's
 * invariant is kept even when the operator is down, at the price of no Switch being created or
 * relabelled then), and a Machine records who created it in the `created-by` annotation, which
 * later updates cannot change (`failurePolicy: Ignore`: a record of convenience must not make
 * every Machine write depend on the operator being up).
 *
 * `uselessMachineOperator({ flipDelay })` builds the same operator with other settings (tests use
 * a short delay). Importing this module only defines the operator.
 */
import {
  type Duration,
  isDeleted,
  isNotFound,
  needs,
  type ObjectOf,
  type Operator,
  operator,
  type ReconcileContext,
  type ReconcileResult,
  toMilliseconds,
} from "capstan";
import { CONTROLLER_OWNER_INDEX } from "capstan/runtime";
import { keepCreator, recordCreator, switchMachineExists } from "./admission.ts";
import { machineV1 } from "./conversion.ts";
import { flipState, timeOf } from "./flip-state.ts";
import { MACHINE_LABEL, Machine, Switch } from "./resources.ts";

export { CREATED_BY_ANNOTATION } from "./admission.ts";
export { GROUP, MACHINE_LABEL, Machine, Switch } from "./resources.ts";

type MachineObject = ObjectOf<typeof Machine>;
type SwitchObject = ObjectOf<typeof Switch>;
type OwnerReference = NonNullable<SwitchObject["metadata"]["ownerReferences"]>[number];

/** The seed's five seconds ("we want to wait a few seconds before flipping the switch"). */
export const DEFAULT_FLIP_DELAY: Duration = "5s";

/**
 * Annotation the operator writes on a Switch it flips: when it did (ISO 8601, milliseconds). The
 * machine's `status.lastFlipAt` only holds the latest flip; this keeps each Switch's own.
 */
export const FLIPPED_AT_ANNOTATION = "useless.container.training/flipped-at";

/** Options of {@link uselessMachineOperator}. */
export interface UselessMachineOptions {
  /** Delay before a switch seen up is flipped, and between two flips of one machine (default 5 s). */
  flipDelay?: Duration;
}

/** The useless machine operator; see the module documentation. */
export function uselessMachineOperator(options: UselessMachineOptions = {}): Operator {
  const delayMs = toMilliseconds(options.flipDelay ?? DEFAULT_FLIP_DELAY);
  // The reconciler flips the machine's own switch by patching its spec, and lists, creates,
  // patches (flips, adoption, release) and deletes Switches through ctx.client: registration cannot
  // see those requests, so they are declared for `capstan generate rbac`; so is the Switch
  // validation's get of the Machine a Switch names (through ctx.api, as the operator).
  const op = operator({
    name: "useless-machine",
    permissions: [needs.custom(Machine, ["get", "patch"]), needs.custom(Switch, ["list", "create", "patch", "delete"])],
  });
  // Fail (the default): a Switch labelled for no machine is one nobody flips back down, the one
  // thing this operator promises, so none is admitted while the check cannot run.
  // Machine v1 (spec.position) is converted to and from v1alpha1 (spec.switchPosition) here.
  op.convert(Machine, { v1: machineV1 });
  op.on.validate(Switch, { id: "machine-exists" }, switchMachineExists);
  // Ignore: who created a machine is worth recording, not worth refusing machines for when the
  // operator is down (a Machine created then has no annotation; one updated then may lose it).
  op.on.mutate(Machine, { id: "created-by", operations: ["CREATE"], failurePolicy: "Ignore" }, recordCreator);
  op.on.mutate(Machine, { id: "keep-created-by", operations: ["UPDATE"], failurePolicy: "Ignore" }, keepCreator);
  op.controller(Machine)
    // Switches are owned (garbage-collected with their machine; watched, write access declared above) ...
    .owns(Switch)
    // ... and mapped by label, as the seed does, so a Switch relabelled to another machine
    // wakes both machines (an update enqueues what the old and the new object map to).
    .watches(Switch, machineOfSwitch)
    .reconcile((machine, ctx) => (isDeleted(machine) ? undefined : reconcileMachine(machine, ctx, delayMs)));
  return op;
}

export default uselessMachineOperator({
  flipDelay: process.env.USELESS_MACHINE_FLIP_DELAY ?? DEFAULT_FLIP_DELAY,
});

/** The machine a Switch belongs to, by its `machine` label. */
function machineOfSwitch(sw: SwitchObject): { namespace: string; name: string }[] {
  const machine = sw.metadata.labels?.[MACHINE_LABEL];
  return machine === undefined || sw.metadata.namespace === undefined
    ? []
    : [{ namespace: sw.metadata.namespace, name: machine }];
}

async function reconcileMachine(
  machine: MachineObject,
  ctx: ReconcileContext<MachineObject>,
  delayMs: number,
): Promise<ReconcileResult> {
  const switches = await scaleSwitches(machine, ctx);
  const status = machine.status ?? {};
  const changes: Record<string, unknown> = {};
  const positions = switches.map((s) => s.spec.position.charAt(0)).join("");
  if (status.positions !== positions) changes.positions = positions;

  const ownUp = machine.spec.switchPosition !== undefined && machine.spec.switchPosition !== "down";
  const up = switches.filter((s) => s.spec.position !== "down");
  const now = Date.now();
  const state = flipState(ownUp || up.length > 0, status, now, delayMs);

  switch (state.phase) {
    case "allDown":
      if (status.seenAt !== undefined) changes.seenAt = null;
      if (Object.keys(changes).length > 0) await ctx.patchStatus(changes);
      return undefined;
    case "firstSeen":
      await ctx.patchStatus({ ...changes, seenAt: new Date(now).toISOString() });
      return { requeueAfter: delayMs };
    case "waiting":
      if (Object.keys(changes).length > 0) await ctx.patchStatus(changes);
      return { requeueAfter: state.dueInMs };
    case "due":
      break;
  }

  // Claim the flip first: a status write carrying the resourceVersion we decided on. If the cached
  // machine is stale (a flip we made is not in the cache yet), the server answers 409 Conflict and
  // the reconcile is retried on a fresher copy, so two flips can never share one delay.
  const flippedAt = new Date(now).toISOString();
  await ctx.client.resource(Machine, ctx.key.namespace).patchStatus(
    ctx.key.name,
    {
      metadata: { resourceVersion: machine.metadata.resourceVersion },
      status: { ...changes, lastFlipAt: flippedAt },
    },
    { signal: ctx.signal },
  );
  const target = up[0];
  if (ownUp) {
    await ctx.client
      .resource(Machine, ctx.key.namespace)
      .patch(ctx.key.name, { spec: { switchPosition: "down" } }, { type: "merge", signal: ctx.signal });
    ctx.event("Normal", "FlippedDown", "moved the machine's switch back down");
  } else if (target !== undefined) {
    const name = target.metadata.name as string;
    try {
      await ctx.client
        .resource(Switch, ctx.key.namespace)
        .patch(
          name,
          { metadata: { annotations: { [FLIPPED_AT_ANNOTATION]: flippedAt } }, spec: { position: "down" } },
          { type: "merge", signal: ctx.signal },
        );
      ctx.event("Normal", "FlippedDown", `moved switch ${name} back down`);
    } catch (err) {
      // Deleted since we listed it: the slot is spent, the next reconcile looks again.
      if (!isNotFound(err)) throw err;
    }
  }
  return { requeueAfter: delayMs };
}

/**
 * Creates or deletes Switches until the machine has `spec.switches` of them; returns them oldest
 * first. They are listed from the API server, not the cache: `generateName` creates are not
 * idempotent, and a cache that has not yet seen the Switch the previous reconcile created would
 * make this one create another.
 */
async function scaleSwitches(machine: MachineObject, ctx: ReconcileContext<MachineObject>): Promise<SwitchObject[]> {
  const { namespace, name } = ctx.key;
  const api = ctx.client.resource(Switch, namespace);
  const switches = (await claimSwitches(machine, ctx)).sort(oldestFirst);
  const wanted = machine.spec.switches ?? 0;
  while (switches.length < wanted) {
    const created = await api.create(
      ctx.adopt(
        Switch.make({
          metadata: { generateName: "switch-", namespace, labels: { [MACHINE_LABEL]: name } },
          spec: { position: "down" },
        }),
      ),
      { signal: ctx.signal },
    );
    switches.push(created);
    ctx.event("Normal", "SwitchCreated", `created switch ${created.metadata.name}`);
  }
  while (switches.length > wanted) {
    const extra = switches.pop() as SwitchObject;
    const extraName = extra.metadata.name as string;
    try {
      await api.delete(extraName, { preconditions: { uid: extra.metadata.uid }, signal: ctx.signal });
      ctx.event("Normal", "SwitchDeleted", `deleted switch ${extraName}`);
    } catch (err) {
      if (!isNotFound(err)) throw err; // someone else deleted it: just as good
    }
  }
  return switches;
}

/**
 * The Switches this machine controls, claimed as the ReplicaSet controller claims its pods (the
 * seed's "changing a switch label" corner case): a Switch labelled `machine=<name>` with no
 * controller is adopted; one labelled for this machine but controlled by another machine is left to
 * that one (which releases it); one this machine controls whose label names another machine, or
 * none, is released (its owner reference removed), so it no longer goes with this machine. Each
 * write carries the Switch's resourceVersion: if the Switch changed meanwhile, the server answers
 * 409 Conflict and the reconcile is retried from fresh state.
 */
async function claimSwitches(machine: MachineObject, ctx: ReconcileContext<MachineObject>): Promise<SwitchObject[]> {
  const { namespace, name } = ctx.key;
  const uid = machine.metadata.uid as string;
  const api = ctx.client.resource(Switch, namespace);
  const setOwners = (sw: SwitchObject, ownerReferences: OwnerReference[]) =>
    api.patch(
      sw.metadata.name as string,
      { metadata: { ownerReferences, resourceVersion: sw.metadata.resourceVersion } },
      { type: "merge", signal: ctx.signal },
    );

  const mine: SwitchObject[] = [];
  const listed = await api.list({ labelSelector: `${MACHINE_LABEL}=${name}`, signal: ctx.signal });
  for (const sw of listed.items) {
    if (sw.metadata.deletionTimestamp !== undefined) continue;
    const controller = sw.metadata.ownerReferences?.find((r) => r.controller === true);
    if (controller?.uid === uid) {
      mine.push(sw);
    } else if (controller === undefined) {
      mine.push(await setOwners(sw, ctx.adopt(sw).metadata.ownerReferences ?? []));
      ctx.event("Normal", "SwitchAdopted", `adopted switch ${sw.metadata.name}`);
    }
  }
  for (const sw of ctx.cache(Switch).byIndex(CONTROLLER_OWNER_INDEX, uid)) {
    if (sw.metadata.namespace !== namespace || sw.metadata.labels?.[MACHINE_LABEL] === name) continue;
    try {
      await setOwners(
        sw,
        (sw.metadata.ownerReferences ?? []).filter((r) => r.uid !== uid),
      );
      ctx.event("Normal", "SwitchReleased", `released switch ${sw.metadata.name}, now labelled for another machine`);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
  return mine;
}

/** Creation order: creationTimestamp has one-second resolution, so the name breaks ties. */
function oldestFirst(a: SwitchObject, b: SwitchObject): number {
  const byTime = timeOf(a.metadata.creationTimestamp) - timeOf(b.metadata.creationTimestamp);
  if (byTime !== 0) return byTime;
  return (a.metadata.name ?? "") < (b.metadata.name ?? "") ? -1 : 1;
}
