/**
 * What a controller remembers of its own writes, so that a level-triggered reconcile costs no
 * write when nothing changed:
 *
 * - {@link WriteExpectations}: the resourceVersion its last `ctx.patchStatus` of an object
 *   returned. A reconcile of that object waits (briefly) until the cache has caught up with it,
 *   instead of judging a copy older than its own write and writing the same status again (what
 *   happens when an owned child's event arrives before the object's own status event). Kopf's
 *   "consistency wait", for the reconcile path.
 * - {@link AppliedChildren}: the configuration its last `ctx.apply` of each child sent and the
 *   resourceVersion the server answered. Applying the same configuration to a child whose cached
 *   copy still has that resourceVersion changes nothing on the server (server-side apply is
 *   idempotent for one field manager), so the request is not sent and the cached copy is returned.
 *
 * ## Guarantees
 * - Never a lost reconcile: a wait ends when the informer delivers the expected version (or a
 *   later one), when {@link CONSISTENCY_TIMEOUT_MS} since the write has passed, or when the signal
 *   aborts; the reconcile then runs on whatever the cache holds, as it would have without this.
 * - An apply is skipped only when the server's object is exactly the one our identical apply
 *   produced (same resourceVersion in the cache); anyone else's change, a deletion, or a
 *   different configuration sends it.
 *
 * ## Assumptions
 * - resourceVersions that are decimal integers (etcd's, and the embedded server's) grow with
 *   time, as client-go's MutationCache also assumes; others are compared for equality only.
 */
import * as crypto from "node:crypto";
import type { KubeObject } from "../client/types.ts";

/**
 * SHA-256 of a text, base64. `crypto.hash` (Node 20.12+) hashes in one native call; `createHash`
 * builds a Hash object (an OpenSSL context) per call, which showed as ~2% of an operator's busy time
 * in a reconcile burst (one digest per `ctx.apply`). Node 20 before 20.12 has no `crypto.hash`.
 */
const sha256 =
  typeof (crypto as { hash?: unknown }).hash === "function"
    ? (text: string): string => crypto.hash("sha256", text, "base64")
    : (text: string): string => crypto.createHash("sha256").update(text).digest("base64");

/** How long a reconcile waits for the cache to show our own write (Kopf's consistency_timeout). */
export const CONSISTENCY_TIMEOUT_MS = 5_000;
/** Children remembered per controller; the oldest are forgotten first (their next apply is sent). */
const APPLIED_CHILDREN_MAX = 50_000;

/** Whether `seen` is `expected` or, both being integers, a later version. */
export function reachedVersion(seen: string | undefined, expected: string): boolean {
  if (seen === undefined) return false;
  if (seen === expected) return true;
  if (!/^\d+$/.test(seen) || !/^\d+$/.test(expected)) return false;
  return seen.length !== expected.length ? seen.length > expected.length : seen > expected;
}

interface Expectation {
  rv: string;
  since: number;
  wake?: (seen: boolean) => void;
}

/** The resourceVersions of our own last writes per object key; see the module documentation. */
export class WriteExpectations {
  private readonly byKey = new Map<string, Expectation>();

  /** `timeoutMs`: how long after a write a reconcile may wait for the cache to show it. */
  constructor(private readonly timeoutMs = CONSISTENCY_TIMEOUT_MS) {}

  /** Records that our write of `key` returned `obj`. */
  wrote(key: string, obj: KubeObject): void {
    const rv = obj.metadata?.resourceVersion;
    if (rv === undefined) return;
    const previous = this.byKey.get(key);
    this.byKey.set(key, { rv, since: performance.now(), ...(previous?.wake ? { wake: previous.wake } : {}) });
  }

  /**
   * The informer delivered `obj` (or its deletion) for `key`. Returns whether it woke a wait
   * ({@link whenCaughtUp}): the caller then owes the key its run.
   */
  saw(key: string, obj: KubeObject | undefined): boolean {
    const e = this.byKey.get(key);
    if (e === undefined) return false;
    if (obj !== undefined && !reachedVersion(obj.metadata?.resourceVersion, e.rv)) return false;
    this.byKey.delete(key);
    if (e.wake === undefined) return false;
    e.wake(true);
    return true;
  }

  /**
   * Waits for the cached copy of `key` (read with `cached`) to catch up with our last write of it.
   * `false` when there is nothing to wait for (no write remembered, the cache shows it already, the
   * write is older than the consistency timeout, or `signal` aborted): nothing is scheduled then, the
   * common case. Else `true`, and `wake` is called once: with `true` synchronously inside the
   * {@link saw} that delivers the write (which then returns `true`), with `false` at the timeout or
   * when `signal` aborts. One wake per key: a second call for a key already waited on replaces the first's.
   */
  whenCaughtUp(
    key: string,
    cached: () => KubeObject | undefined,
    signal: AbortSignal,
    wake: (seen: boolean) => void,
  ): boolean {
    const e = this.byKey.get(key);
    if (e === undefined) return false;
    const current = cached();
    const left = e.since + this.timeoutMs - performance.now();
    if (current === undefined || reachedVersion(current.metadata?.resourceVersion, e.rv) || left <= 0) {
      this.byKey.delete(key);
      return false;
    }
    if (signal.aborted) return false;
    const done = (seen: boolean) => {
      clearTimeout(timer);
      signal.removeEventListener("abort", aborted);
      wake(seen);
    };
    const aborted = () => done(false);
    const timer = setTimeout(() => {
      if (this.byKey.get(key) === e) this.byKey.delete(key);
      done(false);
    }, left);
    signal.addEventListener("abort", aborted, { once: true });
    e.wake = done;
    return true;
  }

  /** Expectations held (for tests). */
  get size(): number {
    return this.byKey.size;
  }
}

interface Applied {
  digest: string;
  rv: string;
}

/** The last configuration applied to each child and the version it produced; see the module documentation. */
export class AppliedChildren {
  private readonly byChild = new Map<string, Applied>();

  /** The key a child is remembered under: its kind, namespace and name. */
  static key(kindId: string, namespace: string | undefined, name: string): string {
    return `${kindId}/${namespace ?? ""}/${name}`;
  }

  /** A digest of the configuration sent (so memory does not grow with the children's size). */
  static digest(desired: KubeObject): string {
    return sha256(JSON.stringify(desired));
  }

  /** Whether applying `digest` to the child whose cached copy is `cached` would change nothing. */
  unchanged(key: string, digest: string, cached: KubeObject | undefined): boolean {
    const last = this.byChild.get(key);
    return (
      last !== undefined &&
      last.digest === digest &&
      cached?.metadata?.resourceVersion !== undefined &&
      cached.metadata.resourceVersion === last.rv
    );
  }

  /** Records that applying `digest` to the child answered `written`. */
  applied(key: string, digest: string, written: KubeObject): void {
    const rv = written.metadata?.resourceVersion;
    this.byChild.delete(key);
    if (rv === undefined) return;
    this.byChild.set(key, { digest, rv });
    if (this.byChild.size > APPLIED_CHILDREN_MAX) {
      const oldest = this.byChild.keys().next().value;
      if (oldest !== undefined) this.byChild.delete(oldest);
    }
  }

  /** Children remembered (for tests). */
  get size(): number {
    return this.byChild.size;
  }
}
