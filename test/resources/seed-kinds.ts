/**
 * The custom kinds of the four seed operators, defined the way an operator author would write
 * them with Capstan. Shared by the CRD tests (unit and against the embedded API server).
 */
import { Type } from "typebox";
import { defineResource } from "../../packages/capstan/src/resources/define-resource.ts";

/** Seeds 000/003: the currency is limited to the seed's enum; shortName `er`. */
export const ExchangeRate = defineResource({
  group: "operators.brennerm.github.io",
  version: "v1",
  kind: "ExchangeRate",
  scope: "Namespaced",
  shortNames: ["er"],
  spec: Type.Object({ currency: Type.Enum(["CAD", "CHF", "GBP", "JPY", "PLN", "USD"]) }),
  status: Type.Object({
    rate: Type.Optional(Type.Number()),
    fetchedAt: Type.Optional(Type.String({ format: "date-time" })),
  }),
  printerColumns: [
    { name: "Currency", type: "string", jsonPath: ".spec.currency" },
    { name: "Rate", type: "number", jsonPath: ".status.rate" },
  ],
});

/** Seed 001: spec.image required with minLength 1; status.currentPod and status.startTimes (int64). */
export const ImmortalContainer = defineResource({
  group: "immortalcontainer.flugel.it",
  version: "v1alpha1",
  kind: "ImmortalContainer",
  scope: "Namespaced",
  spec: Type.Object({ image: Type.String({ minLength: 1 }) }),
  status: Type.Object({
    currentPod: Type.Optional(Type.String()),
    startTimes: Type.Optional(Type.Integer({ minimum: 0 })),
  }),
});

/** Seed 002: a machine with a switch position and N switches; positions shown as columns. */
export const Machine = defineResource({
  group: "useless.container.training",
  version: "v1alpha1",
  kind: "Machine",
  scope: "Namespaced",
  spec: Type.Object({
    switchPosition: Type.Optional(Type.Enum(["up", "down"], { default: "down" })),
    switches: Type.Optional(Type.Integer({ minimum: 0, maximum: 20, default: 1 })),
  }),
  status: Type.Object({
    seenAt: Type.Optional(Type.String({ format: "date-time" })),
    positions: Type.Optional(Type.String()),
  }),
  printerColumns: [
    { name: "Switches", type: "integer", jsonPath: ".spec.switches" },
    { name: "Positions", type: "string", jsonPath: ".status.positions" },
    { name: "Seen", type: "date", jsonPath: ".status.seenAt" },
  ],
});

export const Switch = defineResource({
  group: "useless.container.training",
  version: "v1alpha1",
  kind: "Switch",
  scope: "Namespaced",
  spec: Type.Object({ position: Type.Enum(["up", "down"]) }),
  status: Type.Object({ seenAt: Type.Optional(Type.String({ format: "date-time" })) }),
  printerColumns: [
    { name: "Position", type: "string", jsonPath: ".spec.position" },
    { name: "Seen", type: "date", jsonPath: ".status.seenAt" },
  ],
  selectableFields: [".spec.position"],
});

/** Seed 004: guitars with a brand, a review flag and a comment the operator writes. */
export const Guitar = defineResource({
  group: "kool.karmalabs.local",
  version: "v1",
  kind: "Guitar",
  scope: "Namespaced",
  shortNames: ["guit"],
  spec: Type.Object({
    brand: Type.String({ minLength: 1 }),
    review: Type.Optional(Type.Boolean({ default: false })),
    comment: Type.Optional(Type.String()),
  }),
});

export const SEED_KINDS = [ExchangeRate, ImmortalContainer, Machine, Switch, Guitar] as const;
