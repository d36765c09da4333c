/**
 * What an authorization decision is about (k8s.io/apiserver's authorizer.Attributes), the user it is
 * for, and the 403 Forbidden Status the real server answers a denied request with
 * (endpoints/handlers/responsewriters/errors.go: `forbiddenMessage` wrapped by apierrors.NewForbidden).
 */
import { ApiError, failure } from "../machinery/status.ts";
import type { UserInfo } from "../request/pipeline.ts";
import type { RequestInfo } from "../request/request-info.ts";

/** A user as authentication or impersonation leaves it: name, groups, and the optional uid and extras. */
export interface AuthUser extends UserInfo {
  uid?: string;
  extra?: Record<string, string[]>;
}

/** One request (or an access review's hypothetical request) as the authorizer sees it. */
export interface Attributes {
  user: AuthUser;
  verb: string;
  isResourceRequest: boolean;
  /** The URL path, for non-resource requests. */
  path: string;
  apiGroup: string;
  apiVersion: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
}

/** The attributes of an HTTP request, from its parsed request info. */
export function attributesOf(user: AuthUser, info: RequestInfo): Attributes {
  return {
    user,
    verb: info.verb,
    isResourceRequest: info.isResourceRequest,
    path: info.path,
    apiGroup: info.apiGroup,
    apiVersion: info.apiVersion,
    namespace: info.namespace,
    resource: info.resource,
    subresource: info.subresource,
    name: info.name,
  };
}

/** `User "x" cannot create resource "configmaps" in API group "" in the namespace "ns"`, worded as kube-apiserver words it. */
export function forbiddenMessage(attributes: Attributes): string {
  const username = JSON.stringify(attributes.user.username);
  if (!attributes.isResourceRequest) {
    return `User ${username} cannot ${attributes.verb} path ${JSON.stringify(attributes.path)}`;
  }
  const resource =
    attributes.subresource === "" ? attributes.resource : `${attributes.resource}/${attributes.subresource}`;
  const what = `User ${username} cannot ${attributes.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(attributes.apiGroup)}`;
  return attributes.namespace === ""
    ? `${what} at the cluster scope`
    : `${what} in the namespace ${JSON.stringify(attributes.namespace)}`;
}

/** The responsewriters sanitizer: `&`, `<`, `>` escaped so that a message never reads as markup. */
function sanitize(message: string): string {
  return message.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

/**
 * The 403 for a denied request: apierrors.NewForbidden over the resource (plural only, the subresource
 * lives in the message), `reason` appended after a colon when the authorizer gave one.
 */
export function forbiddenError(attributes: Attributes, reason = ""): ApiError {
  const message = sanitize(forbiddenMessage(attributes));
  const why = reason === "" ? message : `${message}: ${reason}`;
  const resource = attributes.isResourceRequest ? attributes.resource : "";
  const group = attributes.isResourceRequest ? attributes.apiGroup : "";
  let text: string;
  if (resource === "" && group === "") text = `forbidden: ${why}`;
  else {
    const qualified = group === "" ? resource : `${resource}.${group}`;
    text =
      attributes.name === ""
        ? `${qualified} is forbidden: ${why}`
        : `${qualified} "${attributes.name}" is forbidden: ${why}`;
  }
  return new ApiError(failure(403, "Forbidden", text, { name: attributes.name, group, kind: resource }));
}
