/**
 * Addresses of a dashboard's routes for tests, carrying its access token as a script would.
 */
import type { Dashboard } from "../../../packages/capstan-dev/src/dashboard/index.ts";

/**
 * `path` (an `/api/` route) on `dashboard`, with its access token in the query. Not for a page
 * (`/`): a page with the token answers with the redirect that sets the cookie.
 */
export function apiUrl(dashboard: Pick<Dashboard, "url" | "token">, path: string): string {
  const url = new URL(path, dashboard.url);
  url.searchParams.set("token", dashboard.token);
  return url.href;
}
