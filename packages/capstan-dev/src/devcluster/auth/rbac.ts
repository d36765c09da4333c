/**
 * RBAC, on in every server (`rbac: false` is the explicit AlwaysAllow of tests of the bare REST layer):
 * the devcluster authorizes like kube-apiserver with `--authorization-mode=RBAC`.
 *
 * ## Expected flow
 * `installRbac()` runs at start-up, before the listener opens: it creates the bootstrap policy, serves
 * the review resources in discovery, teaches the token authenticator ServiceAccount JWTs, and inserts
 * three stages before the handler: impersonation -> authorization -> the auth APIs (TokenRequest and the
 * self-subject reviews, answered without reaching the REST layer).
 *
 * ## Guarantees
 * - Every request but those of system:masters (the admin token) is authorized by RBAC, discovery and
 *   health checks included; a denial is the real 403 Status, before the body is read. A request with
 *   no token is system:anonymous in system:unauthenticated (the bootstrap system:public-info-viewer
 *   lets it read /healthz, /livez, /readyz and /version; anything else is 403); a bad token is 401.
 * - Watches are authorized as `watch`, lists as `list` (request-info.ts derives the verb).
 * - Every decision of the two stages (not of the access reviews, which ask about hypothetical
 *   requests) is recorded per user in `access` (access-recorder.ts): what least privilege is made of.
 * - In-process callers (plugins, controllers, `server.internals.api`) are not authorized: they are the
 *   cluster's own components.
 * - Writes of Roles and bindings are checked for escalation (escalation.ts): granting rules one does
 *   not hold needs `escalate` (roles) or `bind` (the referenced role).
 */
import { createHmac } from "node:crypto";
import type { InProcessApi } from "../in-process-api.ts";
import type { ResourceRegistry } from "../registry/registry.ts";
import type { TokenAuthenticator } from "../request/authentication.ts";
import type { RequestContext, Stage } from "../request/pipeline.ts";
import { AccessRecorder } from "./access-recorder.ts";
import { isReviewRequest, reviewResources, serveReview } from "./access-reviews.ts";
import { type AuthUser, attributesOf, forbiddenError } from "./attributes.ts";
import { ensureBootstrapPolicy } from "./bootstrap-policy.ts";
import { delegatedReviewResources, isDelegatedReviewRequest, serveDelegatedReview } from "./delegated-reviews.ts";
import { escalationValidator, isRbacWrite, requestUser } from "./escalation.ts";
import { impersonationStage } from "./impersonation.ts";
import { RbacAuthorizer, SYSTEM_MASTERS } from "./rbac-authorizer.ts";
import { ServiceAccountTokens } from "./service-account-tokens.ts";
import { isTokenRequest, serveTokenRequest } from "./token-request.ts";

export interface RbacDeps {
  api: InProcessApi;
  registry: ResourceRegistry;
  authenticator: TokenAuthenticator;
  /** The server's pipeline stages; the last one is the handler. */
  stages: Stage[];
  /**
   * The admin token, the secret ServiceAccount tokens are signed with a key derived from: a server
   * restarted with the same token (`--data-dir` keeps it) still accepts the tokens it issued.
   */
  adminToken: string;
}

export interface Rbac {
  authorizer: RbacAuthorizer;
  tokens: ServiceAccountTokens;
  /** What each user was allowed and denied (access-recorder.ts). */
  access: AccessRecorder;
}

/** Installs RBAC in a server being started. */
export async function installRbac(deps: RbacDeps): Promise<Rbac> {
  const authorizer = new RbacAuthorizer(deps.api);
  const tokens = new ServiceAccountTokens(deps.api, signingKeyFrom(deps.adminToken));
  const access = new AccessRecorder();
  await ensureBootstrapPolicy(deps.api);
  for (const served of [...reviewResources(), ...delegatedReviewResources()]) deps.registry.add(served);
  deps.api.store.validators.push(escalationValidator(authorizer));
  deps.authenticator.verifiers.push((token) => tokens.authenticate(token));
  // As kube-apiserver with RBAC: no token means system:anonymous, which RBAC then answers (403, not 401).
  deps.authenticator.anonymous = true;
  deps.stages.splice(
    deps.stages.length - 1,
    0,
    impersonationStage(authorizer, access),
    authorizationStage(authorizer, deps.api, access),
    authApisStage(deps, tokens, authorizer),
  );
  return { authorizer, tokens, access };
}

/**
 * The ServiceAccount token signing key: HMAC-SHA256 of a fixed label under the admin token. Whoever
 * holds the admin token is cluster admin anyway, so deriving from it gives away nothing, and the key
 * lives as long as the token does.
 */
function signingKeyFrom(adminToken: string): Buffer {
  return createHmac("sha256", adminToken).update("capstan serviceaccount token signing key").digest();
}

/**
 * Answers 403 unless the authorizer allows the request. A server-side apply that would create its
 * object also needs `create` on it, as kube-apiserver's patch handler checks (patch.go's
 * `createAuthorizerAttributes`): an operator granted only `patch` cannot create by applying.
 */
export function authorizationStage(authorizer: RbacAuthorizer, api?: InProcessApi, recorder?: AccessRecorder): Stage {
  // Not async: runFrom turns a synchronous throw into the rejection an async frame would be.
  return (ctx, next) => {
    const user = (ctx.user ?? NO_USER) as AuthUser;
    // system:masters may do anything, as kube-apiserver's privileged-group authorizer (ahead of RBAC)
    // decides: nothing to look up, and the checks below would allow it too (it may create, and
    // escalation.ts exempts it). The admin token's every request takes this path.
    if (user.groups.includes(SYSTEM_MASTERS)) return next();
    const attributes = attributesOf(user, ctx.info);
    const decision = authorizer.authorize(attributes);
    recorder?.record(attributes, decision.allowed);
    if (!decision.allowed) throw forbiddenError(attributes, decision.reason);
    if (api !== undefined && isApplyCreating(ctx, api)) {
      // Denied as any request is (update.go's withAuthorization: ForbiddenStatusError).
      const create = { ...attributes, verb: "create" };
      const decision = authorizer.authorize(create);
      recorder?.record(create, decision.allowed);
      if (!decision.allowed) throw forbiddenError(create, decision.reason);
    }
    // RBAC writes carry their user down to the escalation check in the object store.
    if (isRbacWrite(ctx.info)) return requestUser.run(attributes.user, next);
    return next();
  };
}

/** A server-side apply (not a dry run's concern: it is authorized alike) to an object that does not exist. */
function isApplyCreating(ctx: RequestContext, api: InProcessApi): boolean {
  const { info } = ctx;
  if (info.verb !== "patch" || info.subresource !== "") return false;
  const type = ctx.req.headers["content-type"]?.split(";")[0]?.trim().toLowerCase();
  if (type !== "application/apply-patch+yaml") return false;
  const ref = { group: info.apiGroup, version: info.apiVersion, plural: info.resource };
  // Not served: the handler answers 404, as the real server does after authorizing the patch.
  if (api.registry.get(ref.group, ref.version, ref.plural) === undefined) return false;
  return api.tryGet(ref, info.namespace, info.name) === undefined;
}

/** A request the authentication stage left without a user (none reaches here over HTTP). */
const NO_USER: AuthUser = { username: "", groups: [] };

function authApisStage(deps: RbacDeps, tokens: ServiceAccountTokens, authorizer: RbacAuthorizer): Stage {
  return (ctx, next) => {
    if (!ctx.info.isResourceRequest) return next();
    if (isTokenRequest(ctx)) return serveTokenRequest(ctx, deps.api, tokens);
    if (isReviewRequest(ctx)) return serveReview(ctx, authorizer);
    if (isDelegatedReviewRequest(ctx)) return serveDelegatedReview(ctx, deps.authenticator, authorizer);
    return next();
  };
}
