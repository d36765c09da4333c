/**
 * `KubeClient`: a client for one API server. Raw requests with rate limiting, retries,
 * re-authentication and error mapping; the typed resource clients built on them; discovery; and the
 * connection pool they share.
 */
import { type ClientConfig, type LoadConfigOptions, loadClientConfig } from "./config.ts";
import { DecodeError } from "./decode-error.ts";
import { Discovery } from "./discovery.ts";
import { apiErrorFromResponse } from "./errors.ts";
import type { RequestOptions } from "./options.ts";
import { type RateLimiter, TokenBucket } from "./rate-limiter.ts";
import { RequestError } from "./request-error.ts";
import { readBody } from "./response-body.ts";
import { RestMapper } from "./rest-mapper.ts";
import {
  defaultRetryPolicy,
  isRetryableNetworkError,
  type RetryPolicy,
  retryDelayMs,
  shouldRetryStatus,
  sleep,
} from "./retry.ts";
import { type StreamResponse, Transport, type TransportResponse } from "./transport.ts";
import {
  type MetadataClient,
  type PartialObjectMetadata,
  type ResourceClient,
  TypedResourceClient,
} from "./typed-resource-client.ts";
import type { KubeObject, ResourceKind } from "./types.ts";
import { notifyObservers, type ObservedWrite, WRITE_METHODS, type WriteObserver } from "./write-observer.ts";
import { noteRequest } from "./write-trace.ts";

/** Observer of every attempt's outcome, for metrics (`rest_client_requests_total{code,method}`). */
export type ResponseObserver = (method: string, code: string, durationMs: number) => void;

/** Options of `KubeClient`. */
export interface KubeClientOptions {
  /** Client-side rate limit; off unless `qps` is set (see rate-limiter.ts for why). */
  qps?: number;
  /** Bucket size of the rate limit; defaults to max(1, 2 * qps) (client-go's ratio of 5/10). */
  burst?: number;
  /** Per-request timeout (ms) for everything but watches; 0 = none. */
  timeoutMs?: number;
  /** Retry tuning, or false to never retry. */
  retry?: Partial<RetryPolicy> | false;
  /**
   * Called after every attempt with the HTTP method, the status code as a string (`"<error>"` when no
   * response came back, as client-go labels it) and the duration.
   */
  onResponse?: ResponseObserver;
  /** Cap on sockets to the server (unbounded by default: each watch holds one). */
  connections?: number | null;
  /** `user-agent` header. */
  userAgent?: string;
}

/**
 * The API server's default limit for non-long-running requests (kube-apiserver `--request-timeout`, 1 min):
 * by then the server has answered with a timeout itself, so waiting longer only hides a dead connection.
 */
const defaultTimeoutMs = 60_000;

const idempotentMethods = new Set(["GET", "HEAD", "PUT", "DELETE", "OPTIONS"]);

function appendQuery(path: string, query: RequestOptions["query"]): string {
  if (!query) return path;
  let qs = "";
  for (const key in query) {
    const v = query[key];
    if (v === undefined) continue;
    qs += `${qs === "" ? "" : "&"}${key}=${encodeURIComponent(String(v))}`;
  }
  return qs === "" ? path : `${path}${path.includes("?") ? "&" : "?"}${qs}`;
}

function errorCode(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : "";
}

/**
 * A client for one API server: the typed resource clients, raw requests, discovery, and the connection
 * pool they share.
 */
export class KubeClient {
  /** Namespace of the kubeconfig context or of the service account (`"default"` when none is named). */
  readonly defaultNamespace: string;
  readonly config: ClientConfig;
  readonly #transport: Transport;
  readonly #limiter: RateLimiter | undefined;
  readonly #retry: RetryPolicy;
  readonly #timeoutMs: number;
  readonly #onResponse: ResponseObserver | undefined;
  /** The client that owns the connection pool and the discovery cache (itself, unless a `withRetry` view). */
  readonly #root: KubeClient;
  #mapper: RestMapper | undefined;
  /** Observers of writes (write-observer.ts); the root's serves every view. */
  readonly #writeObservers: WriteObserver[] = [];
  /** The client whose view `withRetry` is constructing (read and cleared by the constructor). */
  static #viewOf: KubeClient | undefined;
  /** Set while `withOwnConnections` constructs its view: the view gets a pool and limiter of its own. */
  static #ownPool = false;
  /** The root's options, for the pools of `withOwnConnections` views. */
  #options: KubeClientOptions = {};
  /** The root's: pools of its `withOwnConnections` views, closed with its own. */
  readonly #pools: Transport[] = [];

  /**
   * Loads the configuration (kubeconfig or in-cluster, see `loadClientConfig`) and builds a client.
   * The credentials are asked once here: an exec plugin runs (a client certificate it returns goes into
   * the connection pool's TLS settings), an expired oidc token is refreshed, and a failure fails the load
   * with a message naming the user.
   */
  static async load(opts: LoadConfigOptions & KubeClientOptions = {}): Promise<KubeClient> {
    let config = loadClientConfig(opts);
    await config.credentials.headers();
    const pair = config.credentials.clientCertificate?.();
    if (pair && !config.tls.cert) config = { ...config, tls: { ...config.tls, cert: pair.cert, key: pair.key } };
    return new KubeClient(config, opts);
  }

  constructor(config: ClientConfig, opts: KubeClientOptions = {}) {
    const parent = KubeClient.#viewOf;
    const ownPool = KubeClient.#ownPool;
    KubeClient.#viewOf = undefined;
    KubeClient.#ownPool = false;
    this.config = config;
    this.defaultNamespace = config.namespace;
    this.#retry =
      opts.retry === false ? { ...defaultRetryPolicy, maxAttempts: 1 } : { ...defaultRetryPolicy, ...opts.retry };
    if (parent !== undefined) {
      const root = parent.#root;
      this.#root = root;
      this.#transport = ownPool ? newTransport(config, root.#options) : parent.#transport;
      if (ownPool) root.#pools.push(this.#transport);
      this.#limiter = ownPool ? newLimiter(root.#options) : parent.#limiter;
      this.#timeoutMs = parent.#timeoutMs;
      this.#onResponse = parent.#onResponse;
      return;
    }
    this.#root = this;
    this.#options = opts;
    this.#transport = newTransport(config, opts);
    this.#limiter = newLimiter(opts);
    this.#timeoutMs = opts.timeoutMs ?? defaultTimeoutMs;
    this.#onResponse = opts.onResponse;
  }

  /**
   * A view of this client with other retry tuning (retry.ts), e.g. `withRetry({ throttled: "fail" })`,
   * which is what a controller gives its reconciles. The view shares this client's connection pool,
   * rate limit, timeout, response observer and discovery cache, so it costs no sockets; closing
   * either closes the pool both use.
   */
  withRetry(retry: Partial<RetryPolicy>): KubeClient {
    KubeClient.#viewOf = this;
    try {
      return new KubeClient(this.config, { retry: { ...this.#retry, ...retry } });
    } finally {
      KubeClient.#viewOf = undefined;
    }
  }

  /**
   * A view of this client with connections (and a client-side rate limit) of its own; it shares the
   * configuration, retry tuning, timeout, response observer and discovery cache. For traffic that
   * must not queue behind the rest: HTTP/1.1 carries one request per socket, so when every socket of
   * the pool is busy a request opens a new TLS connection, and on a busy API server that handshake
   * waits several turns of its work (leader election's renewals missed their deadline so, where
   * client-go multiplexes on one HTTP/2 connection and gives leader election a client of its own).
   * Closing this client closes the view's connections too; closing the view closes only its own.
   */
  withOwnConnections(): KubeClient {
    KubeClient.#viewOf = this;
    KubeClient.#ownPool = true;
    try {
      return new KubeClient(this.config, { retry: this.#retry });
    } finally {
      KubeClient.#viewOf = undefined;
      KubeClient.#ownPool = false;
    }
  }

  /**
   * Reports every write this client (and each `withRetry` view of it) sends to `observer`, when it
   * starts and when it ends (write-observer.ts). Returns a function that stops the reports.
   */
  observeWrites(observer: WriteObserver): () => void {
    const observers = this.#root.#writeObservers;
    observers.push(observer);
    return () => {
      const i = observers.indexOf(observer);
      if (i >= 0) observers.splice(i, 1);
    };
  }

  /** A typed client for `kind`, bound to `namespace` for namespaced kinds when given. */
  resource<T extends KubeObject>(kind: ResourceKind<T>, namespace?: string): ResourceClient<T> {
    return new TypedResourceClient<T>(this, kind, namespace);
  }

  /**
   * A read-only view of `kind` that fetches `PartialObjectMetadata` (apiVersion, kind, metadata) instead
   * of whole objects, as client-go's metadata client does: for informers on secondary resources whose
   * spec and data the controller never reads. Servers that cannot serve the view answer with whole
   * objects; those are cut down to the same shape here, so callers always get metadata only.
   */
  metadata(kind: ResourceKind, namespace?: string): MetadataClient {
    return new TypedResourceClient<PartialObjectMetadata>(
      this,
      kind as ResourceKind<PartialObjectMetadata>,
      namespace,
      true,
    );
  }

  /**
   * The kind for `apiVersion` + `kind` from the server's discovery documents (cached; a miss refreshes
   * the cache once). Throws when the server does not serve the kind.
   */
  kindFor(apiVersion: string, kind: string, signal?: AbortSignal): Promise<ResourceKind> {
    const root = this.#root;
    root.#mapper ??= new RestMapper(new Discovery(root));
    return root.#mapper.kindFor(apiVersion, kind, signal);
  }

  /**
   * One API call with rate limiting, retries (retry.ts), a 401 re-authentication and error mapping.
   * Resolves with the parsed JSON body (the text for a non-JSON content type, undefined for an empty
   * body); rejects with `ApiError` for a non-2xx answer, `RequestError` when no answer came (its cause a
   * `ConnectionError` when the server could not be reached), `DecodeError` for a JSON body that is not JSON.
   */
  async request<R>(method: string, path: string, opts: RequestOptions = {}): Promise<R> {
    const fullPath = appendQuery(path, opts.query);
    const watching = this.#root.#writeObservers;
    if (watching.length === 0 || !WRITE_METHODS.has(method)) return this.#request<R>(method, fullPath, opts);
    const observers = watching.slice();
    const write: ObservedWrite = { method, path: fullPath };
    notifyObservers(observers, (o) => o.started?.(write));
    try {
      const body = await this.#request<R>(method, fullPath, opts);
      notifyObservers(observers, (o) => o.ended?.(write, { body }));
      return body;
    } catch (error) {
      notifyObservers(observers, (o) => o.ended?.(write, { error }));
      throw error;
    }
  }

  /** `fullPath`: the path with `opts.query` appended already. */
  async #request<R>(method: string, fullPath: string, opts: RequestOptions): Promise<R> {
    const res = (await this.#execute(method, fullPath, opts, false)) as TransportResponse;
    const text = res.body;
    if (text === "") return undefined as R;
    // Non-resource endpoints (/healthz, /livez, /metrics) answer text; hand it back as is.
    const type = headerValue(res.headers["content-type"]);
    if (type !== undefined && !type.includes("json")) return text as R;
    try {
      return JSON.parse(text) as R;
    } catch (err) {
      throw new DecodeError((err as Error).message, { cause: err });
    }
  }

  /** Opens a streaming GET (a watch); resolves once the server answered 200. */
  async openStream(path: string, opts: RequestOptions = {}): Promise<StreamResponse> {
    return (await this.#execute("GET", appendQuery(path, opts.query), opts, true)) as StreamResponse;
  }

  async #execute(
    method: string,
    fullPath: string,
    opts: RequestOptions,
    stream: boolean,
  ): Promise<TransportResponse | StreamResponse> {
    let body: string | undefined;
    let contentType = opts.contentType;
    if (opts.body !== undefined) {
      body = typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body);
      contentType ??= "application/json";
    }
    const req = {
      method,
      path: fullPath,
      body,
      contentType,
      accept: opts.accept,
      signal: opts.signal,
      timeoutMs: opts.timeoutMs ?? this.#timeoutMs,
    };
    const idempotent = opts.idempotent ?? idempotentMethods.has(method);
    let reauthenticated = false;
    for (let attempt = 1; ; attempt++) {
      if (this.#limiter) await this.#limiter.wait(opts.signal);
      const started = performance.now();
      let status: number;
      let result: TransportResponse | StreamResponse;
      try {
        result = stream ? await this.#transport.stream(req) : await this.#transport.send(req);
        status = result.status;
      } catch (err) {
        this.#onResponse?.(method, "<error>", performance.now() - started);
        const aborted = opts.signal?.aborted === true;
        if (!aborted && idempotent && attempt < this.#retry.maxAttempts && isRetryableNetworkError(err)) {
          await sleep(retryDelayMs(attempt, this.#retry), opts.signal);
          continue;
        }
        noteRequest(method, fullPath, opts.body, 0);
        if (aborted) throw opts.signal?.reason;
        throw this.#networkError(err, method, fullPath, req.timeoutMs);
      }
      this.#onResponse?.(method, String(status), performance.now() - started);
      if (status >= 200 && status < 300) {
        noteRequest(method, fullPath, opts.body, status);
        return result;
      }
      const text = stream ? await readBody((result as StreamResponse).body) : (result as TransportResponse).body;
      if (status === 401 && !reauthenticated && this.config.credentials.invalidate()) {
        reauthenticated = true;
        attempt--; // a refreshed credential is not a retry
        continue;
      }
      const error = apiErrorFromResponse({
        statusCode: status,
        method,
        body: text,
        contentType: headerValue(result.headers["content-type"]),
        retryAfter: headerValue(result.headers["retry-after"]),
        resource: opts.resource,
        refused: { credentials: this.config.credentials.description, server: this.config.server },
      });
      if (
        attempt < this.#retry.maxAttempts &&
        shouldRetryStatus(status, idempotent, this.#retry, error.retryAfterSeconds)
      ) {
        await sleep(retryDelayMs(attempt, this.#retry, error.retryAfterSeconds), opts.signal);
        continue;
      }
      noteRequest(method, fullPath, opts.body, status);
      throw error;
    }
  }

  #networkError(err: unknown, method: string, path: string, timeoutMs: number): RequestError {
    const code = errorCode(err);
    const details = { method, path, server: this.config.server, cause: err };
    if (code === "ERR_HEADERS_TIMEOUT" || code === "ERR_BODY_TIMEOUT") {
      return new RequestError(
        `${method} ${path}: no answer from ${this.config.server} within ${timeoutMs} ms`,
        details,
      );
    }
    return new RequestError(`${method} ${path} to ${this.config.server} failed: ${(err as Error).message}`, details);
  }

  /** Frees every socket (those of its `withOwnConnections` views too); running watches end. */
  async close(): Promise<void> {
    const pools = this.#root.#pools;
    if (this.#root !== this) {
      const mine = pools.indexOf(this.#transport);
      if (mine >= 0) pools.splice(mine, 1);
      return this.#transport.close();
    }
    await Promise.all([this.#transport.close(), ...pools.splice(0).map((p) => p.close())]);
  }
}

function newTransport(config: ClientConfig, opts: KubeClientOptions): Transport {
  return new Transport(config, {
    connections: opts.connections ?? null,
    headers: { "user-agent": opts.userAgent ?? "capstan" },
  });
}

function newLimiter(opts: KubeClientOptions): RateLimiter | undefined {
  if (opts.qps === undefined || opts.qps <= 0) return undefined;
  return new TokenBucket(opts.qps, opts.burst ?? Math.max(1, Math.ceil(opts.qps * 2)));
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
