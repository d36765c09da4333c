/**
 * One HTTP(S) request on a connection of its own, for the rare requests that do not go to the API
 * server (an OIDC issuer's discovery and token endpoints): no pool to keep, the whole body read as text.
 */
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { readBody } from "./response-body.ts";

export interface OneShotRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** PEM CA bundle to verify the server with, instead of Node's default roots. */
  ca?: string;
  /** For the whole exchange, connection to the end of the body (ms). */
  timeoutMs: number;
}

export interface OneShotResponse {
  status: number;
  /** The Content-Type header, or "". */
  type: string;
  body: string;
}

/** Sends one request to `url`; rejects on network errors and after `timeoutMs`. */
export function oneShotRequest(url: string, opts: OneShotRequest): Promise<OneShotResponse> {
  const target = new URL(url);
  const send = target.protocol === "https:" ? httpsRequest : httpRequest;
  const signal = AbortSignal.timeout(opts.timeoutMs);
  return new Promise((resolve, reject) => {
    const req = send(
      target,
      {
        method: opts.method ?? "GET",
        headers:
          opts.body === undefined ? opts.headers : { ...opts.headers, "content-length": Buffer.byteLength(opts.body) },
        agent: false,
        signal,
        ...(opts.ca ? { ca: opts.ca } : {}),
      },
      (res) => {
        readBody(res, 0, signal).then(
          (body) => resolve({ status: res.statusCode ?? 0, type: String(res.headers["content-type"] ?? ""), body }),
          reject,
        );
      },
    );
    req.on("error", (err) => reject(signal.aborted ? new Error(`no answer within ${opts.timeoutMs} ms`) : err));
    req.end(opts.body);
  });
}
