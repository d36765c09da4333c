/**
 * What each user was allowed and denied: the distinct authorization attributes of the requests RBAC
 * decided, per user. The raw material of least privilege from observed behaviour (docs/rbac.md,
 * "Observed RBAC"): `capstan-dev/testing`'s `cluster.observedAccess(user)` and `GET /capstan/access`
 * read it; capstan's `compareRbac` and `capstan generate rbac --observed` turn it into rules.
 *
 * ## Guarantees
 * - A set, not a log: each distinct (verb, API group, resource, subresource, namespace, name) tuple,
 *   or (verb, path) for a non-resource URL, is kept once per user and decision, whatever the number of
 *   requests; a request costs one string key and one Set lookup.
 * - Everything RBAC decides is recorded: every request of every user outside system:masters (whose
 *   requests RBAC never sees, as kube-apiserver's privileged-group authorizer decides them first),
 *   the `create` an apply that creates is also checked for, and impersonation's checks.
 * - Per user and decision at most {@link MAX_TUPLES} tuples are kept; past that `truncated` says so.
 */
import type { Attributes } from "./attributes.ts";

/** One distinct request on a resource (capstan's `ObservedResourceRequest`). */
export interface RecordedResourceRequest {
  verb: string;
  apiGroup: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
}

/** One distinct request on a non-resource URL (capstan's `ObservedUrlRequest`). */
export interface RecordedUrlRequest {
  verb: string;
  nonResourceURL: string;
}

/** A recorded request (capstan's `ObservedRequest`). */
export type RecordedRequest = RecordedResourceRequest | RecordedUrlRequest;

/** What one user did (capstan's `ObservedAccess`, plus whether anything was left out). */
export interface RecordedAccess {
  user: string;
  allowed: RecordedRequest[];
  denied: RecordedRequest[];
  /** More distinct requests than {@link MAX_TUPLES} were made; the rest were not kept. */
  truncated?: true;
}

/**
 * Distinct requests kept per user and decision. An operator's requests name the objects it touches,
 * so the set grows with the objects of a run: thousands in a test, unbounded in a long `capstan dev`
 * session. 20 000 tuples (a few MB) is far beyond any test and still bounds a forgotten session.
 */
export const MAX_TUPLES = 20_000;

interface UserRecord {
  allowed: Map<string, RecordedRequest>;
  denied: Map<string, RecordedRequest>;
  truncated: boolean;
}

/** The per-user sets; see the module documentation. */
export class AccessRecorder {
  private readonly users = new Map<string, UserRecord>();

  /** Records one decision. */
  record(attributes: Attributes, allowed: boolean): void {
    const username = attributes.user.username;
    let user = this.users.get(username);
    if (user === undefined) {
      user = { allowed: new Map(), denied: new Map(), truncated: false };
      this.users.set(username, user);
    }
    const set = allowed ? user.allowed : user.denied;
    const key = attributes.isResourceRequest
      ? `${attributes.verb} ${attributes.apiGroup} ${attributes.resource} ${attributes.subresource} ${attributes.namespace} ${attributes.name}`
      : `${attributes.verb} ${attributes.path}`;
    if (set.has(key)) return;
    if (set.size >= MAX_TUPLES) {
      user.truncated = true;
      return;
    }
    set.set(
      key,
      attributes.isResourceRequest
        ? {
            verb: attributes.verb,
            apiGroup: attributes.apiGroup,
            resource: attributes.resource,
            subresource: attributes.subresource,
            namespace: attributes.namespace,
            name: attributes.name,
          }
        : { verb: attributes.verb, nonResourceURL: attributes.path },
    );
  }

  /** The users with recorded decisions, sorted. */
  usernames(): string[] {
    return [...this.users.keys()].sort();
  }

  /** What `username` did (empty lists when nothing was recorded for it). */
  access(username: string): RecordedAccess {
    const user = this.users.get(username);
    return {
      user: username,
      allowed: [...(user?.allowed.values() ?? [])],
      denied: [...(user?.denied.values() ?? [])],
      ...(user?.truncated ? { truncated: true as const } : {}),
    };
  }

  /** Forgets `username`'s decisions, or everyone's. */
  reset(username?: string): void {
    if (username === undefined) this.users.clear();
    else this.users.delete(username);
  }
}
