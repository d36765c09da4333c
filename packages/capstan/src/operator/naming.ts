/**
 * Names an operator writes on objects: its annotation prefix, finalizer, and the annotation key
 * of each handler's progress record. All are qualified names Kubernetes accepts
 * (`<prefix>/<name>`, name part at most 63 characters), derived from the operator's name.
 */
import { createHash } from "node:crypto";

/** Operator names become DNS labels inside `<name>.capstan.dev`: lower-case, digits, dashes. */
const OPERATOR_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/**
 * Longest operator name: the operator name also names the Lease (`<name>-leader`) and event
 * source, and must stay one DNS label (63) inside the prefix; 40 leaves room for suffixes.
 */
const OPERATOR_NAME_MAX = 40;
/** The name part of a qualified name (after the prefix's `/`). */
const NAME_PART = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
/** Kubernetes' limit on the name part of a qualified name (label and annotation keys, finalizers). */
const NAME_PART_MAX = 63;
/** Hash suffix length when a handler id is too long: 8 hex digits make collisions unlikely. */
const HASH_CHARS = 8;

/** Key names an operator reserves under its prefix (no handler may use them as its id). */
export const ESSENCE_KEY = "last-handled-configuration";
export const FINALIZER_KEY = "finalizer";

/** The names one operator writes. */
export interface OperatorNames {
  /** The operator's name: its key under `status.capstan` when state is kept in status. */
  readonly operator: string;
  /** `<operator>.capstan.dev` */
  readonly prefix: string;
  /** `<operator>.capstan.dev/finalizer` */
  readonly finalizer: string;
  /** `<operator>.capstan.dev/last-handled-configuration` */
  readonly essenceAnnotation: string;
  /** `<operator>.capstan.dev/<handler id>` */
  progressAnnotation(handlerId: string): string;
}

/** The names of operator `name`; throws with a clear message for a name Kubernetes would refuse. */
export function operatorNames(name: string): OperatorNames {
  if (typeof name !== "string" || name.length > OPERATOR_NAME_MAX || !OPERATOR_NAME.test(name)) {
    throw new Error(
      `invalid operator name ${JSON.stringify(name)}: use at most ${OPERATOR_NAME_MAX} lower-case letters, digits and "-" ` +
        `(it becomes the annotation prefix ${JSON.stringify(`${String(name)}.capstan.dev`)})`,
    );
  }
  const prefix = `${name}.capstan.dev`;
  return {
    operator: name,
    prefix,
    finalizer: `${prefix}/${FINALIZER_KEY}`,
    essenceAnnotation: `${prefix}/${ESSENCE_KEY}`,
    progressAnnotation: (handlerId) => `${prefix}/${handlerId}`,
  };
}

/**
 * A handler id that is valid as the name part of an annotation key: characters other than
 * letters, digits, `-`, `_`, `.` become `-`; ids longer than 63 characters keep a readable head
 * and end in a hash of the whole id (as Kopf does for long keys).
 */
export function normalizeHandlerId(id: string): string {
  let safe = id.replace(/[^-A-Za-z0-9_.]/g, "-").replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, "");
  if (safe === "") safe = "handler";
  if (safe.length > NAME_PART_MAX || safe !== id) {
    if (safe.length > NAME_PART_MAX) {
      const hash = createHash("sha256").update(id).digest("hex").slice(0, HASH_CHARS);
      safe = `${safe.slice(0, NAME_PART_MAX - HASH_CHARS - 1).replace(/[^A-Za-z0-9]+$/, "")}-${hash}`;
    }
  }
  if (!NAME_PART.test(safe)) throw new Error(`cannot derive a valid annotation key from handler id "${id}"`);
  if (safe === ESSENCE_KEY || safe === FINALIZER_KEY) {
    throw new Error(`handler id "${id}" is reserved by the operator; choose another id`);
  }
  return safe;
}
