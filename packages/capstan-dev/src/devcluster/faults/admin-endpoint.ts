/**
 * `/capstan/faults`: the fault-injection handle over HTTP, for `capstan apiserver` run as its own
 * process. Outside `/api` and `/apis` so no Kubernetes client mistakes it for a resource.
 *
 * ## Expected flow
 * `GET /capstan/faults` answers the {@link FaultState}. `POST /capstan/faults` with a JSON body
 * `{"action": ..., ...}` performs one action (see {@link parseFaultCommand} and docs/faults.md) and
 * answers `{"result": ..., "state": ...}`.
 *
 * ## Guarantees
 * - Only members of `system:masters` (the admin token) may use it; anyone else gets 403 Forbidden
 *   with kube-apiserver's message for a non-resource path.
 * - Malformed bodies and bad values get 400 BadRequest naming the problem; nothing is armed then.
 * - `restart` keeps the caller's own connection open long enough to answer, and answers with
 *   `Connection: close` so it is not reused.
 */
import { ApiError, badRequest, failure } from "../machinery/status.ts";
import { type RequestContext, writeJson } from "../request/pipeline.ts";
import { readBody } from "../serializer/body.ts";
import type { FailureOptions, FaultFilter, FaultInjector, LatencySpec } from "./fault-injector.ts";

/** The admin endpoint's path. */
export const FAULTS_PATH = "/capstan/faults";

/** Bodies are a few hundred bytes; 64 KiB refuses nonsense early. */
const MAX_COMMAND_BYTES = 64 * 1024;

/** One action of `POST /capstan/faults`. */
export type FaultCommand =
  | { action: "dropWatches" }
  | { action: "dropWatchesEvery"; intervalMs: number }
  | { action: "fail"; count: number; options: FailureOptions }
  | { action: "fail"; fraction: number; options: FailureOptions }
  | { action: "latency"; latency: Exclude<LatencySpec, (...args: never[]) => number>; filter: FaultFilter }
  | { action: "compact"; resourceVersion?: number }
  | { action: "restart" }
  | { action: "seed"; seed: number }
  | { action: "reset" };

const FILTER_FIELDS = ["verbs", "resources", "namespaces"] as const;

/** Parses and checks a command body; throws a 400 ApiError saying what is wrong. */
export function parseFaultCommand(body: unknown): FaultCommand {
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw badRequest('fault command must be a JSON object with an "action" field');
  }
  const b = body as Record<string, unknown>;
  const allow = (...fields: string[]) => {
    const extra = Object.keys(b).filter((k) => k !== "action" && !fields.includes(k));
    if (extra.length > 0) throw badRequest(`unknown field(s) for action "${String(b.action)}": ${extra.join(", ")}`);
  };
  const filter = (): FaultFilter => {
    const out: FaultFilter = {};
    for (const field of FILTER_FIELDS) {
      const value = b[field];
      if (value === undefined) continue;
      if (!Array.isArray(value) || value.some((v) => typeof v !== "string")) {
        throw badRequest(`${field} must be an array of strings`);
      }
      out[field] = value as string[];
    }
    return out;
  };
  const num = (field: string, required: boolean): number | undefined => {
    const value = b[field];
    if (value === undefined && !required) return undefined;
    if (typeof value !== "number" || !Number.isFinite(value)) throw badRequest(`${field} must be a number`);
    return value;
  };
  switch (b.action) {
    case "dropWatches":
    case "restart":
    case "reset":
      allow();
      return { action: b.action };
    case "dropWatchesEvery":
      allow("intervalMs");
      return { action: "dropWatchesEvery", intervalMs: num("intervalMs", true)! };
    case "seed":
      allow("seed");
      return { action: "seed", seed: num("seed", true)! };
    case "compact": {
      allow("resourceVersion");
      const rv = b.resourceVersion;
      if (rv === undefined) return { action: "compact" };
      if (typeof rv !== "string" || !/^\d+$/.test(rv)) {
        throw badRequest(`resourceVersion must be a resourceVersion string like "42", got ${JSON.stringify(rv)}`);
      }
      return { action: "compact", resourceVersion: Number(rv) };
    }
    case "latency": {
      allow("ms", "minMs", "maxMs", ...FILTER_FIELDS);
      const ms = num("ms", false);
      const minMs = num("minMs", false);
      const maxMs = num("maxMs", false);
      if (ms !== undefined && (minMs !== undefined || maxMs !== undefined)) {
        throw badRequest("latency takes either ms or minMs and maxMs, not both");
      }
      if (ms !== undefined) return { action: "latency", latency: ms, filter: filter() };
      if (minMs === undefined || maxMs === undefined) throw badRequest("latency needs ms, or minMs and maxMs");
      return { action: "latency", latency: { minMs, maxMs }, filter: filter() };
    }
    case "fail": {
      allow("count", "fraction", "code", "retryAfterSeconds", "message", ...FILTER_FIELDS);
      const code = b.code ?? 500;
      if (code !== 500 && code !== 429) throw badRequest(`code must be 500 or 429, got ${JSON.stringify(code)}`);
      const retryAfterSeconds = num("retryAfterSeconds", false);
      if (b.message !== undefined && typeof b.message !== "string") throw badRequest("message must be a string");
      const options: FailureOptions = {
        code,
        ...filter(),
        ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
        ...(b.message !== undefined ? { message: b.message as string } : {}),
      };
      const count = num("count", false);
      const fraction = num("fraction", false);
      if ((count === undefined) === (fraction === undefined))
        throw badRequest("fail needs exactly one of count or fraction");
      return count !== undefined
        ? { action: "fail", count, options }
        : { action: "fail", fraction: fraction!, options };
    }
    default:
      throw badRequest(
        `unknown action ${JSON.stringify(b.action)}; one of dropWatches, dropWatchesEvery, fail, latency, compact, restart, seed, reset`,
      );
  }
}

/** Performs a parsed command. Returns what the action reports (counts, versions), if anything. */
export function runFaultCommand(faults: FaultInjector, command: FaultCommand, ctx?: RequestContext): unknown {
  switch (command.action) {
    case "dropWatches":
      return { watchesDropped: faults.dropWatches() };
    case "dropWatchesEvery":
      return faults.dropWatchesEvery(command.intervalMs);
    case "fail":
      if ("count" in command) return faults.failNext(command.count, command.options);
      return faults.failFraction(command.fraction, command.options);
    case "latency":
      return faults.addLatency(command.latency, command.filter);
    case "compact":
      return { oldestResourceVersion: faults.compact(command.resourceVersion) };
    case "restart":
      return faults.restart(ctx ? { except: ctx.req.socket } : {});
    case "seed":
      return faults.seed(command.seed);
    case "reset":
      return faults.reset();
  }
}

/** The route handler for {@link FAULTS_PATH}. */
export function faultsEndpoint(faults: FaultInjector): (ctx: RequestContext) => Promise<void> {
  return async (ctx) => {
    const path = ctx.url.pathname.replace(/\/+$/, "");
    const method = ctx.req.method ?? "GET";
    if (path !== FAULTS_PATH)
      throw new ApiError(failure(404, "NotFound", "the server could not find the requested resource", {}));
    const user = ctx.user;
    if (!user?.groups.includes("system:masters")) {
      throw new ApiError(
        failure(
          403,
          "Forbidden",
          `forbidden: User "${user?.username ?? "system:anonymous"}" cannot ${method.toLowerCase()} path "${FAULTS_PATH}"`,
          {},
        ),
      );
    }
    if (method === "GET") return writeJson(ctx.res, 200, JSON.stringify(faults.state()));
    if (method !== "POST") {
      throw new ApiError(
        failure(405, "MethodNotAllowed", `${method} is not supported on ${FAULTS_PATH}; use GET or POST`),
      );
    }
    const raw = await readBody(ctx.req, MAX_COMMAND_BYTES);
    let body: unknown;
    try {
      body = JSON.parse(raw.toString("utf8"));
    } catch (err) {
      throw badRequest(`fault command is not valid JSON: ${(err as Error).message}`);
    }
    const command = parseFaultCommand(body);
    let result: unknown;
    try {
      result = runFaultCommand(faults, command, ctx);
    } catch (err) {
      if (err instanceof TypeError) throw badRequest(err.message);
      throw err;
    }
    if (command.action === "restart") ctx.res.setHeader("Connection", "close");
    writeJson(ctx.res, 200, JSON.stringify({ result: result ?? null, state: faults.state() }));
  };
}
