/**
 * The HTTP transport: one undici connection pool to the API server, with its TLS material, base path,
 * credentials and default headers. It executes single attempts; retries, rate limits and error mapping
 * live above it (`retry.ts`, `rate-limiter.ts`, `resource-client.ts`).
 *
 * Why undici's Pool and these settings: keep-alive reuses TLS connections (a handshake costs more than
 * most API calls); HTTP/1.1 pipelining stays off (`pipelining: 1`) because a slow response would hold up
 * the ones queued behind it on the same socket, and a watch never ends; the number of connections is
 * unbounded by default because every open watch holds one socket for as long as it runs, and a bound lower
 * than the number of watches would starve ordinary requests.
 */
import type { IncomingHttpHeaders } from "node:http";
import type { Readable } from "node:stream";
import { Pool } from "undici";
import type { ClientConfig } from "./config.ts";
import { connectionError } from "./connection-error.ts";
import type { HeaderRecord } from "./credentials.ts";

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
  /** A Node.js Readable (undici's response body), which the watch decoder reads through its events. */
  body: Readable & { text(): Promise<string> };
}

/** Transport options. */
export interface TransportOptions {
  /** Cap on sockets to the server; unbounded by default (see the module comment). */
  connections?: number | null;
  /** Extra headers on every request (e.g. a user agent). */
  headers?: HeaderRecord;
}

/** undici's own default for idle keep-alive sockets; servers that want less say so with `Keep-Alive: timeout`. */
const keepAliveTimeoutMs = 4_000;

/** Executes requests against one API server over a keep-alive connection pool. */
export class Transport {
  readonly #pool: Pool;
  readonly #prefix: string;
  readonly #config: ClientConfig;
  readonly #baseHeaders: HeaderRecord;
  #closed = false;
  #authSeen: HeaderRecord | undefined;
  readonly #merged = new Map<string, HeaderRecord>();

  constructor(config: ClientConfig, opts: TransportOptions = {}) {
    this.#config = config;
    const url = new URL(config.server);
    this.#prefix = url.pathname.replace(/\/+$/, "");
    const tls = config.tls;
    this.#pool = new Pool(url.origin, {
      connections: opts.connections ?? null,
      pipelining: 1,
      keepAliveTimeout: keepAliveTimeoutMs,
      connect: {
        rejectUnauthorized: !tls.insecureSkipTLSVerify,
        ...(tls.ca ? { ca: tls.ca } : {}),
        ...(tls.cert ? { cert: tls.cert } : {}),
        ...(tls.key ? { key: tls.key } : {}),
        ...(tls.servername ? { servername: tls.servername } : {}),
      },
    });
    this.#baseHeaders = { accept: "application/json", ...opts.headers };
  }

  /**
   * Request headers: base + credentials + content type. Merged objects are cached per content type and
   * reused until the credentials hand out a different header object, so the hot path allocates none.
   */
  #headers(req: TransportRequest): HeaderRecord | Promise<HeaderRecord> {
    const creds = this.#config.credentials.headers();
    if (creds instanceof Promise) return creds.then((auth) => this.#merge(auth, req.contentType, req.accept));
    return this.#merge(creds, req.contentType, req.accept);
  }

  #merge(auth: HeaderRecord, contentType: string | undefined, accept: string | undefined): HeaderRecord {
    if (auth !== this.#authSeen) {
      this.#authSeen = auth;
      this.#merged.clear();
    }
    const key = accept === undefined ? (contentType ?? "") : `${contentType ?? ""}|${accept}`;
    let h = this.#merged.get(key);
    if (h === undefined) {
      h = { ...this.#baseHeaders, ...auth };
      if (contentType) h["content-type"] = contentType;
      if (accept) h.accept = accept;
      this.#merged.set(key, h);
    }
    return h;
  }

  /**
   * One attempt; resolves with any HTTP status. Rejects on connection errors and timeouts (a
   * `ConnectionError` naming the server) and on aborts.
   */
  async send(req: TransportRequest): Promise<TransportResponse> {
    if (this.#closed) throw new Error("the Kubernetes client is closed");
    const timeout = req.timeoutMs ?? 0;
    const res = await this.#pool
      .request({
        method: req.method as "GET",
        path: this.#prefix + req.path,
        headers: await this.#headers(req),
        body: req.body ?? null,
        signal: req.signal ?? null,
        headersTimeout: timeout,
        bodyTimeout: timeout,
      })
      .catch((err: unknown) => {
        throw connectionError(err, this.#config.server, timeout) ?? err;
      });
    const body = await res.body.text();
    return { status: res.statusCode, headers: res.headers, body };
  }

  /** One attempt whose body streams (watches). No body timeout: a quiet watch is not a dead one. */
  async stream(req: TransportRequest): Promise<StreamResponse> {
    if (this.#closed) throw new Error("the Kubernetes client is closed");
    const res = await this.#pool
      .request({
        method: req.method as "GET",
        path: this.#prefix + req.path,
        headers: await this.#headers(req),
        body: req.body ?? null,
        signal: req.signal ?? null,
        headersTimeout: req.timeoutMs ?? 0,
        bodyTimeout: 0,
      })
      .catch((err: unknown) => {
        throw connectionError(err, this.#config.server, req.timeoutMs) ?? err;
      });
    return { status: res.statusCode, headers: res.headers, body: res.body };
  }

  /** Closes every socket; requests and watches still running fail or end. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#pool.destroy();
  }
}
