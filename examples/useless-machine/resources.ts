/**
 * The useless machine's two kinds (seed 002): a Machine, which has its own switch
 * (`spec.switchPosition`) and asks for `spec.switches` Switch objects, and the Switches, each
 * with a `spec.position`, labelled `machine=<name>` and owned by their Machine.
 */
import { defineResource, type PrinterColumn, Type } from "capstan";

/** The API group of both kinds, as in the seed (`machines.useless.container.training`). */
export const GROUP = "useless.container.training";

/** The label tying a Switch to its Machine (the seed's `machine=<name>`). */
export const MACHINE_LABEL = "machine";

/**
 * A machine with more switches than this is a typo, not a bigger machine: the bound keeps one
 * `kubectl apply` from making the operator create thousands of objects.
 */
export const MAX_SWITCHES = 20;

/** A switch is either up or down; the operator's whole purpose is to make it down. */
export const Position = Type.Enum(["up", "down"]);

/** How many Switch objects the machine has (absent: none). */
const SwitchCount = Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_SWITCHES }));

/** A Machine's status, the same in both versions. */
const MachineStatus = Type.Object({
  /** When the operator first saw a switch of this machine not down (cleared once all are down). */
  seenAt: Type.Optional(Type.String({ format: "date-time" })),
  /** When the operator last flipped one of this machine's switches down. */
  lastFlipAt: Type.Optional(Type.String({ format: "date-time" })),
  /** The first letter of each Switch's position, oldest Switch first (`"udd"`). */
  positions: Type.Optional(Type.String()),
});

/** `v1`'s spec: the machine's own switch is `position`, as a Switch's is. */
export const MachineV1Spec = Type.Object({
  /** The machine's own switch; absent: the machine has none. */
  position: Type.Optional(Position),
  switches: SwitchCount,
});

/** `kubectl get machines`' columns; the machine's own switch is at `positionPath` in each version. */
function machineColumns(positionPath: string): PrinterColumn[] {
  return [
    { name: "Switches", type: "integer", jsonPath: ".spec.switches" },
    { name: "Positions", type: "string", jsonPath: ".status.positions" },
    { name: "Position", type: "string", jsonPath: positionPath, priority: 1 },
    { name: "Seen", type: "date", jsonPath: ".status.seenAt", priority: 1 },
  ];
}

/**
 * A Machine. `v1alpha1` is the seed's version, the one the operator reads and writes and the
 * storage version; `v1` renames `spec.switchPosition` to `spec.position`, and the operator's
 * conversion webhook (conversion.ts) converts between them.
 */
export const Machine = defineResource({
  group: GROUP,
  kind: "Machine",
  scope: "Namespaced",
  versions: [
    {
      name: "v1alpha1",
      storage: true,
      spec: Type.Object({
        /** The machine's own switch (the seed's first version); absent: the machine has none. */
        switchPosition: Type.Optional(Position),
        switches: SwitchCount,
      }),
      status: MachineStatus,
      printerColumns: machineColumns(".spec.switchPosition"),
    },
    {
      name: "v1",
      spec: MachineV1Spec,
      status: MachineStatus,
      printerColumns: machineColumns(".spec.position"),
    },
  ],
});

export const Switch = defineResource({
  group: GROUP,
  version: "v1alpha1",
  kind: "Switch",
  scope: "Namespaced",
  spec: Type.Object({ position: Position }),
  printerColumns: [{ name: "Position", type: "string", jsonPath: ".spec.position" }],
});
