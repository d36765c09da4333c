/**
 * Kubernetes name and label rules with apimachinery's exact messages (Kubernetes 1.32:
 * `pkg/util/validation/validation.go`, `pkg/api/validation/generic.go` and `path/name.go`: label
 * keys are "qualified names", length limits are worded in characters). Each function returns the
 * list of problems, empty when the
 * value is valid; callers wrap each message in a FieldError (`invalid(path, value, msg)`).
 *
 * Lengths are counted in UTF-8 bytes, as Go's `len(string)` does.
 */

const DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_LABEL_ERR =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT = DNS1123_LABEL_FMT + "(\\." + DNS1123_LABEL_FMT + ")*";
const DNS1123_SUBDOMAIN_ERR =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?";
const DNS1035_LABEL_ERR =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_KEY_ERR =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT = "(" + LABEL_KEY_FMT + ")?";
const LABEL_VALUE_ERR =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/** Limits from RFC 1123 / RFC 1035 and the label syntax, as apimachinery defines them. */
export const DNS1123_LABEL_MAX_LENGTH = 63;
export const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;
export const DNS1035_LABEL_MAX_LENGTH = 63;
export const LABEL_VALUE_MAX_LENGTH = 63;
const LABEL_KEY_NAME_MAX_LENGTH = 63;

const dns1123LabelRe = new RegExp("^" + DNS1123_LABEL_FMT + "$");
const dns1123SubdomainRe = new RegExp("^" + DNS1123_SUBDOMAIN_FMT + "$");
const dns1035LabelRe = new RegExp("^" + DNS1035_LABEL_FMT + "$");
const labelKeyRe = new RegExp("^" + LABEL_KEY_FMT + "$");
const labelValueRe = new RegExp("^" + LABEL_VALUE_FMT + "$");

/** Go's `len(s)`: UTF-8 bytes. */
export function byteLength(s: string): number {
  return Buffer.byteLength(s, "utf8");
}

/** `must be no more than N characters` (pkg/util/validation). */
export function maxLenError(length: number): string {
  return `must be no more than ${length} characters`;
}

/** `<msg> (e.g. 'a' or 'b', regex used for validation is '<fmt>')`. */
export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  return `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(" or ")}regex used for validation is '${fmt}')`;
}

/** `must be non-empty`. */
export function emptyError(): string {
  return "must be non-empty";
}

/** A lowercase RFC 1123 label (namespace names, most DNS-label-named kinds). */
export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_LABEL_MAX_LENGTH) errs.push(maxLenError(DNS1123_LABEL_MAX_LENGTH));
  if (!dns1123LabelRe.test(value)) {
    // A valid subdomain that is not a valid label (length already reported) can only be failing on dots.
    if (dns1123SubdomainRe.test(value)) errs.push("must not contain dots");
    else errs.push(regexError(DNS1123_LABEL_ERR, DNS1123_LABEL_FMT, "my-name", "123-abc"));
  }
  return errs;
}

/** A lowercase RFC 1123 subdomain (most object names). */
export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX_LENGTH) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX_LENGTH));
  if (!dns1123SubdomainRe.test(value))
    errs.push(regexError(DNS1123_SUBDOMAIN_ERR, DNS1123_SUBDOMAIN_FMT, "example.com"));
  return errs;
}

/** An RFC 1035 label (service names). */
export function isDNS1035Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1035_LABEL_MAX_LENGTH) errs.push(maxLenError(DNS1035_LABEL_MAX_LENGTH));
  if (!dns1035LabelRe.test(value)) errs.push(regexError(DNS1035_LABEL_ERR, DNS1035_LABEL_FMT, "my-name", "abc-123"));
  return errs;
}

/** A qualified name / label key: `[prefix/]name` (label keys, annotation keys, finalizers). */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split("/");
  let name: string;
  if (parts.length === 1) {
    name = parts[0]!;
  } else if (parts.length === 2) {
    const prefix = parts[0]!;
    name = parts[1]!;
    if (prefix.length === 0) errs.push("prefix part " + emptyError());
    else for (const msg of isDNS1123Subdomain(prefix)) errs.push("prefix part " + msg);
  } else {
    return [
      "a qualified name " +
        regexError(LABEL_KEY_ERR, LABEL_KEY_FMT, "MyName", "my.name", "123-abc") +
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  if (name.length === 0) errs.push("name part " + emptyError());
  else if (byteLength(name) > LABEL_KEY_NAME_MAX_LENGTH)
    errs.push("name part " + maxLenError(LABEL_KEY_NAME_MAX_LENGTH));
  if (!labelKeyRe.test(name))
    errs.push("name part " + regexError(LABEL_KEY_ERR, LABEL_KEY_FMT, "MyName", "my.name", "123-abc"));
  return errs;
}

/** A label value: empty, or up to 63 bytes of alphanumerics, '-', '_', '.' starting and ending alphanumeric. */
export function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > LABEL_VALUE_MAX_LENGTH) errs.push(maxLenError(LABEL_VALUE_MAX_LENGTH));
  if (!labelValueRe.test(value))
    errs.push(regexError(LABEL_VALUE_ERR, LABEL_VALUE_FMT, "MyValue", "my_value", "12345"));
  return errs;
}

/** A name usable as one URL path segment (`.`/`..` refused, `/` and `%` never allowed). */
export function isPathSegmentName(name: string): string[] {
  for (const illegal of [".", ".."]) {
    if (name === illegal) return [`may not be '${illegal}'`];
  }
  return isPathSegmentPrefix(name);
}

/** A generateName prefix usable in a URL path segment. */
export function isPathSegmentPrefix(name: string): string[] {
  const errs: string[] = [];
  for (const illegal of ["/", "%"]) {
    if (name.includes(illegal)) errs.push(`may not contain '${illegal}'`);
  }
  return errs;
}

/** A name rule as the apiserver applies it: `prefix` is true when checking a generateName. */
export type NameValidator = (name: string, prefix: boolean) => string[];

/**
 * generateName is checked as if a random suffix followed it: a trailing dash is fine there, so it is
 * masked (generic.go maskTrailingDash replaces the last two characters with "a").
 */
function maskTrailingDash(name: string): string {
  return name.length > 1 && name.endsWith("-") ? name.slice(0, -2) + "a" : name;
}

/** NameIsDNSSubdomain: the rule of most kinds, custom resources included. */
export const nameIsDNSSubdomain: NameValidator = (name, prefix) =>
  isDNS1123Subdomain(prefix ? maskTrailingDash(name) : name);

/** NameIsDNSLabel: namespaces and other label-named kinds. */
export const nameIsDNSLabel: NameValidator = (name, prefix) => isDNS1123Label(prefix ? maskTrailingDash(name) : name);

/** NameIsDNS1035Label: services. */
export const nameIsDNS1035Label: NameValidator = (name, prefix) =>
  isDNS1035Label(prefix ? maskTrailingDash(name) : name);

/** ValidatePathSegmentName: kinds whose names only need to fit in a URL (RBAC roles, for example). */
export const nameIsPathSegment: NameValidator = (name, prefix) =>
  prefix ? isPathSegmentPrefix(name) : isPathSegmentName(name);
