/**
 * etcd's request size limit. kube-apiserver's storage hands etcd every write as one request, and etcd
 * refuses one over its --max-request-bytes (1.5 MiB by default) with "etcdserver: request is too
 * large", an error nothing in the apiserver converts: the client gets a 500 without a reason.
 */
import { ApiError } from "../machinery/status.ts";

/** etcd's default --max-request-bytes. */
export const MAX_REQUEST_BYTES = 1.5 * 1024 * 1024;

/** Throws etcd's error when a write of `data` under `key` would not fit in one etcd request. */
export function checkRequestSize(key: string, data: string): void {
  // A UTF-16 unit is at most 3 UTF-8 bytes: most objects are decided without counting.
  if (data.length * 3 + key.length <= MAX_REQUEST_BYTES) return;
  if (Buffer.byteLength(data, "utf8") + key.length <= MAX_REQUEST_BYTES) return;
  throw new ApiError({
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message: "etcdserver: request is too large",
    code: 500,
  });
}
