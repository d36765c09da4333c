/**
 * Reading an admission webhook's answer and turning it into what the API server answers its own
 * client, as k8s.io/apiserver does (pkg/admission/plugin/webhook/request/admissionreview.go's
 * VerifyAdmissionResponse, errors/statuserror.go's ToStatusErr, util/webhook's ErrCallingWebhook):
 *
 * - {@link verifyAdmissionResponse}: an `admission.k8s.io/v1` answer must carry the request's uid,
 *   be a v1 AdmissionReview, and keep patch and patchType together (mutating) or send neither
 *   (validating); a `v1beta1` answer is checked for a response only, and a patch in it is a JSON
 *   Patch. A broken answer is a call failure (the webhook's failurePolicy then decides).
 * - {@link rejection}: a denial becomes the webhook's Status with its message prefixed by
 *   `admission webhook "<name>" denied the request` (at least 400, never Success).
 * - {@link callFailure}: a webhook that could not be called, or answered nonsense, fails the request
 *   (failurePolicy Fail) with an internal error naming it: `failed calling webhook "<name>": ...`.
 */
import type { Status } from "kubernetes-types/meta/v1.d.ts";
import { ApiError, internalError } from "../machinery/status.ts";

/** The fields of a webhook's answer the API server uses. */
export interface VerifiedResponse {
  allowed: boolean;
  /** The decoded JSON Patch bytes (mutating only). */
  patch?: Buffer;
  patchType?: "JSONPatch";
  result?: Status;
  warnings: string[];
  auditAnnotations: Record<string, string>;
}

/** An answer the API server cannot use (reported as `received invalid webhook response: ...`). */
export class InvalidWebhookResponse extends Error {
  override name = "InvalidWebhookResponse";
}

const V1 = "admission.k8s.io/v1";
const V1BETA1 = "admission.k8s.io/v1beta1";

/**
 * Checks the answer `review` (parsed JSON) to a request of `version` with `uid`; throws
 * {@link InvalidWebhookResponse} with kube-apiserver's message when it cannot be used.
 */
export function verifyAdmissionResponse(
  version: typeof V1 | typeof V1BETA1,
  uid: string,
  mutating: boolean,
  review: unknown,
): VerifiedResponse {
  const body = isObject(review) ? review : {};
  const response = body.response;
  if (!isObject(response)) throw new InvalidWebhookResponse("webhook response was absent");
  const common = {
    allowed: response.allowed === true,
    ...(isObject(response.status) ? { result: response.status as Status } : {}),
    warnings: Array.isArray(response.warnings)
      ? response.warnings.filter((w): w is string => typeof w === "string")
      : [],
    auditAnnotations: isObject(response.auditAnnotations) ? (response.auditAnnotations as Record<string, string>) : {},
  };
  const patch =
    typeof response.patch === "string" && response.patch !== "" ? Buffer.from(response.patch, "base64") : undefined;
  if (version === V1BETA1) {
    // v1beta1 answers were never checked further; a patch in one is a JSON Patch.
    return mutating && patch !== undefined && patch.length > 0 ? { ...common, patch, patchType: "JSONPatch" } : common;
  }
  if (response.uid !== uid) {
    throw new InvalidWebhookResponse(
      `expected response.uid=${goQuote(uid)}, got ${goQuote(String(response.uid ?? ""))}`,
    );
  }
  if (body.apiVersion !== V1 || body.kind !== "AdmissionReview") {
    throw new InvalidWebhookResponse(
      `expected webhook response of ${V1}, Kind=AdmissionReview, got ${gvkString(body.apiVersion, body.kind)}`,
    );
  }
  const hasPatch = patch !== undefined && patch.length > 0;
  const patchType = response.patchType;
  if (!mutating) {
    if (hasPatch) throw new InvalidWebhookResponse("validating webhook may not return response.patch");
    if (patchType !== undefined && patchType !== null) {
      throw new InvalidWebhookResponse("validating webhook may not return response.patchType");
    }
    return common;
  }
  const typed = patchType !== undefined && patchType !== null;
  if (hasPatch && !typed)
    throw new InvalidWebhookResponse("webhook returned response.patch but not response.patchType");
  if (!hasPatch && typed)
    throw new InvalidWebhookResponse("webhook returned response.patchType but not response.patch");
  if (!typed) return common;
  if (patchType !== "JSONPatch") {
    // kube-apiserver takes only JSONPatch; an empty one is refused here, any other when applying.
    throw new InvalidWebhookResponse(`webhook returned invalid response.patchType of ${goQuote(String(patchType))}`);
  }
  return { ...common, patch, patchType: "JSONPatch" };
}

/** The error a denial by webhook `name` answers (ToStatusErr). */
export function rejection(name: string, result: Status | undefined): ApiError {
  const deniedBy = `admission webhook ${goQuote(name)} denied the request`;
  const status: Status = { ...(result ?? {}), kind: "Status", apiVersion: "v1", metadata: result?.metadata ?? {} };
  if (status.code === undefined || status.code < 400) status.code = 400;
  if (status.status === undefined || status.status === "" || status.status === "Success") status.status = "Failure";
  if (result?.message) status.message = `${deniedBy}: ${result.message}`;
  else if (result?.reason) status.message = `${deniedBy}: ${result.reason}`;
  else status.message = `${deniedBy} without explanation`;
  return new ApiError(status);
}

/** The error of a webhook that could not be called or answered nonsense, under failurePolicy Fail. */
export function callFailure(name: string, reason: string): ApiError {
  return internalError(new Error(`failed calling webhook ${goQuote(name)}: ${reason}`));
}

/** Go's %q of a plain string. */
function goQuote(s: string): string {
  return JSON.stringify(s);
}

/** schema.GroupVersionKind.String() of a body's apiVersion and kind: `group/version, Kind=kind`. */
function gvkString(apiVersion: unknown, kind: unknown): string {
  const av = typeof apiVersion === "string" ? apiVersion : "";
  const slash = av.indexOf("/");
  const [group, version] = slash < 0 ? ["", av] : [av.slice(0, slash), av.slice(slash + 1)];
  return `${group}/${version}, Kind=${typeof kind === "string" ? kind : ""}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
