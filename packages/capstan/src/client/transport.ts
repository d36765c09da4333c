/**
 * The HTTP transport: one keep-alive agent of Node's own `https` (or `http`) module for the API server,
 * with its TLS material, base path, credentials and default headers. It executes single attempts;
 * retries, rate limits and error mapping live above it (`retry.ts`, `rate-limiter.ts`,
 * `resource-client.ts`).
 *
 * Why Node's agent rather than a client library: it is part of the runtime, so an operator process
 * loads no HTTP client code of its own (undici's 1 MB of JavaScript cost ~8 MB of RSS per process).
 * The TLS material goes to the agent as one secure context (see `secureContextOptions`): every request
 * of an operator passes through the agent's pool lookup, which must stay cheap.
 * Keep-alive reuses TLS connections (a handshake costs more than most API calls); one request at a time
 * per socket (HTTP/1.1 without pipelining), so a slow response or a watch never holds up another; the
 * number of sockets is unbounded by default because every open watch holds one for as long as it runs,
 * and a bound lower than the number of watches would starve ordinary requests.
 *
 * Timeouts: `connectTimeoutMs` for the TCP and TLS handshake of a new socket, then `timeoutMs` of a
 * request for its response headers and for each gap in its body (a watch's body has none: a quiet
 * watch is not a dead one). Errors carry codes the layers above decide on: Node's own socket codes
 * (`ECONNREFUSED`, `ECONNRESET`, a TLS verification code) and {@link TransportErrorCode} for timeouts.
 */
import {
  type ClientRequest,
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
} from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import type { Socket } from "node:net";
import { createSecureContext, type SecureContext, type SecureContextOptions } from "node:tls";
import type { ClientConfig } from "./config.ts";
import { connectionError } from "./connection-error.ts";
import type { HeaderRecord } from "./credentials.ts";
import { TransportError } from "./transport-error.ts";

/** One request attempt. */
export interface TransportRequest {
  method: string;
  /** Path and query, already encoded, starting with `/`; the server URL's own path is prefixed. */
  path: string;
  body?: string;
  contentType?: string;
  /** Overrides the default `accept: application/json` (e.g. for the metadata-only view). */
  accept?: string;
  signal?: AbortSignal;
  /** Time allowed for the response headers and then for each gap in the body (ms); 0 = none. */
  timeoutMs?: number;
}

/** A complete response (body read as text). */
export interface TransportResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A response whose body is left to stream. The caller must consume or `destroy()` it. */
export interface StreamResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The response body, a Node.js Readable, which the watch decoder reads through its events. */
  body: IncomingMessage;
}

/** Transport options. */
export interface TransportOptions {
  /** Cap on sockets to the server; unbounded by default (see the module comment). */
  connections?: number | null;
  /** Extra headers on every request (e.g. a user agent). */
  headers?: HeaderRecord;
  /** Time for a new socket's TCP and TLS handshake (ms); default {@link DEFAULT_CONNECT_TIMEOUT_MS}. */
  connectTimeoutMs?: number;
}

/** client-go's dialer timeout (and undici's): a handshake that takes longer is not coming. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

/**
 * How long an idle keep-alive socket is kept: client-go's `IdleConnTimeout` is 90 s, but the
 * kube-apiserver closes idle connections sooner behind most load balancers; 4 s (Node's and undici's
 * default) costs a handshake after a quiet spell and never sends a request on a socket the server is
 * closing.
 */
const keepAliveTimeoutMs = 4_000;

/**
 * The agent's TLS material as one secure context, built once: given `ca`, `cert` and `key` as texts,
 * Node's `https.Agent` builds a new secure context for every socket. Material Node cannot load is
 * passed as before, so the error still surfaces where it did: on the request.
 */
function secureContextOptions(tls: ClientConfig["tls"]): SecureContextOptions | { secureContext: SecureContext } {
  const material: SecureContextOptions = {
    ...(tls.ca ? { ca: tls.ca } : {}),
    ...(tls.cert ? { cert: tls.cert } : {}),
    ...(tls.key ? { key: tls.key } : {}),
  };
  try {
    return { secureContext: createSecureContext(material) };
  } catch {
    return material;
  }
}

/**
 * Node's agents name a connection pool per request from its options (host, port and ~20 TLS
 * settings, concatenated two to three times per request: 5% of an operator's allocations in a
 * reconcile burst, measured). A transport's agent serves one server with one TLS configuration, so
 * its pool has one name.
 */
const POOL_NAME = "api-server";
class OneServerHttpsAgent extends HttpsAgent {
  override getName(): string {
    return POOL_NAME;
  }
}
class OneServerHttpAgent extends HttpAgent {
  override getName(): string {
    return POOL_NAME;
  }
}

/** Executes requests against one API server over a keep-alive connection pool. */
export class Transport {
  readonly #agent: HttpAgent;
  readonly #request: typeof httpRequest;
  readonly #host: string;
  readonly #port: string;
  readonly #prefix: string;
  readonly #config: ClientConfig;
  readonly #baseHeaders: HeaderRecord;
  readonly #connectTimeoutMs: number;
  #closed = false;
  /** The Host header, as Node would write it (`[v6]` bracketed; the port unless it is the scheme's default). */
  readonly #hostHeader: string;
  #authSeen: HeaderRecord | undefined;
  readonly #merged = new Map<string, string[]>();

  constructor(config: ClientConfig, opts: TransportOptions = {}) {
    this.#config = config;
    const url = new URL(config.server);
    this.#prefix = url.pathname.replace(/\/+$/, "");
    this.#host = url.hostname.replace(/^\[|\]$/g, "");
    const https = url.protocol === "https:";
    this.#port = url.port || (https ? "443" : "80");
    const hostName = this.#host.includes(":") ? `[${this.#host}]` : this.#host;
    this.#hostHeader = url.port === "" ? hostName : `${hostName}:${url.port}`;
    const tls = config.tls;
    const common = {
      keepAlive: true,
      // Sockets are reused from the most recently used, so idle ones past the keep-alive time close.
      scheduling: "lifo" as const,
      maxSockets: opts.connections ?? Number.POSITIVE_INFINITY,
      // The idle time after which a free socket is closed (an active one only gets a 'timeout' event).
      timeout: keepAliveTimeoutMs,
    };
    this.#agent = https
      ? new OneServerHttpsAgent({
          ...common,
          rejectUnauthorized: !tls.insecureSkipTLSVerify,
          ...secureContextOptions(tls),
          ...(tls.servername ? { servername: tls.servername } : {}),
        })
      : new OneServerHttpAgent(common);
    this.#request = https ? httpsRequest : httpRequest;
    this.#connectTimeoutMs = opts.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    this.#baseHeaders = { accept: "application/json", ...opts.headers };
  }

  /**
   * Request headers: base + credentials + content type, as the flat name/value list Node takes as
   * `rawHeaders` (Node then writes them as given: no `setHeader` per header and per request, ~15% of
   * its client's CPU per request in a loop, measured). Built per content type and reused until the
   * credentials hand out a different header object, so the hot path builds none.
   */
  #headers(req: TransportRequest): string[] | Promise<string[]> {
    const creds = this.#config.credentials.headers();
    if (creds instanceof Promise) return creds.then((auth) => this.#merge(auth, req.contentType, req.accept));
    return this.#merge(creds, req.contentType, req.accept);
  }

  #merge(auth: HeaderRecord, contentType: string | undefined, accept: string | undefined): string[] {
    if (auth !== this.#authSeen) {
      this.#authSeen = auth;
      this.#merged.clear();
    }
    const key = accept === undefined ? (contentType ?? "") : `${contentType ?? ""}|${accept}`;
    let h = this.#merged.get(key);
    if (h === undefined) {
      const merged: HeaderRecord = { ...this.#baseHeaders, ...auth };
      if (contentType) merged["content-type"] = contentType;
      if (accept) merged.accept = accept;
      h = rawHeaders(merged, this.#hostHeader);
      this.#merged.set(key, h);
    }
    return h;
  }

  /**
   * One attempt; resolves with any HTTP status. Rejects on connection errors and timeouts (a
   * `ConnectionError` naming the server) and on aborts.
   */
  send(req: TransportRequest): Promise<TransportResponse> {
    return this.#attempt(req, false) as Promise<TransportResponse>;
  }

  /** One attempt whose body streams (watches). No body timeout: a quiet watch is not a dead one. */
  stream(req: TransportRequest): Promise<StreamResponse> {
    return this.#attempt(req, true) as Promise<StreamResponse>;
  }

  #attempt(req: TransportRequest, stream: boolean): Promise<TransportResponse | StreamResponse> {
    if (this.#closed) {
      return Promise.reject(new TransportError("the Kubernetes client is closed", "ERR_CLIENT_CLOSED"));
    }
    let headers: string[] | Promise<string[]>;
    try {
      // Credentials are synchronous but for a refresh (exec plugin, oidc): no await on the hot path.
      headers = this.#headers(req);
    } catch (err) {
      return Promise.reject(err);
    }
    if (headers instanceof Promise) return headers.then((h) => this.#exchange(req, h, stream));
    return this.#exchange(req, headers, stream);
  }

  /**
   * Sends the request and settles once with the whole response (or, for a stream, with its headers).
   * One promise, one timer and one abort listener per attempt: every API call of an operator passes
   * here, and the CPU a request costs the operator is mostly this and Node's HTTP client.
   */
  #exchange(req: TransportRequest, headers: string[], stream: boolean): Promise<TransportResponse | StreamResponse> {
    const { signal } = req;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const timeoutMs = req.timeoutMs ?? 0;
    return new Promise((resolve, reject) => {
      let settled = false;
      let timer: NodeJS.Timeout | undefined;
      let res: IncomingMessage | undefined;
      const fail = (err: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        reject(res === undefined ? (connectionError(err, this.#config.server, timeoutMs) ?? err) : err);
      };
      const onAbort = () => {
        const reason = signal?.reason;
        if (res === undefined) outgoing.destroy();
        else res.destroy(reason instanceof Error ? reason : undefined);
        fail(reason);
      };
      const outgoing = this.#request({
        agent: this.#agent,
        host: this.#host,
        port: this.#port,
        method: req.method,
        path: this.#prefix + req.path,
        headers: req.body === undefined ? headers : [...headers, "content-length", String(Buffer.byteLength(req.body))],
      });
      outgoing.on("socket", (socket: Socket) => {
        // A reused socket is connected already; a new one gets the handshake's time limit.
        if (socket.connecting) this.#limitHandshake(outgoing, socket);
      });
      outgoing.on("response", (incoming: IncomingMessage) => {
        if (settled) {
          incoming.destroy();
          return;
        }
        res = incoming;
        if (stream) {
          settled = true;
          clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
          if (signal) {
            // An abort after the headers ends the body (a watch being stopped).
            const stop = () => incoming.destroy(signal.reason instanceof Error ? signal.reason : undefined);
            signal.addEventListener("abort", stop, { once: true });
            incoming.once("close", () => signal.removeEventListener("abort", stop));
          }
          resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, body: incoming });
          return;
        }
        // The headers' timer now limits each pause of the body: refreshed per chunk, not re-created.
        timer?.refresh();
        let first: Buffer | undefined;
        let chunks: Buffer[] | undefined;
        incoming.on("data", (chunk: Buffer) => {
          if (first === undefined) first = chunk;
          else if (chunks === undefined) chunks = [first, chunk];
          else chunks.push(chunk);
          timer?.refresh();
        });
        incoming.once("end", () => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
          const body = chunks !== undefined ? Buffer.concat(chunks) : first;
          resolve({
            status: incoming.statusCode ?? 0,
            headers: incoming.headers,
            body: body === undefined ? "" : body.toString("utf8"),
          });
        });
        incoming.on("error", fail);
        incoming.once("close", () => {
          // Destroyed without 'end' or 'error' (an abort with no reason): the body is incomplete.
          if (!incoming.complete) {
            fail(signal?.reason ?? new TransportError("the response body ended early", "ERR_BODY_INCOMPLETE"));
          }
        });
      });
      outgoing.on("error", fail);
      if (timeoutMs > 0) {
        timer = setTimeout(() => {
          const err =
            res === undefined
              ? new TransportError(`no answer within ${timeoutMs} ms`, "ERR_HEADERS_TIMEOUT")
              : new TransportError(`the body paused longer than ${timeoutMs} ms`, "ERR_BODY_TIMEOUT");
          if (res === undefined) outgoing.destroy(err);
          else res.destroy(err);
          fail(err);
        }, timeoutMs);
      }
      signal?.addEventListener("abort", onAbort, { once: true });
      outgoing.end(req.body);
    });
  }

  /** Destroys `outgoing` if its new socket has not finished the TCP and TLS handshake in time. */
  #limitHandshake(outgoing: ClientRequest, socket: Socket): void {
    const connectTimer = setTimeout(() => {
      outgoing.destroy(new TransportError(`no connection within ${this.#connectTimeoutMs} ms`, "ERR_CONNECT_TIMEOUT"));
    }, this.#connectTimeoutMs);
    const connected = () => clearTimeout(connectTimer);
    socket.once(this.#request === httpsRequest ? "secureConnect" : "connect", connected);
    socket.once("close", connected);
  }

  /** Closes every socket; requests and watches still running fail or end. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#agent.destroy();
  }
}

/**
 * `headers` as a flat name/value list, as `setHeader` would have sent them: names compared without
 * case (the last one given wins, in the place of the first), a list value as one line per value,
 * and a Host header unless one was given.
 */
function rawHeaders(headers: HeaderRecord, host: string): string[] {
  const byName = new Map<string, [string, string | string[]]>();
  for (const [name, value] of Object.entries(headers)) byName.set(name.toLowerCase(), [name, value]);
  const out: string[] = [];
  if (!byName.has("host")) out.push("host", host);
  for (const [name, value] of byName.values()) {
    if (Array.isArray(value)) for (const v of value) out.push(name, v);
    else out.push(name, value);
  }
  return out;
}
