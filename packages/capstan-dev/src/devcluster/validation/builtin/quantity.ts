/**
 * resource.Quantity as validation needs it (apimachinery `pkg/api/resource/quantity.go`): parsed as
 * ParseQuantity parses it (a decimal mantissa scaled by a power of ten and a power of two, held as
 * BigInts, rounded up to 1n as Go rounds what it cannot hold) so that quantities compare exactly
 * (`1Gi` > `1G`, `500m` == `0.5`), and printed as `Quantity.String()` prints it in field errors
 * (`1.5Gi` is `1536Mi`, `0.5` is `500m`, a canonical text is kept as written).
 *
 * Decoding has already refused text that is not a quantity (rest/builtin-decoding.ts), so
 * `parseQuantity` returning undefined only happens for values decoding let through as another type.
 */

/** resource.Format: how a quantity prints (its suffix family). */
export type QuantityFormat = "DecimalSI" | "BinarySI" | "DecimalExponent";

import { goQuote } from "../go-format.ts";

/** A parsed quantity. */
export interface Quantity {
  /** The text as written. */
  readonly text: string;
  /** -1, 0 or 1. */
  readonly sign: number;
  /** The value as numerator / denominator (denominator > 0). */
  readonly numerator: bigint;
  readonly denominator: bigint;
  /** The suffix family the text used: it decides the canonical form. */
  readonly format: QuantityFormat;
  /** The text Go keeps as the quantity's string when it was already canonical (ParseQuantity's `s`). */
  readonly cached?: string;
  /** The int64 mantissa and decimal scale ParseQuantity's fast path holds the value in, when it does. */
  readonly int64Amount?: { readonly value: bigint; readonly scale: number };
}

const DECIMAL_SUFFIXES: Readonly<Record<string, number>> = {
  n: -9,
  u: -6,
  m: -3,
  "": 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};
const BINARY_SUFFIXES: Readonly<Record<string, number>> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL_SUFFIX_OF_EXPONENT: ReadonlyMap<number, string> = new Map(
  Object.entries(DECIMAL_SUFFIXES).map(([suffix, exp]) => [exp, suffix]),
);
const BINARY_SUFFIX_OF_POWER = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];

/** Go's int64 range: ParseQuantity's fast path holds the value in one. */
const MAX_INT64 = (1n << 63n) - 1n;
/** maxInt64Factors: the decimal digits an int64 always holds. */
const MAX_INT64_FACTORS = 18;
/** resource.Nano: the smallest scale a quantity keeps; finer values are rounded up to it. */
const NANO_SCALE = 9;
const NANO = 10n ** BigInt(NANO_SCALE);

interface QuantityParts {
  positive: boolean;
  num: string;
  denom: string;
  suffix: string;
}

/** parseQuantityString: sign, integer digits (leading zeros dropped), fraction digits, suffix. */
function splitQuantity(str: string): QuantityParts | undefined {
  let pos = 0;
  let positive = true;
  if (str[0] === "-" || str[0] === "+") {
    positive = str[0] === "+";
    pos++;
  }
  while (pos < str.length && str[pos] === "0") pos++;
  if (pos >= str.length) return { positive, num: "0", denom: "", suffix: "" };
  let start = pos;
  while (pos < str.length && isDigit(str[pos]!)) pos++;
  const num = str.slice(start, pos) || "0";
  let denom = "";
  if (str[pos] === ".") {
    start = ++pos;
    while (pos < str.length && isDigit(str[pos]!)) pos++;
    denom = str.slice(start, pos);
  }
  const suffixStart = pos;
  while (pos < str.length && "eEinumkKMGTP".includes(str[pos]!)) pos++;
  if (str[pos] === "-" || str[pos] === "+") pos++;
  while (pos < str.length && isDigit(str[pos]!)) pos++;
  if (pos < str.length) return undefined;
  return { positive, num, denom, suffix: str.slice(suffixStart) };
}

function isDigit(ch: string): boolean {
  return ch >= "0" && ch <= "9";
}

/** quantitySuffixer.interpret: the base, exponent and format of a suffix. */
export function interpretSuffix(
  suffix: string,
): { base: 2 | 10; exponent: number; format: QuantityFormat } | undefined {
  if (Object.hasOwn(DECIMAL_SUFFIXES, suffix))
    return { base: 10, exponent: DECIMAL_SUFFIXES[suffix]!, format: "DecimalSI" };
  if (Object.hasOwn(BINARY_SUFFIXES, suffix))
    return { base: 2, exponent: BINARY_SUFFIXES[suffix]!, format: "BinarySI" };
  if (suffix.length > 1 && (suffix[0] === "e" || suffix[0] === "E") && /^[+-]?\d+$/.test(suffix.slice(1))) {
    return { base: 10, exponent: Number(suffix.slice(1)), format: "DecimalExponent" };
  }
  return undefined;
}

/**
 * ParseQuantity's fast path: the value as an int64 mantissa and a decimal scale when it fits, and the
 * text it was given kept as the quantity's string when that is canonical already (a scale that is a
 * multiple of three, no trailing `000`; for binary suffixes a mantissa that is not a multiple of 8).
 */
function fastPath(
  text: string,
  parts: QuantityParts,
  suffix: { exponent: number; format: QuantityFormat },
): { amount: { value: bigint; scale: number }; cached?: string } | undefined {
  const { num, denom } = parts;
  let precision: number;
  let scale: number;
  let multiplier = 1n;
  if (suffix.format === "BinarySI") {
    scale = 0;
    if (suffix.exponent >= 0 && denom.length === 0) {
      multiplier = 1n << BigInt(suffix.exponent);
      precision = 15 - num.length - Math.trunc((suffix.exponent * 3) / 10) - 1;
    } else {
      precision = -1;
    }
  } else {
    scale = suffix.exponent;
    precision = MAX_INT64_FACTORS - (num.length + denom.length);
  }
  if (precision < 0) return undefined;
  scale -= denom.length;
  if (scale < -NANO_SCALE) return undefined;
  const shifted = num + denom;
  const value = BigInt(shifted);
  if (value > MAX_INT64 || value * multiplier > MAX_INT64) return undefined;
  const amount = { value: parts.positive ? value * multiplier : -(value * multiplier), scale };
  const canonical =
    suffix.format === "BinarySI"
      ? suffix.exponent % 10 === 0 && (value & 7n) !== 0n
      : scale % 3 === 0 && !shifted.endsWith("000") && shifted[0] !== "0";
  return canonical ? { amount, cached: text } : { amount };
}

/** Parses a quantity's text (or a JSON number, which Go reads as its literal); undefined when it is not one. */
export function parseQuantity(value: unknown): Quantity | undefined {
  let text: string;
  if (typeof value === "string") text = value.trim();
  else if (typeof value === "number" && Number.isFinite(value)) text = String(value);
  else return undefined;
  if (text === "") return undefined;
  if (text === "0") {
    const amount = { value: 0n, scale: 0 };
    return { text, sign: 0, numerator: 0n, denominator: 1n, format: "DecimalSI", cached: "0", int64Amount: amount };
  }
  const parts = splitQuantity(text);
  if (parts === undefined) return undefined;
  const suffix = interpretSuffix(parts.suffix);
  if (suffix === undefined) return undefined;

  let numerator = BigInt(parts.num + parts.denom);
  let denominator = 10n ** BigInt(parts.denom.length);
  if (suffix.base === 2) numerator *= 1n << BigInt(suffix.exponent);
  else if (suffix.exponent >= 0) numerator *= 10n ** BigInt(suffix.exponent);
  else denominator *= 10n ** BigInt(-suffix.exponent);
  // Go rounds a non-zero value up (away from zero) to the nearest 1n, and caps binary ones at int64.
  const nanos = numerator * NANO;
  if (nanos % denominator !== 0n) {
    numerator = nanos / denominator + 1n;
    denominator = NANO;
  }
  if (suffix.format === "BinarySI" && numerator > MAX_INT64 * denominator) {
    numerator = MAX_INT64;
    denominator = 1n;
  }
  if (!parts.positive) numerator = -numerator;
  const sign = numerator === 0n ? 0 : numerator < 0n ? -1 : 1;
  const fast = fastPath(text, parts, suffix);
  return {
    text: typeof value === "string" ? value : text,
    sign,
    numerator,
    denominator,
    format: suffix.format,
    ...(fast?.cached !== undefined ? { cached: fast.cached } : {}),
    ...(fast !== undefined ? { int64Amount: fast.amount } : {}),
  };
}

/** Quantity.Cmp: -1, 0 or 1 as a is less than, equal to or greater than b. */
export function compareQuantities(a: Quantity, b: Quantity): number {
  const left = a.numerator * b.denominator;
  const right = b.numerator * a.denominator;
  return left < right ? -1 : left > right ? 1 : 0;
}

/** Whether a quantity is an integer (Go's `q.AsScale(0)` is exact). */
export function isIntegerQuantity(q: Quantity): boolean {
  return q.numerator % q.denominator === 0n;
}

/** Quantity.Value(): the value rounded up (away from zero) to an integer. */
export function quantityValue(q: Quantity): bigint {
  const whole = q.numerator / q.denominator;
  if (q.numerator % q.denominator === 0n) return whole;
  return q.numerator < 0n ? whole - 1n : whole + 1n;
}

/** Quantity.MilliValue(): the value in thousandths, rounded up (away from zero). */
export function quantityMilliValue(q: Quantity): bigint {
  return quantityValue({ ...q, numerator: q.numerator * 1000n });
}

/** Removes the factors of `base` from `value` (sign kept): removeInt64Factors. */
function removeFactors(value: bigint, base: bigint): { rest: bigint; times: number } {
  let rest = value < 0n ? -value : value;
  let times = 0;
  while (rest >= base && rest % base === 0n) {
    rest /= base;
    times++;
  }
  return { rest: value < 0n ? -rest : rest, times };
}

/**
 * Quantity.String(): the text Go kept when it was canonical already, else CanonicalizeBytes: `0`; a
 * binary quantity that is an integer of at least 1Ki in magnitude in the largest binary suffix that
 * keeps it whole (`1536Mi`); any other value as a mantissa and a decimal suffix (or `eN` exponent)
 * whose exponent is a multiple of three (`1500m`, `1500`, `1k`).
 */
export function quantityString(q: Quantity): string {
  if (q.cached !== undefined) return q.cached;
  if (q.sign === 0) return "0";
  let format = q.format;
  if (format === "BinarySI") {
    const small = q.numerator > -1024n * q.denominator && q.numerator < 1024n * q.denominator;
    if (small || !isIntegerQuantity(q)) format = "DecimalSI";
  }
  if (format === "BinarySI") {
    const { rest, times } = removeFactors(q.numerator / q.denominator, 1024n);
    return rest.toString() + (BINARY_SUFFIX_OF_POWER[times] ?? "");
  }
  // The value in nanos is an integer (parseQuantity rounded it); move the factors of ten into the
  // exponent, then lower the exponent to a multiple of three.
  const nanos = (q.numerator * NANO) / q.denominator;
  const stripped = removeFactors(nanos, 10n);
  let mantissa = stripped.rest;
  let exponent = stripped.times - NANO_SCALE;
  while (exponent % 3 !== 0) {
    mantissa *= 10n;
    exponent--;
  }
  let suffix: string;
  if (format === "DecimalExponent") suffix = exponent === 0 ? "" : `e${exponent}`;
  // Go finds no decimal suffix beyond E (1e21 and up) and prints the mantissa alone.
  else suffix = DECIMAL_SUFFIX_OF_EXPONENT.get(exponent) ?? "";
  return mantissa.toString() + suffix;
}

/**
 * The `%#v` text of a resource.Quantity value (what a field error shows when Go passes the Quantity
 * itself, not its String()): its int64 mantissa and scale, or an inf.Dec pointer (whose address
 * differs on every run: made up here), the string it keeps, and its format.
 */
export function quantityGoSharpV(q: Quantity): string {
  const amount = q.int64Amount;
  const i = amount
    ? `resource.int64Amount{value:${amount.value}, scale:${amount.scale}}`
    : "resource.int64Amount{value:0, scale:0}";
  const d = amount
    ? "resource.infDecAmount{Dec:(*inf.Dec)(nil)}"
    : "resource.infDecAmount{Dec:(*inf.Dec)(0xc000000000)}";
  return `resource.Quantity{i:${i}, d:${d}, s:${goQuote(q.cached ?? "")}, Format:${goQuote(q.format)}}`;
}
