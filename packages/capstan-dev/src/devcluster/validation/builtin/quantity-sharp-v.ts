/**
 * A resource.Quantity as Go's `%#v` prints it, which is how Kubernetes 1.32's field errors print a
 * Quantity passed as the bad value (its String() has a pointer receiver, so the value is no
 * fmt.Stringer): the struct ParseQuantity built from the text, e.g.
 * `resource.Quantity{i:resource.int64Amount{value:-1, scale:0}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"-1", Format:"DecimalSI"}`.
 *
 * ParseQuantity (apimachinery `pkg/api/resource/quantity.go`) keeps small values as an int64 and a
 * power-of-ten scale, and the text itself as `s` when it is already canonical; other values go to an
 * inf.Dec, whose heap address Go prints and which a stand-in replaces here.
 */
import { goQuote } from "../go-format.ts";
import { interpretSuffix, type QuantityFormat } from "./quantity.ts";

/** Stands in for the heap address of the inf.Dec Go would print. */
const STAND_IN_DEC_ADDRESS = "0xc000b2d1a0";

/** maxInt64Factors: the decimal digits an int64 always holds. */
const MAX_INT64_FACTORS = 18;
/** resource.Nano: the smallest scale the int64 form keeps. */
const NANO = -9;
const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

type Format = QuantityFormat;

interface Scanned {
  positive: boolean;
  num: string;
  denom: string;
  suffix: string;
}

/** parseQuantityString: sign, numerator digits (leading zeros dropped), fraction digits, suffix. */
function scan(str: string): Scanned | undefined {
  const m = /^([+-]?)0*(\d*)(?:\.(\d*))?([eEinumkKMGTP]*[-+]?\d*)$/.exec(str);
  if (m === null) return undefined;
  const [, sign = "", num = "", denom = "", suffix = ""] = m;
  return { positive: sign !== "-", num: num === "" ? "0" : num, denom, suffix };
}

function render(value: bigint, scale: number, dec: boolean, s: string, format: Format): string {
  return (
    `resource.Quantity{i:resource.int64Amount{value:${value}, scale:${scale}}, ` +
    `d:resource.infDecAmount{Dec:(*inf.Dec)(${dec ? STAND_IN_DEC_ADDRESS : "nil"})}, s:${goQuote(s)}, Format:${goQuote(format)}}`
  );
}

/**
 * The `%#v` text of the Quantity Go decodes from `text` (a JSON string, or a number's literal);
 * undefined when ParseQuantity would refuse it.
 */
export function goQuantitySharpV(text: string): string | undefined {
  // UnmarshalJSON trims the literal; "0" has its own fast path.
  const str = text.trim();
  if (str === "") return undefined;
  if (str === "0") return render(0n, 0, false, str, "DecimalSI");
  const scanned = scan(str);
  if (scanned === undefined) return undefined;
  const { positive, num, denom, suffix } = scanned;
  const meaning = interpretSuffix(suffix);
  if (meaning === undefined) return undefined;
  const { exponent } = meaning;
  let { format } = meaning;
  let precision: number;
  let scale = 0;
  let mantissa = 1n;
  if (format === "BinarySI") {
    if (exponent >= 0 && denom.length === 0) {
      mantissa = 1n << BigInt(exponent);
      // 2^exponent has about exponent*3/10 decimal digits.
      precision = 15 - num.length - Math.trunc((exponent * 3) / 10) - 1;
    } else {
      precision = -1;
    }
  } else {
    scale = exponent;
    precision = MAX_INT64_FACTORS - (num.length + denom.length);
  }
  if (precision >= 0) {
    scale -= denom.length;
    if (scale >= NANO) {
      const shifted = num + denom;
      const value = BigInt(shifted);
      if (value > INT64_MAX) return undefined; // ErrNumeric
      let result = value * mantissa;
      if (result <= INT64_MAX && result >= INT64_MIN) {
        if (!positive) result = -result;
        const canonical =
          format === "BinarySI"
            ? exponent % 10 === 0 && (value & 7n) !== 0n
            : scale % 3 === 0 && !shifted.endsWith("000") && shifted[0] !== "0";
        return render(result, scale, false, canonical ? str : "", format);
      }
    }
  }
  // The inf.Dec path: a binary amount strictly between 0 and 1 (in absolute value) becomes DecimalSI.
  if (format === "BinarySI") {
    const digits = BigInt(num + denom);
    const scaled = digits * (1n << BigInt(exponent));
    if (digits > 0n && scaled < 10n ** BigInt(denom.length)) format = "DecimalSI";
  }
  return render(0n, 0, true, "", format);
}
