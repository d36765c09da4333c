/**
 * `/capstan/access`: the {@link AccessRecorder} over HTTP, for a server run as its own process
 * (`capstan apiserver`, `capstan dev`). Outside `/api` and `/apis`, as `/capstan/faults` is.
 *
 * ## Expected flow
 * `GET /capstan/access` answers `{"kind": "CapstanObservedAccess", "users": [...]}` for every user
 * with recorded decisions, `?user=<name>` (repeatable) for those only: the file
 * `capstan generate rbac --observed` reads. `DELETE` forgets them (all, or `?user=`), to start a
 * scenario from nothing.
 *
 * ## Guarantees
 * - Only system:masters (the admin token) may use it: for anyone else RBAC answers first (no rule
 *   grants the path), and the endpoint checks again for servers without RBAC.
 */
import { ApiError, failure } from "../machinery/status.ts";
import { type RequestContext, writeJson } from "../request/pipeline.ts";
import type { AccessRecorder } from "./access-recorder.ts";
import { SYSTEM_MASTERS } from "./rbac-authorizer.ts";

/** The endpoint's path. */
export const ACCESS_PATH = "/capstan/access";

/** The `kind` of the report (capstan's `OBSERVED_ACCESS_REPORT_KIND`). */
export const ACCESS_REPORT_KIND = "CapstanObservedAccess";

/** The route handler for {@link ACCESS_PATH}. */
export function accessEndpoint(recorder: AccessRecorder): (ctx: RequestContext) => void {
  return (ctx) => {
    const path = ctx.url.pathname.replace(/\/+$/, "");
    const method = ctx.req.method ?? "GET";
    if (path !== ACCESS_PATH) {
      throw new ApiError(failure(404, "NotFound", "the server could not find the requested resource", {}));
    }
    if (!ctx.user?.groups.includes(SYSTEM_MASTERS)) {
      const who = ctx.user?.username ?? "system:anonymous";
      throw new ApiError(
        failure(403, "Forbidden", `forbidden: User "${who}" cannot ${method.toLowerCase()} path "${ACCESS_PATH}"`, {}),
      );
    }
    const asked = ctx.url.searchParams.getAll("user");
    if (method === "DELETE") {
      if (asked.length === 0) recorder.reset();
      for (const user of asked) recorder.reset(user);
      writeJson(ctx.res, 200, JSON.stringify({ kind: ACCESS_REPORT_KIND, users: [] }));
      return;
    }
    if (method !== "GET") {
      throw new ApiError(
        failure(405, "MethodNotAllowed", `${method} is not supported on ${ACCESS_PATH}; use GET or DELETE`),
      );
    }
    const users = (asked.length > 0 ? asked : recorder.usernames()).map((u) => recorder.access(u));
    writeJson(ctx.res, 200, JSON.stringify({ kind: ACCESS_REPORT_KIND, users }));
  };
}
