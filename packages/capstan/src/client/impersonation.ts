/**
 * Impersonation headers from a kubeconfig user's `as`, `as-uid`, `as-groups` and `as-user-extra`, as
 * client-go's impersonating round tripper sends them: `Impersonate-User`, `Impersonate-Uid`, one
 * `Impersonate-Group` line per group, and one `Impersonate-Extra-<key>` line per value, the key
 * percent-encoded where it holds a byte that is not legal in a header name.
 */
import type { HeaderRecord } from "./credentials.ts";

/** Whom to act as. */
export interface Impersonation {
  user: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** The headers for `who` (lower-case names). */
export function impersonationHeaders(who: Impersonation): HeaderRecord {
  const headers: HeaderRecord = { "impersonate-user": who.user };
  if (who.uid) headers["impersonate-uid"] = who.uid;
  if (who.groups && who.groups.length > 0) headers["impersonate-group"] = [...who.groups];
  for (const [key, values] of Object.entries(who.extra ?? {})) {
    if (values.length > 0) headers[`impersonate-extra-${escapeHeaderKey(key)}`] = [...values];
  }
  return headers;
}

/**
 * RFC 7230 token characters besides letters and digits. `%` is a token character, but it is escaped as
 * well so that the server's unescaping of the key (url.PathUnescape) can never fail.
 */
const tokenPunctuation = new Set("!#$&'*+-.^_`|~");

/** client-go's `headerKeyEscape`: every UTF-8 byte outside the token characters becomes `%XX`. */
export function escapeHeaderKey(key: string): string {
  let out = "";
  for (const byte of Buffer.from(key, "utf8")) {
    const c = String.fromCharCode(byte);
    const legal = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a);
    out += legal || tokenPunctuation.has(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}
