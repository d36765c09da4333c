/**
 * Go's `http.NotFound`: the plain-text 404 kube-apiserver answers for a path no API group serves (the
 * last handler of its delegation chain, apiserver's util/notfoundhandler). Paths inside a served group
 * version get a JSON NotFound Status from that group's handler instead (machinery/status.ts).
 */
import type { ServerResponse } from "node:http";

/** Thrown by a handler that finds no one serving the path; the pipeline answers it as {@link writePageNotFound}. */
export class PageNotFound extends Error {
  constructor() {
    super("404 page not found");
  }
}

export function pageNotFound(): PageNotFound {
  return new PageNotFound();
}

export function writePageNotFound(res: ServerResponse): void {
  const body = "404 page not found\n";
  res.writeHead(404, {
    "Content-Type": "text/plain; charset=utf-8",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-cache, private",
    "Content-Length": Buffer.byteLength(body),
  });
  res.end(body);
}
