/**
 * `waitFor`: waits until one object satisfies a predicate, by watching it (never by polling), and
 * fails with an error that shows the object as it was last seen.
 *
 * ## Expected flow
 * List the object by name (`fieldSelector=metadata.name=<name>`) to learn its current state and the
 * list's resourceVersion, test the predicate, then watch from that version and test every ADDED or
 * MODIFIED object. A watch the server ends (timeout, 410 Gone) starts over with a fresh list.
 *
 * ## Guarantees
 * - Resolves with the first observed version of the object that satisfies the predicate; versions
 *   that came and went between two observations are not seen (a watch delivers each change, a
 *   re-list after a 410 does not).
 * - Rejects with {@link WaitForTimeoutError} after `timeout`, naming the object, the predicate and
 *   the last seen object (or that it was never seen), and the last error if the kind was not served.
 * - Rejects with the signal's reason when `signal` aborts (the test cluster aborts it when an
 *   operator it runs fails, so a test sees the operator's error instead of a timeout).
 * - Leaves no timer or socket behind once settled.
 *
 * ## Caveats
 * - A predicate that throws counts as "not yet" (`cm.data.rate` on a ConfigMap without data); its
 *   last error is in the timeout message.
 * - Answers that a retry cannot fix (400, 401, 403, 422) reject at once; others (404 while a CRD is
 *   being registered, 5xx, 429, network errors) are retried until the timeout.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { KubeClient, KubeObject, ResourceKind } from "capstan";
import { ApiError, type Duration, isGone, toMilliseconds } from "capstan";

/**
 * Default wait: long enough for an operator on a loaded 2-core machine to react (a reconcile takes
 * milliseconds; informer start-up and CRD registration a few hundred), well under a test runner's
 * usual 30 s test timeout so the timeout error, not the runner's, is what the author sees.
 */
export const DEFAULT_WAIT_TIMEOUT: Duration = "10s";

/**
 * Pause before retrying a failed list or watch. Short because the usual cause is a CRD registered
 * a few milliseconds later; the devcluster answers locally, so retrying costs nothing.
 */
const RETRY_PAUSE_MS = 50;

/**
 * How often {@link waitUntil} tries its condition again: the conditions tests poll (an in-memory
 * counter, one request to the local devcluster) cost microseconds to milliseconds, and a state
 * reached a few milliseconds late is still seen well within any timeout.
 */
export const WAIT_UNTIL_INTERVAL_MS = 10;

/** Options of {@link waitFor}. */
export interface WaitForOptions {
  /** How long to wait (`"5s"`, milliseconds); default {@link DEFAULT_WAIT_TIMEOUT}. */
  timeout?: Duration;
  /** Stops waiting: the promise rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** The object did not reach the awaited state in time. */
export class WaitForTimeoutError extends Error {
  override readonly name = "WaitForTimeoutError";
  constructor(
    message: string,
    /** The object as last seen, `undefined` if it never existed or was deleted last. */
    readonly lastSeen: KubeObject | undefined,
  ) {
    super(message);
  }
}

/**
 * Waits until the object `key` of `kind` satisfies `predicate`, and returns it.
 *
 * ```ts
 * const cm = await waitFor(client, ConfigMap, "default/usd", (cm) => cm.data?.rate !== undefined, { timeout: "5s" });
 * ```
 *
 * @param key `"namespace/name"`, or `"name"` (namespaced kinds then use the client's default namespace).
 * @throws WaitForTimeoutError after the timeout, showing the last seen object.
 */
export function waitFor<T extends KubeObject>(
  client: KubeClient,
  kind: ResourceKind<T>,
  key: string,
  predicate: (obj: T) => boolean,
  options: WaitForOptions = {},
): Promise<T> {
  const describe = `to satisfy ${predicateText(predicate)}`;
  return waitForState(client, kind, key, describe, options, (obj) => (obj === undefined ? false : predicate(obj))).then(
    (obj) => obj as T,
  );
}

/** Options of {@link waitUntil}. */
export interface WaitUntilOptions extends WaitForOptions {
  /**
   * What is awaited, for the timeout message (`"the operator to lead"`); a function is called when
   * the wait times out, to show the state then (`() => \`phase ${informer.phase.phase}\``).
   */
  what?: string | (() => string);
  /** Milliseconds between two tries (default {@link WAIT_UNTIL_INTERVAL_MS}). */
  interval?: number;
}

/** A value {@link waitUntil} keeps waiting on: the condition is not met yet. */
type NotMet = undefined | null | false;

/**
 * Polls `condition` until it returns (or resolves to) a value other than `undefined`, `null` and
 * `false`, and returns that value: for what no watch can see (an operator's state, a counter a
 * handler increments, kubectl's output). An object's state is better awaited with {@link waitFor},
 * which watches.
 *
 * ```ts
 * await waitUntil(() => op.state === "leading", { what: "the operator to lead" });
 * const cm = await waitUntil(() => client.resource(ConfigMap, "default").get("usd")); // a 404 is "not yet"
 * ```
 *
 * ## Guarantees
 * - The condition runs at once, then every `interval` ms after the previous run settled (never two at once).
 * - A condition that throws or rejects counts as "not yet"; its last error is in the timeout message.
 * - Rejects after `timeout` (default {@link DEFAULT_WAIT_TIMEOUT}), measured with `performance.now()`
 *   (a test that fakes `Date` does not stop it), naming `what`; or with the signal's reason when
 *   `signal` aborts. Leaves no timer behind once settled.
 *
 * ## Caveats
 * - `0` and `""` are values, so they end the wait: return a boolean (`() => list.length > 0`).
 */
export async function waitUntil<R>(
  condition: () => R | Promise<R>,
  options: WaitUntilOptions = {},
): Promise<Exclude<R, NotMet>> {
  const timeout = options.timeout ?? DEFAULT_WAIT_TIMEOUT;
  const deadline = performance.now() + toMilliseconds(timeout);
  let lastError: unknown;
  for (;;) {
    options.signal?.throwIfAborted();
    try {
      const value = await condition();
      if (value !== undefined && value !== null && value !== false) return value as Exclude<R, NotMet>;
    } catch (err) {
      lastError = err;
    }
    if (performance.now() >= deadline) {
      const what =
        options.what === undefined
          ? `${predicateText(condition)} to hold`
          : typeof options.what === "function"
            ? options.what()
            : options.what;
      const last = lastError === undefined ? "" : `; the condition last threw: ${errorText(lastError)}`;
      throw new WaitForTimeoutError(`timed out after ${timeout} waiting for ${what}${last}`, undefined);
    }
    // An abort ends the pause; the next turn rejects with the signal's reason.
    await sleep(options.interval ?? WAIT_UNTIL_INTERVAL_MS, undefined, { signal: options.signal }).catch(
      () => undefined,
    );
  }
}

/**
 * A {@link waitFor} predicate: the CustomResourceDefinition has condition `Established=True`, i.e. the
 * API server serves its kind (`waitFor(client, CustomResourceDefinition, name, isEstablished)`).
 */
export function isEstablished(crd: { status?: { conditions?: readonly { type: string; status: string }[] } }): boolean {
  return crd.status?.conditions?.some((c) => c.type === "Established" && c.status === "True") ?? false;
}

/**
 * Waits until the object `key` of `kind` does not exist (deleted, or never created).
 * @throws WaitForTimeoutError after the timeout, showing the object as last seen.
 */
export async function waitForDeletion<T extends KubeObject>(
  client: KubeClient,
  kind: ResourceKind<T>,
  key: string,
  options: WaitForOptions = {},
): Promise<void> {
  await waitForState(client, kind, key, "to be deleted", options, (obj) => obj === undefined);
}

/** What a wait has seen so far, for the timeout message. */
interface Observed {
  seen: boolean;
  last: KubeObject | undefined;
  predicateError: unknown;
  requestError: unknown;
}

async function waitForState<T extends KubeObject>(
  client: KubeClient,
  kind: ResourceKind<T>,
  key: string,
  describe: string,
  options: WaitForOptions,
  matches: (obj: T | undefined) => boolean,
): Promise<T | undefined> {
  const { namespace, name } = parseKey(kind, key, client.defaultNamespace);
  const timeoutMs = toMilliseconds(options.timeout ?? DEFAULT_WAIT_TIMEOUT);
  const target = `${kind.kind} ${namespace === undefined ? name : `${namespace}/${name}`}`;
  const observed: Observed = { seen: false, last: undefined, predicateError: undefined, requestError: undefined };
  const test = (obj: T | undefined): boolean => {
    try {
      return matches(obj);
    } catch (err) {
      observed.predicateError = err;
      return false;
    }
  };

  const abort = new AbortController();
  const timedOut = Symbol("timed out");
  const timer = setTimeout(() => abort.abort(timedOut), timeoutMs);
  const outer = options.signal;
  const onOuterAbort = () => abort.abort(outer?.reason);
  if (outer?.aborted) abort.abort(outer.reason);
  outer?.addEventListener("abort", onOuterAbort, { once: true });
  const signal = abort.signal;
  const resource = client.resource(kind, namespace);
  const fieldSelector = `metadata.name=${name}`;

  try {
    while (!signal.aborted) {
      try {
        const list = await resource.list({ fieldSelector, signal });
        const current = list.items[0];
        record(observed, current);
        if (test(current)) return current;
        const events = await resource.watch({ fieldSelector, resourceVersion: list.metadata.resourceVersion, signal });
        for await (const event of events) {
          if (event.type === "BOOKMARK") continue;
          const obj = event.type === "DELETED" ? undefined : event.object;
          record(observed, obj);
          if (test(obj)) return obj;
        }
        // The server ended the watch (its timeout): list again.
      } catch (err) {
        if (signal.aborted) break;
        if (!isGone(err)) {
          if (!retryable(err)) throw err;
          observed.requestError = err;
          await sleep(RETRY_PAUSE_MS, undefined, { signal }).catch(() => undefined);
        }
      }
    }
    if (signal.reason !== timedOut) throw signal.reason;
    throw new WaitForTimeoutError(timeoutMessage(target, describe, timeoutMs, observed), observed.last);
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener("abort", onOuterAbort);
    // Ends a watch still open (the predicate matched mid-stream): frees its socket.
    abort.abort();
  }
}

function record(observed: Observed, obj: KubeObject | undefined): void {
  if (obj !== undefined) observed.seen = true;
  observed.last = obj;
  observed.requestError = undefined;
}

/** 400, 401, 403 and 422 mean the request itself is wrong: waiting longer changes nothing. */
function retryable(err: unknown): boolean {
  if (err instanceof ApiError) return ![400, 401, 403, 422].includes(err.code);
  return true;
}

/** Splits `"ns/name"` or `"name"`; refuses a namespace on a cluster-scoped kind. */
export function parseKey(
  kind: ResourceKind,
  key: string,
  defaultNamespace: string,
): { namespace: string | undefined; name: string } {
  if (typeof key !== "string" || key === "")
    throw new Error(`waitFor ${kind.kind}: expected "namespace/name" or "name"`);
  const parts = key.split("/");
  if (parts.length > 2 || parts.some((p) => p === "")) {
    throw new Error(`waitFor ${kind.kind}: "${key}" is not "namespace/name" or "name"`);
  }
  if (parts.length === 2) {
    if (!kind.namespaced) {
      throw new Error(`waitFor ${kind.kind}: "${key}" names a namespace, but ${kind.kind} is cluster-scoped`);
    }
    return { namespace: parts[0], name: parts[1] as string };
  }
  return { namespace: kind.namespaced ? defaultNamespace : undefined, name: key };
}

function predicateText(predicate: (...args: never[]) => unknown): string {
  const text = String(predicate).replace(/\s+/g, " ").trim();
  // A long function body says less than its first line; keep the message readable.
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}

function timeoutMessage(target: string, describe: string, timeoutMs: number, observed: Observed): string {
  const lines = [`timed out after ${timeoutMs} ms waiting for ${target} ${describe}`];
  if (observed.last !== undefined) {
    lines.push(`last seen: ${JSON.stringify(withoutManagedFields(observed.last), null, 2)}`);
  } else if (observed.seen) {
    lines.push("last seen: deleted");
  } else {
    lines.push("it was never seen: it does not exist");
  }
  if (observed.predicateError !== undefined) {
    lines.push(`the predicate last threw: ${errorText(observed.predicateError)}`);
  }
  if (observed.requestError !== undefined) {
    lines.push(`the last request failed: ${errorText(observed.requestError)}`);
  }
  return lines.join("\n");
}

/** managedFields are long and never what a test waits on. */
function withoutManagedFields(obj: KubeObject): KubeObject {
  if (obj.metadata?.managedFields === undefined) return obj;
  const { managedFields: _, ...metadata } = obj.metadata;
  return { ...obj, metadata };
}

function errorText(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}
