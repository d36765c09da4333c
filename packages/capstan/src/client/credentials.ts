/**
 * Credentials: where the headers that authenticate a request come from, and when they are refreshed.
 *
 * Expected flow: the transport calls `headers()` before each request (synchronous whenever the cached
 * value is fresh, so the hot path has no extra await); after a 401 it calls `invalidate()` and, if that
 * returned true, retries the request once with fresh headers. If the retry is refused too, the error
 * names the credential by its `description`.
 *
 * Implementations: `StaticCredentials` (a kubeconfig token, basic auth, or nothing), `FileTokenCredentials`
 * (a token file, re-read), `ExecCredentials` (exec-credential.ts) and `OidcCredentials`
 * (oidc-credential.ts). `loadClientConfig` (config.ts) picks one from the kubeconfig user.
 *
 * Guarantees: a token file is re-read at most `fileTokenPeriodMs` after it changed on disk; an exec plugin
 * is run again after its `expirationTimestamp` and after a 401; an oidc id-token is refreshed before its
 * JWT `exp`.
 *
 * Caveats: a client certificate returned by an exec plugin is picked up once, when `KubeClient.load`
 * builds the connection pool (its TLS material is fixed from then on); a later rotated certificate is not
 * used until the client is rebuilt. Bearer tokens are refreshed as described above.
 */
import { readFileSync } from "node:fs";
import { CredentialError } from "./credential-error.ts";

/**
 * Request headers as a plain record (Node's http module takes it as is). A list sends the header once per value, as
 * `Impersonate-Group` needs: the API server reads every header line as one group, never splitting on commas.
 */
export type HeaderRecord = Record<string, string | string[]>;

/** A TLS client certificate and its private key, PEM. */
export interface ClientCertificate {
  cert: string;
  key: string;
}

/** A source of authentication headers. */
export interface Credentials {
  /**
   * What authenticates the requests, for messages (never a secret): `bearer token of kubeconfig user
   * "alice" (tokenFile /x/y)`, `exec plugin aws of kubeconfig user "eks"`, `service account token /var/run/...`.
   */
  readonly description: string;
  /** Headers to send with the next request. */
  headers(): HeaderRecord | Promise<HeaderRecord>;
  /** The server answered 401: forget cached credentials. True when fetching them again may help. */
  invalidate(): boolean;
  /**
   * The TLS client certificate the credential source itself supplied at its last `headers()` (an exec
   * plugin's `clientCertificateData`/`clientKeyData`), if any. Certificates named in the kubeconfig are
   * not here: they are in `ClientConfig.tls`.
   */
  clientCertificate?(): ClientCertificate | undefined;
}

/** Headers that never change (a static bearer token, basic auth, impersonation only, no auth at all). */
export class StaticCredentials implements Credentials {
  readonly description: string;
  readonly #headers: HeaderRecord;
  constructor(headers: HeaderRecord, description?: string) {
    this.#headers = headers;
    this.description =
      description ?? (headers.authorization === undefined ? "no credentials" : "a fixed authorization header");
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

/** Options of `FileTokenCredentials`. */
export interface FileTokenOptions {
  /** More headers to send with the token (impersonation). */
  extra?: HeaderRecord;
  /** Re-read period; `fileTokenPeriodMs` by default. */
  periodMs?: number;
  /** Used while the file cannot be read (a kubeconfig user with both `token` and `tokenFile`). */
  token?: string;
  /** For messages; `bearer token from <path>` by default. */
  description?: string;
}

/** A bearer token read from a file (in-cluster service account, kubeconfig `tokenFile`), re-read periodically. */
export class FileTokenCredentials implements Credentials {
  readonly description: string;
  readonly #path: string;
  readonly #periodMs: number;
  readonly #extra: HeaderRecord;
  #headers: HeaderRecord | undefined;
  #readAt = 0;

  constructor(path: string, opts: FileTokenOptions = {}) {
    this.#path = path;
    this.#extra = opts.extra ?? {};
    this.#periodMs = opts.periodMs ?? fileTokenPeriodMs;
    this.description = opts.description ?? `bearer token from ${path}`;
    if (opts.token) this.#headers = { ...this.#extra, authorization: `Bearer ${opts.token}` };
    this.#read(); // fail at load time, with the path, when the file is missing and there is no token
  }

  #read(): HeaderRecord {
    let token: string;
    try {
      token = readFileSync(this.#path, "utf8").trim();
    } catch (err) {
      // Keep the last good token when a rotation briefly removes the file (atomic symlink swap), and try
      // again a period later rather than on every request.
      if (this.#headers) {
        this.#readAt = Date.now();
        return this.#headers;
      }
      throw new CredentialError(`cannot read token file ${this.#path}: ${(err as Error).message}`);
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

/** `exp` of a JWT in epoch milliseconds, or undefined when the token is not a JWT with `exp`. */
export function jwtExpiry(token: string): number | undefined {
  const parts = token.split(".");
  if (parts.length !== 3 || parts[1] === undefined) return undefined;
  try {
    const payload = JSON.parse(Buffer.from(parts[1], "base64url").toString("utf8")) as { exp?: unknown };
    return typeof payload.exp === "number" ? Math.trunc(payload.exp) * 1000 : undefined;
  } catch {
    return undefined;
  }
}
