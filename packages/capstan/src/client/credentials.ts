/**
 * Credentials: where the headers that authenticate a request come from, and when they are refreshed.
 *
 * Expected flow: the transport calls `headers()` before each request (synchronous whenever the cached
 * value is fresh, so the hot path has no extra await); after a 401 it calls `invalidate()` and, if that
 * returned true, retries the request once with fresh headers.
 *
 * Guarantees: a token file is re-read at most `fileTokenPeriodMs` after it changed on disk; a plugin
 * (exec / auth-provider) is asked again after a 401, before its JWT `exp`, and at least every
 * `pluginRecheckMs`.
 *
 * Caveats: a client certificate returned by an exec plugin is picked up once, when `KubeClient.load`
 * builds the connection pool (its TLS material is fixed from then on); a later rotated certificate is not
 * used until the client is rebuilt. Bearer tokens from plugins are refreshed as described above.
 */
import { readFileSync } from "node:fs";
import type { KubeConfig } from "@kubernetes/client-node";

/** Request headers as a plain record (undici takes it as is). */
export type HeaderRecord = Record<string, string>;

/** A source of authentication headers. */
export interface Credentials {
  /** Headers to send with the next request. */
  headers(): HeaderRecord | Promise<HeaderRecord>;
  /** The server answered 401: forget cached credentials. True when fetching them again may help. */
  invalidate(): boolean;
}

/** Headers that never change (a static bearer token, basic auth, no auth at all). */
export class StaticCredentials implements Credentials {
  readonly #headers: HeaderRecord;
  constructor(headers: HeaderRecord) {
    this.#headers = headers;
  }
  headers(): HeaderRecord {
    return this.#headers;
  }
  invalidate(): boolean {
    return false;
  }
}

/**
 * How often a token file is re-read. client-go's `NewCachedFileTokenSource` uses one minute, with 10 s of
 * leeway: half of the two minutes between the kubelet refreshing a projected service-account token (at 80%
 * of its default 10-minute lifetime) and that token expiring, so a rotated token is always picked up
 * before the old one stops working.
 */
export const fileTokenPeriodMs = 60_000 - 10_000;

/** A bearer token read from a file (in-cluster service account, kubeconfig `tokenFile`), re-read periodically. */
export class FileTokenCredentials implements Credentials {
  readonly #path: string;
  readonly #periodMs: number;
  readonly #extra: HeaderRecord;
  #headers: HeaderRecord | undefined;
  #readAt = 0;

  constructor(path: string, extra: HeaderRecord = {}, periodMs = fileTokenPeriodMs) {
    this.#path = path;
    this.#extra = extra;
    this.#periodMs = periodMs;
    this.#read(); // fail at load time, with the path, when the file is missing
  }

  #read(): HeaderRecord {
    let token: string;
    try {
      token = readFileSync(this.#path, "utf8").trim();
    } catch (err) {
      // Keep the last good token when a rotation briefly removes the file (atomic symlink swap).
      if (this.#headers) return this.#headers;
      throw new Error(`cannot read token file ${this.#path}: ${(err as Error).message}`);
    }
    this.#headers = { ...this.#extra, authorization: `Bearer ${token}` };
    this.#readAt = Date.now();
    return this.#headers;
  }

  headers(): HeaderRecord {
    if (this.#headers === undefined || Date.now() - this.#readAt >= this.#periodMs) return this.#read();
    return this.#headers;
  }

  invalidate(): boolean {
    // A 401 may mean the kubelet rotated the token since the last read.
    this.#readAt = 0;
    return true;
  }
}

/**
 * How long a plugin's token is reused without asking the plugin again, when neither a 401 nor a JWT
 * expiry says otherwise. @kubernetes/client-node's exec authenticator caches the credential until its
 * `expirationTimestamp` (so asking is cheap while it is valid) but re-runs the plugin on every call when the
 * credential has none; one minute bounds that to one run per minute while still picking up expired
 * non-JWT tokens (e.g. EKS's `k8s-aws-v1.` tokens) without waiting for a 401.
 */
export const pluginRecheckMs = 60_000;
/** Refresh a JWT this long before its `exp` (client-go's token cache leeway). */
const jwtLeewayMs = 10_000;

/**
 * Credentials produced by @kubernetes/client-node's authenticators for the current user of a
 * `KubeConfig`: exec credential plugins and auth-provider plugins (oidc with refresh, and the others it
 * ships). We ask it for headers only when our cached value is stale.
 */
export class KubeConfigCredentials implements Credentials {
  readonly #kc: KubeConfig;
  readonly #extra: HeaderRecord;
  #headers: HeaderRecord | undefined;
  #validUntil = 0;
  #pending: Promise<HeaderRecord> | undefined;
  #clientCertificate: { cert: string; key: string } | undefined;

  constructor(kc: KubeConfig, extra: HeaderRecord = {}) {
    this.#kc = kc;
    this.#extra = extra;
  }

  headers(): HeaderRecord | Promise<HeaderRecord> {
    if (this.#headers !== undefined && Date.now() < this.#validUntil) return this.#headers;
    // One plugin run for all the requests that find the cache stale at once.
    this.#pending ??= this.#fetch().finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  async #fetch(): Promise<HeaderRecord> {
    const opts: { headers: Record<string, string | string[] | number>; cert?: unknown; key?: unknown } = {
      headers: {},
    };
    try {
      await this.#kc.applyToHTTPSOptions(opts);
    } catch (err) {
      const user = this.#kc.getCurrentUser()?.name ?? "";
      throw new Error(`credentials of kubeconfig user "${user}" could not be obtained: ${(err as Error).message}`, {
        cause: err,
      });
    }
    const headers: HeaderRecord = { ...this.#extra };
    let bearer: string | undefined;
    for (const [k, v] of Object.entries(opts.headers)) {
      const value = Array.isArray(v) ? v.join(", ") : String(v);
      if (k.toLowerCase() === "authorization") {
        headers.authorization = value;
        if (value.startsWith("Bearer ")) bearer = value.slice(7);
      } else headers[k.toLowerCase()] = value;
    }
    if (opts.cert && opts.key) this.#clientCertificate = { cert: String(opts.cert), key: String(opts.key) };
    const now = Date.now();
    const exp = bearer ? jwtExpiry(bearer) : undefined;
    this.#validUntil = exp !== undefined ? Math.min(exp - jwtLeewayMs, now + pluginRecheckMs) : now + pluginRecheckMs;
    this.#headers = headers;
    return headers;
  }

  invalidate(): boolean {
    this.#validUntil = 0;
    return true;
  }

  /** The client certificate and key the plugin (or the kubeconfig) supplied at the last fetch, if any. */
  clientCertificate(): { cert: string; key: string } | undefined {
    return this.#clientCertificate;
  }
}

/** `exp` of a JWT in epoch milliseconds, or undefined when the token is not a JWT with `exp`. */
export function jwtExpiry(token: string): number | undefined {
  const parts = token.split(".");
  if (parts.length !== 3 || parts[1] === undefined) return undefined;
  try {
    const payload = JSON.parse(Buffer.from(parts[1], "base64url").toString("utf8")) as { exp?: unknown };
    return typeof payload.exp === "number" ? payload.exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}
