/**
 * Impersonation headers (`Impersonate-User`, `Impersonate-Group`, `Impersonate-Uid`,
 * `Impersonate-Extra-<key>`), as k8s.io/apiserver/pkg/endpoints/filters/impersonation.go handles them:
 * each thing asked for is authorized with the `impersonate` verb for the requesting user, then the
 * request continues as the impersonated user.
 *
 * ## Guarantees
 * - users/groups/serviceaccounts are checked in API group "", uids and userextras (subresource = the
 *   extra's key) in authentication.k8s.io; a ServiceAccount username is checked as the
 *   `serviceaccounts` resource named `<sa>` in its namespace. The first denial answers 403 with the real
 *   message (`users "bob" is forbidden: User "x" cannot impersonate resource "users" in API group "" at
 *   the cluster scope`).
 * - Groups, extras or a uid without `Impersonate-User` are refused before any check (500, as the real
 *   filter answers).
 * - Without `Impersonate-Group`, an impersonated ServiceAccount gets its fixed groups; every
 *   impersonated user except system:anonymous gets `system:authenticated` unless the groups asked for
 *   name system:authenticated or system:unauthenticated.
 */
import { ownValue, setOwn } from "../machinery/own-properties.ts";
import type { RequestContext, Stage } from "../request/pipeline.ts";
import type { AccessRecorder } from "./access-recorder.ts";
import { type Attributes, type AuthUser, forbiddenError } from "./attributes.ts";
import { type RbacAuthorizer, SYSTEM_MASTERS, splitServiceAccountUsername } from "./rbac-authorizer.ts";
import { serviceAccountGroups } from "./service-account-tokens.ts";

const EXTRA_PREFIX = "impersonate-extra-";

interface ImpersonationRequest {
  kind: "User" | "ServiceAccount" | "Group" | "UserExtra" | "Uid";
  namespace: string;
  name: string;
  /** The extra's key (UserExtra). */
  key: string;
}

/** A header's values, one per header line (`headersDistinct`: a group name may hold a comma). */
function values(headers: Distinct, name: string): string[] {
  return (headers[name] ?? []).filter((v) => v !== "");
}

type Distinct = Record<string, string[] | undefined>;

function requestsOf(headers: Distinct): ImpersonationRequest[] | "no-user" {
  const out: ImpersonationRequest[] = [];
  const user = values(headers, "impersonate-user")[0] ?? "";
  if (user !== "") {
    const sa = splitServiceAccountUsername(user);
    if (sa) out.push({ kind: "ServiceAccount", namespace: sa.namespace, name: sa.name, key: "" });
    else out.push({ kind: "User", namespace: "", name: user, key: "" });
  }
  for (const group of values(headers, "impersonate-group"))
    out.push({ kind: "Group", namespace: "", name: group, key: "" });
  for (const header of Object.keys(headers)) {
    if (!header.startsWith(EXTRA_PREFIX)) continue;
    let key = header.slice(EXTRA_PREFIX.length);
    try {
      key = decodeURIComponent(key);
    } catch {
      // A malformed escape is kept as sent, as the real filter records it.
    }
    for (const value of values(headers, header)) out.push({ kind: "UserExtra", namespace: "", name: value, key });
  }
  const uid = values(headers, "impersonate-uid")[0] ?? "";
  if (uid !== "") out.push({ kind: "Uid", namespace: "", name: uid, key: "" });
  if (out.length > 0 && user === "") return "no-user";
  return out;
}

/** "impersonate-": every impersonation header's name starts with it (any case). */
const IMPERSONATE_PREFIX = "impersonate-";

/**
 * Whether any header is an impersonation header, read off the raw name/value list: almost no request
 * has one, and building `headersDistinct` (every header as an array) to find out cost each request.
 */
function hasImpersonationHeader(raw: string[]): boolean {
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    // 105 = "i"; `| 32` lower-cases an ASCII letter.
    if (name.length > IMPERSONATE_PREFIX.length && (name.charCodeAt(0) | 32) === 105) {
      if (name.slice(0, IMPERSONATE_PREFIX.length).toLowerCase() === IMPERSONATE_PREFIX) return true;
    }
  }
  return false;
}

/** The impersonation stage: runs after authentication, before authorization. */
export function impersonationStage(authorizer: RbacAuthorizer, recorder?: AccessRecorder): Stage {
  // Not async: a request without impersonation headers goes straight on (no promise of its own).
  return (ctx, next) =>
    hasImpersonationHeader(ctx.req.rawHeaders) ? impersonate(ctx, next, authorizer, recorder) : next();
}

/** Authorizes every impersonation the headers ask for, then continues as the impersonated user. */
async function impersonate(
  ctx: RequestContext,
  next: () => Promise<void>,
  authorizer: RbacAuthorizer,
  recorder: AccessRecorder | undefined,
): Promise<void> {
  const requests = requestsOf(ctx.req.headersDistinct);
  if (requests === "no-user") {
    const body = `Internal Server Error: ${JSON.stringify(ctx.req.url ?? "")}: requested impersonation of groups, extras or a uid without impersonating a user\n`;
    ctx.res.writeHead(500, { "Content-Type": "text/plain; charset=utf-8", "X-Content-Type-Options": "nosniff" });
    ctx.res.end(body);
    return;
  }
  if (requests.length === 0 || !ctx.user) return next();
  const requestor = ctx.user as AuthUser;
  const groupsSpecified = requests.some((r) => r.kind === "Group");
  let username = "";
  let uid: string | undefined;
  let groups: string[] = [];
  const extra: Record<string, string[]> = {};
  for (const request of requests) {
    const attributes: Attributes = {
      user: requestor,
      verb: "impersonate",
      isResourceRequest: true,
      path: "",
      apiGroup: "",
      apiVersion: "",
      namespace: request.namespace,
      resource: "",
      subresource: "",
      name: request.name,
    };
    switch (request.kind) {
      case "ServiceAccount":
        attributes.resource = "serviceaccounts";
        username = `system:serviceaccount:${request.namespace}:${request.name}`;
        if (!groupsSpecified) groups = serviceAccountGroups(request.namespace).slice(0, 2);
        break;
      case "User":
        attributes.resource = "users";
        username = request.name;
        break;
      case "Group":
        attributes.resource = "groups";
        groups.push(request.name);
        break;
      case "UserExtra":
        attributes.apiGroup = "authentication.k8s.io";
        attributes.resource = "userextras";
        attributes.subresource = request.key;
        // The key is the header's: `constructor` or `__proto__` is an extra like any other.
        setOwn(extra, request.key, [...(ownValue(extra, request.key) ?? []), request.name]);
        break;
      case "Uid":
        attributes.apiGroup = "authentication.k8s.io";
        attributes.resource = "uids";
        uid = request.name;
        break;
    }
    const decision = authorizer.authorize(attributes);
    if (!requestor.groups.includes(SYSTEM_MASTERS)) recorder?.record(attributes, decision.allowed);
    if (!decision.allowed) throw forbiddenError(attributes, decision.reason);
  }
  if (username !== "system:anonymous") {
    if (!groups.some((g) => g === "system:authenticated" || g === "system:unauthenticated")) {
      groups.push("system:authenticated");
    }
  } else if (!groups.includes("system:unauthenticated")) {
    groups.push("system:unauthenticated");
  }
  const impersonated: AuthUser = { username, groups, extra };
  if (uid !== undefined) impersonated.uid = uid;
  ctx.user = impersonated;
  return next();
}
