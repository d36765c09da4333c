/**
 * metav1.Time and metav1.MicroTime as kube-apiserver reads and writes them: Go's time.Parse with the
 * layouts their UnmarshalJSON uses (time.RFC3339, and RFC3339Micro
 * `2006-01-02T15:04:05.000000Z07:00`), and their MarshalJSON output (UTC; whole seconds for Time, as
 * protobuf storage keeps no fraction; exactly 6 fractional digits for MicroTime; `null` for Go's zero
 * time, 0001-01-01T00:00:00Z).
 *
 * Guarantees:
 * - Accepts what time.Parse accepts: any offset (`+05:30`, `-00:00`, up to 24:60), a 1-digit hour, a
 *   fraction after the seconds of any length and `.` or `,` for Time (9 digits kept), exactly 6
 *   digits for MicroTime.
 * - Refuses with time.ParseError's text (`parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot
 *   parse "x" as "2006"`, `...: month out of range`, `...: extra text: "..."`), positions and quoting
 *   counted in UTF-8 bytes as Go's are.
 */

/** time.RFC3339: metav1.Time's layout. */
export const RFC3339_LAYOUT = "2006-01-02T15:04:05Z07:00";
/** metav1.RFC3339Micro: metav1.MicroTime's layout. */
export const RFC3339_MICRO_LAYOUT = "2006-01-02T15:04:05.000000Z07:00";

/** A time string time.Parse refuses; the message is time.ParseError's. */
export class GoTimeParseError extends Error {}

type Element =
  | { readonly lit: string }
  | {
      readonly std: "year" | "month" | "day" | "hour" | "minute" | "second" | "micros" | "zone";
      readonly text: string;
    };

/** The layouts as nextStdChunk splits them: literal prefixes, then the std elements. */
function elements(micro: boolean): readonly Element[] {
  return [
    { std: "year", text: "2006" },
    { lit: "-" },
    { std: "month", text: "01" },
    { lit: "-" },
    { std: "day", text: "02" },
    { lit: "T" },
    { std: "hour", text: "15" },
    { lit: ":" },
    { std: "minute", text: "04" },
    { lit: ":" },
    { std: "second", text: "05" },
    ...(micro ? [{ std: "micros", text: ".000000" } as const] : []),
    { std: "zone", text: "Z07:00" },
  ];
}

const TIME_ELEMENTS = elements(false);
const MICRO_ELEMENTS = elements(true);

/** A parsed instant: whole seconds since the Unix epoch and the nanoseconds within that second. */
interface Instant {
  seconds: number;
  nanos: number;
}

const encoder = new TextEncoder();

function isDigit(b: Uint8Array, i: number): boolean {
  return i < b.length && b[i]! >= 0x30 && b[i]! <= 0x39;
}

/** time's getnum: one or two digits (two when `fixed`). */
function getnum(b: Uint8Array, fixed: boolean): [number, Uint8Array] | undefined {
  if (!isDigit(b, 0)) return undefined;
  if (!isDigit(b, 1)) return fixed ? undefined : [b[0]! - 0x30, b.subarray(1)];
  return [(b[0]! - 0x30) * 10 + (b[1]! - 0x30), b.subarray(2)];
}

/** time's atoi: an optional sign, then digits only. */
function atoi(b: Uint8Array): number | undefined {
  let i = 0;
  let neg = false;
  if (b.length > 0 && (b[0] === 0x2d || b[0] === 0x2b)) {
    neg = b[0] === 0x2d;
    i = 1;
  }
  let x = 0;
  for (; i < b.length; i++) {
    if (!isDigit(b, i)) return undefined;
    x = x * 10 + (b[i]! - 0x30);
  }
  return neg ? -x : x;
}

function commaOrPeriod(c: number | undefined): boolean {
  return c === 0x2e || c === 0x2c;
}

/** time's parseNanoseconds: `b` starts with the separator, `n` bytes in all, digits past 9 ignored. */
function parseNanoseconds(b: Uint8Array, n: number): { ns: number } | { range: string } | undefined {
  if (!commaOrPeriod(b[0])) return undefined;
  const bytes = Math.min(n, 10);
  const ns = atoi(b.subarray(1, bytes));
  if (ns === undefined) return undefined;
  if (ns < 0) return { range: "fractional second" };
  return { ns: ns * 10 ** (10 - bytes) };
}

/** time's quote: ASCII as is (`"` and `\` escaped), every other byte as `\xNN`. */
function quote(b: Uint8Array): string {
  let out = '"';
  for (const c of b) {
    if (c >= 0x80 || c < 0x20) out += `\\x${c.toString(16).padStart(2, "0")}`;
    else {
      if (c === 0x22 || c === 0x5c) out += "\\";
      out += String.fromCharCode(c);
    }
  }
  return `${out}"`;
}

function isLeap(year: number): boolean {
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysIn(month: number, year: number): number {
  return month === 2 && isLeap(year) ? 29 : DAYS_IN_MONTH[month - 1]!;
}

/** Days from 1970-01-01 to the proleptic Gregorian date (any year, no Date object: years below 100 stay). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

function civilFromDays(days: number): { year: number; month: number; day: number } {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month, day };
}

/** time.Parse(layout, text) for the two layouts, as an instant; throws GoTimeParseError. */
function parse(text: string, micro: boolean): Instant {
  const layout = micro ? RFC3339_MICRO_LAYOUT : RFC3339_LAYOUT;
  const all = encoder.encode(text);
  const fail = (layoutElem: string, valueElem: Uint8Array): GoTimeParseError =>
    new GoTimeParseError(
      `parsing time ${quote(all)} as "${layout}": cannot parse ${quote(valueElem)} as "${layoutElem}"`,
    );
  const outOfRange = (what: string): GoTimeParseError =>
    new GoTimeParseError(`parsing time ${quote(all)}: ${what} out of range`);
  const parts = micro ? MICRO_ELEMENTS : TIME_ELEMENTS;
  let value: Uint8Array = all;
  let year = 0;
  let month = 0;
  let day = 0;
  let hour = 0;
  let minute = 0;
  let second = 0;
  let nanos = 0;
  let offset = 0;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if ("lit" in part) {
      if (value[0] !== part.lit.charCodeAt(0)) throw fail(part.lit, value);
      value = value.subarray(1);
      continue;
    }
    const hold = value;
    let range = "";
    let ok = true;
    switch (part.std) {
      case "year": {
        if (value.length < 4 || !isDigit(value, 0)) {
          ok = false;
          break;
        }
        const y = atoi(value.subarray(0, 4));
        value = value.subarray(4);
        if (y === undefined) ok = false;
        else year = y;
        break;
      }
      case "month":
      case "day":
      case "hour":
      case "minute":
      case "second": {
        const got = getnum(value, part.std !== "hour");
        if (!got) {
          ok = false;
          break;
        }
        [, value] = got;
        const n = got[0];
        if (part.std === "month") {
          month = n;
          if (n <= 0 || n > 12) range = "month";
        } else if (part.std === "day") day = n;
        else if (part.std === "hour") {
          hour = n;
          if (n >= 24) range = "hour";
        } else if (part.std === "minute") {
          minute = n;
          if (n >= 60) range = "minute";
        } else {
          second = n;
          if (n >= 60) {
            range = "second";
            break;
          }
          // A fraction the layout does not name is still read (time.Parse's special case).
          const next = parts[i + 1];
          if (
            value.length >= 2 &&
            commaOrPeriod(value[0]) &&
            isDigit(value, 1) &&
            !(next && "std" in next && next.std === "micros")
          ) {
            let n2 = 2;
            while (isDigit(value, n2)) n2++;
            const frac = parseNanoseconds(value, n2);
            value = value.subarray(n2);
            if (!frac) ok = false;
            else if ("range" in frac) range = frac.range;
            else nanos = frac.ns;
          }
        }
        break;
      }
      case "micros": {
        if (value.length < 7) {
          ok = false;
          break;
        }
        const frac = parseNanoseconds(value, 7);
        value = value.subarray(7);
        if (!frac) ok = false;
        else if ("range" in frac) range = frac.range;
        else nanos = frac.ns;
        break;
      }
      case "zone": {
        if (value[0] === 0x5a /* Z */) {
          value = value.subarray(1);
          offset = 0;
          break;
        }
        if (value.length < 6 || value[3] !== 0x3a /* : */) {
          ok = false;
          break;
        }
        // Go reads both numbers (0 when unreadable) and checks their range before reporting either.
        const sign = value[0];
        const hh = getnum(value.subarray(1, 3), true);
        const mm = hh ? getnum(value.subarray(4, 6), true) : undefined;
        value = value.subarray(6);
        if (!hh || !mm) ok = false;
        const h = hh?.[0] ?? 0;
        const m = mm?.[0] ?? 0;
        if (h > 24) range = "time zone offset hour";
        if (m > 60) range = "time zone offset minute";
        offset = (h * 60 + m) * 60;
        if (sign === 0x2d) offset = -offset;
        else if (sign !== 0x2b) ok = false;
        break;
      }
    }
    if (range !== "") throw outOfRange(range);
    if (!ok) throw fail(part.text, hold);
  }
  if (value.length > 0) throw new GoTimeParseError(`parsing time ${quote(all)}: extra text: ${quote(value)}`);
  if (day < 1 || day > daysIn(month, year)) throw outOfRange("day");
  const seconds = daysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offset;
  return { seconds, nanos };
}

/** Seconds since the Unix epoch of Go's zero time, 0001-01-01T00:00:00Z. */
const GO_ZERO_SECONDS = daysFromCivil(1, 1, 1) * 86400;

function two(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/** Go's `2006-01-02T15:04:05` of a UTC instant (years below 0 as `-0001`, above 9999 in full). */
function formatSeconds(seconds: number): string {
  const days = Math.floor(seconds / 86400);
  const rest = seconds - days * 86400;
  const { year, month, day } = civilFromDays(days);
  const y = year < 0 ? `-${String(-year).padStart(4, "0")}` : String(year).padStart(4, "0");
  const time = `${two(Math.floor(rest / 3600))}:${two(Math.floor(rest / 60) % 60)}:${two(rest % 60)}`;
  return `${y}-${two(month)}-${two(day)}T${time}`;
}

/**
 * `text` as a metav1.Time field comes back from kube-apiserver: UTC, whole seconds (the fraction
 * truncated), or null for Go's zero time. Throws GoTimeParseError.
 */
export function metaTimeJson(text: string): string | null {
  const { seconds } = parse(text, false);
  if (seconds === GO_ZERO_SECONDS) return null;
  return `${formatSeconds(seconds)}Z`;
}

/**
 * `text` as a metav1.MicroTime field comes back: UTC with exactly 6 fractional digits, or null for Go's
 * zero time. Throws GoTimeParseError.
 */
export function microTimeJson(text: string): string | null {
  const { seconds, nanos } = parse(text, true);
  const micros = Math.floor(nanos / 1000);
  if (seconds === GO_ZERO_SECONDS && micros === 0) return null;
  return `${formatSeconds(seconds)}.${String(micros).padStart(6, "0")}Z`;
}
