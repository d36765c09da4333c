/**
 * The reviews other components ask the API server to make for them (delegated authentication and
 * authorization, as controller-runtime's protected metrics endpoint and kube-rbac-proxy use them):
 * TokenReview (`authentication.k8s.io/v1`), SubjectAccessReview and LocalSubjectAccessReview
 * (`authorization.k8s.io/v1`). Create-only, nothing stored; the caller needs `create` on them
 * (the bootstrap `system:auth-delegator` ClusterRole grants both).
 */
import { ApiError, badRequest, routeNotAllowed } from "../machinery/status.ts";
import type { JsonObject, ServedResource } from "../registry/served-resource.ts";
import type { TokenAuthenticator } from "../request/authentication.ts";
import { type RequestContext, writeJson } from "../request/pipeline.ts";
import { decodeObject, readBody } from "../serializer/body.ts";
import { invalid, invalidStatus } from "../validation/field-errors.ts";
import { attributesOfReview, nonResourceAttributesValue } from "./access-reviews.ts";
import type { Attributes, AuthUser } from "./attributes.ts";
import type { RbacAuthorizer } from "./rbac-authorizer.ts";

const AUTHORIZATION = "authorization.k8s.io";
const AUTHENTICATION = "authentication.k8s.io";

function virtual(group: string, kind: string, plural: string, namespaced: boolean): ServedResource {
  return {
    group,
    version: "v1",
    kind,
    listKind: `${kind}List`,
    plural,
    singular: kind.toLowerCase(),
    namespaced,
    shortNames: [],
    categories: [],
    verbs: ["create"],
    subresources: {},
    generation: "none",
  };
}

/** The delegated review resources, for discovery. */
export function delegatedReviewResources(): ServedResource[] {
  return [
    virtual(AUTHENTICATION, "TokenReview", "tokenreviews", false),
    virtual(AUTHORIZATION, "LocalSubjectAccessReview", "localsubjectaccessreviews", true),
    virtual(AUTHORIZATION, "SubjectAccessReview", "subjectaccessreviews", false),
  ];
}

/** True for a request to one of them. */
export function isDelegatedReviewRequest(ctx: RequestContext): boolean {
  const { info } = ctx;
  if (!info.isResourceRequest || info.apiVersion !== "v1" || info.subresource !== "") return false;
  if (info.apiGroup === AUTHENTICATION) return info.resource === "tokenreviews";
  return (
    info.apiGroup === AUTHORIZATION &&
    (info.resource === "subjectaccessreviews" || info.resource === "localsubjectaccessreviews")
  );
}

/** Answers a delegated review (already authorized: `create` on it). */
export async function serveDelegatedReview(
  ctx: RequestContext,
  authenticator: TokenAuthenticator,
  authorizer: RbacAuthorizer,
): Promise<void> {
  const { info } = ctx;
  if (info.verb !== "create" || info.name !== "") {
    throw routeNotAllowed();
  }
  const body = decodeObject(await readBody(ctx.req), ctx.req.headers["content-type"]);
  const spec = (body["spec"] ?? {}) as Record<string, unknown>;
  let kind: string;
  let status: Record<string, unknown>;
  if (info.resource === "tokenreviews") {
    kind = "TokenReview";
    const token = typeof spec["token"] === "string" ? spec["token"] : "";
    const user = token === "" ? undefined : (authenticator.authenticate(token) as AuthUser | undefined);
    if (user) {
      const described: Record<string, unknown> = { username: user.username };
      if (user.uid) described["uid"] = user.uid;
      described["groups"] = user.groups;
      if (user.extra && Object.keys(user.extra).length > 0) described["extra"] = user.extra;
      status = { authenticated: true, user: described };
      if (Array.isArray(spec["audiences"])) status["audiences"] = spec["audiences"];
    } else {
      status = { user: {}, error: "invalid bearer token" };
    }
  } else {
    kind = info.resource === "subjectaccessreviews" ? "SubjectAccessReview" : "LocalSubjectAccessReview";
    const attributes = subjectAttributes(kind, spec, info.namespace);
    const decision = authorizer.authorize(attributes);
    status = { allowed: decision.allowed };
    if (decision.reason !== "") status["reason"] = decision.reason;
  }
  const metadata = (body.metadata ?? {}) as Record<string, unknown>;
  const answer: JsonObject = {
    kind,
    apiVersion: `${info.apiGroup}/v1`,
    metadata: { ...metadata, creationTimestamp: metadata["creationTimestamp"] ?? null },
    spec,
    status,
  };
  writeJson(ctx.res, 201, JSON.stringify(answer));
}

/** The attributes a (Local)SubjectAccessReview asks about, for the user it names (422 when malformed). */
function subjectAttributes(kind: string, spec: Record<string, unknown>, namespace: string): Attributes {
  const resource = spec["resourceAttributes"] as Record<string, string | undefined> | undefined;
  const nonResource = spec["nonResourceAttributes"] as Record<string, string | undefined> | undefined;
  const username = typeof spec["user"] === "string" ? spec["user"] : "";
  const groups = Array.isArray(spec["groups"]) ? (spec["groups"] as string[]) : [];
  if (!resource && !nonResource) {
    throw new ApiError(
      invalidStatus(AUTHORIZATION, kind, "", [
        // ValidateSubjectAccessReviewSpec reports the nil spec.nonResourceAttributes (1.32 prints it "null").
        invalid(
          "spec.resourceAttributes",
          null,
          "exactly one of nonResourceAttributes or resourceAttributes must be specified",
        ),
      ]),
    );
  }
  if (resource && nonResource) {
    throw new ApiError(
      invalidStatus(AUTHORIZATION, kind, "", [
        invalid(
          "spec.nonResourceAttributes",
          nonResourceAttributesValue(nonResource),
          "cannot be specified in combination with resourceAttributes",
        ),
      ]),
    );
  }
  if (username === "" && groups.length === 0) {
    throw new ApiError(
      invalidStatus(AUTHORIZATION, kind, "", [
        invalid("spec.user", username, "at least one of user or group must be specified"),
      ]),
    );
  }
  if (kind === "LocalSubjectAccessReview") {
    if (!resource) throw badRequest("nonResourceAttributes are not allowed in a LocalSubjectAccessReview");
    if ((resource["namespace"] ?? "") !== namespace) {
      throw new ApiError(
        invalidStatus(AUTHORIZATION, kind, "", [
          invalid("spec.resourceAttributes.namespace", resource["namespace"] ?? "", "must match metadata.namespace"),
        ]),
      );
    }
  }
  const user: AuthUser = { username, groups };
  if (typeof spec["uid"] === "string") user.uid = spec["uid"];
  return attributesOfReview(user, resource, nonResource);
}
