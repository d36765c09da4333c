/**
 * The request pipeline: an ordered list of stages, each of which may answer the request itself or pass
 * it on. Part 1 runs request-info parsing -> authentication -> handler; part 2 inserts impersonation,
 * RBAC authorization and fault injection between authentication and the handler without touching either.
 *
 * ## Guarantees
 * - A stage that throws an `ApiError` is answered with its Status, a `PageNotFound` with Go's text 404;
 *   any other error with a 500 Status.
 *   Nothing a request does can crash the server.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { ApiError, internalError } from "../machinery/status.ts";
import { indentJson } from "../serializer/json-indent.ts";
import { PageNotFound, writePageNotFound } from "./page-not-found.ts";
import { wantsPrettyJson } from "./pretty-print.ts";
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

/**
 * The context of one HTTP request. A class rather than an object literal: the create/get hot path
 * builds one per request, and a literal with a getter costs a closure and an accessor each time.
 */
export class HttpRequestContext implements RequestContext {
  user?: UserInfo;
  private abort: AbortController | undefined;
  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly url: URL,
    public info: RequestInfo,
    /** Aborted when the server stops. */
    private readonly serverSignal: AbortSignal,
  ) {}

  /** Made on first use: only watches and delayed requests need it. */
  get signal(): AbortSignal {
    if (this.abort) return this.abort.signal;
    const controller = new AbortController();
    this.abort = controller;
    const server = this.serverSignal;
    if (server.aborted) controller.abort();
    const onStop = () => controller.abort();
    server.addEventListener("abort", onStop, { once: true });
    this.res.once("close", () => {
      server.removeEventListener("abort", onStop);
      controller.abort();
    });
    return controller.signal;
  }
}

/** One step of the pipeline. Call `next()` to pass the request on; return without calling it to answer here. */
export type Stage = (ctx: RequestContext, next: () => Promise<void>) => Promise<void>;

/** Runs the stages in order around a final handler, answering thrown errors with a Status. */
export function composePipeline(stages: Stage[]): (ctx: RequestContext) => Promise<void> {
  return async (ctx) => {
    try {
      await runFrom(stages, 0, ctx);
    } catch (err) {
      writeError(ctx.res, err);
    }
  };
}

/**
 * Runs `stages[index]` with a `next` that runs the one after it. Stages are read at request time, so
 * stages inserted after start-up take part. One closure per stage and no extra async frame per stage:
 * every request walks this.
 */
function runFrom(stages: Stage[], index: number, ctx: RequestContext): Promise<void> {
  const stage = stages[index];
  if (stage === undefined) return Promise.resolve();
  try {
    return stage(ctx, () => runFrom(stages, index + 1, ctx));
  } catch (err) {
    return Promise.reject(err);
  }
}

/** Answers with the Status of an ApiError, Go's text 404 for a PageNotFound, or a 500 Status for anything else. */
export function writeError(res: ServerResponse, err: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (err instanceof PageNotFound) {
    writePageNotFound(res);
    return;
  }
  const apiError = err instanceof ApiError ? err : internalError(err);
  // A failed negotiation has no serializer to answer with: WriteObjectNegotiated falls back to WriteRawJSON.
  if (apiError.code === 406) writeRawJson(res, 406, apiError.status);
  else writeJson(res, apiError.code, JSON.stringify(apiError.status));
}

/**
 * Writes a negotiated JSON body (already serialized, compact) with the headers kube-apiserver sends:
 * as Go's json.Encoder ends it (a newline), or as its pretty serializer indents it (no newline) when
 * the request asks for that (request/pretty-print.ts). Watch streams are never written here.
 */
export function writeJson(res: ServerResponse, code: number, body: string): void {
  const text = wantsPrettyJson(res.req) ? indentJson(body) : `${body}\n`;
  writeBody(res, code, text);
}

/** Go's `responsewriters.WriteRawJSON` (e.g. /version): always indented, whatever was asked. */
export function writeRawJson(res: ServerResponse, code: number, value: unknown): void {
  writeBody(res, code, JSON.stringify(value, null, 2));
}

/** Characters Go's encoding/json escapes inside strings (HTML-safe output, JavaScript line separators). */
const GO_ESCAPED = /[<>&\u2028\u2029]/g;
const NEEDS_ESCAPE = /[<>&\u2028\u2029]/;
const GO_ESCAPES: Record<string, string> = {
  "<": "\\u003c",
  ">": "\\u003e",
  "&": "\\u0026",
  "\u2028": "\\u2028",
  "\u2029": "\\u2029",
};

/**
 * JSON text as Go's encoder escapes it. These characters can only stand inside strings of valid JSON,
 * so the whole text is rewritten without parsing it.
 */
function goEscaped(text: string): string {
  return NEEDS_ESCAPE.test(text) ? text.replace(GO_ESCAPED, (c) => GO_ESCAPES[c]!) : text;
}

function writeBody(res: ServerResponse, code: number, json: string): void {
  const bytes = Buffer.from(goEscaped(json), "utf8");
  res.writeHead(code, {
    "Content-Type": "application/json",
    "Cache-Control": "no-cache, private",
    "Content-Length": bytes.length,
  });
  // A Buffer, not a string: Node sends the headers with a first string chunk in that chunk's encoding
  // (UTF-8), which would encode again the UTF-8 bytes a Warning header holds (warning-recorder.ts).
  res.end(bytes);
}
