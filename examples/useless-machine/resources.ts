/**
 * The useless machine's two kinds (seed 002): a Machine, which has its own switch
 * (`spec.switchPosition`) and asks for `spec.switches` Switch objects, and the Switches, each
 * with a `spec.position`, labelled `machine=<name>` and owned by their Machine.
 */
import { defineResource, Type } from "capstan";

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

export const Machine = defineResource({
  group: GROUP,
  version: "v1alpha1",
  kind: "Machine",
  scope: "Namespaced",
  spec: Type.Object({
    /** The machine's own switch (the seed's first version); absent: the machine has none. */
    switchPosition: Type.Optional(Position),
    /** How many Switch objects the machine has (absent: none). */
    switches: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_SWITCHES })),
  }),
  status: Type.Object({
    /** When the operator first saw a switch of this machine not down (cleared once all are down). */
    seenAt: Type.Optional(Type.String({ format: "date-time" })),
    /** When the operator last flipped one of this machine's switches down. */
    lastFlipAt: Type.Optional(Type.String({ format: "date-time" })),
    /** The first letter of each Switch's position, oldest Switch first (`"udd"`). */
    positions: Type.Optional(Type.String()),
  }),
  printerColumns: [
    { name: "Switches", type: "integer", jsonPath: ".spec.switches" },
    { name: "Positions", type: "string", jsonPath: ".status.positions" },
    { name: "Position", type: "string", jsonPath: ".spec.switchPosition", priority: 1 },
    { name: "Seen", type: "date", jsonPath: ".status.seenAt", priority: 1 },
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
