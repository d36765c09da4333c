/**
 * The authorizer of a server started without RBAC: kube-apiserver's `--authorization-mode=AlwaysAllow`.
 * Every request is allowed, and the self-review APIs still answer, as they do on such a server:
 * `kubectl auth can-i` says yes, `kubectl auth can-i --list` lists `*` on everything, `kubectl auth
 * whoami` names the token's user. Without them kubectl would print a 404 for commands that work against
 * every real cluster.
 */
import type { ResourceRegistry } from "../registry/registry.ts";
import type { Stage } from "../request/pipeline.ts";
import { isReviewRequest, type ReviewAuthorizer, reviewResources, serveReview } from "./access-reviews.ts";

/** AlwaysAllow's answers (k8s.io/apiserver authorizerfactory): allowed with no reason; `*` rules. */
export const ALWAYS_ALLOW: ReviewAuthorizer = {
  authorize: () => ({ allowed: true, reason: "" }),
  rulesFor: () => ({
    rules: [
      { verbs: ["*"], apiGroups: ["*"], resources: ["*"] },
      { verbs: ["*"], nonResourceURLs: ["*"] },
    ],
    errors: [],
  }),
};

/** Serves the self-review resources (discovery and requests) on a server without RBAC. */
export function installAlwaysAllowReviews(deps: { registry: ResourceRegistry; stages: Stage[] }): void {
  for (const served of reviewResources()) deps.registry.add(served);
  const stage: Stage = (ctx, next) => (isReviewRequest(ctx) ? serveReview(ctx, ALWAYS_ALLOW) : next());
  // Before the handler, which would otherwise answer for the (never stored) review resources.
  deps.stages.splice(deps.stages.length - 1, 0, stage);
}
