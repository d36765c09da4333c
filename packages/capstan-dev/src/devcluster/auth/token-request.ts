/**
 * TokenRequest (`POST /api/v1/namespaces/<ns>/serviceaccounts/<sa>/token`, what `kubectl create token`
 * calls): issues a signed token for an existing ServiceAccount, with the API's defaults (the server's
 * audiences, one hour) and its validation (at least 10 minutes, at most 2^32 seconds).
 */

import type { InProcessApi } from "../in-process-api.ts";
import { ApiError, routeNotAllowed } from "../machinery/status.ts";
import { type RequestContext, writeJson } from "../request/pipeline.ts";
import { refuseCreateInNamespace } from "../rest/namespace-lifecycle.ts";
import { decodeObject, readBody } from "../serializer/body.ts";
import { invalid, invalidStatus } from "../validation/field-errors.ts";
import { DEFAULT_EXPIRATION_SECONDS, type ServiceAccountTokens } from "./service-account-tokens.ts";

/** The shortest lifetime the API accepts (validation.go: "may not specify a duration less than 10 minutes"). */
const MIN_EXPIRATION_SECONDS = 600;
/** The longest (validation.go: "may not specify a duration larger than 2^32 seconds"). */
const MAX_EXPIRATION_SECONDS = 2 ** 32;

const SERVICE_ACCOUNTS = { group: "", version: "v1", plural: "serviceaccounts" };
const SERVICE_ACCOUNTS_GR = { group: "", resource: "serviceaccounts" };

/** True for a TokenRequest (create on serviceaccounts/token). */
export function isTokenRequest(ctx: RequestContext): boolean {
  const { info } = ctx;
  return (
    info.isResourceRequest &&
    info.apiGroup === "" &&
    info.apiVersion === "v1" &&
    info.resource === "serviceaccounts" &&
    info.subresource === "token" &&
    info.parts.length === 3
  );
}

/** Answers a TokenRequest (already authorized: `create` on `serviceaccounts/token`). */
export async function serveTokenRequest(
  ctx: RequestContext,
  api: InProcessApi,
  tokens: ServiceAccountTokens,
): Promise<void> {
  const { namespace, name } = ctx.info;
  if (ctx.info.verb !== "create") {
    throw routeNotAllowed();
  }
  const body = decodeObject(await readBody(ctx.req), ctx.req.headers["content-type"]);
  // Admission (NamespaceLifecycle) comes before the REST create validates or looks the ServiceAccount up.
  refuseCreateInNamespace(api.store.storage, SERVICE_ACCOUNTS_GR, namespace, body, name);
  const spec = (body["spec"] ?? {}) as { audiences?: string[]; expirationSeconds?: number };
  const expirationSeconds = spec.expirationSeconds ?? DEFAULT_EXPIRATION_SECONDS;
  if (!Number.isInteger(expirationSeconds) || expirationSeconds < MIN_EXPIRATION_SECONDS) {
    throw new ApiError(
      invalidStatus("authentication.k8s.io", "TokenRequest", "", [
        invalid("spec.expirationSeconds", expirationSeconds, "may not specify a duration less than 10 minutes"),
      ]),
    );
  }
  if (expirationSeconds > MAX_EXPIRATION_SECONDS) {
    throw new ApiError(
      invalidStatus("authentication.k8s.io", "TokenRequest", "", [
        invalid("spec.expirationSeconds", expirationSeconds, "may not specify a duration larger than 2^32 seconds"),
      ]),
    );
  }
  // Validated before the ServiceAccount is looked up, with no name in the 422 (registry/core/serviceaccount/storage/token.go).
  const sa = api.get(SERVICE_ACCOUNTS, namespace, name);
  const audiences = spec.audiences && spec.audiences.length > 0 ? spec.audiences : tokens.audiences;
  const issued = tokens.issue(
    { namespace, name, uid: String(sa.metadata?.["uid"] ?? "") },
    audiences,
    expirationSeconds,
  );
  const answer = {
    kind: "TokenRequest",
    apiVersion: "authentication.k8s.io/v1",
    metadata: { name, namespace, creationTimestamp: new Date().toISOString().replace(/\.\d{3}Z$/, "Z") },
    spec: { audiences, expirationSeconds, boundObjectRef: null },
    status: {
      token: issued.token,
      expirationTimestamp: new Date(issued.expiresAt * 1000).toISOString().replace(/\.\d{3}Z$/, "Z"),
    },
  };
  writeJson(ctx.res, 201, JSON.stringify(answer));
}
