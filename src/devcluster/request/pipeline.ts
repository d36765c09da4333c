/**
 * The request pipeline: an ordered list of stages, each of which may answer the request itself or pass
 * it on. Part 1 runs request-info parsing -> authentication -> handler; part 2 inserts impersonation,
 * RBAC authorization and fault injection between authentication and the handler without touching either.
 *
 * ## Guarantees
 * - A stage that throws an `ApiError` is answered with its Status; any other error with a 500 Status.
 *   Nothing a request does can crash the server.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { ApiError, internalError } from "../api/status.ts";
import type { RequestInfo } from "./request-info.ts";

/** Who is making the request (authentication's result). */
export interface UserInfo {
  username: string;
  groups: string[];
}

/** Everything a stage knows about a request. */
export interface RequestContext {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly url: URL;
  info: RequestInfo;
  user?: UserInfo;
  /** Aborted when the client goes away or the server stops. */
  readonly signal: AbortSignal;
}

/** One step of the pipeline. Call `next()` to pass the request on; return without calling it to answer here. */
export type Stage = (ctx: RequestContext, next: () => Promise<void>) => Promise<void>;

/** Runs the stages in order around a final handler, answering thrown errors with a Status. */
export function composePipeline(stages: Stage[]): (ctx: RequestContext) => Promise<void> {
  return async (ctx) => {
    const run = async (index: number): Promise<void> => {
      const stage = stages[index];
      if (stage) await stage(ctx, () => run(index + 1));
    };
    try {
      await run(0);
    } catch (err) {
      writeError(ctx.res, err);
    }
  };
}

/** Answers with the Status of an ApiError, or a 500 Status for anything else. */
export function writeError(res: ServerResponse, err: unknown): void {
  const apiError = err instanceof ApiError ? err : internalError(err);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  writeJson(res, apiError.code, JSON.stringify(apiError.status));
}

/** Writes a JSON body (already serialized) with the headers kube-apiserver sends. */
export function writeJson(res: ServerResponse, code: number, body: string): void {
  res.writeHead(code, {
    "Content-Type": "application/json",
    "Cache-Control": "no-cache, private",
    "Content-Length": Buffer.byteLength(body),
  });
  res.end(body);
}
