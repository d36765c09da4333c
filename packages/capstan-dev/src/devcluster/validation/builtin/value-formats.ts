/**
 * The value formats of apimachinery's `pkg/util/validation/validation.go` (Kubernetes 1.32) that the
 * built-in kinds use beyond names and labels: port numbers and names, environment variable names,
 * ConfigMap keys, HTTP header names, IP addresses, user and group ids. Each returns its problems,
 * empty when the value is valid; callers wrap each in a FieldError.
 */
import { isIP } from "node:net";
import { byteLength, DNS1123_SUBDOMAIN_MAX_LENGTH, maxLenError, regexError } from "../names.ts";

/** InclusiveRangeError. */
export function inclusiveRangeError(lo: number, hi: number): string {
  return `must be between ${lo} and ${hi}, inclusive`;
}

/** The largest port number. */
const MAX_PORT = 65535;
/** IANA_SVC_NAME's length limit. */
const PORT_NAME_MAX_LENGTH = 15;
/** Go's math.MaxInt32: the largest user and group id. */
export const MAX_INT32 = 2147483647;

/** IsValidPortNum: 1 to 65535. */
export function isValidPortNum(port: number): string[] {
  return port >= 1 && port <= MAX_PORT ? [] : [inclusiveRangeError(1, MAX_PORT)];
}

/** IsValidPortName: an IANA_SVC_NAME (lower-case letters, digits and single inner hyphens, a letter, 15 at most). */
export function isValidPortName(port: string): string[] {
  const errs: string[] = [];
  if (byteLength(port) > PORT_NAME_MAX_LENGTH) errs.push(maxLenError(PORT_NAME_MAX_LENGTH));
  if (!/^[-a-z0-9]+$/.test(port)) errs.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
  if (!/[a-z]/.test(port)) errs.push("must contain at least one letter (a-z)");
  if (port.includes("--")) errs.push("must not contain consecutive hyphens");
  if (port.length > 0 && (port.startsWith("-") || port.endsWith("-"))) errs.push("must not begin or end with a hyphen");
  return errs;
}

/** hasChDirPrefix: `.`, `..` and a `..` prefix are refused. */
function chDirPrefixErrors(value: string): string[] {
  if (value === ".") return ["must not be '.'"];
  if (value === "..") return ["must not be '..'"];
  if (value.startsWith("..")) return ["must not start with '..'"];
  return [];
}

const ENV_VAR_NAME_FMT = "[-._a-zA-Z][-._a-zA-Z0-9]*";
const ENV_VAR_NAME_ERR =
  "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit";
const envVarNameRe = new RegExp(`^${ENV_VAR_NAME_FMT}$`);

/** IsEnvVarName: the strict (C-identifier-like) rule, used when RelaxedEnvironmentVariableValidation is off. */
export function isEnvVarName(value: string): string[] {
  const errs = envVarNameRe.test(value)
    ? []
    : [regexError(ENV_VAR_NAME_ERR, ENV_VAR_NAME_FMT, "my.env-name", "MY_ENV.NAME", "MyEnvName1")];
  return [...errs, ...chDirPrefixErrors(value)];
}

/**
 * IsRelaxedEnvVarName: printable ASCII other than `=` (RelaxedEnvironmentVariableValidation, beta and
 * on in 1.32, so the rule kube-apiserver 1.32 applies).
 */
export function isRelaxedEnvVarName(value: string): string[] {
  const errs: string[] = [];
  if (value.length === 0) errs.push("environment variable name must be non-empty");
  if (/[^\x20-\x7e]|=/.test(value)) {
    errs.push("a valid environment variable name must consist only of printable ASCII characters other than '='");
  }
  return errs;
}

const CONFIG_MAP_KEY_FMT = "[-._a-zA-Z0-9]+";
const CONFIG_MAP_KEY_ERR = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'";
const configMapKeyRe = new RegExp(`^${CONFIG_MAP_KEY_FMT}$`);

/** IsConfigMapKey: a ConfigMap or Secret key. */
export function isConfigMapKey(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX_LENGTH) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX_LENGTH));
  if (!configMapKeyRe.test(value)) {
    errs.push(regexError(CONFIG_MAP_KEY_ERR, CONFIG_MAP_KEY_FMT, "key.name", "KEY_NAME", "key-name"));
  }
  return [...errs, ...chDirPrefixErrors(value)];
}

const HTTP_HEADER_NAME_FMT = "[-A-Za-z0-9]+";
const HTTP_HEADER_NAME_ERR = "a valid HTTP header must consist of alphanumeric characters or '-'";

/** IsHTTPHeaderName. */
export function isHTTPHeaderName(value: string): string[] {
  return new RegExp(`^${HTTP_HEADER_NAME_FMT}$`).test(value)
    ? []
    : [regexError(HTTP_HEADER_NAME_ERR, HTTP_HEADER_NAME_FMT, "X-Header-Name")];
}

/**
 * IsValidIP (netutils.ParseIPSloppy): an IPv4 or IPv6 address; IPv4 parts may carry leading zeros,
 * which the sloppy parser reads as decimal.
 */
export function isValidIP(value: string): string[] {
  const sloppy = /^\d+(\.\d+){3}$/.test(value) ? value.replace(/(^|\.)0+(\d)/g, "$1$2") : value;
  return isIP(sloppy) !== 0 ? [] : ["must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"];
}

/** IsValidUserID / IsValidGroupID: 0 to MaxInt32. */
export function isValidUnixId(id: number): string[] {
  return id >= 0 && id <= MAX_INT32 ? [] : [inclusiveRangeError(0, MAX_INT32)];
}
