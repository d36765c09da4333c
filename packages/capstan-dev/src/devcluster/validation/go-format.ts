/**
 * Renders values the way Go's apiserver renders them inside error messages, so our messages are
 * byte-for-byte those of kube-apiserver: `%q` (strconv.Quote), `%v` of a float64, and
 * `encoding/json.Marshal` of composite values (sorted map keys, HTML-safe escaping). The `%#v` field
 * errors print composite bad values with is in go-sharp-v.ts.
 *
 * Values here are JSON-decoded values. Go decodes JSON integers of custom objects into int64 and
 * everything else into float64; we treat an integral number within int64's range as int64 and any other
 * number as float64 (JavaScript cannot tell `2` from `2.0`, and integer literals are the common case).
 */

const INT64_BOUND = 2 ** 63;

/** Whether Go would hold this decoded JSON number as an int64. */
export function isGoInt64(n: number): boolean {
  return Number.isInteger(n) && n >= -INT64_BOUND && n < INT64_BOUND;
}

const NON_PRINTABLE = /[^\p{L}\p{M}\p{N}\p{P}\p{S} ]/u;
const SHORT_ESCAPES: Record<string, string> = {
  "\u0007": "\\a",
  "\b": "\\b",
  "\f": "\\f",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
  "\v": "\\v",
  '"': '\\"',
  "\\": "\\\\",
};

/** Go's `strconv.Quote` / `%q`: printable Unicode kept, the rest escaped as `\n`, `\x7f`, `\u00ad`, `\U0001f3f4`. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const short = SHORT_ESCAPES[ch];
    if (short !== undefined) {
      out += short;
      continue;
    }
    const cp = ch.codePointAt(0)!;
    if (cp >= 0xd800 && cp <= 0xdfff) {
      // Go's JSON decoder turns a lone surrogate into U+FFFD, which %q prints as is.
      out += "\ufffd";
    } else if (!NON_PRINTABLE.test(ch)) {
      out += ch;
    } else if (cp < 0x80) {
      out += "\\x" + cp.toString(16).padStart(2, "0");
    } else if (cp < 0x10000) {
      out += "\\u" + cp.toString(16).padStart(4, "0");
    } else {
      out += "\\U" + cp.toString(16).padStart(8, "0");
    }
  }
  return out + '"';
}

/**
 * Splits a finite non-zero number into its shortest round-trip decimal digits and the position of the
 * decimal point (as Go's strconv does: value = 0.d1d2d3... * 10^point).
 */
function shortestDigits(n: number): { digits: string; point: number } {
  const [mantissa, exp] = Math.abs(n).toExponential().split("e") as [string, string];
  const digits = mantissa.replace(".", "");
  return { digits, point: Number(exp) + 1 };
}

function exponentForm(negative: boolean, digits: string, point: number, minExpDigits: number): string {
  const exp = point - 1;
  const mant = digits.length > 1 ? digits[0] + "." + digits.slice(1) : digits;
  const expAbs = String(Math.abs(exp)).padStart(minExpDigits, "0");
  return (negative ? "-" : "") + mant + "e" + (exp < 0 ? "-" : "+") + expAbs;
}

function fixedForm(negative: boolean, digits: string, point: number): string {
  let s: string;
  if (point <= 0) s = "0." + "0".repeat(-point) + digits;
  else if (point >= digits.length) s = digits + "0".repeat(point - digits.length);
  else s = digits.slice(0, point) + "." + digits.slice(point);
  return (negative ? "-" : "") + s;
}

/** Go's `%v` of a float64 (`%g` with the shortest precision: exponent form when exp < -4 or exp >= 6, so 1e+06). */
export function goFloatV(n: number): string {
  if (Number.isNaN(n)) return "NaN";
  if (n === Number.POSITIVE_INFINITY) return "+Inf";
  if (n === Number.NEGATIVE_INFINITY) return "-Inf";
  if (n === 0) return Object.is(n, -0) ? "-0" : "0";
  const { digits, point } = shortestDigits(n);
  const exp = point - 1;
  // strconv's shortest %g decides with precision 6 (ftoa.go: "use precision 6 for this decision").
  if (exp < -4 || exp >= 6) return exponentForm(n < 0, digits, point, 2);
  return fixedForm(n < 0, digits, point);
}

/** Go's strconv.FormatFloat(n, 'f', -1, 64): shortest digits, never an exponent. */
export function goFloatF(n: number): string {
  if (Number.isNaN(n)) return "NaN";
  if (!Number.isFinite(n)) return n > 0 ? "+Inf" : "-Inf";
  if (n === 0) return Object.is(n, -0) ? "-0" : "0";
  const { digits, point } = shortestDigits(n);
  return fixedForm(n < 0, digits, point);
}

/** How Go's encoding/json writes a float64: fixed unless |n| < 1e-6 or >= 1e21, exponent without padding. */
function goJSONFloat(n: number): string {
  if (!Number.isFinite(n)) return "null"; // Go fails to marshal these; JSON has no spelling for them.
  if (n === 0) return Object.is(n, -0) ? "-0" : "0";
  const abs = Math.abs(n);
  const { digits, point } = shortestDigits(n);
  if (abs < 1e-6 || abs >= 1e21) return exponentForm(n < 0, digits, point, 1);
  return fixedForm(n < 0, digits, point);
}

/** Renders a number as Go's `%v` renders the int64 or float64 it decodes to. */
export function goNumberV(n: number): string {
  return isGoInt64(n) ? BigInt(n).toString() : goFloatV(n);
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

function goJSONString(s: string): string {
  // Go's strings hold U+FFFD where JSON had a lone surrogate. JSON.stringify escapes controls and
  // quotes as Go does, except Go's HTML-safe escapes and U+2028/9.
  return JSON.stringify(s.replace(LONE_SURROGATE, "\ufffd")).replace(
    /[<>&\u2028\u2029]/g,
    (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"),
  );
}

/** Go's `json.Marshal` of a decoded JSON value: object keys sorted, HTML characters escaped. */
export function goJSON(value: unknown): string {
  if (value === null || value === undefined) return "null";
  switch (typeof value) {
    case "string":
      return goJSONString(value);
    case "number":
      return isGoInt64(value) ? BigInt(value).toString() : goJSONFloat(value);
    case "bigint":
      return value.toString();
    case "boolean":
      return value ? "true" : "false";
    case "object": {
      if (Array.isArray(value)) return "[" + value.map(goJSON).join(",") + "]";
      const rec = value as Record<string, unknown>;
      const keys = Object.keys(rec)
        .filter((k) => rec[k] !== undefined)
        .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      return "{" + keys.map((k) => goJSONString(k) + ":" + goJSON(rec[k])).join(",") + "}";
    }
    default:
      return "null";
  }
}

/** Go's `fmt.Sprint` of a decoded JSON value where Go would print a scalar (used for enum value lists). */
export function goSprint(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "number") return goNumberV(value);
  if (typeof value === "boolean") return String(value);
  if (value === null || value === undefined) return "<nil>";
  return goJSON(value);
}

/**
 * Go's `%v` (and `%+v`) of a decoded JSON value (map[string]interface{} with int64s and float64s):
 * `map[a:1 b:[x y]]`, keys sorted, strings bare, null as `<nil>`. What patch.go prints for a
 * strategic merge patch it refuses.
 */
export function goValueV(value: unknown): string {
  if (value === null || value === undefined) return "<nil>";
  if (Array.isArray(value)) return "[" + value.map(goValueV).join(" ") + "]";
  if (typeof value === "object") {
    const rec = value as Record<string, unknown>;
    const keys = Object.keys(rec).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return "map[" + keys.map((k) => k + ":" + goValueV(rec[k])).join(" ") + "]";
  }
  return goSprint(value);
}

const goSharpTexts = new WeakMap<object, string>();

/**
 * Gives a typed Go value (a struct, a slice of structs, a `fmt.Stringer`) the text Kubernetes 1.32's
 * field errors print for it (`v1.OwnerReference{APIVersion:"v1", ...}`); JSON carries no Go type names,
 * so only a value whose Go type is known gets one (go-sharp-v.ts builds such texts and prints the rest).
 */
export function withGoSharpV<T extends object>(value: T, text: string): T {
  goSharpTexts.set(value, text);
  return value;
}

/** The text given to a value with `withGoSharpV`, if any. */
export function goSharpVOf(value: unknown): string | undefined {
  return value !== null && typeof value === "object" ? goSharpTexts.get(value) : undefined;
}
