/**
 * IP addresses and CIDRs as the built-in kinds' validation reads them: k8s.io/utils/net's
 * ParseIPSloppy and ParseCIDRSloppy (Go's pre-1.17 net.ParseIP, which accepts IPv4 octets with
 * leading zeros, as kube-apiserver 1.32 still does), the family tests (IsIPv6String: an address
 * without an IPv4 form), net.IP's special-range predicates, and apimachinery's IsValidIP /
 * IsValidCIDR field errors with their messages.
 *
 * An address is held as Go holds it: 16 bytes, IPv4 as the IPv4-mapped form `::ffff:a.b.c.d`.
 */
import { type FieldError, type FieldPath, invalid } from "./field-errors.ts";

/** A parsed address: 16 bytes. */
export type IpBytes = readonly number[];

const V4_IN_V6_PREFIX = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];

/** Go's dtoi stops at 0xFFFFFF; a longer run of digits is not a number it accepts. */
const DTOI_BIG = 0xffffff;

function decimal(s: string): number | undefined {
  if (!/^\d+$/.test(s)) return undefined;
  let n = 0;
  for (const ch of s) {
    n = n * 10 + (ch.charCodeAt(0) - 48);
    if (n >= DTOI_BIG) return undefined;
  }
  return n;
}

function parseIPv4(s: string): number[] | undefined {
  const parts = s.split(".");
  if (parts.length !== 4) return undefined;
  const out: number[] = [];
  for (const part of parts) {
    const n = decimal(part);
    if (n === undefined || n > 0xff) return undefined;
    out.push(n);
  }
  return out;
}

function parseIPv6(s: string): number[] | undefined {
  let text = s;
  let tail: number[] = [];
  // An embedded IPv4 address may end the text (`::ffff:1.2.3.4`).
  const lastColon = text.lastIndexOf(":");
  if (text.slice(lastColon + 1).includes(".")) {
    const v4 = parseIPv4(text.slice(lastColon + 1));
    if (v4 === undefined) return undefined;
    tail = v4;
    text = text.slice(0, lastColon + 1);
    // A trailing single colon before the IPv4 part belongs to it ("::1.2.3.4", "a:b::c:1.2.3.4").
    if (text.endsWith(":") && !text.endsWith("::")) text = text.slice(0, -1);
  }
  const double = text.indexOf("::");
  if (double !== text.lastIndexOf("::")) return undefined;
  const group = (g: string): number[] | undefined =>
    /^[0-9a-fA-F]{1,4}$/.test(g) ? [Number.parseInt(g, 16) >> 8, Number.parseInt(g, 16) & 0xff] : undefined;
  const groups = (part: string): number[] | undefined => {
    if (part === "") return [];
    const out: number[] = [];
    for (const g of part.split(":")) {
      const bytes = group(g);
      if (bytes === undefined) return undefined;
      out.push(...bytes);
    }
    return out;
  };
  if (double === -1) {
    const bytes = groups(text);
    if (bytes === undefined || bytes.length + tail.length !== 16) return undefined;
    return [...bytes, ...tail];
  }
  const head = groups(text.slice(0, double));
  const rest = groups(text.slice(double + 2));
  if (head === undefined || rest === undefined) return undefined;
  const missing = 16 - head.length - rest.length - tail.length;
  // `::` stands for at least one group of zeros.
  if (missing < 2) return undefined;
  return [...head, ...new Array<number>(missing).fill(0), ...rest, ...tail];
}

/** ParseIPSloppy: the 16-byte address, or undefined when `s` is not one. */
export function parseIPSloppy(s: string): IpBytes | undefined {
  if (s.includes(":")) return parseIPv6(s);
  const v4 = parseIPv4(s);
  return v4 === undefined ? undefined : [...V4_IN_V6_PREFIX, ...v4];
}

/** net.IP.To4() != nil: the address has an IPv4 form. */
export function isIPv4Bytes(ip: IpBytes): boolean {
  return V4_IN_V6_PREFIX.every((b, i) => ip[i] === b);
}

/** netutils.IsIPv6String: a valid address without an IPv4 form. */
export function isIPv6String(s: string): boolean {
  const ip = parseIPSloppy(s);
  return ip !== undefined && !isIPv4Bytes(ip);
}

/** netutils.IsIPv4String. */
export function isIPv4String(s: string): boolean {
  const ip = parseIPSloppy(s);
  return ip !== undefined && isIPv4Bytes(ip);
}

/** net.IP.String(): dotted decimal for IPv4, RFC 5952 text for IPv6. */
export function formatIP(ip: IpBytes): string {
  if (isIPv4Bytes(ip)) return ip.slice(12).join(".");
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((ip[i]! << 8) | ip[i + 1]!);
  // The longest run of two or more zero groups (the first one on a tie) becomes "::".
  let bestStart = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (gs: number[]) => gs.map((g) => g.toString(16)).join(":");
  if (bestStart < 0) return hex(groups);
  return hex(groups.slice(0, bestStart)) + "::" + hex(groups.slice(bestStart + bestLen));
}

/** A parsed CIDR: the network address (masked) and the prefix length, in the family's bits. */
export interface Cidr {
  /** The masked address, 16 bytes. */
  readonly network: IpBytes;
  /** The prefix length within the family (0-32 for IPv4, 0-128 for IPv6). */
  readonly prefix: number;
  readonly v4: boolean;
}

/** ParseCIDRSloppy: undefined when `s` is not `<address>/<prefix length>`. */
export function parseCIDRSloppy(s: string): Cidr | undefined {
  const slash = s.indexOf("/");
  if (slash < 0) return undefined;
  const addrText = s.slice(0, slash);
  const ip = parseIPSloppy(addrText);
  const prefix = decimal(s.slice(slash + 1));
  if (ip === undefined || prefix === undefined) return undefined;
  // The family is the text's: an IPv4-mapped address written in IPv6 form has 128 bits.
  const v4 = !addrText.includes(":");
  const bits = v4 ? 32 : 128;
  if (prefix > bits) return undefined;
  const offset = v4 ? 96 : 0;
  const network = ip.map((byte, i) => {
    const keep = Math.max(0, Math.min(8, offset + prefix - i * 8));
    return i * 8 < offset ? byte : byte & ((0xff << (8 - keep)) & 0xff);
  });
  return { network, prefix, v4 };
}

/** net.IPNet.Contains for a network of `cidr`'s family. */
export function cidrContains(cidr: Cidr, ip: IpBytes): boolean {
  if (cidr.v4 !== isIPv4Bytes(ip)) return false;
  const offset = cidr.v4 ? 96 : 0;
  for (let bit = 0; bit < cidr.prefix; bit++) {
    const i = (offset + bit) >> 3;
    const mask = 0x80 >> ((offset + bit) & 7);
    if ((ip[i]! & mask) !== (cidr.network[i]! & mask)) return false;
  }
  return true;
}

const isZero = (bytes: readonly number[]) => bytes.every((b) => b === 0);

/** net.IP.IsUnspecified: 0.0.0.0 or ::. */
export function isUnspecified(ip: IpBytes): boolean {
  return isIPv4Bytes(ip) ? isZero(ip.slice(12)) : isZero(ip);
}

/** net.IP.IsLoopback: 127.0.0.0/8 or ::1. */
export function isLoopback(ip: IpBytes): boolean {
  if (isIPv4Bytes(ip)) return ip[12] === 127;
  return isZero(ip.slice(0, 15)) && ip[15] === 1;
}

/** net.IP.IsLinkLocalUnicast: 169.254.0.0/16 or fe80::/10. */
export function isLinkLocalUnicast(ip: IpBytes): boolean {
  if (isIPv4Bytes(ip)) return ip[12] === 169 && ip[13] === 254;
  return ip[0] === 0xfe && (ip[1]! & 0xc0) === 0x80;
}

/** net.IP.IsLinkLocalMulticast: 224.0.0.0/24 or ff02::/16 (any flags). */
export function isLinkLocalMulticast(ip: IpBytes): boolean {
  if (isIPv4Bytes(ip)) return ip[12] === 224 && ip[13] === 0 && ip[14] === 0;
  return ip[0] === 0xff && (ip[1]! & 0x0f) === 0x02;
}

/** apimachinery IsValidIP. */
export function validateIP(path: FieldPath, value: string): FieldError[] {
  return parseIPSloppy(value) === undefined
    ? [invalid(path, value, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)")]
    : [];
}

/** apimachinery IsValidCIDR. */
export function validateCIDR(path: FieldPath, value: string): FieldError[] {
  return parseCIDRSloppy(value) === undefined
    ? [invalid(path, value, "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)")]
    : [];
}
