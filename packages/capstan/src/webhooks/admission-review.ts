/**
 * The AdmissionReview the API server sends to an admission webhook and the answer it expects
 * (admission.k8s.io/v1, and v1beta1, which has the same shape), as k8s.io/api/admission/v1 defines
 * them; decoding checks what the server always sends, so a malformed body is a clear 400, not a
 * crash deep in a handler.
 */
import type { KubeObject } from "../client/types.ts";

/** The versions of AdmissionReview a webhook answers; the answer uses the request's. */
export const ADMISSION_REVIEW_VERSIONS = ["admission.k8s.io/v1", "admission.k8s.io/v1beta1"] as const;

/** The operation being admitted. */
export type AdmissionOperation = "CREATE" | "UPDATE" | "DELETE" | "CONNECT";

/** Who sent the request being admitted (authentication.k8s.io/v1 UserInfo). */
export interface AdmissionUserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** `request` of an AdmissionReview. */
export interface AdmissionRequest {
  /** Identifies this call; echoed in the answer. */
  uid: string;
  kind: { group: string; version: string; kind: string };
  resource: { group: string; version: string; resource: string };
  subResource?: string;
  /** The kind and resource the client asked for, when the server converted them (matchPolicy Equivalent). */
  requestKind?: { group: string; version: string; kind: string };
  requestResource?: { group: string; version: string; resource: string };
  requestSubResource?: string;
  /** Empty on a CREATE whose name the server generates. */
  name?: string;
  namespace?: string;
  operation: AdmissionOperation;
  userInfo: AdmissionUserInfo;
  /** The object as it would be stored (CREATE, UPDATE); absent for DELETE. */
  object?: KubeObject;
  /** The stored object (UPDATE, DELETE). */
  oldObject?: KubeObject;
  dryRun?: boolean;
  /** The operation's options (CreateOptions, UpdateOptions, DeleteOptions). */
  options?: Record<string, unknown>;
}

/** A metav1.Status as an admission answer carries it. */
export interface AdmissionStatus {
  code?: number;
  message?: string;
  reason?: string;
}

/** `response` of an AdmissionReview. */
export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: AdmissionStatus;
  /** Base64 of a JSON Patch (mutating webhooks only). */
  patch?: string;
  patchType?: "JSONPatch";
  warnings?: string[];
  auditAnnotations?: Record<string, string>;
}

/** A decoded request and the version to answer in. */
export interface DecodedReview {
  apiVersion: (typeof ADMISSION_REVIEW_VERSIONS)[number];
  request: AdmissionRequest;
}

/** A body that is not an AdmissionReview this webhook can answer (HTTP 400). */
export class AdmissionReviewError extends Error {
  override name = "AdmissionReviewError";
}

const OPERATIONS = new Set<string>(["CREATE", "UPDATE", "DELETE", "CONNECT"]);

/** Decodes a request body; throws {@link AdmissionReviewError} saying what is wrong. */
export function decodeAdmissionReview(body: string): DecodedReview {
  let review: unknown;
  try {
    review = JSON.parse(body);
  } catch (err) {
    throw new AdmissionReviewError(`the body is not JSON: ${(err as Error).message}`);
  }
  if (!isObject(review)) throw new AdmissionReviewError("the body is not a JSON object");
  const apiVersion = review.apiVersion;
  if (review.kind !== "AdmissionReview" || !ADMISSION_REVIEW_VERSIONS.some((v) => v === apiVersion)) {
    throw new AdmissionReviewError(
      `expected an AdmissionReview of ${ADMISSION_REVIEW_VERSIONS.join(" or ")}, got kind ${JSON.stringify(review.kind)} of ${JSON.stringify(apiVersion)}`,
    );
  }
  const request = review.request;
  if (!isObject(request)) throw new AdmissionReviewError("the AdmissionReview has no request");
  if (typeof request.uid !== "string" || request.uid === "") throw new AdmissionReviewError("request.uid is missing");
  if (typeof request.operation !== "string" || !OPERATIONS.has(request.operation)) {
    throw new AdmissionReviewError(
      `request.operation ${JSON.stringify(request.operation)} is not one of CREATE, UPDATE, DELETE, CONNECT`,
    );
  }
  if (!isObject(request.kind) || typeof request.kind.kind !== "string") {
    throw new AdmissionReviewError("request.kind is missing");
  }
  if (!isObject(request.resource) || typeof request.resource.resource !== "string") {
    throw new AdmissionReviewError("request.resource is missing");
  }
  for (const field of ["object", "oldObject"] as const) {
    const value = request[field];
    if (value !== undefined && value !== null && !isObject(value)) {
      throw new AdmissionReviewError(`request.${field} is not an object`);
    }
  }
  const decoded = {
    ...request,
    userInfo: isObject(request.userInfo) ? request.userInfo : {},
  } as unknown as AdmissionRequest;
  // The server sends null for the object it does not have (DELETE's object, CREATE's oldObject).
  if (request.object === null) delete decoded.object;
  if (request.oldObject === null) delete decoded.oldObject;
  return { apiVersion: apiVersion as DecodedReview["apiVersion"], request: decoded };
}

/** The answer's body: an AdmissionReview of the request's version carrying `response`. */
export function encodeAdmissionReview(apiVersion: DecodedReview["apiVersion"], response: AdmissionResponse): string {
  return JSON.stringify({ apiVersion, kind: "AdmissionReview", response });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
