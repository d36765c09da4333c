/**
 * The `oidc` auth-provider of a kubeconfig user (`auth-provider: {name: oidc, config: {...}}`), as
 * client-go's `plugin/pkg/client/auth/oidc` implements it.
 *
 * Expected flow: the `id-token` is sent as the bearer token while it is valid (its JWT `exp` more than
 * `expiryLeewayMs` away). Once it is not, and there is a `refresh-token`, the issuer's discovery document
 * (`<idp-issuer-url>/.well-known/openid-configuration`) names the `token_endpoint`, which gets a
 * `grant_type=refresh_token` request authenticated with `client-id` and `client-secret` (HTTP basic auth
 * first, then as form fields if the endpoint refuses that: golang.org/x/oauth2's auto-detection). The
 * answer's `id_token` (and `refresh_token`, when it rotated) replace the old ones in memory and in the
 * kubeconfig file that defines the user (auth-provider-store.ts). `idp-certificate-authority(-data)`
 * is the CA bundle trusted for the issuer.
 *
 * Guarantees:
 * - One refresh at a time: requests that find the token expired together wait for the same refresh.
 * - Before refreshing, the file is read again: when another process (kubectl) refreshed meanwhile, its
 *   valid id-token is used, or at least its newer refresh-token (client-go does not look, and then sends
 *   a refresh-token the issuer may already have retired).
 * - Refreshed tokens are kept in memory even when writing them to the file fails; that request fails,
 *   saying so, and the next ones use the new token.
 *
 * Caveats: like client-go, a 401 does not force a refresh of a token that is still valid by its `exp`
 * (`invalidate()` returns false); `extra-scopes` are not sent when refreshing.
 */
import { readFileSync } from "node:fs";
import { readAuthProviderConfig, writeAuthProviderConfig } from "./auth-provider-store.ts";
import { CredentialError } from "./credential-error.ts";
import { type Credentials, type HeaderRecord, jwtExpiry } from "./credentials.ts";
import { type OneShotRequest, type OneShotResponse, oneShotRequest } from "./one-shot-request.ts";

/**
 * An id-token counts as expired this long before its `exp`, against clock skew between us and the API
 * server (client-go's `expiryDelta`, taken from golang.org/x/oauth2).
 */
export const expiryLeewayMs = 10_000;

/**
 * Time allowed for each answer of the identity provider (discovery, token endpoint). A refresh takes well
 * under a second; half a minute covers a slow proxy and bounds how long the requests waiting behind a
 * refresh that will never answer are held up.
 */
export const oidcRequestTimeoutMs = 30_000;

/** Keys of the oidc auth-provider config. */
const cfg = {
  issuer: "idp-issuer-url",
  clientId: "client-id",
  clientSecret: "client-secret",
  ca: "idp-certificate-authority",
  caData: "idp-certificate-authority-data",
  idToken: "id-token",
  refreshToken: "refresh-token",
} as const;

/** What client-go refuses in an oidc auth-provider config (one message per problem); empty when usable. */
export function oidcConfigProblems(config: Record<string, string>): string[] {
  const problems: string[] = [];
  if (!config[cfg.issuer]) problems.push(`the oidc auth-provider needs ${cfg.issuer}`);
  if (!config[cfg.clientId]) problems.push(`the oidc auth-provider needs ${cfg.clientId}`);
  const idToken = config[cfg.idToken];
  if (idToken && idToken.split(".").length !== 3) problems.push(`the oidc ${cfg.idToken} is not a JWT`);
  const caData = config[cfg.caData];
  if (caData && !/^[A-Za-z0-9+/\r\n]*={0,2}\s*$/.test(caData)) problems.push(`${cfg.caData} is not base64`);
  return problems;
}

/** Options of `OidcCredentials`. */
export interface OidcCredentialsOptions {
  /** Kubeconfig user name: messages, and the entry refreshed tokens are written to. */
  user: string;
  /** The kubeconfig file that defines the user. */
  file: string;
  /** The auth-provider's `config` (checked with `oidcConfigProblems`). */
  config: Record<string, string>;
  /** More headers to send with the token (impersonation). */
  extra?: HeaderRecord;
  /** For messages; `oidc id-token of kubeconfig user "<user>" (issuer <url>)` by default. */
  description?: string;
  /** Override of `oidcRequestTimeoutMs`. */
  timeoutMs?: number;
}

/** Credentials from the oidc auth-provider (see the module comment). */
export class OidcCredentials implements Credentials {
  readonly description: string;
  readonly #opts: OidcCredentialsOptions;
  readonly #who: string;
  readonly #ca: string | undefined;
  #config: Record<string, string>;
  #headers: HeaderRecord | undefined;
  #validUntil = 0;
  #pending: Promise<HeaderRecord> | undefined;
  /** Whether the token endpoint wants the client credentials as form fields (found by trying). */
  #credentialsInBody = false;
  /** The refresh-token the file held when we last read or wrote it: a different one was put there by someone else. */
  #fileRefreshToken: string | undefined;

  /** Throws when `idp-certificate-authority` cannot be read. */
  constructor(opts: OidcCredentialsOptions) {
    this.#opts = opts;
    this.#config = { ...opts.config };
    this.description =
      opts.description ?? `oidc id-token of kubeconfig user "${opts.user}" (issuer ${this.#config[cfg.issuer]})`;
    this.#who = `oidc auth-provider of kubeconfig user "${opts.user}"`;
    const caData = this.#config[cfg.caData];
    const caFile = this.#config[cfg.ca];
    if (caData) this.#ca = Buffer.from(caData, "base64").toString("utf8");
    else if (caFile) {
      try {
        this.#ca = readFileSync(caFile, "utf8");
      } catch (err) {
        throw new CredentialError(`${cfg.ca} ${caFile} cannot be read: ${(err as Error).message}`, { cause: err });
      }
    }
    this.#fileRefreshToken = this.#config[cfg.refreshToken];
    this.#adopt(this.#config);
  }

  /** Takes `config`'s id-token as the current one when it is still valid; true if it was. */
  #adopt(config: Record<string, string>): boolean {
    const idToken = config[cfg.idToken];
    const exp = idToken ? jwtExpiry(idToken) : undefined;
    if (!idToken || exp === undefined || Date.now() >= exp - expiryLeewayMs) return false;
    this.#config = config;
    this.#headers = { ...this.#opts.extra, authorization: `Bearer ${idToken}` };
    this.#validUntil = exp - expiryLeewayMs;
    return true;
  }

  headers(): HeaderRecord | Promise<HeaderRecord> {
    if (this.#headers !== undefined && Date.now() < this.#validUntil) return this.#headers;
    this.#pending ??= this.#refresh().finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  invalidate(): boolean {
    return false;
  }

  async #refresh(): Promise<HeaderRecord> {
    const fromFile = readAuthProviderConfig(this.#opts.file, this.#opts.user);
    if (fromFile && this.#adopt({ ...this.#config, ...fromFile })) return this.#headers as HeaderRecord;
    const fileRefresh = fromFile?.[cfg.refreshToken];
    // Ours, unless another process rotated the one in the file since we last saw it there.
    const refreshToken =
      fileRefresh && fileRefresh !== this.#fileRefreshToken ? fileRefresh : this.#config[cfg.refreshToken];
    if (!refreshToken) {
      throw new CredentialError(
        `${this.#who}: no valid id-token, and cannot refresh without refresh-token (log in to ${this.#config[cfg.issuer]} again)`,
      );
    }
    const endpoint = await this.#tokenEndpoint();
    const tokens = await this.#redeem(endpoint, refreshToken);
    const updates: Record<string, string> = { [cfg.idToken]: tokens.idToken };
    if (tokens.refreshToken && tokens.refreshToken !== refreshToken) updates[cfg.refreshToken] = tokens.refreshToken;
    const next = { ...this.#config, [cfg.refreshToken]: refreshToken, ...updates };
    if (!this.#adopt(next)) {
      throw new CredentialError(
        `${this.#who}: the issuer returned an id_token that is not a JWT with an exp in the future`,
      );
    }
    try {
      if (writeAuthProviderConfig(this.#opts.file, this.#opts.user, updates)) {
        this.#fileRefreshToken = next[cfg.refreshToken];
      }
    } catch (err) {
      throw new CredentialError(
        `${this.#who}: refreshed its tokens but could not save them in ${this.#opts.file}: ${(err as Error).message} (the new tokens are used from now on by this process)`,
        { cause: err },
      );
    }
    return this.#headers as HeaderRecord;
  }

  async #get(url: string, init: Omit<OneShotRequest, "timeoutMs" | "ca"> = {}): Promise<OneShotResponse> {
    const timeoutMs = this.#opts.timeoutMs ?? oidcRequestTimeoutMs;
    try {
      return await oneShotRequest(url, { ...init, timeoutMs, ...(this.#ca ? { ca: this.#ca } : {}) });
    } catch (err) {
      throw new CredentialError(`${this.#who}: ${init.method ?? "GET"} ${url} failed: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }

  /** OpenID Connect discovery: the token endpoint named by the issuer's metadata. */
  async #tokenEndpoint(): Promise<string> {
    const wellKnown = `${this.#config[cfg.issuer]?.replace(/\/$/, "")}/.well-known/openid-configuration`;
    const res = await this.#get(wellKnown);
    if (res.status !== 200) {
      throw new CredentialError(
        `${this.#who}: failed to query metadata endpoint ${wellKnown}: ${res.status} ${snippet(res.body)}`,
      );
    }
    let endpoint: unknown;
    try {
      endpoint = (JSON.parse(res.body) as { token_endpoint?: unknown }).token_endpoint;
    } catch (err) {
      throw new CredentialError(`${this.#who}: failed to decode provider discovery object: ${(err as Error).message}`);
    }
    if (typeof endpoint !== "string" || endpoint === "") {
      throw new CredentialError(`${this.#who}: discovery object at ${wellKnown} doesn't contain a token_endpoint`);
    }
    return endpoint;
  }

  /** The refresh-token grant (RFC 6749 section 6). */
  async #redeem(
    endpoint: string,
    refreshToken: string,
  ): Promise<{ idToken: string; refreshToken: string | undefined }> {
    const clientId = this.#config[cfg.clientId] ?? "";
    const secret = this.#config[cfg.clientSecret] ?? "";
    const post = (inBody: boolean) => {
      const form = new URLSearchParams({ grant_type: "refresh_token", refresh_token: refreshToken });
      const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" };
      if (inBody) {
        form.set("client_id", clientId);
        if (secret) form.set("client_secret", secret);
      } else {
        // RFC 6749 2.3.1: both halves form-encoded before base64.
        headers.authorization = `Basic ${Buffer.from(`${formEscape(clientId)}:${formEscape(secret)}`).toString("base64")}`;
      }
      return this.#get(endpoint, { method: "POST", headers, body: form.toString() });
    };
    const ok = (r: { status: number }) => r.status >= 200 && r.status <= 299;
    let res = await post(this.#credentialsInBody);
    if (!ok(res) && !this.#credentialsInBody) {
      // golang.org/x/oauth2 tries again with the client credentials in the form after any failure.
      const second = await post(true);
      if (ok(second)) this.#credentialsInBody = true;
      // When both fail, the first answer is the one that explains, unless it refused the client itself.
      if (ok(second) || res.status === 401 || parseTokenResponse(res.type, res.body).error === "invalid_client") {
        res = second;
      }
    }
    const fields = parseTokenResponse(res.type, res.body);
    if (!ok(res)) {
      const reason = fields.error
        ? `${fields.error}${fields.error_description ? `: ${fields.error_description}` : ""}`
        : snippet(res.body);
      throw new CredentialError(`${this.#who}: failed to refresh token: ${endpoint} answered ${res.status}: ${reason}`);
    }
    if (!fields.access_token) {
      throw new CredentialError(`${this.#who}: failed to refresh token: server response missing access_token`);
    }
    if (!fields.id_token) {
      // id_token is optional in a refresh answer; some providers (Okta) leave it out.
      throw new CredentialError(
        `${this.#who}: token response did not contain an id_token, either the scope "openid" wasn't requested upon login, or the provider doesn't support id_tokens as part of the refresh response`,
      );
    }
    return { idToken: fields.id_token, refreshToken: fields.refresh_token || undefined };
  }
}

/** A token endpoint's answer: JSON, or form-encoded (as golang.org/x/oauth2 also accepts). */
function parseTokenResponse(contentType: string, body: string): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  if (/application\/x-www-form-urlencoded|text\/plain/.test(contentType)) {
    for (const [k, v] of new URLSearchParams(body)) out[k] = v;
    return out;
  }
  try {
    const parsed = JSON.parse(body) as Record<string, unknown>;
    for (const [k, v] of Object.entries(parsed ?? {})) if (typeof v === "string") out[k] = v;
  } catch {
    // Not JSON: no fields; the caller reports the status and body.
  }
  return out;
}

/** Go's url.QueryEscape: like encodeURIComponent, plus `!'()*`, and a space becomes `+`. */
function formEscape(s: string): string {
  return encodeURIComponent(s)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, "+");
}

/** The start of a body for a message (client-go keeps 80 bytes), on one line. */
function snippet(body: string): string {
  const text = body.replace(/\s+/g, " ").trim();
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}...` : text);
}
