/**
 * ServiceAccount tokens: JWTs the server signs and later accepts, with the claims of a real bound
 * service account token (pkg/serviceaccount/claims.go): `iss`, `sub`, `aud`, `exp`, `iat`, `nbf`, `jti`
 * and the private `kubernetes.io` claim naming the namespace and the ServiceAccount (name, uid).
 *
 * ## Guarantees
 * - A token authenticates as `system:serviceaccount:<ns>:<sa>` with the groups `system:serviceaccounts`,
 *   `system:serviceaccounts:<ns>` and `system:authenticated`, only while its signature checks, it has
 *   not expired, one of its audiences is the server's, and the ServiceAccount it names still exists with
 *   the same uid (deleting the ServiceAccount revokes its tokens, as on a real server).
 * - Tokens are only accepted by a server with the same signing key (rbac.ts derives it from the admin
 *   token, so a restart with `--data-dir`, which keeps the token, keeps accepting them).
 *
 * ## Caveats
 * - Signed with HMAC-SHA256 (`alg: HS256`), not RS256 with a published key: nothing outside the
 *   server can verify them (no OIDC discovery); TokenReview is the way to check one.
 */
import { createHmac, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import type { InProcessApi } from "../in-process-api.ts";
import type { AuthUser } from "./attributes.ts";
import { serviceAccountUsername } from "./rbac-authorizer.ts";

/** The issuer and default audience kube-apiserver clusters (kind, kubeadm) are configured with. */
export const DEFAULT_ISSUER = "https://kubernetes.default.svc.cluster.local";

/** TokenRequest's default lifetime: one hour (the API's expirationSeconds default). */
export const DEFAULT_EXPIRATION_SECONDS = 3600;

/** 32 bytes: SHA-256's output length, the least RFC 2104 recommends for an HMAC key. */
const KEY_BYTES = 32;

const SERVICE_ACCOUNTS = { group: "", version: "v1", plural: "serviceaccounts" };

export interface IssuedToken {
  token: string;
  /** Expiry, seconds since the epoch. */
  expiresAt: number;
}

interface Claims {
  iss: string;
  sub: string;
  aud: string[];
  exp: number;
  iat: number;
  nbf: number;
  jti: string;
  "kubernetes.io": { namespace: string; serviceaccount: { name: string; uid: string } };
}

function base64url(data: Buffer | string): string {
  return Buffer.from(data).toString("base64url");
}

/** Issues and verifies the server's ServiceAccount tokens. */
export class ServiceAccountTokens {
  constructor(
    private readonly api: InProcessApi,
    /** The HMAC key; random (tokens die with the process) unless the caller keeps one. */
    private readonly key: Buffer = randomBytes(KEY_BYTES),
    readonly issuer = DEFAULT_ISSUER,
    readonly audiences: string[] = [DEFAULT_ISSUER],
    /** The clock, seconds since the epoch (tests move it). */
    private readonly now: () => number = () => Math.floor(Date.now() / 1000),
  ) {}

  /** A token for the ServiceAccount object `sa` (which must carry its uid). */
  issue(
    sa: { namespace: string; name: string; uid: string },
    audiences: string[],
    expirationSeconds: number,
  ): IssuedToken {
    const iat = this.now();
    const claims: Claims = {
      iss: this.issuer,
      sub: serviceAccountUsername(sa.namespace, sa.name),
      aud: audiences,
      exp: iat + expirationSeconds,
      iat,
      nbf: iat,
      jti: randomUUID(),
      "kubernetes.io": { namespace: sa.namespace, serviceaccount: { name: sa.name, uid: sa.uid } },
    };
    const signingInput = `${base64url(JSON.stringify({ alg: "HS256", typ: "JWT" }))}.${base64url(JSON.stringify(claims))}`;
    return { token: `${signingInput}.${this.sign(signingInput)}`, expiresAt: claims.exp };
  }

  /** The user a token stands for, or undefined when it is not a valid token of this server. */
  authenticate(token: string): AuthUser | undefined {
    const parts = token.split(".");
    if (parts.length !== 3) return undefined;
    const expected = Buffer.from(this.sign(`${parts[0]}.${parts[1]}`));
    const actual = Buffer.from(parts[2]!);
    if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) return undefined;
    let claims: Claims;
    try {
      claims = JSON.parse(Buffer.from(parts[1]!, "base64url").toString("utf8")) as Claims;
    } catch {
      return undefined;
    }
    const now = this.now();
    if (claims.iss !== this.issuer || typeof claims.exp !== "number" || claims.exp <= now) return undefined;
    if (typeof claims.nbf === "number" && claims.nbf > now) return undefined;
    if (!Array.isArray(claims.aud) || !claims.aud.some((a) => this.audiences.includes(a))) return undefined;
    const ref = claims["kubernetes.io"];
    const namespace = ref?.namespace;
    const name = ref?.serviceaccount?.name;
    if (typeof namespace !== "string" || typeof name !== "string") return undefined;
    const sa = this.api.tryGet(SERVICE_ACCOUNTS, namespace, name);
    if (!sa || sa.metadata?.["uid"] !== ref.serviceaccount.uid) return undefined;
    return {
      username: serviceAccountUsername(namespace, name),
      uid: ref.serviceaccount.uid,
      groups: serviceAccountGroups(namespace),
      extra: { "authentication.kubernetes.io/credential-id": [`JTI=${claims.jti}`] },
    };
  }

  private sign(input: string): string {
    return createHmac("sha256", this.key).update(input).digest("base64url");
  }
}

/** The groups of every ServiceAccount in `namespace`, system:authenticated included. */
export function serviceAccountGroups(namespace: string): string[] {
  return ["system:serviceaccounts", `system:serviceaccounts:${namespace}`, "system:authenticated"];
}
