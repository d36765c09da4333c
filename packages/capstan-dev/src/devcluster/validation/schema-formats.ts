/**
 * The string formats kube-apiserver checks on custom objects: kube-openapi's strfmt.Default registry,
 * limited to the formats apiextensions-apiserver keeps (`pkg/apiserver/validation/formats.go`, 1.32:
 * k8s-short-name and k8s-long-name came in 1.34). Any other format is stripped from the schema and ignored.
 *
 * Caveats: the Go checks lean on net/url, net/mail and net.ParseMAC; ours are close re-implementations
 * of their accepted syntax (documented per format), not byte-for-byte ports of those parsers.
 */

type FormatCheck = (s: string) => boolean;

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID3 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID4 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const UUID5 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const HOSTNAME =
  /^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$/u;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$/;
const HEXCOLOR = /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
const RGB_PART = "\\s*(0|[1-9]\\d?|1\\d\\d?|2[0-4]\\d|25[0-5])\\s*";
const RGBCOLOR = new RegExp(`^rgb\\(${RGB_PART},${RGB_PART},${RGB_PART}\\)$`);
const SSN = /^\d{3}[- ]?\d{2}[- ]?\d{4}$/;
const CREDITCARD =
  /^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|(222[1-9]|22[3-9][0-9]|2[3-6][0-9]{2}|27[01][0-9]|2720)[0-9]{12}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11}|6[27][0-9]{14})$/;
const BSON_OBJECT_ID = /^[0-9a-fA-F]{24}$/;
const DATE_TIME_TAIL = /^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$/;
const GO_DURATION = /^[-+]?(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+$/;
const LOOSE_DURATION_PART = /(\d+)\s*([A-Za-zµ]+)/g;
const LOOSE_DURATION_UNITS = [
  ["ns", "nano"],
  ["us", "µs", "micro"],
  ["ms", "milli"],
  ["s", "sec"],
  ["m", "min"],
  ["h", "hr", "hour"],
  ["d", "day"],
  ["w", "wk", "week"],
];

/** time.Parse("2006-01-02"): four-digit year, real month and day (leap years included). */
function isDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
  return day <= days;
}

/** strfmt.IsDateTime: a date, a `t`, then hh:mm:ss[.frac](z|±hh:mm), compared case-insensitively. */
function isDateTime(s: string): boolean {
  if (s.length < 4) return false;
  const parts = s.toLowerCase().split("t");
  if (parts.length < 2 || !isDate(parts[0]!)) return false;
  const m = DATE_TIME_TAIL.exec(parts[1]!);
  if (!m) return false;
  return m[1]! <= "23" && m[2]! <= "59" && m[3]! <= "59";
}

/** strfmt.ParseDuration: Go's time.ParseDuration, or a loose "3 days 4h" form with known unit words. */
function isDuration(s: string): boolean {
  if (s === "0" || GO_DURATION.test(s)) return true;
  for (const m of s.matchAll(LOOSE_DURATION_PART)) {
    const unit = m[2]!.toLowerCase().trim();
    for (const variants of LOOSE_DURATION_UNITS) {
      const last = variants.length - 1;
      if (variants.some((v, i) => (i === last && unit.startsWith(v)) || v === unit)) return true;
    }
  }
  return false;
}

/** net.ParseIP's IPv4 form as ParseIPSloppy accepts it (leading zeros allowed). */
function isDottedQuad(s: string): boolean {
  const parts = s.split(".");
  return parts.length === 4 && parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255);
}

/** net.ParseIP's IPv6 form: hex groups, one `::`, optionally an embedded IPv4 tail. */
function isIPv6Text(s: string): boolean {
  let rest = s;
  let groupsForV4 = 0;
  const lastColon = rest.lastIndexOf(":");
  if (rest.includes(".")) {
    if (!isDottedQuad(rest.slice(lastColon + 1))) return false;
    rest = rest.slice(0, lastColon + 1) + "0:0";
    groupsForV4 = 0;
  }
  const double = rest.indexOf("::");
  if (double !== rest.lastIndexOf("::")) return false;
  const groupOk = (g: string) => /^[0-9a-fA-F]{1,4}$/.test(g);
  if (double === -1) {
    const groups = rest.split(":");
    return groups.length === 8 - groupsForV4 && groups.every(groupOk);
  }
  const head = rest.slice(0, double);
  const tail = rest.slice(double + 2);
  const hg = head === "" ? [] : head.split(":");
  const tg = tail === "" ? [] : tail.split(":");
  return hg.every(groupOk) && tg.every(groupOk) && hg.length + tg.length <= 7;
}

function isIP(s: string): boolean {
  return isDottedQuad(s) || isIPv6Text(s);
}

function isCIDR(s: string): boolean {
  const slash = s.indexOf("/");
  if (slash < 0) return false;
  const ip = s.slice(0, slash);
  const bits = s.slice(slash + 1);
  if (!/^\d{1,3}$/.test(bits)) return false;
  if (isDottedQuad(ip)) return Number(bits) <= 32;
  return isIPv6Text(ip) && Number(bits) <= 128;
}

/** net.ParseMAC: 6, 8 or 20 octets separated by ':' or '-', or dotted groups of four hex digits. */
function isMAC(s: string): boolean {
  for (const sep of [":", "-"]) {
    const parts = s.split(sep);
    if ([6, 8, 20].includes(parts.length) && parts.every((p) => /^[0-9a-fA-F]{2}$/.test(p))) return true;
  }
  const dotted = s.split(".");
  return [3, 4, 10].includes(dotted.length) && dotted.every((p) => /^[0-9a-fA-F]{4}$/.test(p));
}

/** url.ParseRequestURI: an absolute URI with a scheme, or an absolute path; no spaces. */
function isRequestURI(s: string): boolean {
  // Whitespace and ASCII control characters never parse.
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (cp <= 0x20 || cp === 0x7f || /\s/.test(ch)) return false;
  }
  if (s.startsWith("/")) return true;
  return /^[A-Za-z][A-Za-z0-9+.-]*:.+/.test(s);
}

/** RFC 5322 atext as net/mail accepts it: ASCII letters, digits, the specials, and any non-ASCII (UTF-8). */
const ATEXT = "[A-Za-z0-9!#$%&'*+\\-/=?^_`{|}~\\u{80}-\\u{10ffff}]";
const DOT_ATOM = `${ATEXT}+(?:\\.${ATEXT}+)*`;
const QUOTED = '"(?:[^"\\\\\\r\\n]|\\\\.)*"';
const ADDR_SPEC = new RegExp(`^(?:${DOT_ATOM}|${QUOTED})@(?:${DOT_ATOM}|\\[[^\\[\\]\\\\]*\\])$`, "u");

/** net/mail.ParseAddress: `local@domain` (dot-atom or quoted local part) or `Name <local@domain>`. */
function isEmail(s: string): boolean {
  const angle = /^[^<>]*<([^<>]+)>\s*$/.exec(s);
  return ADDR_SPEC.test(angle ? angle[1]! : s.trim());
}

function isHostname(s: string): boolean {
  return HOSTNAME.test(s) && Buffer.byteLength(s) <= 255 && s.split(".").every((p) => Buffer.byteLength(p) <= 63);
}

function isISBN10(s: string): boolean {
  const d = s.replace(/[\s-]/g, "");
  if (!/^\d{9}[\dX]$/.test(d)) return false;
  let sum = 0;
  for (let i = 0; i < 9; i++) sum += (i + 1) * Number(d[i]);
  sum += d[9] === "X" ? 100 : 10 * Number(d[9]);
  return sum % 11 === 0;
}

function isISBN13(s: string): boolean {
  const d = s.replace(/[\s-]/g, "");
  if (!/^\d{13}$/.test(d)) return false;
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += Number(d[i]) * (i % 2 === 0 ? 1 : 3);
  return (10 - (sum % 10)) % 10 === Number(d[12]);
}

function isCreditCard(s: string): boolean {
  const d = s.replace(/[^0-9]/g, "");
  if (!CREDITCARD.test(d)) return false;
  let sum = 0;
  let double = false;
  for (let i = d.length - 1; i >= 0; i--) {
    let n = Number(d[i]);
    if (double) {
      n *= 2;
      if (n > 9) n -= 9;
    }
    sum += n;
    double = !double;
  }
  return sum % 10 === 0;
}

/** Format checks by normalized name (dashes removed, as strfmt normalizes "date-time" to "datetime"). */
const FORMATS: ReadonlyMap<string, FormatCheck> = new Map<string, FormatCheck>([
  ["bsonobjectid", (s) => BSON_OBJECT_ID.test(s)],
  ["uri", isRequestURI],
  ["email", isEmail],
  ["hostname", isHostname],
  ["ipv4", (s) => isIP(s) && s.includes(".")],
  ["ipv6", (s) => isIP(s) && s.includes(":")],
  ["cidr", isCIDR],
  ["mac", isMAC],
  ["uuid", (s) => UUID.test(s)],
  ["uuid3", (s) => UUID3.test(s)],
  ["uuid4", (s) => UUID4.test(s)],
  ["uuid5", (s) => UUID5.test(s)],
  ["isbn", (s) => isISBN10(s) || isISBN13(s)],
  ["isbn10", isISBN10],
  ["isbn13", isISBN13],
  ["creditcard", isCreditCard],
  ["ssn", (s) => SSN.test(s)],
  ["hexcolor", (s) => HEXCOLOR.test(s)],
  ["rgbcolor", (s) => RGBCOLOR.test(s)],
  ["byte", (s) => BASE64.test(s)],
  ["password", () => true],
  ["date", isDate],
  ["duration", isDuration],
  ["datetime", isDateTime],
]);

/**
 * The format the validator will enforce for a schema node, or "" when the apiserver strips it
 * (StripUnsupportedFormatsPostProcessor): strings keep registry formats, integers int32/int64,
 * numbers float/double, anything else nothing.
 */
export function effectiveFormat(format: string | undefined, types: readonly string[]): string {
  if (!format) return "";
  const single = types.length === 1 ? types[0]! : "";
  switch (single) {
    case "":
    case "string":
      return FORMATS.has(format.replaceAll("-", "")) ? format : "";
    case "integer":
      return format === "int32" || format === "int64" ? format : "";
    case "number":
      return format === "float" || format === "double" ? format : "";
    default:
      return "";
  }
}

/** The registry check for a string-valued format, or undefined when the registry does not know it. */
export function formatCheck(format: string): FormatCheck | undefined {
  return FORMATS.get(format.replaceAll("-", ""));
}
