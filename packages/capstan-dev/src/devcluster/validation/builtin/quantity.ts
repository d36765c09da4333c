/**
 * resource.Quantity as validation needs it (apimachinery `pkg/api/resource/quantity.go`): parsed
 * exactly (a decimal mantissa scaled by a power of ten and a power of two, held as BigInts) so that
 * quantities compare exactly (`1Gi` > `1G`, `500m` == `0.5`). Decoding has already refused text that
 * is not a quantity (rest/builtin-decoding.ts), so `parseQuantity` returning undefined only happens
 * for values decoding let through as another type.
 */

/** An exactly parsed quantity. */
export interface Quantity {
  /** The text as written. */
  readonly text: string;
  /** -1, 0 or 1. */
  readonly sign: number;
  /** The value as numerator / denominator (denominator > 0). */
  readonly numerator: bigint;
  readonly denominator: bigint;
}

// <signedNumber><suffix>; a number is digits, digits., .digits or digits.digits.
const QUANTITY = /^([+-]?)(\d*)(?:\.(\d*))?(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E|[eE][+-]?\d+)?$/;

const BINARY_POWERS: Readonly<Record<string, number>> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL_POWERS: Readonly<Record<string, number>> = { m: -3, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };

/** Parses a quantity's text; undefined when it is not one (or not a string). */
export function parseQuantity(value: unknown): Quantity | undefined {
  if (typeof value !== "string") return undefined;
  const m = QUANTITY.exec(value.trim());
  if (m === null) return undefined;
  const [, signText = "", whole = "", fraction = "", suffix = ""] = m;
  if (whole === "" && fraction === "") return undefined;
  let pow10 = -fraction.length;
  let pow2 = 0;
  if (suffix in BINARY_POWERS) pow2 = BINARY_POWERS[suffix]!;
  else if (suffix in DECIMAL_POWERS) pow10 += DECIMAL_POWERS[suffix]!;
  else if (suffix !== "") pow10 += Number(suffix.slice(1));
  let numerator = BigInt(whole + fraction || "0");
  if (signText === "-") numerator = -numerator;
  let denominator = 1n;
  if (pow10 >= 0) numerator *= 10n ** BigInt(pow10);
  else denominator *= 10n ** BigInt(-pow10);
  numerator *= 2n ** BigInt(pow2);
  const sign = numerator === 0n ? 0 : numerator < 0n ? -1 : 1;
  return { text: value, sign, numerator, denominator };
}

/** Quantity.Cmp: -1, 0 or 1 as a is less than, equal to or greater than b. */
export function compareQuantities(a: Quantity, b: Quantity): number {
  const left = a.numerator * b.denominator;
  const right = b.numerator * a.denominator;
  return left < right ? -1 : left > right ? 1 : 0;
}
