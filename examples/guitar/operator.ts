/**
 * The guitar reviewer (seed 004, karmab's "samplecontroller"): every Guitar in the cluster that has
 * not been reviewed gets a comment chosen by its brand written into its spec, and `spec.review: true`.
 *
 * ```sh
 * capstan run examples/guitar/operator.ts            # against your kubeconfig's cluster
 * kubectl apply -f examples/guitar/stratocaster.yaml
 * kubectl get guitars -A                             # BRAND, REVIEWED, COMMENT
 * ```
 *
 * Settings (environment variables, read when the module is imported):
 * - `GUITAR_GOOD_BRANDS`: comma-separated brands that get {@link GOOD_COMMENT}
 *   (default: the seed's list, {@link DEFAULT_GOOD_BRANDS}).
 * - `GUITAR_BAD_BRANDS`: comma-separated brands that get {@link BAD_COMMENT}
 *   (default: {@link DEFAULT_BAD_BRANDS}).
 * Any other brand gets {@link UNKNOWN_COMMENT}. Brands are compared case-insensitively.
 */
import { type ChangeContext, defineResource, type ObjectOf, type Operator, operator, Type } from "capstan";

// The seed's CRD, `guitars.kool.karmalabs.local`, with its short name `guit`.
/** A guitar to review: the operator writes a comment chosen by its brand into `spec.comment`. */
export const Guitar = defineResource({
  group: "kool.karmalabs.local",
  version: "v1",
  kind: "Guitar",
  scope: "Namespaced",
  shortNames: ["guit"],
  spec: Type.Object({
    brand: Type.String({ minLength: 1, description: "Who made the guitar, e.g. fender." }),
    // The API server fills in `false`: a new guitar shows REVIEWED false, as in the seed's manifests.
    review: Type.Optional(
      Type.Boolean({
        default: false,
        description: "Whether the guitar was reviewed; set it to false for a new review.",
      }),
    ),
    comment: Type.Optional(Type.String({ description: "The review, written by the operator." })),
  }),
  printerColumns: [
    { name: "Brand", type: "string", jsonPath: ".spec.brand" },
    { name: "Reviewed", type: "boolean", jsonPath: ".spec.review" },
    { name: "Comment", type: "string", jsonPath: ".spec.comment" },
    { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
  ],
});

/** A Guitar object, typed from the schema above. */
export type GuitarObject = ObjectOf<typeof Guitar>;

/** The seed's taste in guitars: brands it likes... */
export const DEFAULT_GOOD_BRANDS = [
  "coleclark",
  "fender",
  "gibson",
  "ibanez",
  "martin",
  "seagull",
  "squier",
  "washburn",
];
/** ...and brands it does not. */
export const DEFAULT_BAD_BRANDS = [
  "epiphone",
  "guild",
  "gretsch",
  "jackson",
  "ovation",
  "prs",
  "rickenbauer",
  "taylor",
  "yamaha",
];

export const GOOD_COMMENT = "this is a great instrument";
export const BAD_COMMENT = "this one is not for me";
export const UNKNOWN_COMMENT = "nobody knows this brand";

/** Which brands get which comment. */
export interface ReviewRules {
  goodBrands: readonly string[];
  badBrands: readonly string[];
}

/** The comment a guitar of `brand` gets under `rules`. */
export function commentFor(brand: string, rules: ReviewRules): string {
  const b = brand.trim().toLowerCase();
  if (rules.goodBrands.includes(b)) return GOOD_COMMENT;
  if (rules.badBrands.includes(b)) return BAD_COMMENT;
  return UNKNOWN_COMMENT;
}

/** The rules from `GUITAR_GOOD_BRANDS` / `GUITAR_BAD_BRANDS`, else the seed's lists. */
export function rulesFromEnv(env: NodeJS.ProcessEnv = process.env): ReviewRules {
  return {
    goodBrands: brandList(env.GUITAR_GOOD_BRANDS) ?? DEFAULT_GOOD_BRANDS,
    badBrands: brandList(env.GUITAR_BAD_BRANDS) ?? DEFAULT_BAD_BRANDS,
  };
}

function brandList(value: string | undefined): string[] | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  return value
    .split(",")
    .map((b) => b.trim().toLowerCase())
    .filter((b) => b !== "");
}

/**
 * The operator. It watches Guitars in every namespace (the seed lists them cluster-wide), so
 * `capstan generate rbac` grants it a ClusterRole.
 */
export function guitarOperator(rules: ReviewRules = rulesFromEnv()): Operator {
  const op = operator({ name: "guitar-reviewer" });

  // Writes the review into the guitar's spec: `patch` is applied after the handler returns, in
  // one merge patch, and the operator does not take its own change for a user's update.
  const review = ({ spec, patch, event, logger }: ChangeContext<GuitarObject>) => {
    const comment = commentFor(spec.brand, rules);
    patch.spec.comment = comment;
    patch.spec.review = true;
    event("Normal", "Reviewed", `${spec.brand}: ${comment}`);
    logger.info({ brand: spec.brand, comment }, "reviewed");
  };
  // Reviewed guitars are filtered out entirely: the operator never writes to them.
  const unreviewed = (guitar: GuitarObject) => guitar.spec.review !== true;

  op.on.create(Guitar, { id: "review", when: unreviewed }, review);
  // A user who sets `review: false` again asks for a fresh review.
  op.on.update(Guitar, { id: "review-again", when: unreviewed }, review);
  return op;
}

export default guitarOperator();
