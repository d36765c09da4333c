/**
 * The typed resource client: one kind, all verbs. Objects are plain Kubernetes JSON.
 */
import { type ClientConfig, type LoadConfigOptions, loadClientConfig } from "./config.ts";
import { Discovery } from "./discovery.ts";
import { apiErrorFromResponse } from "./errors.ts";
import { type RateLimiter, TokenBucket } from "./rate-limiter.ts";
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
  apiVersionOf,
  type KubeObject,
  type ListerWatcher,
  type ListOptions,
  type ObjectList,
  type ObjectMeta,
  type ResourceKind,
  type Status,
  type WatchEvent,
  type WatchOptions,
} from "./types.ts";
import { decodeWatchStream } from "./watch-stream.ts";

/** Options every single-object call accepts. */
export interface CallOptions {
  /** Namespace for this call; wins over the object's and the client's bound namespace. */
  namespace?: string;
  signal?: AbortSignal;
}

/** Options of create/update/updateStatus. */
export interface WriteOptions extends CallOptions {
  /** `dryRun=All`: validated and defaulted by the server, not persisted. */
  dryRun?: boolean;
  fieldManager?: string;
  /** `fieldValidation` query parameter (server-side unknown/duplicate field checks). */
  fieldValidation?: "Ignore" | "Warn" | "Strict";
}

/** Patch flavours and their content types. */
export type PatchType = "json" | "merge" | "strategic" | "apply";

/** Options of patch. */
export interface PatchOptions extends WriteOptions {
  /**
   * `json` = RFC 6902 (application/json-patch+json), `merge` = RFC 7386 (application/merge-patch+json),
   * `strategic` = strategic merge (built-in kinds only), `apply` = server-side apply (needs `fieldManager`).
   */
  type: PatchType;
  subresource?: "status" | "scale";
  /** Server-side apply only: take ownership of conflicting fields. */
  force?: boolean;
}

/** Options of delete (a `DeleteOptions` body). */
export interface DeleteOptions extends CallOptions {
  propagationPolicy?: "Foreground" | "Background" | "Orphan";
  gracePeriodSeconds?: number;
  /** The delete fails with 409 Conflict unless the object still has this uid / resourceVersion. */
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
}

/** Options of server-side apply. */
export interface ApplyOptions extends CallOptions {
  fieldManager: string;
  force?: boolean;
  subresource?: "status";
  dryRun?: boolean;
}

/**
 * Every verb for one kind. Namespaced kinds resolve the namespace of a single-object call from, in order:
 * the call's `namespace` option, the object's `metadata.namespace` (create/update/apply), the namespace
 * bound with `client.resource(kind, ns)`; with none of them the call throws (it never falls back to
 * "default" silently). list/watch/deleteCollection use the bound namespace, else all namespaces.
 */
export interface ResourceClient<T extends KubeObject> extends ListerWatcher<T> {
  get(name: string, opts?: CallOptions): Promise<T>;
  /** One page. */
  list(opts?: ListOptions): Promise<ObjectList<T>>;
  /** Every object, following continue tokens page by page. */
  listAll(opts?: Omit<ListOptions, "continue">): AsyncIterable<T>;
  create(obj: T, opts?: WriteOptions): Promise<T>;
  update(obj: T, opts?: WriteOptions): Promise<T>;
  updateStatus(obj: T, opts?: WriteOptions): Promise<T>;
  patch(name: string, patch: unknown, opts: PatchOptions): Promise<T>;
  /** Patches the status subresource; a merge patch unless `type` says otherwise. */
  patchStatus(
    name: string,
    patch: unknown,
    opts?: Omit<PatchOptions, "subresource" | "type"> & { type?: PatchType },
  ): Promise<T>;
  /** Server-side apply of `obj` (apiVersion/kind/name filled in from the kind and object). */
  apply(obj: T, opts: ApplyOptions): Promise<T>;
  /** The deleted object (or the object with deletionTimestamp set while finalizers run), or a Status. */
  delete(name: string, opts?: DeleteOptions): Promise<T | Status>;
  deleteCollection(opts?: ListOptions & DeleteOptions): Promise<ObjectList<T> | Status>;
  /**
   * Resolves once the server accepted the watch (rejects with `ApiError` otherwise). The iterator yields
   * typed events, throws `ApiError` for an ERROR event (410 -> `isGone`), ends quietly when the server
   * closes the stream or the signal aborts, and frees the socket if the consumer stops early.
   */
  watch(opts: WatchOptions): Promise<AsyncIterable<WatchEvent<T>>>;
}

/** An object's metadata without its body, what the metadata view yields (`meta.k8s.io/v1`). */
export interface PartialObjectMetadata extends KubeObject {
  metadata: ObjectMeta;
}

/** The read verbs of the metadata-only view; a `ListerWatcher` for informers. */
export type MetadataClient = Pick<ResourceClient<PartialObjectMetadata>, "get" | "list" | "listAll" | "watch">;

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

/** Options of `KubeClient.request`. */
export interface RequestOptions {
  /** Query parameters; undefined values are left out. */
  query?: Record<string, string | number | boolean | undefined>;
  /** A string is sent as is; anything else as JSON. */
  body?: unknown;
  contentType?: string;
  /** `accept` header; `application/json` by default. */
  accept?: string;
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Whether sending the request twice is harmless (decides retries on 5xx); default: by method. */
  idempotent?: boolean;
  /** For client-go style messages of synthesized errors. */
  resource?: { group: string; plural: string; name?: string };
}

/**
 * The API server's default limit for non-long-running requests (kube-apiserver `--request-timeout`, 1 min):
 * by then the server has answered with a timeout itself, so waiting longer only hides a dead connection.
 */
const defaultTimeoutMs = 60_000;
/** Page size of `listAll`: client-go's pager default (`defaultPageSize = 500`). */
const defaultPageSize = 500;

const idempotentMethods = new Set(["GET", "HEAD", "PUT", "DELETE", "OPTIONS"]);

const patchContentTypes: Record<PatchType, string> = {
  json: "application/json-patch+json",
  merge: "application/merge-patch+json",
  strategic: "application/strategic-merge-patch+json",
  apply: "application/apply-patch+yaml",
};

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
  #mapper: RestMapper | undefined;

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
    this.config = config;
    this.defaultNamespace = config.namespace;
    this.#transport = new Transport(config, {
      connections: opts.connections ?? null,
      headers: { "user-agent": opts.userAgent ?? "capstan" },
    });
    if (opts.qps !== undefined && opts.qps > 0) {
      this.#limiter = new TokenBucket(opts.qps, opts.burst ?? Math.max(1, Math.ceil(opts.qps * 2)));
    }
    this.#retry =
      opts.retry === false ? { ...defaultRetryPolicy, maxAttempts: 1 } : { ...defaultRetryPolicy, ...opts.retry };
    this.#timeoutMs = opts.timeoutMs ?? defaultTimeoutMs;
    this.#onResponse = opts.onResponse;
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
    this.#mapper ??= new RestMapper(new Discovery(this));
    return this.#mapper.kindFor(apiVersion, kind, signal);
  }

  /**
   * One API call with rate limiting, retries (retry.ts), a 401 re-authentication and error mapping.
   * Resolves with the parsed JSON body (the text for a non-JSON content type, undefined for an empty
   * body); rejects with `ApiError` for a non-2xx answer.
   */
  async request<R>(method: string, path: string, opts: RequestOptions = {}): Promise<R> {
    const res = (await this.#execute(method, path, opts, false)) as TransportResponse;
    const text = res.body;
    if (text === "") return undefined as R;
    // Non-resource endpoints (/healthz, /livez, /metrics) answer text; hand it back as is.
    const type = headerValue(res.headers["content-type"]);
    if (type !== undefined && !type.includes("json")) return text as R;
    return JSON.parse(text) as R;
  }

  /** Opens a streaming GET (a watch); resolves once the server answered 200. */
  async openStream(path: string, opts: RequestOptions = {}): Promise<StreamResponse> {
    return (await this.#execute("GET", path, opts, true)) as StreamResponse;
  }

  async #execute(
    method: string,
    path: string,
    opts: RequestOptions,
    stream: boolean,
  ): Promise<TransportResponse | StreamResponse> {
    const fullPath = appendQuery(path, opts.query);
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
        if (opts.signal?.aborted) throw opts.signal.reason;
        if (idempotent && attempt < this.#retry.maxAttempts && isRetryableNetworkError(err)) {
          await sleep(retryDelayMs(attempt, this.#retry), opts.signal);
          continue;
        }
        throw this.#networkError(err, method, fullPath, req.timeoutMs);
      }
      this.#onResponse?.(method, String(status), performance.now() - started);
      if (status >= 200 && status < 300) return result;
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
      if (attempt < this.#retry.maxAttempts && shouldRetryStatus(status, idempotent)) {
        await sleep(retryDelayMs(attempt, this.#retry, error.retryAfterSeconds), opts.signal);
        continue;
      }
      throw error;
    }
  }

  #networkError(err: unknown, method: string, path: string, timeoutMs: number): Error {
    const code = errorCode(err);
    if (code === "ERR_HEADERS_TIMEOUT" || code === "ERR_BODY_TIMEOUT") {
      return new Error(`${method} ${path}: no answer from ${this.config.server} within ${timeoutMs} ms`, {
        cause: err,
      });
    }
    return new Error(`${method} ${path} to ${this.config.server} failed: ${(err as Error).message}`, { cause: err });
  }

  /** Frees every socket; running watches end. */
  close(): Promise<void> {
    return this.#transport.close();
  }
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** The `ResourceClient` implementation: URL building and verb semantics over `KubeClient.request`. */
class TypedResourceClient<T extends KubeObject> implements ResourceClient<T> {
  readonly #client: KubeClient;
  readonly #kind: ResourceKind<T>;
  readonly #namespace: string | undefined;
  readonly #base: string;
  readonly #apiVersion: string;
  /** Metadata-only view: asks for PartialObjectMetadata and cuts whole objects down to it. */
  readonly #metadataOnly: boolean;

  constructor(client: KubeClient, kind: ResourceKind<T>, namespace: string | undefined, metadataOnly = false) {
    this.#client = client;
    this.#metadataOnly = metadataOnly;
    this.#kind = kind;
    this.#namespace = kind.namespaced ? namespace : undefined;
    this.#apiVersion = apiVersionOf(kind);
    this.#base = kind.group === "" ? `/api/${kind.version}` : `/apis/${kind.group}/${kind.version}`;
  }

  /** Collection path: bound namespace, else all namespaces (or cluster scope). */
  #collection(namespace: string | undefined): string {
    const ns = this.#kind.namespaced ? namespace : undefined;
    return ns
      ? `${this.#base}/namespaces/${encodeURIComponent(ns)}/${this.#kind.plural}`
      : `${this.#base}/${this.#kind.plural}`;
  }

  #namespaceFor(
    verb: string,
    name: string | undefined,
    explicit: string | undefined,
    obj?: KubeObject,
  ): string | undefined {
    if (!this.#kind.namespaced) return undefined;
    const ns = explicit ?? obj?.metadata?.namespace ?? this.#namespace;
    if (!ns) {
      throw new Error(
        `${verb} ${this.#kind.kind}${name ? ` "${name}"` : ""}: ${this.#kind.kind} is namespaced and no namespace was given ` +
          "(pass { namespace }, set metadata.namespace, or bind one with client.resource(kind, namespace))",
      );
    }
    return ns;
  }

  #itemPath(verb: string, name: string, ns: string | undefined, subresource?: string): string {
    if (!name) throw new Error(`${verb} ${this.#kind.kind}: a name is required`);
    const path = `${this.#collection(ns)}/${encodeURIComponent(name)}`;
    return subresource ? `${path}/${subresource}` : path;
  }

  #resource(name?: string): { group: string; plural: string; name?: string } {
    return name
      ? { group: this.#kind.group, plural: this.#kind.plural, name }
      : { group: this.#kind.group, plural: this.#kind.plural };
  }

  #nameOf(verb: string, obj: T): string {
    const name = obj.metadata?.name;
    if (!name) throw new Error(`${verb} ${this.#kind.kind}: metadata.name is required`);
    return name;
  }

  async get(name: string, opts: CallOptions = {}): Promise<T> {
    const ns = this.#namespaceFor("get", name, opts.namespace);
    const obj = await this.#client.request<T>("GET", this.#itemPath("get", name, ns), {
      signal: opts.signal,
      resource: this.#resource(name),
      accept: this.#metadataOnly ? metadataAccept : undefined,
    });
    return this.#metadataOnly ? (toPartial(obj) as unknown as T) : obj;
  }

  async list(opts: ListOptions = {}): Promise<ObjectList<T>> {
    const list = await this.#client.request<ObjectList<T>>("GET", this.#collection(this.#namespace), {
      query: listQuery(opts),
      signal: opts.signal,
      resource: this.#resource(),
      accept: this.#metadataOnly ? metadataListAccept : undefined,
    });
    if (this.#metadataOnly) {
      const items = list.items ?? [];
      for (let i = 0; i < items.length; i++) items[i] = toPartial(items[i]!) as unknown as T;
    }
    return list;
  }

  async *listAll(opts: Omit<ListOptions, "continue"> = {}): AsyncIterable<T> {
    let token: string | undefined;
    do {
      const page = await this.list({ ...opts, limit: opts.limit ?? defaultPageSize, continue: token });
      yield* page.items;
      token = page.metadata?.continue || undefined;
    } while (token);
  }

  async create(obj: T, opts: WriteOptions = {}): Promise<T> {
    const ns = this.#namespaceFor("create", obj.metadata?.name, opts.namespace, obj);
    return this.#client.request<T>("POST", this.#collection(ns), {
      query: writeQuery(opts),
      body: this.#complete(obj),
      signal: opts.signal,
      resource: this.#resource(),
    });
  }

  async update(obj: T, opts: WriteOptions = {}): Promise<T> {
    return this.#put("update", obj, opts, undefined);
  }

  async updateStatus(obj: T, opts: WriteOptions = {}): Promise<T> {
    return this.#put("updateStatus", obj, opts, "status");
  }

  async #put(verb: string, obj: T, opts: WriteOptions, subresource: string | undefined): Promise<T> {
    const name = this.#nameOf(verb, obj);
    const ns = this.#namespaceFor(verb, name, opts.namespace, obj);
    return this.#client.request<T>("PUT", this.#itemPath(verb, name, ns, subresource), {
      query: writeQuery(opts),
      body: this.#complete(obj),
      signal: opts.signal,
      resource: this.#resource(name),
    });
  }

  async patch(name: string, patch: unknown, opts: PatchOptions): Promise<T> {
    const ns = this.#namespaceFor("patch", name, opts.namespace);
    if (opts.type === "apply" && !opts.fieldManager) {
      throw new Error(`patch ${this.#kind.kind} "${name}": a server-side apply patch needs a fieldManager`);
    }
    const contentType = patchContentTypes[opts.type];
    if (!contentType) throw new Error(`patch ${this.#kind.kind} "${name}": unknown patch type ${String(opts.type)}`);
    return this.#client.request<T>("PATCH", this.#itemPath("patch", name, ns, opts.subresource), {
      query: { ...writeQuery(opts), force: opts.type === "apply" && opts.force ? true : undefined },
      body: patch,
      contentType,
      // JSON patch ops like "add to array" apply twice if repeated; the others converge.
      idempotent: opts.type !== "json",
      signal: opts.signal,
      resource: this.#resource(name),
    });
  }

  async patchStatus(
    name: string,
    patch: unknown,
    opts: Omit<PatchOptions, "subresource" | "type"> & { type?: PatchType } = {},
  ): Promise<T> {
    return this.patch(name, patch, { ...opts, type: opts.type ?? "merge", subresource: "status" });
  }

  async apply(obj: T, opts: ApplyOptions): Promise<T> {
    const name = this.#nameOf("apply", obj);
    const ns = this.#namespaceFor("apply", name, opts.namespace, obj);
    const body = this.#complete(obj);
    return this.patch(name, body, {
      type: "apply",
      fieldManager: opts.fieldManager,
      force: opts.force,
      subresource: opts.subresource,
      namespace: ns,
      dryRun: opts.dryRun,
      signal: opts.signal,
    });
  }

  async delete(name: string, opts: DeleteOptions = {}): Promise<T | Status> {
    const ns = this.#namespaceFor("delete", name, opts.namespace);
    return this.#client.request<T | Status>("DELETE", this.#itemPath("delete", name, ns), {
      body: deleteBody(opts),
      signal: opts.signal,
      resource: this.#resource(name),
    });
  }

  async deleteCollection(opts: ListOptions & DeleteOptions = {}): Promise<ObjectList<T> | Status> {
    const ns = this.#kind.namespaced ? (opts.namespace ?? this.#namespace) : undefined;
    return this.#client.request<ObjectList<T> | Status>("DELETE", this.#collection(ns), {
      query: listQuery(opts),
      body: deleteBody(opts),
      signal: opts.signal,
      resource: this.#resource(),
    });
  }

  async watch(opts: WatchOptions): Promise<AsyncIterable<WatchEvent<T>>> {
    const res = await this.#client.openStream(this.#collection(this.#namespace), {
      query: {
        watch: true,
        labelSelector: opts.labelSelector,
        fieldSelector: opts.fieldSelector,
        resourceVersion: opts.resourceVersion,
        allowWatchBookmarks: opts.allowWatchBookmarks || undefined,
        timeoutSeconds: opts.timeoutSeconds,
      },
      signal: opts.signal,
      resource: this.#resource(),
      accept: this.#metadataOnly ? metadataAccept : undefined,
    });
    const events = decodeWatchStream<T>(res.body, opts.signal);
    return this.#metadataOnly ? partialEvents(events) : events;
  }

  /** Fills apiVersion and kind when the caller left them out (the server requires them). */
  #complete(obj: T): T {
    if (obj.apiVersion && obj.kind) return obj;
    return { ...obj, apiVersion: obj.apiVersion ?? this.#apiVersion, kind: obj.kind ?? this.#kind.kind };
  }
}

/** client-go metadata client's Accept headers (JSON only: we do not speak protobuf), with a plain JSON fallback. */
const metadataAccept = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";
const metadataListAccept = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";

/** A whole object cut down to PartialObjectMetadata; one the server already cut is returned as is. */
function toPartial(obj: KubeObject): PartialObjectMetadata {
  if (obj.kind === "PartialObjectMetadata") return obj as PartialObjectMetadata;
  return { apiVersion: "meta.k8s.io/v1", kind: "PartialObjectMetadata", metadata: obj.metadata ?? {} };
}

async function* partialEvents<T extends KubeObject>(
  events: AsyncIterable<WatchEvent<T>>,
): AsyncGenerator<WatchEvent<T>> {
  for await (const e of events) {
    if (e.type !== "BOOKMARK") e.object = toPartial(e.object) as unknown as T;
    yield e;
  }
}

function listQuery(opts: ListOptions): RequestOptions["query"] {
  return {
    labelSelector: opts.labelSelector,
    fieldSelector: opts.fieldSelector,
    limit: opts.limit,
    continue: opts.continue,
    resourceVersion: opts.resourceVersion,
    resourceVersionMatch: opts.resourceVersionMatch,
  };
}

function writeQuery(opts: WriteOptions): RequestOptions["query"] {
  return {
    dryRun: opts.dryRun ? "All" : undefined,
    fieldManager: opts.fieldManager,
    fieldValidation: opts.fieldValidation,
  };
}

function deleteBody(opts: DeleteOptions): Record<string, unknown> | undefined {
  if (
    opts.propagationPolicy === undefined &&
    opts.gracePeriodSeconds === undefined &&
    opts.preconditions === undefined &&
    !opts.dryRun
  ) {
    return undefined;
  }
  return {
    apiVersion: "v1",
    kind: "DeleteOptions",
    ...(opts.propagationPolicy ? { propagationPolicy: opts.propagationPolicy } : {}),
    ...(opts.gracePeriodSeconds !== undefined ? { gracePeriodSeconds: opts.gracePeriodSeconds } : {}),
    ...(opts.preconditions ? { preconditions: opts.preconditions } : {}),
    ...(opts.dryRun ? { dryRun: ["All"] } : {}),
  };
}
