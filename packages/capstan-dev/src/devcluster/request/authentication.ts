/**
 * Bearer-token authentication, as kube-apiserver's token authenticators chained with the anonymous
 * one: the kubeconfig's token maps to the cluster admin (system:masters), ServiceAccount tokens to
 * their ServiceAccount; a request that sends no bearer token is system:anonymous; a bearer token no
 * authenticator accepts is 401, never anonymous.
 */
import { unauthorized } from "../machinery/status.ts";
import type { Stage, UserInfo } from "./pipeline.ts";

/** The identity the admin token stands for (kubeadm's admin user is in system:masters). */
export const ADMIN_USER: UserInfo = { username: "capstan-admin", groups: ["system:masters", "system:authenticated"] };

/** The user of a request without credentials (k8s.io/apiserver authentication/request/anonymous). */
export const ANONYMOUS_USER: UserInfo = { username: "system:anonymous", groups: ["system:unauthenticated"] };

/** Token -> user. */
export class TokenAuthenticator {
  private readonly tokens = new Map<string, UserInfo>();
  /** Further checks asked when no static token matches (ServiceAccount JWTs when RBAC is on). */
  readonly verifiers: ((token: string) => UserInfo | undefined)[] = [];
  /**
   * Requests without a bearer token become system:anonymous (kube-apiserver's `--anonymous-auth`, on
   * by default), for the authorizer after this stage to answer. Off, they are 401: kube-apiserver turns
   * anonymous authentication off under `--authorization-mode=AlwaysAllow` (the server's `rbac: false`),
   * where it would make every caller admin.
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

/**
 * The bearer token of an `Authorization` header as k8s.io/apiserver's bearertoken authenticator reads
 * it: the trimmed value split at its first two spaces must start with `bearer` (any case); the token is
 * the second part, anything after the next space is ignored. `undefined` when there is no such token
 * (no header, another scheme, `Bearer` alone, a space too many before the token): the request is then
 * anonymous, not refused.
 */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const value = header.trim();
  if (value.length < 8 || value.charCodeAt(6) !== 32 || value.slice(0, 6).toLowerCase() !== "bearer") return undefined;
  const end = value.indexOf(" ", 7);
  const token = end < 0 ? value.slice(7) : value.slice(7, end);
  return token === "" ? undefined : token;
}

/** The authentication stage: sets `ctx.user` or answers 401. */
export function authenticationStage(authenticator: TokenAuthenticator): Stage {
  // Not async: it never awaits, and runFrom turns its throws into rejections (one promise less per request).
  return (ctx, next) => {
    const token = bearerToken(ctx.req.headers.authorization);
    if (token === undefined) {
      if (!authenticator.anonymous) throw unauthorized();
      ctx.user = ANONYMOUS_USER;
      return next();
    }
    const user = authenticator.authenticate(token);
    // A token nobody accepts is an error, which the anonymous authenticator does not get to override.
    if (!user) throw unauthorized();
    ctx.user = user;
    return next();
  };
}
