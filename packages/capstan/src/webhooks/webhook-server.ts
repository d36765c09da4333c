/**
 * The operator's webhook server: HTTPS (the API server calls webhooks only over TLS), one path per
 * handler: AdmissionReviews in and out (admission.ts runs the handler), or ConversionReviews
 * (conversion.ts converts the objects).
 *
 * ## Expected flow
 * `new WebhookServer(options)`, `register(path, handler)` for each handler, `start()`, and `stop()`
 * (or abort the signal given to start). Certificates come from `certDir` (`tls.crt`, `tls.key`: the
 * layout of a cert-manager Secret mounted as a volume, and controller-runtime's default directory)
 * or are given in memory (development, where they are generated on the fly).
 *
 * ## Guarantees
 * - Certificates in `certDir` are read again when they change (checked every `certReloadMs`, and
 *   on file system events): a renewed certificate is served without a restart. A pair that does
 *   not load (a half-written renewal) keeps the previous one and is logged.
 * - Bad requests are answered, never crash the server: 404 for an unknown path, 405 for anything
 *   but POST, 415 for a body that is not JSON, 413 past {@link MAX_BODY_BYTES}, 400 for a body that
 *   is not an AdmissionReview or ConversionReview as the path expects (with what is wrong).
 * - After `stop()` resolves no socket or timer of the server is left.
 */
import { createHash } from "node:crypto";
import { type FSWatcher, watch } from "node:fs";
import { readFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { connect } from "node:tls";
import type { Logger } from "pino";
import { type AdmissionHandlerSpec, runAdmission } from "./admission.ts";
import { AdmissionReviewError, decodeAdmissionReview, encodeAdmissionReview } from "./admission-review.ts";
import {
  type ConversionHandlerSpec,
  ConversionReviewError,
  decodeConversionReview,
  encodeConversionReview,
  runConversion,
} from "./conversion.ts";

/** What a path serves: an admission handler or a kind's conversions. */
export type WebhookHandlerSpec = AdmissionHandlerSpec | ConversionHandlerSpec;

/** controller-runtime's webhook port: the one generated Services and Deployments point at. */
export const DEFAULT_WEBHOOK_PORT = 9443;
/** controller-runtime's default certificate directory. */
export const DEFAULT_CERT_DIR = "/tmp/k8s-webhook-server/serving-certs";
/**
 * controller-runtime's limit on a review's body: an object may be 1.5 MiB in etcd and a review
 * carries it twice (object, oldObject) plus the request, as JSON.
 */
export const MAX_BODY_BYTES = 7 * 1024 * 1024;
/** How often certificate files are checked when no file system event came (controller-runtime's certwatcher polls every 10 s too). */
const CERT_RELOAD_MS = 10_000;
/** controller-runtime's StartedChecker dials with a 10 s timeout; a probe wants an answer sooner. */
const STARTED_CHECK_TIMEOUT_MS = 2_000;

/** Receives each served request (the runtime's metrics implement it; labels are webhook paths). */
export interface WebhookObserver {
  started(webhook: string): void;
  finished(webhook: string, code: number, seconds: number): void;
}

/** Options of a {@link WebhookServer}. */
export interface WebhookServerOptions {
  /** Port (default {@link DEFAULT_WEBHOOK_PORT}; 0 picks a free one). */
  port?: number;
  /** Address to listen on (default all interfaces: the API server calls from outside the pod). */
  host?: string;
  /** Directory of `tls.crt` and `tls.key` (default {@link DEFAULT_CERT_DIR}); ignored when `tls` is given. */
  certDir?: string;
  certName?: string;
  keyName?: string;
  /** Certificate and key in PEM, instead of files (development). */
  tls?: { cert: string; key: string };
  /** How often `certDir` is checked for a renewed pair (default 10 s). */
  certReloadMs?: number;
  logger?: Logger;
  /** Told about every request to a registered path (controller-runtime's webhook metrics). */
  observer?: WebhookObserver;
}

/** An HTTPS server of admission handlers; see the module documentation. */
export class WebhookServer {
  private readonly routes = new Map<string, WebhookHandlerSpec>();
  private readonly options: WebhookServerOptions;
  private server: Server | undefined;
  private certTimer: NodeJS.Timeout | undefined;
  private certWatcher: FSWatcher | undefined;
  private certDigest = "";

  constructor(options: WebhookServerOptions = {}) {
    this.options = options;
  }

  /** Serves `handler` at `path` (e.g. `/validate-example-com-v1-widget`, `/convert-example-com-widget`). */
  register(path: string, handler: WebhookHandlerSpec): void {
    if (!path.startsWith("/")) throw new Error(`webhook path ${JSON.stringify(path)} must start with "/"`);
    if (this.routes.has(path)) throw new Error(`webhook path ${path} is registered twice`);
    this.routes.set(path, handler);
  }

  /** The paths served. */
  paths(): string[] {
    return [...this.routes.keys()];
  }

  /** Whether the server is listening. */
  get listening(): boolean {
    return this.server?.listening === true;
  }

  /** The port listened on (after `start`). */
  get port(): number {
    const address = this.server?.address();
    if (address === null || address === undefined || typeof address === "string") {
      throw new Error("the webhook server is not listening");
    }
    return (address as AddressInfo).port;
  }

  /** Loads the certificate and listens; `signal` stops the server when it aborts. */
  async start(signal?: AbortSignal): Promise<void> {
    if (this.server !== undefined) throw new Error("the webhook server was already started");
    const pair = await this.loadPair();
    const server = createServer({ cert: pair.cert, key: pair.key }, (req, res) => void this.handle(req, res));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.options.port ?? DEFAULT_WEBHOOK_PORT, this.options.host, () => {
        server.off("error", reject);
        resolve();
      });
    });
    if (this.options.tls === undefined) this.watchCertificates();
    signal?.addEventListener("abort", () => void this.stop(), { once: true });
  }

  /**
   * Whether the server accepts TLS connections now (controller-runtime's `StartedChecker`, for
   * `/readyz`): a handshake with the address it listens on, given `timeoutMs`.
   */
  startedCheck(timeoutMs = STARTED_CHECK_TIMEOUT_MS): Promise<boolean> {
    if (!this.listening) return Promise.resolve(false);
    const host =
      this.options.host === undefined || this.options.host === "0.0.0.0" || this.options.host === "::"
        ? "127.0.0.1"
        : this.options.host;
    return new Promise((resolve) => {
      // Only whether it serves TLS is checked, not who it is: the API server checks that.
      const socket = connect({ host, port: this.port, rejectUnauthorized: false, timeout: timeoutMs });
      const done = (ok: boolean) => {
        socket.destroy();
        resolve(ok);
      };
      socket.once("secureConnect", () => done(true));
      socket.once("error", () => done(false));
      socket.once("timeout", () => done(false));
    });
  }

  /** Stops listening and closes every connection. */
  async stop(): Promise<void> {
    clearInterval(this.certTimer);
    this.certTimer = undefined;
    this.certWatcher?.close();
    this.certWatcher = undefined;
    const server = this.server;
    if (server === undefined || !server.listening) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  private certPaths(): { cert: string; key: string } {
    const dir = this.options.certDir ?? DEFAULT_CERT_DIR;
    return { cert: join(dir, this.options.certName ?? "tls.crt"), key: join(dir, this.options.keyName ?? "tls.key") };
  }

  private async loadPair(): Promise<{ cert: string; key: string }> {
    if (this.options.tls !== undefined) return this.options.tls;
    const paths = this.certPaths();
    try {
      const [cert, key] = await Promise.all([readFile(paths.cert, "utf8"), readFile(paths.key, "utf8")]);
      this.certDigest = digest(cert, key);
      return { cert, key };
    } catch (err) {
      throw new Error(
        `the webhook server needs a serving certificate: cannot read ${paths.cert} and ${paths.key} (${(err as Error).message}); mount the cert-manager Secret there or set certDir`,
      );
    }
  }

  private watchCertificates(): void {
    const reload = () => void this.reloadCertificates();
    this.certTimer = setInterval(reload, this.options.certReloadMs ?? CERT_RELOAD_MS);
    this.certTimer.unref();
    try {
      // A mounted Secret is updated by swapping a symlink in the directory: watch the directory.
      this.certWatcher = watch(this.options.certDir ?? DEFAULT_CERT_DIR, { persistent: false }, reload);
      this.certWatcher.on("error", () => this.certWatcher?.close());
    } catch {
      // No file system events here: the timer still notices.
    }
  }

  private async reloadCertificates(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    const paths = this.certPaths();
    let cert: string;
    let key: string;
    try {
      [cert, key] = await Promise.all([readFile(paths.cert, "utf8"), readFile(paths.key, "utf8")]);
    } catch {
      return; // mid-rotation: the next check reads the complete pair
    }
    const next = digest(cert, key);
    if (next === this.certDigest) return;
    try {
      server.setSecureContext({ cert, key });
      this.certDigest = next;
      this.options.logger?.info({ cert: paths.cert }, "webhook serving certificate reloaded");
    } catch (err) {
      this.options.logger?.warn(
        { err, cert: paths.cert },
        "webhook serving certificate does not load; keeping the previous one",
      );
    }
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? "/").split("?")[0] as string;
    const handler = this.routes.get(path);
    if (handler === undefined) return plain(res, 404, `no webhook at ${path}`);
    const observer = this.options.observer;
    if (observer === undefined) return this.serve(handler, req, res);
    const started = performance.now();
    observer.started(path);
    try {
      await this.serve(handler, req, res);
    } finally {
      observer.finished(path, res.statusCode, (performance.now() - started) / 1000);
    }
  }

  private async serve(handler: WebhookHandlerSpec, req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== "POST") return plain(res, 405, `${req.method} is not allowed: webhooks take POST`);
    const type = req.headers["content-type"] ?? "";
    if (!type.startsWith("application/json")) {
      return plain(res, 415, `content-type ${JSON.stringify(type)}: expected application/json`);
    }
    let body: string;
    try {
      body = await readLimited(req, MAX_BODY_BYTES);
    } catch (err) {
      return plain(res, 413, (err as Error).message);
    }
    if (handler.type === "conversion") return this.convert(handler, body, res);
    let review: ReturnType<typeof decodeAdmissionReview>;
    try {
      review = decodeAdmissionReview(body);
    } catch (err) {
      if (err instanceof AdmissionReviewError) return plain(res, 400, err.message);
      throw err;
    }
    const outcome = await runAdmission(handler, review.request);
    if (outcome.failure !== undefined) {
      const { request } = review;
      this.options.logger?.error(
        { err: outcome.failure.error, webhook: handler.name, namespace: request.namespace, name: request.name },
        outcome.failure.kind === "timeout" ? "admission handler timed out" : "admission handler failed",
      );
    }
    answerJson(res, encodeAdmissionReview(review.apiVersion, outcome.response));
  }

  private convert(handler: ConversionHandlerSpec, body: string, res: ServerResponse): void {
    let review: ReturnType<typeof decodeConversionReview>;
    try {
      review = decodeConversionReview(body);
    } catch (err) {
      if (!(err instanceof ConversionReviewError)) throw err;
      plain(res, 400, err.message);
      return;
    }
    const { response, error } = runConversion(handler, review.request);
    if (error !== undefined) {
      this.options.logger?.error(
        { err: error, webhook: handler.name, desiredAPIVersion: review.request.desiredAPIVersion },
        "conversion failed",
      );
    }
    answerJson(res, encodeConversionReview(review.apiVersion, response));
  }
}

function answerJson(res: ServerResponse, answer: string): void {
  res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(answer) });
  res.end(answer);
}

function plain(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, {
    "content-type": "text/plain; charset=utf-8",
    // An unread body (413) must not be taken for the next request on this connection.
    ...(status === 413 ? { connection: "close" } : {}),
  });
  res.end(`${message}\n`);
}

function readLimited(req: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        // Stop keeping it; the answer closes the connection (plain() with 413).
        req.removeAllListeners("data");
        req.resume();
        reject(new Error(`the body is larger than ${limit} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    req.once("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.once("error", reject);
  });
}

function digest(cert: string, key: string): string {
  return createHash("sha256").update(cert).update("\0").update(key).digest("hex");
}
