/**
 * Bearer-token authentication: the kubeconfig's token maps to the cluster admin; anything else is 401.
 * Part 2 adds ServiceAccount tokens (TokenRequest) by registering more tokens here.
 */
import { unauthorized } from "../machinery/status.ts";
import type { Stage, UserInfo } from "./pipeline.ts";

/** The identity the admin token stands for (kubeadm's admin user is in system:masters). */
export const ADMIN_USER: UserInfo = { username: "capstan-admin", groups: ["system:masters", "system:authenticated"] };

/** Paths anyone may read without a token, as kube-apiserver's default system:public-info-viewer allows. */
const PUBLIC_PATHS = new Set(["/healthz", "/livez", "/readyz", "/version"]);

/** Token -> user. */
export class TokenAuthenticator {
  private readonly tokens = new Map<string, UserInfo>();
  /** Further checks asked when no static token matches (ServiceAccount JWTs when RBAC is on). */
  readonly verifiers: ((token: string) => UserInfo | undefined)[] = [];
  /**
   * Token-less requests to any path become system:anonymous (kube-apiserver's --anonymous-auth). Only
   * safe with an authorizer after this stage (RBAC turns it on); otherwise only the public paths are.
   */
  anonymous = false;

  add(token: string, user: UserInfo): void {
    this.tokens.set(token, user);
  }

  remove(token: string): void {
    this.tokens.delete(token);
  }

  authenticate(token: string): UserInfo | undefined {
    for (const [known, user] of this.tokens) if (sameToken(known, token)) return user;
    for (const verify of this.verifiers) {
      const user = verify(token);
      if (user) return user;
    }
    return undefined;
  }
}

/**
 * Compares two tokens in time that depends only on their lengths, as crypto.timingSafeEqual does, but
 * on the strings themselves: two Buffers per known token per request were measurable on the create path.
 */
function sameToken(known: string, given: string): boolean {
  if (known.length !== given.length) return false;
  let diff = 0;
  for (let i = 0; i < known.length; i++) diff |= known.charCodeAt(i) ^ given.charCodeAt(i);
  return diff === 0;
}

/** Matches `Bearer <token>` (any case, surrounding blanks); compiled once. */
const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** The authentication stage: sets `ctx.user` or answers 401. */
export function authenticationStage(authenticator: TokenAuthenticator): Stage {
  // Not async: it never awaits, and runFrom turns its throws into rejections (one promise less per request).
  return (ctx, next) => {
    const header = ctx.req.headers.authorization ?? "";
    const match = BEARER.exec(header);
    const user = match ? authenticator.authenticate(match[1]!) : undefined;
    if (!user) {
      if (!match && (authenticator.anonymous || PUBLIC_PATHS.has(ctx.url.pathname))) {
        ctx.user = { username: "system:anonymous", groups: ["system:unauthenticated"] };
        return next();
      }
      throw unauthorized();
    }
    ctx.user = user;
    return next();
  };
}
