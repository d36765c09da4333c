/**
 * A CronJob's schedule and time zone as Kubernetes 1.32 checks them: robfig/cron v3's ParseStandard
 * (five fields or an `@` descriptor, an optional `TZ=`/`CRON_TZ=` prefix) with its error texts, Go's
 * time.ParseDuration for `@every`, and time.LoadLocation for zone names.
 *
 * Zone names are looked up in Node's ICU data, not Go's tzdata: the same IANA names, but aliases are
 * matched without regard to case (Go's lookup is case-sensitive; a canonical name in the wrong case is
 * refused here too).
 */
import { goQuote } from "../go-format.ts";

interface Bounds {
  readonly min: bigint;
  readonly max: bigint;
  readonly names?: Readonly<Record<string, bigint>>;
}

const MONTH_NAMES: Record<string, bigint> = {
  jan: 1n,
  feb: 2n,
  mar: 3n,
  apr: 4n,
  may: 5n,
  jun: 6n,
  jul: 7n,
  aug: 8n,
  sep: 9n,
  oct: 10n,
  nov: 11n,
  dec: 12n,
};
const DOW_NAMES: Record<string, bigint> = { sun: 0n, mon: 1n, tue: 2n, wed: 3n, thu: 4n, fri: 5n, sat: 6n };

/** The five standard fields in order, after robfig's implicit seconds field (always "0"). */
const FIELD_BOUNDS: readonly Bounds[] = [
  { min: 0n, max: 59n }, // minute
  { min: 0n, max: 23n }, // hour
  { min: 1n, max: 31n }, // day of month
  { min: 1n, max: 12n, names: MONTH_NAMES },
  { min: 0n, max: 6n, names: DOW_NAMES },
];

const DESCRIPTORS = new Set(["@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"]);

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** strconv.Atoi: the value, or the error text. */
function atoi(s: string): bigint | string {
  if (!/^[+-]?[0-9]+$/.test(s)) return `strconv.Atoi: parsing ${goQuote(s)}: invalid syntax`;
  const n = BigInt(s);
  if (n < INT64_MIN || n > INT64_MAX) return `strconv.Atoi: parsing ${goQuote(s)}: value out of range`;
  return n;
}

/** mustParseInt: a non-negative integer. */
function mustParseInt(expr: string): bigint | { error: string } {
  const n = atoi(expr);
  if (typeof n === "string") return { error: `failed to parse int from ${expr}: ${n}` };
  if (n < 0n) return { error: `negative number (${n}) not allowed: ${expr}` };
  return n;
}

function parseIntOrName(expr: string, bounds: Bounds): bigint | { error: string } {
  const named = bounds.names?.[expr.toLowerCase()];
  return named ?? mustParseInt(expr);
}

/** getRange: `*`, `?`, `n`, `n-m`, each with an optional `/step`; the error text if it is not one. */
function rangeError(expr: string, bounds: Bounds): string | undefined {
  const rangeAndStep = expr.split("/");
  const lowAndHigh = rangeAndStep[0]!.split("-");
  const single = lowAndHigh.length === 1;
  let start: bigint;
  let end: bigint;
  if (lowAndHigh[0] === "*" || lowAndHigh[0] === "?") {
    start = bounds.min;
    end = bounds.max;
  } else {
    const low = parseIntOrName(lowAndHigh[0]!, bounds);
    if (typeof low !== "bigint") return low.error;
    start = low;
    if (lowAndHigh.length === 1) end = start;
    else if (lowAndHigh.length === 2) {
      const high = parseIntOrName(lowAndHigh[1]!, bounds);
      if (typeof high !== "bigint") return high.error;
      end = high;
    } else return `too many hyphens: ${expr}`;
  }
  let step = 1n;
  if (rangeAndStep.length === 2) {
    const parsed = mustParseInt(rangeAndStep[1]!);
    if (typeof parsed !== "bigint") return parsed.error;
    step = parsed;
    if (single) end = bounds.max;
  } else if (rangeAndStep.length > 2) return `too many slashes: ${expr}`;
  if (start < bounds.min) return `beginning of range (${start}) below minimum (${bounds.min}): ${expr}`;
  if (end > bounds.max) return `end of range (${end}) above maximum (${bounds.max}): ${expr}`;
  if (start > end) return `beginning of range (${start}) beyond end of range (${end}): ${expr}`;
  if (step === 0n) return `step of range should be a positive number: ${expr}`;
  return undefined;
}

/** Go's strings.Fields separators (unicode.IsSpace). */
const GO_SPACES = /[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/;

function goFields(s: string): string[] {
  return s.split(GO_SPACES).filter((f) => f !== "");
}

/** The `time` package's quote: non-ASCII and control bytes as `\x..`. */
function timeQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (cp < 0x20 || cp >= 0x80) {
      for (const b of Buffer.from(ch, "utf8")) out += "\\x" + b.toString(16).padStart(2, "0");
    } else {
      if (ch === '"' || ch === "\\") out += "\\";
      out += ch;
    }
  }
  return out + '"';
}

const DURATION_UNITS: Readonly<Record<string, bigint>> = {
  ns: 1n,
  us: 1_000n,
  "\u00b5s": 1_000n,
  "\u03bcs": 1_000n,
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

const TWO_63 = 2n ** 63n;

/** time.ParseDuration's error text, or undefined when `s` is a duration. */
function durationError(s: string): string | undefined {
  const invalidText = `time: invalid duration ${timeQuote(s)}`;
  let rest = s;
  let negative = false;
  if (rest.startsWith("-") || rest.startsWith("+")) {
    negative = rest.startsWith("-");
    rest = rest.slice(1);
  }
  if (rest === "0") return undefined;
  if (rest === "") return invalidText;
  let total = 0n;
  while (rest !== "") {
    if (!/^[0-9.]/.test(rest)) return invalidText;
    const whole = /^[0-9]*/.exec(rest)![0];
    rest = rest.slice(whole.length);
    let value = 0n;
    for (const digit of whole) {
      value = value * 10n + BigInt(digit);
      if (value > TWO_63) return invalidText; // leadingInt overflows
    }
    let fraction = "";
    if (rest.startsWith(".")) {
      rest = rest.slice(1);
      fraction = /^[0-9]*/.exec(rest)![0];
      rest = rest.slice(fraction.length);
    }
    if (whole === "" && fraction === "") return invalidText;
    const unitText = /^[^0-9.]*/.exec(rest)![0];
    if (unitText === "") return `time: missing unit in duration ${timeQuote(s)}`;
    rest = rest.slice(unitText.length);
    const unit = DURATION_UNITS[unitText];
    if (unit === undefined) return `time: unknown unit ${timeQuote(unitText)} in duration ${timeQuote(s)}`;
    if (value > TWO_63 / unit) return invalidText;
    value *= unit;
    if (fraction !== "") {
      // float64(f) * (float64(unit) / scale), truncated: exact enough for the overflow checks.
      value += BigInt(Math.floor(Number(`0.${fraction}`) * Number(unit)));
      if (value > TWO_63) return invalidText;
    }
    total += value;
    if (total > TWO_63) return invalidText;
  }
  if (!negative && total > TWO_63 - 1n) return invalidText;
  return undefined;
}

const CANONICAL_ZONES = new Set(Intl.supportedValuesOf("timeZone"));
const CANONICAL_BY_LOWER = new Map([...CANONICAL_ZONES].map((z) => [z.toLowerCase(), z]));

function knownTimeZone(name: string): boolean {
  if (CANONICAL_ZONES.has(name)) return true;
  // A canonical name written in another case: Go's lookup (a file name) does not find it.
  if (CANONICAL_BY_LOWER.has(name.toLowerCase())) return false;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** time.LoadLocation's error text, or undefined when the zone loads. */
export function loadLocationError(name: string): string | undefined {
  if (name === "" || name === "UTC" || name === "Local") return undefined;
  if (name.includes("..") || name.startsWith("/") || name.startsWith("\\")) return "time: invalid location name";
  return knownTimeZone(name) ? undefined : `unknown time zone ${name}`;
}

/** cron.ParseStandard's error text for `spec`, or undefined when it parses. */
export function cronScheduleError(spec: string): string | undefined {
  if (spec.length === 0) return "empty spec string";
  let rest = spec;
  if (rest.startsWith("TZ=") || rest.startsWith("CRON_TZ=")) {
    // robfig slices up to the first space; without one Go panics (a 500 from kube-apiserver), here the
    // whole remainder is the location and the schedule is empty.
    const space = rest.indexOf(" ");
    const eq = rest.indexOf("=");
    const location = space < 0 ? rest.slice(eq + 1) : rest.slice(eq + 1, space);
    const locationError = loadLocationError(location);
    if (locationError !== undefined) return `provided bad location ${location}: ${locationError}`;
    rest = space < 0 ? "" : rest.slice(space).trim();
  }
  if (rest.startsWith("@")) {
    if (DESCRIPTORS.has(rest)) return undefined;
    if (rest.startsWith("@every ")) {
      const error = durationError(rest.slice("@every ".length));
      return error === undefined ? undefined : `failed to parse duration ${rest}: ${error}`;
    }
    return `unrecognized descriptor: ${rest}`;
  }
  const fields = goFields(rest);
  if (fields.length !== FIELD_BOUNDS.length)
    return `expected exactly ${FIELD_BOUNDS.length} fields, found ${fields.length}: [${fields.join(" ")}]`;
  for (let i = 0; i < fields.length; i++) {
    // getField: comma-separated ranges, empty ones skipped.
    for (const expr of fields[i]!.split(",").filter((r) => r !== "")) {
      const error = rangeError(expr, FIELD_BOUNDS[i]!);
      if (error !== undefined) return error;
    }
  }
  return undefined;
}
