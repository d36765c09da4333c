/**
 * List continue tokens in the shape kube-apiserver uses (storage/continue.go): base64 of
 * `{"v":"meta.k8s.io/v1","rv":<revision>,"start":"<next key>\u0000"}`. The revision pins the
 * snapshot the following pages are read from; -1 marks an "inconsistent" token (read the latest).
 */
import { badRequest } from "../machinery/status.ts";

export interface ContinueToken {
  rv: number;
  /** The key to resume from (inclusive). */
  start: string;
}

export function encodeContinue(rv: number, lastKey: string): string {
  return Buffer.from(JSON.stringify({ v: "meta.k8s.io/v1", rv, start: `${lastKey}\u0000` })).toString("base64url");
}

export function decodeContinue(token: string): ContinueToken {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
  } catch {
    throw badRequest("continue key is not valid: illegal base64 data at input byte 0");
  }
  const t = parsed as { v?: unknown; rv?: unknown; start?: unknown } | null;
  if (t === null || typeof t !== "object" || t.v !== "meta.k8s.io/v1") {
    throw badRequest("continue key is not valid: server does not recognize this encoded key");
  }
  if (typeof t.rv !== "number" || typeof t.start !== "string" || t.start === "") {
    throw badRequest("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)");
  }
  return { rv: t.rv, start: t.start };
}
