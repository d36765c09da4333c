/**
 * The "who am I / may I" APIs kubectl leans on: SelfSubjectAccessReview (`kubectl auth can-i`),
 * SelfSubjectRulesReview (`kubectl auth can-i --list`) and SelfSubjectReview (`kubectl auth whoami`).
 * They are create-only virtual resources: nothing is stored, the answer is the object sent back with a
 * `status` filled in from the authorizer, about the requesting (possibly impersonated) user.
 */
import { ApiError, routeNotAllowed } from "../machinery/status.ts";
import type { JsonObject, ServedResource } from "../registry/served-resource.ts";
import { type RequestContext, writeJson } from "../request/pipeline.ts";
import { decodeObject, readBody } from "../serializer/body.ts";
import { invalid, invalidStatus } from "../validation/field-errors.ts";
import { goQuote } from "../validation/go-format.ts";
import { goPrinted, goSharpStruct } from "../validation/go-sharp-v.ts";
import type { Attributes, AuthUser } from "./attributes.ts";
import type { PolicyRule, RbacAuthorizer } from "./rbac-authorizer.ts";

const AUTHORIZATION = "authorization.k8s.io";
const AUTHENTICATION = "authentication.k8s.io";

function virtual(group: string, kind: string, plural: string): ServedResource {
  return {
    group,
    version: "v1",
    kind,
    listKind: `${kind}List`,
    plural,
    singular: kind.toLowerCase(),
    namespaced: false,
    shortNames: [],
    categories: [],
    verbs: ["create"],
    subresources: {},
    generation: "none",
  };
}

/** The review resources, for discovery (they are answered by `serveReview`, never stored). */
export function reviewResources(): ServedResource[] {
  return [
    virtual(AUTHENTICATION, "SelfSubjectReview", "selfsubjectreviews"),
    virtual(AUTHORIZATION, "SelfSubjectAccessReview", "selfsubjectaccessreviews"),
    virtual(AUTHORIZATION, "SelfSubjectRulesReview", "selfsubjectrulesreviews"),
  ];
}

/** True when the request is for one of the review resources (answered here, not by the REST layer). */
export function isReviewRequest(ctx: RequestContext): boolean {
  const { info } = ctx;
  if (!info.isResourceRequest || info.apiVersion !== "v1") return false;
  if (info.apiGroup === AUTHENTICATION) return info.resource === "selfsubjectreviews";
  return (
    info.apiGroup === AUTHORIZATION &&
    (info.resource === "selfsubjectaccessreviews" || info.resource === "selfsubjectrulesreviews")
  );
}

/** What the reviews ask of an authorizer: RBAC's, or AlwaysAllow's when RBAC is off. */
export type ReviewAuthorizer = Pick<RbacAuthorizer, "authorize" | "rulesFor">;

/** Answers a review request (already authorized: `create` on the review resource). */
export async function serveReview(ctx: RequestContext, authorizer: ReviewAuthorizer): Promise<void> {
  const { info } = ctx;
  if (info.verb !== "create" || info.name !== "" || info.namespace !== "") {
    throw routeNotAllowed();
  }
  const body = decodeObject(await readBody(ctx.req), ctx.req.headers["content-type"]);
  const user = ctx.user as AuthUser;
  const spec = (body["spec"] ?? {}) as Record<string, unknown>;
  let status: Record<string, unknown>;
  let kind: string;
  if (info.resource === "selfsubjectreviews") {
    kind = "SelfSubjectReview";
    const userInfo: Record<string, unknown> = { username: user.username };
    if (user.uid) userInfo["uid"] = user.uid;
    userInfo["groups"] = user.groups;
    if (user.extra && Object.keys(user.extra).length > 0) userInfo["extra"] = user.extra;
    status = { userInfo };
  } else if (info.resource === "selfsubjectaccessreviews") {
    kind = "SelfSubjectAccessReview";
    const decision = authorizer.authorize(reviewAttributes(user, spec));
    status = { allowed: decision.allowed };
    if (decision.reason !== "") status["reason"] = decision.reason;
  } else {
    kind = "SelfSubjectRulesReview";
    status = rulesReviewStatus(authorizer, user, typeof spec["namespace"] === "string" ? spec["namespace"] : "");
  }
  const metadata = (body.metadata ?? {}) as Record<string, unknown>;
  const answer: JsonObject = {
    kind,
    apiVersion: `${info.apiGroup}/v1`,
    metadata: { ...metadata, creationTimestamp: metadata["creationTimestamp"] ?? null },
  };
  if (kind !== "SelfSubjectReview") answer["spec"] = spec;
  answer["status"] = status;
  writeJson(ctx.res, 201, JSON.stringify(answer));
}

/** spec.nonResourceAttributes as a 1.32 field error prints it (`%#v` of the internal struct). */
export function nonResourceAttributesValue(attrs: Record<string, unknown>): object {
  const text = (v: unknown) => goQuote(typeof v === "string" ? v : "");
  return goPrinted(
    goSharpStruct("authorization.NonResourceAttributes", [
      ["Path", text(attrs["path"])],
      ["Verb", text(attrs["verb"])],
    ]),
  );
}

/** The attributes a SelfSubjectAccessReview asks about (422 unless exactly one kind of attributes is set). */
function reviewAttributes(user: AuthUser, spec: Record<string, unknown>): Attributes {
  const resource = spec["resourceAttributes"] as Record<string, string | undefined> | undefined;
  const nonResource = spec["nonResourceAttributes"] as Record<string, string | undefined> | undefined;
  if (!resource && !nonResource) {
    throw new ApiError(
      invalidStatus(AUTHORIZATION, "SelfSubjectAccessReview", "", [
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
      invalidStatus(AUTHORIZATION, "SelfSubjectAccessReview", "", [
        invalid(
          "spec.nonResourceAttributes",
          nonResourceAttributesValue(nonResource),
          "cannot be specified in combination with resourceAttributes",
        ),
      ]),
    );
  }
  return attributesOfReview(user, resource, nonResource);
}

type ReviewAttributes = Record<string, string | undefined> | undefined;

/**
 * The authorization attributes an access review asks about (its validated `resourceAttributes` or
 * `nonResourceAttributes`): shared by the self and the delegated (Local)SubjectAccessReviews.
 */
export function attributesOfReview(
  user: AuthUser,
  resource: ReviewAttributes,
  nonResource: ReviewAttributes,
): Attributes {
  if (nonResource) {
    return {
      user,
      verb: nonResource["verb"] ?? "",
      isResourceRequest: false,
      path: nonResource["path"] ?? "",
      apiGroup: "",
      apiVersion: "",
      namespace: "",
      resource: "",
      subresource: "",
      name: "",
    };
  }
  return {
    user,
    verb: resource?.["verb"] ?? "",
    isResourceRequest: true,
    path: "",
    apiGroup: resource?.["group"] ?? "",
    apiVersion: resource?.["version"] ?? "",
    namespace: resource?.["namespace"] ?? "",
    resource: resource?.["resource"] ?? "",
    subresource: resource?.["subresource"] ?? "",
    name: resource?.["name"] ?? "",
  };
}

function rulesReviewStatus(authorizer: ReviewAuthorizer, user: AuthUser, namespace: string): Record<string, unknown> {
  const resolved = authorizer.rulesFor(user, namespace);
  const resourceRules: PolicyRule[] = [];
  const nonResourceRules: PolicyRule[] = [];
  for (const rule of resolved.rules) {
    if ((rule.resources ?? []).length > 0) {
      const out: PolicyRule = { verbs: rule.verbs ?? [], apiGroups: rule.apiGroups ?? [], resources: rule.resources };
      if ((rule.resourceNames ?? []).length > 0) out.resourceNames = rule.resourceNames;
      resourceRules.push(out);
    }
    if ((rule.nonResourceURLs ?? []).length > 0) {
      nonResourceRules.push({ verbs: rule.verbs ?? [], nonResourceURLs: rule.nonResourceURLs });
    }
  }
  const status: Record<string, unknown> = { resourceRules, nonResourceRules, incomplete: false };
  if (resolved.errors.length > 0) status["evaluationError"] = resolved.errors.join(", ");
  return status;
}
