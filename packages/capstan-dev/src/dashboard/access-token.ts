/**
 * Who may use the dashboard: whoever holds its access token, as with Jupyter. The dashboard listens
 * on loopback, which every user of the machine can reach; the token is what only the user who
 * started `capstan dev` has (it prints it, and keeps it in an owner-only file).
 *
 * ## Expected flow
 * `capstan dev` prints `http://127.0.0.1:7150/?token=<token>`. The browser's first visit presents
 * the token in the query: the dashboard sets a cookie holding it and redirects to the same address
 * without it (so the token leaves the address bar and the history entry). Every later request of
 * the page (its files, JSON routes, event streams) carries the cookie. Scripts and tests may send
 * `Authorization: Bearer <token>` or `?token=` instead.
 *
 * ## Guarantees
 * - A request without a valid token (query, cookie or bearer header) is answered 401, whatever its
 *   route or method, before any route runs: a plain-text line for pages, the dashboard's JSON error
 *   for `/api/` routes. Neither repeats the token.
 * - Tokens are compared in constant time (SHA-256 digests of both, compared with `timingSafeEqual`):
 *   neither a token's content nor its length leaks through response times.
 * - The cookie is `HttpOnly` (no script reads it), `SameSite=Strict` (no other site's page sends it)
 *   and `Path=/`. Its name carries the port: cookies ignore ports, so two dashboards on one machine
 *   (two projects) would otherwise overwrite each other's.
 *
 * ## Caveats
 * - Plain HTTP on loopback: the token crosses no network, but the browser sends the cookie to every
 *   port of 127.0.0.1 (cookies are per host, not per port), so a server another local user runs on a
 *   loopback port receives it if your browser visits that server. Jupyter has the same exposure.
 * - A session cookie: after the browser forgets it, open the printed address again.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * Random bytes in a token: 256 bits, far past guessing (the floor is 128), and 43 URL-safe
 * characters, short enough to copy from a terminal.
 */
export const ACCESS_TOKEN_BYTES = 32;
/** A token the dashboard accepts: base64url, at least 128 bits (22 characters). */
const TOKEN_FORMAT = /^[A-Za-z0-9_-]{22,}$/;
/** The query parameter that carries the token in the printed address. */
export const TOKEN_PARAM = "token";

/** A new random access token (base64url). */
export function newAccessToken(): string {
  return randomBytes(ACCESS_TOKEN_BYTES).toString("base64url");
}

/** Throws a clear error unless `token` is base64url of at least 128 bits. */
export function checkAccessTokenFormat(token: string, source = "the dashboard's access token"): void {
  if (!TOKEN_FORMAT.test(token)) {
    throw new Error(`${source} must be at least 22 base64url characters (128 bits: A-Z a-z 0-9 - _)`);
  }
}

/** The cookie the dashboard on `port` sets: one per port, see the module documentation. */
export function accessCookieName(port: number): string {
  return `capstan-dashboard-${port}`;
}

/** The dashboard's address with the token in it, as `capstan dev` prints it. */
export function tokenUrl(baseUrl: string, token: string): string {
  const url = new URL(baseUrl);
  url.searchParams.set(TOKEN_PARAM, token);
  return url.href;
}

/**
 * The access check of the dashboard's requests. `admit(req, res)` is true when the request may go
 * on to the routes; false when it has been answered (401, or the redirect that sets the cookie).
 */
export class AccessGuard {
  readonly #digest: Buffer;

  constructor(token: string) {
    checkAccessTokenFormat(token);
    this.#digest = digest(token);
  }

  admit(req: IncomingMessage, res: ServerResponse): boolean {
    const url = new URL(req.url ?? "/", "http://dashboard.invalid");
    const fromQuery = url.searchParams.get(TOKEN_PARAM);
    const queryValid = fromQuery !== null && this.#matches(fromQuery);
    const admitted =
      queryValid ||
      this.#matches(bearerToken(req)) ||
      cookieValues(req, accessCookieName(port(req))).some(this.#matches);
    if (!admitted) {
      unauthorized(req, res, url.pathname);
      return false;
    }
    // The first visit of a page: trade the token in the address for the cookie.
    if (queryValid && (req.method === "GET" || req.method === "HEAD") && !url.pathname.startsWith("/api/")) {
      url.searchParams.delete(TOKEN_PARAM);
      res.writeHead(303, {
        location: `${url.pathname}${url.search}`,
        "set-cookie": `${accessCookieName(port(req))}=${fromQuery}; HttpOnly; SameSite=Strict; Path=/`,
        "cache-control": "no-store",
      });
      res.end();
      return false;
    }
    return true;
  }

  readonly #matches = (candidate: string | undefined): boolean =>
    candidate !== undefined && timingSafeEqual(digest(candidate), this.#digest);
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

/** The port the request arrived on: the dashboard's own. */
function port(req: IncomingMessage): number {
  return req.socket.localPort ?? 0;
}

function bearerToken(req: IncomingMessage): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "");
  return match?.[1];
}

/** Every value of the cookie `name` in the request (a browser may send several, from other paths). */
function cookieValues(req: IncomingMessage, name: string): string[] {
  const values: string[] = [];
  for (const pair of (req.headers.cookie ?? "").split(";")) {
    const eq = pair.indexOf("=");
    if (eq > 0 && pair.slice(0, eq).trim() === name) values.push(pair.slice(eq + 1).trim());
  }
  return values;
}

const HOW_TO_OPEN =
  "open the dashboard at the address capstan dev printed (http://127.0.0.1:<port>/?token=...), which carries its access token";

function unauthorized(req: IncomingMessage, res: ServerResponse, pathname: string): void {
  const api = pathname.startsWith("/api/");
  const body = api
    ? JSON.stringify({ error: { code: 401, reason: "Unauthorized", message: `no valid access token: ${HOW_TO_OPEN}` } })
    : `401 Unauthorized: ${HOW_TO_OPEN}.\n`;
  res.writeHead(401, {
    "content-type": api ? "application/json; charset=utf-8" : "text/plain; charset=utf-8",
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    "www-authenticate": 'Bearer realm="capstan dashboard"',
    // The request's body (a write's) is left unread: the connection cannot carry another request,
    // and saying so keeps a keep-alive client from sending its next one into a closing socket.
    connection: "close",
  });
  res.end(req.method === "HEAD" ? undefined : body);
}
