/**
 * The DNS-rebinding guard. A web page from anywhere can make the browser send requests to
 * 127.0.0.1 by resolving its own name to it; those requests carry that page's name in the `Host`
 * header. The dashboard answers only requests addressed to the loopback name or address it
 * serves, so no other site can read the cluster through it.
 */

/** True for `localhost`, `127.0.0.0/8` and `::1`: the hosts the dashboard may listen on. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, "");
  return h === "localhost" || h === "::1" || /^127(\.\d{1,3}){3}$/.test(h);
}

/** The `Host` header values a server listening on `host:port` accepts. */
export function allowedHostHeaders(host: string, port: number): Set<string> {
  const h = host.toLowerCase().replace(/^\[|\]$/g, "");
  const names = new Set([h.includes(":") ? `[${h}]` : h, "localhost"]);
  return new Set([...names].map((name) => `${name}:${port}`));
}

/** True when the request's `Host` header is one of `allowed` (case-insensitive). */
export function hostAllowed(header: string | undefined, allowed: ReadonlySet<string>): boolean {
  return header !== undefined && allowed.has(header.toLowerCase());
}

/**
 * True when a request's `Origin` header is the dashboard's own (`http://` and an allowed host).
 * Browsers send `Origin` with every POST, PUT and DELETE, and a page cannot forge it: a write whose
 * Origin is missing or another site's did not come from the dashboard's page.
 */
export function originAllowed(origin: string | undefined, allowed: ReadonlySet<string>): boolean {
  if (origin === undefined || !origin.toLowerCase().startsWith("http://")) return false;
  return hostAllowed(origin.slice("http://".length), allowed);
}
