/**
 * Delegated authentication and authorization of scrapes, as controller-runtime's
 * `filters.WithAuthenticationAndAuthorization` (and kube-rbac-proxy) do: the API server decides.
 *
 * ## Expected flow (per request)
 * 1. The bearer token of the `Authorization` header is sent in a TokenReview
 *    (`authentication.k8s.io/v1`); no token, or one the API server does not authenticate: 401.
 * 2. The user it names (name, uid, groups, extra) is checked with a SubjectAccessReview
 *    (`authorization.k8s.io/v1`) for the non-resource URL: the request's path, and its method in
 *    lower case as the verb (`GET /metrics` -> `get` on `/metrics`, what the generated
 *    `<operator>-metrics-reader` ClusterRole grants); not allowed: 403.
 * 3. Allowed: the wrapped handler answers.
 * A review that fails (API server unreachable, or the operator may not create reviews) is a 500
 * and is logged; nothing is cached then.
 *
 * ## Caching (controller-runtime's delegating authenticator and authorizer TTLs)
 * - TokenReview answers, authenticated or not, for 1 minute, keyed by the token's SHA-256 (the
 *   token itself is not kept).
 * - SubjectAccessReview answers: allowed for 5 minutes, denied for 30 seconds (so a new binding is
 *   honoured quickly, and a removed one within 5 minutes).
 * - Each cache holds at most {@link MAX_CACHED} entries (oldest dropped first), so a flood of
 *   garbage tokens costs one review each and bounded memory. Concurrent requests with the same key
 *   share one review.
 *
 * ## Guarantees
 * - No response body of the wrapped handler is written before both reviews allowed the request.
 * - A review never outlives the server: it is aborted when the server stops, and after
 *   {@link REVIEW_TIMEOUT_MS}. (Not when its client goes: other requests may be waiting on it.)
 *
 * The operator needs `create` on tokenreviews.authentication.k8s.io and
 * subjectaccessreviews.authorization.k8s.io (`needs.delegatedAuth()`, in what `capstan generate
 * rbac` prints; the built-in `system:auth-delegator` ClusterRole grants the same).
 */
import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { KubeClient } from "../client/resource-client.ts";
import type { RouteHandler } from "./health.ts";

/** Wraps the handler of an endpoint (controller-runtime's `metricsserver.Filter`). */
export type MetricsFilter = (handler: RouteHandler) => RouteHandler;

/** What a filter provider gets: the manager's client and logger, and a signal that aborts when the server stops. */
export interface MetricsFilterContext {
  client: KubeClient;
  logger: Logger;
  signal: AbortSignal;
}

/** Makes the filter when the server starts (controller-runtime's `FilterProvider`). */
export type MetricsFilterProvider = (context: MetricsFilterContext) => MetricsFilter;

/** The user a TokenReview authenticated. */
export interface ReviewedUser {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** Tuning of {@link withAuthenticationAndAuthorization}; the defaults are controller-runtime's. */
export interface DelegatedAuthOptions {
  /** How long a TokenReview answer is reused (default 1 minute). */
  authenticationCacheTtlMs?: number;
  /** How long an allowing SubjectAccessReview answer is reused (default 5 minutes). */
  allowCacheTtlMs?: number;
  /** How long a denying SubjectAccessReview answer is reused (default 30 seconds). */
  denyCacheTtlMs?: number;
}

/** controller-runtime's `CacheTTL` of the delegating authenticator. */
const AUTHENTICATION_TTL_MS = 60_000;
/** controller-runtime's `AllowCacheTTL` and `DenyCacheTTL` of the delegating authorizer. */
const ALLOW_TTL_MS = 5 * 60_000;
const DENY_TTL_MS = 30_000;
/** controller-runtime's `TokenAccessReviewTimeout`; used for both reviews. */
export const REVIEW_TIMEOUT_MS = 10_000;
/** Entries per cache: far more than the scrapers of one operator, small enough to be negligible memory. */
export const MAX_CACHED = 1024;

/**
 * The filter provider that authenticates every request with a TokenReview and authorizes it with
 * a SubjectAccessReview; see the module documentation.
 */
export function withAuthenticationAndAuthorization(options: DelegatedAuthOptions = {}): MetricsFilterProvider {
  return ({ client, logger, signal }) => {
    const reviews = new DelegatedReviews(client, options, signal);
    return (handler) => async (req, res, subPath) => {
      const token = bearerToken(req);
      if (token === undefined) {
        deny(res, 401, "Unauthorized");
        return;
      }
      let user: ReviewedUser | undefined;
      try {
        user = await reviews.authenticate(token);
      } catch (err) {
        logger.error({ err, path: pathOf(req) }, "metrics: authentication failed (TokenReview)");
        deny(res, 500, "Authentication failed");
        return;
      }
      if (user === undefined) {
        deny(res, 401, "Unauthorized");
        return;
      }
      const verb = (req.method ?? "GET").toLowerCase();
      const path = pathOf(req);
      let allowed: boolean;
      try {
        allowed = await reviews.authorize(user, verb, path);
      } catch (err) {
        logger.error({ err, user: user.username, path }, "metrics: authorization failed (SubjectAccessReview)");
        deny(res, 500, `Authorization for user ${user.username} failed`);
        return;
      }
      if (!allowed) {
        logger.debug({ user: user.username, verb, path }, "metrics: authorization denied");
        deny(res, 403, `Authorization denied for user ${user.username}`);
        return;
      }
      await handler(req, res, subPath);
    };
  };
}

/** The token of `Authorization: Bearer <token>` (scheme case-insensitive, as kube-apiserver reads it). */
export function bearerToken(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (header === undefined) return undefined;
  const match = /^bearer\s+(\S+)\s*$/i.exec(header.trim());
  return match?.[1];
}

/** Reviews and their caches; see the module documentation. */
class DelegatedReviews {
  private readonly tokens: TtlCache<ReviewedUser | undefined>;
  private readonly decisions: TtlCache<boolean>;
  private readonly ttl: { authn: number; allow: number; deny: number };

  constructor(
    private readonly client: KubeClient,
    options: DelegatedAuthOptions,
    private readonly stop: AbortSignal,
  ) {
    this.ttl = {
      authn: options.authenticationCacheTtlMs ?? AUTHENTICATION_TTL_MS,
      allow: options.allowCacheTtlMs ?? ALLOW_TTL_MS,
      deny: options.denyCacheTtlMs ?? DENY_TTL_MS,
    };
    this.tokens = new TtlCache(MAX_CACHED);
    this.decisions = new TtlCache(MAX_CACHED);
  }

  /** The user the token authenticates as, or undefined. */
  authenticate(token: string): Promise<ReviewedUser | undefined> {
    const key = createHash("sha256").update(token).digest("base64");
    return this.tokens.get(key, async () => {
      const review = await this.client.request<TokenReviewAnswer>(
        "POST",
        "/apis/authentication.k8s.io/v1/tokenreviews",
        {
          body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", spec: { token } },
          signal: this.stop,
          timeoutMs: REVIEW_TIMEOUT_MS,
          idempotent: true, // nothing is stored: sending it again is harmless
        },
      );
      const status = review.status;
      const user =
        status?.authenticated === true && typeof status.user?.username === "string"
          ? (status.user as ReviewedUser)
          : undefined;
      return { value: user, ttlMs: this.ttl.authn };
    });
  }

  /** Whether `user` may `verb` the non-resource URL `path`. */
  authorize(user: ReviewedUser, verb: string, path: string): Promise<boolean> {
    const key = JSON.stringify([user.username, user.uid ?? "", user.groups ?? [], user.extra ?? {}, verb, path]);
    return this.decisions.get(key, async () => {
      const review = await this.client.request<SubjectAccessReviewAnswer>(
        "POST",
        "/apis/authorization.k8s.io/v1/subjectaccessreviews",
        {
          body: {
            apiVersion: "authorization.k8s.io/v1",
            kind: "SubjectAccessReview",
            spec: {
              user: user.username,
              ...(user.uid !== undefined ? { uid: user.uid } : {}),
              groups: user.groups ?? [],
              ...(user.extra !== undefined ? { extra: user.extra } : {}),
              nonResourceAttributes: { path, verb },
            },
          },
          signal: this.stop,
          timeoutMs: REVIEW_TIMEOUT_MS,
          idempotent: true,
        },
      );
      const allowed = review.status?.allowed === true;
      return { value: allowed, ttlMs: allowed ? this.ttl.allow : this.ttl.deny };
    });
  }
}

interface TokenReviewAnswer {
  status?: { authenticated?: boolean; user?: Partial<ReviewedUser>; error?: string };
}

interface SubjectAccessReviewAnswer {
  status?: { allowed?: boolean; denied?: boolean; reason?: string };
}

/**
 * A bounded cache of values that expire, loading a missing key once however many callers ask at
 * the same time. Expiry is checked on read (no timer). A failed load is not cached.
 */
class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();
  private readonly loading = new Map<string, Promise<V>>();

  constructor(private readonly max: number) {}

  async get(key: string, load: () => Promise<{ value: V; ttlMs: number }>): Promise<V> {
    const hit = this.entries.get(key);
    if (hit !== undefined && hit.expires > Date.now()) return hit.value;
    if (hit !== undefined) this.entries.delete(key);
    const pending = this.loading.get(key);
    if (pending !== undefined) return pending;
    const loaded = load()
      .then(({ value, ttlMs }) => {
        if (this.entries.size >= this.max) {
          const oldest = this.entries.keys().next().value;
          if (oldest !== undefined) this.entries.delete(oldest);
        }
        this.entries.set(key, { value, expires: Date.now() + ttlMs });
        return value;
      })
      .finally(() => this.loading.delete(key));
    this.loading.set(key, loaded);
    return loaded;
  }
}

function pathOf(req: IncomingMessage): string {
  return new URL(req.url ?? "/", "http://localhost").pathname;
}

function deny(res: ServerResponse, status: number, message: string): void {
  res
    .writeHead(status, { "content-type": "text/plain; charset=utf-8", "x-content-type-options": "nosniff" })
    .end(`${message}\n`);
}
