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
 * Caveats: only `clientConfig.url` is called; a `service` reference would need the cluster's
 * Service network, which the embedded server does not have (such a webhook fails to be called).
 */
import { randomUUID } from "node:crypto";
import { Agent, request } from "node:https";
import { type VerifiedResponse, verifyAdmissionResponse } from "./webhook-response.ts";

/** kube-apiserver's default `timeoutSeconds`. */
export const DEFAULT_WEBHOOK_TIMEOUT_SECONDS = 10;
/** How much of an answer is read: a review answer carries at most a patch of one object. */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

/** What is admitted: the attributes of one request. */
export interface AdmissionAttributes {
  kind: { group: string; version: string; kind: string };
  resource: { group: string; version: string; resource: string };
  subResource: string;
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

/**
 * Keep-alive connections to webhooks, one agent per URL origin and CA bundle (kube-apiserver keeps
 * a client per webhook too): a TLS handshake per call would cost more than most handlers.
 * `close()` frees every socket.
 */
export class WebhookAgents {
  private readonly agents = new Map<string, Agent>();

  agentFor(url: URL, ca: string | undefined): Agent {
    const key = `${url.origin}\0${ca ?? ""}`;
    let agent = this.agents.get(key);
    if (agent === undefined) {
      // Idle sockets close after 4 s, Node's default: webhooks called rarely hold no connection.
      agent = new Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS, ...(ca ? { ca } : {}) });
      this.agents.set(key, agent);
    }
    return agent;
  }

  close(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }
}

/** How long an idle keep-alive connection to a webhook is kept. */
const IDLE_SOCKET_MS = 4_000;

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
      kind: attrs.kind,
      resource: attrs.resource,
      ...(attrs.subResource ? { subResource: attrs.subResource } : {}),
      requestKind: attrs.kind,
      requestResource: attrs.resource,
      ...(attrs.subResource ? { requestSubResource: attrs.subResource } : {}),
      ...(attrs.name ? { name: attrs.name } : {}),
      ...(attrs.namespace ? { namespace: attrs.namespace } : {}),
      operation: attrs.operation,
      userInfo: attrs.userInfo,
      object: attrs.object,
      oldObject: attrs.oldObject,
      dryRun: attrs.dryRun,
      options: attrs.options,
    },
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
  const answer = await post(target, body, ca, timeoutSeconds * 1000, agents?.agentFor(target, ca));
  let review: unknown;
  try {
    review = JSON.parse(answer);
  } catch (err) {
    throw new WebhookCallError(`received invalid webhook response: ${(err as Error).message}`);
  }
  try {
    return verifyAdmissionResponse(version, uid, mutating, review);
  } catch (err) {
    throw new WebhookCallError(`received invalid webhook response: ${(err as Error).message}`);
  }
}

function post(
  url: URL,
  body: string,
  ca: string | undefined,
  timeoutMs: number,
  agent: Agent | undefined,
): Promise<string> {
  const failed = (why: string) => new WebhookCallError(`failed to call webhook: Post "${url.href}": ${why}`);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: "POST",
        // Without a shared agent (a one-off call), a connection of its own.
        ...(agent !== undefined ? { agent } : { agent: false, ...(ca ? { ca } : {}) }),
        headers: {
          "content-type": "application/json",
          accept: "application/json",
          "content-length": Buffer.byteLength(body),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES) {
            clearTimeout(timer);
            req.destroy();
            reject(failed(`the answer is larger than ${MAX_ANSWER_BYTES} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on("end", () => {
          clearTimeout(timer);
          const text = Buffer.concat(chunks).toString("utf8");
          const status = res.statusCode ?? 0;
          if (status < 200 || status > 299) {
            reject(failed(errorResponseMessage(status, text)));
            return;
          }
          resolve(text);
        });
        res.on("error", (err) => {
          clearTimeout(timer);
          reject(failed(err.message));
        });
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      reject(failed("context deadline exceeded"));
    }, timeoutMs);
    req.on("error", (err) => {
      clearTimeout(timer);
      reject(failed(goNetError(err as NodeJS.ErrnoException, url)));
    });
    req.end(body);
  });
}

/**
 * What client-go's REST client says of a non-2xx answer: a Status body's own message, else
 * apimachinery's NewGenericServerResponse wording for the code.
 */
function errorResponseMessage(code: number, body: string): string {
  try {
    const status = JSON.parse(body) as { kind?: unknown; message?: unknown };
    if (status.kind === "Status" && typeof status.message === "string" && status.message !== "") return status.message;
  } catch {
    // not JSON: the generic wording below
  }
  const server = body.trim();
  switch (code) {
    case 400:
      return "the server rejected our request for an unknown reason";
    case 401:
      return "the server has asked for the client to provide credentials";
    case 403:
    case 415:
      return server;
    case 404:
      return "the server could not find the requested resource";
    case 405:
      return "the server does not allow this method on the requested resource";
    case 409:
      return "the server reported a conflict";
    case 422:
      return "the server rejected our request due to an error in our request";
    case 429:
      return "the server has received too many requests and has asked us to try again later";
    case 503:
      return "the server is currently unable to handle the request";
    case 504:
      return "the server was unable to return a response in the time allotted, but may still be processing the request";
    default:
      return code >= 500
        ? `an error on the server (${JSON.stringify(server)}) has prevented the request from succeeding`
        : `the server responded with the status code ${code} but did not return more information`;
  }
}

/** Go's wording of the common connection failures. */
function goNetError(err: NodeJS.ErrnoException, url: URL): string {
  const hostPort = `${url.hostname}:${url.port || "443"}`;
  switch (err.code) {
    case "ECONNREFUSED":
      return `dial tcp ${hostPort}: connect: connection refused`;
    case "ENOTFOUND":
      return `dial tcp: lookup ${url.hostname}: no such host`;
    case "UNABLE_TO_VERIFY_LEAF_SIGNATURE":
    case "SELF_SIGNED_CERT_IN_CHAIN":
    case "DEPTH_ZERO_SELF_SIGNED_CERT":
    case "UNABLE_TO_GET_ISSUER_CERT_LOCALLY":
    case "CERT_SIGNATURE_FAILURE":
      return "tls: failed to verify certificate: x509: certificate signed by unknown authority";
    case "ERR_TLS_CERT_ALTNAME_INVALID":
      return `tls: failed to verify certificate: x509: certificate is not valid for ${url.hostname}`;
    default:
      return err.message;
  }
}
