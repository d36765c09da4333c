/**
 * The ExchangeRate custom resource of seeds 000 and 003: one currency to follow, limited to the
 * seed's six by an enum (so `kubectl apply` of any other currency is refused by the API server),
 * short name `er`, and a status holding the rate last fetched and when.
 *
 * The group is the seed's own, so the seed's `exchangerate.yml` applies unchanged.
 */
import { defineResource, type ObjectOf, Type } from "capstan";

/** The currencies seed 003 allows (`enum: ["CAD","CHF","GBP","JPY","PLN","USD"]`). */
export const CURRENCIES = ["CAD", "CHF", "GBP", "JPY", "PLN", "USD"] as const;

/** A currency an ExchangeRate may follow. */
export type Currency = (typeof CURRENCIES)[number];

/**
 * One currency to follow: the operator publishes its rate against the euro in a ConfigMap of the
 * same name.
 */
export const ExchangeRate = defineResource({
  group: "operators.brennerm.github.io",
  version: "v1",
  kind: "ExchangeRate",
  scope: "Namespaced",
  shortNames: ["er"],
  spec: Type.Object({
    currency: Type.Enum([...CURRENCIES], { description: "The currency whose rate against the base is published." }),
  }),
  status: Type.Object({
    currency: Type.Optional(Type.String({ description: "The currency the rate below is for." })),
    base: Type.Optional(Type.String({ description: "The currency the rate is quoted against (EUR)." })),
    rate: Type.Optional(Type.Number({ description: "Units of `currency` per one unit of `base`." })),
    fetchedAt: Type.Optional(
      Type.String({ format: "date-time", description: "When the rate was last fetched successfully." }),
    ),
  }),
  printerColumns: [
    { name: "Currency", type: "string", jsonPath: ".spec.currency" },
    { name: "Rate", type: "number", jsonPath: ".status.rate" },
    { name: "Fetched", type: "date", jsonPath: ".status.fetchedAt" },
    { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
  ],
});

/** An ExchangeRate object as the API returns it. */
export type ExchangeRateObject = ObjectOf<typeof ExchangeRate>;
