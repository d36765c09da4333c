/**
 * Request-info parsing, as k8s.io/apiserver/pkg/endpoints/request/requestinfo.go does it: from method
 * and URL to verb, API group/version, namespace, resource, subresource and name. Every later stage
 * (authorization in part 2, fault injection, handlers) reads this instead of the raw URL.
 */

import { queryBool } from "./query-params.ts";

export interface RequestInfo {
  /** False for `/version`, `/healthz`, discovery documents and anything else outside a resource. */
  isResourceRequest: boolean;
  path: string;
  /** get, list, watch, create, update, patch, delete, deletecollection; lower-case HTTP method for non-resource URLs. */
  verb: string;
  apiPrefix: string;
  apiGroup: string;
  apiVersion: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
  parts: string[];
}

const METHOD_VERBS: Record<string, string> = {
  POST: "create",
  GET: "get",
  HEAD: "get",
  PUT: "update",
  PATCH: "patch",
  DELETE: "delete",
};

/** Subresources of a namespace object that are not namespaced resources (`/namespaces/x/status`). */
const NAMESPACE_SUBRESOURCES = new Set(["status", "finalize"]);

/** Parses one request. `query` is the URL's search params (for `watch=true`). */
export function parseRequestInfo(method: string, pathname: string, query: URLSearchParams): RequestInfo {
  const info: RequestInfo = {
    isResourceRequest: false,
    path: pathname,
    verb: method.toLowerCase(),
    apiPrefix: "",
    apiGroup: "",
    apiVersion: "",
    namespace: "",
    resource: "",
    subresource: "",
    name: "",
    parts: [],
  };
  let parts = splitPath(pathname);
  if (parts.length < 3 || (parts[0] !== "api" && parts[0] !== "apis")) return info;
  info.apiPrefix = parts[0]!;
  parts = parts.slice(1);
  if (info.apiPrefix === "apis") {
    if (parts.length < 3) return info; // /apis/group/version: discovery
    info.apiGroup = parts[0]!;
    parts = parts.slice(1);
  }
  info.apiVersion = parts[0]!;
  parts = parts.slice(1);
  if (parts.length === 0) return info;

  info.isResourceRequest = true;
  info.verb = METHOD_VERBS[method] ?? method.toLowerCase();
  if (parts[0] === "watch") {
    info.verb = "watch";
    parts = parts.slice(1);
  }
  if (parts[0] === "namespaces") {
    if (parts.length > 1) {
      info.namespace = parts[1]!;
      if (parts.length > 2 && !NAMESPACE_SUBRESOURCES.has(parts[2]!)) parts = parts.slice(2);
    }
  }
  info.parts = parts;
  info.resource = parts[0] ?? "";
  if (parts.length >= 2) info.name = parts[1]!;
  if (parts.length >= 3) info.subresource = parts[2]!;

  if (info.name === "" && info.verb === "get") info.verb = "list";
  if (info.name === "" && info.verb === "delete") info.verb = "deletecollection";
  if (info.verb === "list" && queryBool(query, "watch")) info.verb = "watch";
  return info;
}

/** The path's segments without leading or trailing slashes, percent-decoded (only segments holding a `%`). */
function splitPath(pathname: string): string[] {
  let start = 0;
  let end = pathname.length;
  while (start < end && pathname.charCodeAt(start) === SLASH) start++;
  while (end > start && pathname.charCodeAt(end - 1) === SLASH) end--;
  const parts = pathname.slice(start, end).split("/");
  for (let i = 0; i < parts.length; i++) if (parts[i]!.includes("%")) parts[i] = safeDecode(parts[i]!);
  return parts;
}

const SLASH = 47;

function safeDecode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}
