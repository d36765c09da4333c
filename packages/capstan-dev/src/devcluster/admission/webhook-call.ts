/**
 * Calling one admission webhook as kube-apiserver does: the AdmissionReview it sends
 * (request/admissionreview.go's CreateV1AdmissionReview), the HTTPS POST to the webhook's URL with
 * its CA bundle and `?timeout=` (the REST client's r.Timeout), and the answer verified
 * (webhook-response.ts). A call that fails says why in Go's words where they are known, so the
 * message a client sees reads as it does on a cluster.
 *
 * Guarantees: the call ends within the webhook's timeout (default 10 s, kube-apiserver's); the
 * answer's body is read up to a limit; every failure is an {@link WebhookCallError} (the caller
 * applies failurePolicy), never an exception of another type.
 *
 * The HTTPS call itself is webhook-client/webhook-post.ts's.
 *
 * Caveats: only `clientConfig.url` is called; a `service` reference would need the cluster's
 * Service network, which the embedded server does not have (such a webhook fails to be called).
 */
import { randomUUID } from "node:crypto";
import { decodeWebhookAnswer, UndecodableAnswer } from "../webhook-client/webhook-answer.ts";
import { postToWebhook, type WebhookAgents, WebhookPostError } from "../webhook-client/webhook-post.ts";
import { type VerifiedResponse, verifyAdmissionResponse } from "./webhook-response.ts";

/** kube-apiserver's default `timeoutSeconds`. */
export const DEFAULT_WEBHOOK_TIMEOUT_SECONDS = 10;

/** What is admitted: the attributes of one request. */
export interface AdmissionAttributes {
  /** The kind and resource the webhook is called for (its rules matched them), the objects' version. */
  kind: { group: string; version: string; kind: string };
  resource: { group: string; version: string; resource: string };
  subResource: string;
  /** What the client addressed, when it differs from `kind`/`resource`/`subResource` (matchPolicy Equivalent). */
  requestKind?: { group: string; version: string; kind: string };
  requestResource?: { group: string; version: string; resource: string };
  requestSubResource?: string;
  name: string;
  namespace: string;
  operation: "CREATE" | "UPDATE" | "DELETE" | "CONNECT";
  userInfo: { username: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  object: Record<string, unknown> | null;
  oldObject: Record<string, unknown> | null;
  dryRun: boolean;
  /** CreateOptions, UpdateOptions or DeleteOptions, with their apiVersion and kind. */
  options: Record<string, unknown> | null;
}

/** The parts of a webhook (admissionregistration/v1) a call needs. */
export interface CalledWebhook {
  name: string;
  clientConfig: { url?: string; caBundle?: string; service?: { name: string; namespace: string; path?: string } };
  timeoutSeconds?: number;
  admissionReviewVersions?: readonly string[];
}

/** A webhook that could not be called, or answered nothing usable; `reason` is Go's wording. */
export class WebhookCallError extends Error {
  override name = "WebhookCallError";
}

/** The AdmissionReview request body for `attrs` (v1 or v1beta1: the same fields). */
export function admissionReviewRequest(version: string, uid: string, attrs: AdmissionAttributes): object {
  return {
    kind: "AdmissionReview",
    apiVersion: version,
    request: {
      uid,
      ...admissionRequestFields(attrs),
      object: attrs.object,
      oldObject: attrs.oldObject,
      dryRun: attrs.dryRun,
      options: attrs.options,
    },
  };
}

/**
 * The AdmissionRequest's fields that say what is admitted and by whom (no uid, objects or options),
 * as both the review sent to a webhook and CEL's `request` (admission-cel.ts) carry them.
 */
export function admissionRequestFields(attrs: AdmissionAttributes): Record<string, unknown> {
  return {
    kind: attrs.kind,
    resource: attrs.resource,
    ...(attrs.subResource ? { subResource: attrs.subResource } : {}),
    requestKind: attrs.requestKind ?? attrs.kind,
    requestResource: attrs.requestResource ?? attrs.resource,
    ...((attrs.requestSubResource ?? attrs.subResource)
      ? { requestSubResource: attrs.requestSubResource ?? attrs.subResource }
      : {}),
    ...(attrs.name ? { name: attrs.name } : {}),
    ...(attrs.namespace ? { namespace: attrs.namespace } : {}),
    operation: attrs.operation,
    userInfo: attrs.userInfo,
  };
}

/**
 * Calls `webhook` for `attrs`; resolves with its verified answer, rejects with
 * {@link WebhookCallError} when it could not be called or its answer cannot be used.
 */
export async function callWebhook(
  webhook: CalledWebhook,
  attrs: AdmissionAttributes,
  mutating: boolean,
  agents?: WebhookAgents,
): Promise<VerifiedResponse> {
  const versions = webhook.admissionReviewVersions ?? ["v1"];
  const version = versions.includes("v1")
    ? "admission.k8s.io/v1"
    : versions.includes("v1beta1")
      ? "admission.k8s.io/v1beta1"
      : undefined;
  if (version === undefined) {
    throw new WebhookCallError(
      "could not create admission objects: webhook does not accept known AdmissionReview versions (v1, v1beta1)",
    );
  }
  const url = webhook.clientConfig.url;
  if (url === undefined) {
    const svc = webhook.clientConfig.service;
    throw new WebhookCallError(
      `failed to call webhook: service ${svc?.namespace ?? ""}/${svc?.name ?? ""} cannot be reached from the embedded API server (no cluster network); register the webhook with clientConfig.url`,
    );
  }
  const timeoutSeconds = webhook.timeoutSeconds ?? DEFAULT_WEBHOOK_TIMEOUT_SECONDS;
  const target = new URL(url);
  target.searchParams.set("timeout", `${timeoutSeconds}s`);
  const uid = randomUUID();
  const body = JSON.stringify(admissionReviewRequest(version, uid, attrs));
  const ca = webhook.clientConfig.caBundle
    ? Buffer.from(webhook.clientConfig.caBundle, "base64").toString("utf8")
    : undefined;
  let review: unknown;
  try {
    // Decoding the answer is part of the call (client-go's Do().Into()): its errors read `failed to call webhook: ...`.
    review = decodeWebhookAnswer(
      await postToWebhook(target, body, ca, timeoutSeconds * 1000, agents?.agentFor(target, ca)),
    );
  } catch (err) {
    if (!(err instanceof WebhookPostError || err instanceof UndecodableAnswer)) throw err;
    throw new WebhookCallError(`failed to call webhook: ${err.message}`);
  }
  try {
    return verifyAdmissionResponse(version, uid, mutating, review);
  } catch (err) {
    throw new WebhookCallError(`received invalid webhook response: ${(err as Error).message}`);
  }
}

export { WebhookAgents } from "../webhook-client/webhook-post.ts";
