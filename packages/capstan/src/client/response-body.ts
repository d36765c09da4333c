/**
 * Reading a whole HTTP response body as text, with a limit on how long it may pause: shared by the
 * transport and the one-shot requests.
 */
import type { IncomingMessage } from "node:http";
import { TransportError } from "./transport-error.ts";

/** The whole body as text, failing when it pauses longer than `timeoutMs` (0: no limit) or is aborted. */
export function readBody(res: IncomingMessage, timeoutMs = 0, signal?: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      if (timeoutMs <= 0) return;
      clearTimeout(timer);
      timer = setTimeout(() => {
        res.destroy(new TransportError(`the body paused longer than ${timeoutMs} ms`, "ERR_BODY_TIMEOUT"));
      }, timeoutMs);
    };
    const onAbort = () => res.destroy(signal?.reason instanceof Error ? signal.reason : undefined);
    signal?.addEventListener("abort", onAbort, { once: true });
    arm();
    res.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      arm();
    });
    res.once("end", () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      resolve(Buffer.concat(chunks).toString("utf8"));
    });
    res.once("error", (err) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      reject(err);
    });
    res.once("close", () => {
      // Destroyed without 'end' or 'error' (an abort with no reason): the body is incomplete.
      if (!res.complete) {
        clearTimeout(timer);
        reject(signal?.reason ?? new TransportError("the response body ended early", "ERR_BODY_INCOMPLETE"));
      }
    });
  });
}
