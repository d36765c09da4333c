/**
 * The HTTPS client kube-apiserver calls webhooks with (admission and CRD conversion alike,
 * k8s.io/apiserver pkg/util/webhook): a POST of a JSON review to the webhook's URL with its CA
 * bundle, over keep-alive connections, read up to a size limit and ended at a deadline. A failure
 * is worded as client-go words it (`Post "<url>": dial tcp ...: connect: connection refused` for a
 * connection; the Status, or the generic text of the code, for an answer outside 200-206), so the
 * message a client sees reads as it does on a cluster.
 *
 * Guarantees: every failure is a {@link WebhookPostError}, never an exception of another type; the
 * call ends within its timeout; `WebhookAgents.close()` leaves no socket behind.
 */
import { Agent, request } from "node:https";
import type { WebhookAnswer } from "./webhook-answer.ts";

/** How much of an answer is read: a review answer carries at most a patch of one object, or a page of objects. */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

/** A webhook that could not be called: `Post "<url>": <Go's wording of why>`. */
export class WebhookPostError extends Error {
  override name = "WebhookPostError";
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

/**
 * POSTs `body` to `url`; resolves with the answer (2xx), rejects with {@link WebhookPostError}.
 * Without an `agent` (a one-off call), a connection of its own trusting `ca`.
 */
export function postToWebhook(
  url: URL,
  body: string,
  ca: string | undefined,
  timeoutMs: number,
  agent: Agent | undefined,
): Promise<WebhookAnswer> {
  const failed = (why: string) => new WebhookPostError(`Post "${url.href}": ${why}`);
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
          // client-go's success range (rest/request.go transformResponse: 200 to 206). An answer is
          // no transport failure: its error is the Status alone, without `Post "<url>":`.
          if (status < 200 || status > 206) {
            reject(new WebhookPostError(errorResponseMessage(status, text, res.headers["content-type"])));
            return;
          }
          const contentType = res.headers["content-type"];
          resolve({ body: text, status, contentType });
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
 * What client-go's REST client says of an answer outside 200-206: a Status body's own message, else
 * apimachinery's NewGenericServerResponse wording for the code, quoting the body only when it is
 * text (newUnstructuredResponseError: `unknown` for any other content type).
 */
export function errorResponseMessage(code: number, body: string, contentType?: string): string {
  try {
    const status = JSON.parse(body) as { kind?: unknown; message?: unknown };
    if (status.kind === "Status" && typeof status.message === "string" && status.message !== "") return status.message;
  } catch {
    // not JSON: the generic wording below
  }
  const server = isTextResponse(contentType) ? body.trim() : "unknown";
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

/** client-go's isTextResponse: no content type, or a `text/` one. */
function isTextResponse(contentType: string | undefined): boolean {
  if (contentType === undefined || contentType === "") return true;
  return contentType.split(";")[0]!.trim().toLowerCase().startsWith("text/");
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
