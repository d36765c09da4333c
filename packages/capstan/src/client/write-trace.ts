/**
 * Attributing the client's writes to the run that made them: a reconcile or handler run (the
 * runtime's run traces, runtime/run-trace.ts) calls {@link recordWritesOf} around its code, and
 * every mutating request (POST, PUT, PATCH, DELETE) the client finishes inside it is reported to
 * that run's {@link WriteRecorder}, whichever client instance sent it.
 *
 * ## Guarantees
 * - A write is reported once, when its last attempt ended (after retries), with the status code of
 *   that answer (0 when no answer came), to the recorder of the innermost run around the call.
 *   Asynchronous work started inside a run (a timer, a promise chain) counts as inside it, as
 *   AsyncLocalStorage propagates; two runs in flight at once never see each other's writes.
 * - Nothing is recorded and nothing is paid but one boolean test per request until a first
 *   recorder is installed: AsyncLocalStorage is entered only by {@link recordWritesOf}, which the
 *   runtime calls only while someone observes runs.
 *
 * ## Caveats
 * - Once a recorder has been installed, Node keeps its async-context tracking on for the process
 *   (on Node 20, a promise hook): the cost of observing, measured in docs/runtime.md.
 * - Reads (GET, watches) are never recorded.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { WRITE_METHODS } from "./write-observer.ts";

/** A mutating request the client made, as a run trace lists it. */
export interface ClientWrite {
  /** HTTP method: POST, PUT, PATCH or DELETE. */
  readonly verb: string;
  /** The resource's API group (`""` for the core group). */
  readonly group: string;
  /** The resource (plural) as in the URL: `configmaps`, `exchangerates`. */
  readonly resource: string;
  /** `status`, `scale`, ... when the request addressed a subresource. */
  readonly subresource?: string;
  readonly namespace?: string;
  /** The object's name (for a create, the name in its body; absent for a collection delete). */
  readonly name?: string;
  /** The HTTP status of the answer; 0 when none came (connection refused, timeout, aborted). */
  readonly code: number;
}

/** Receives the writes made inside {@link recordWritesOf}. */
export interface WriteRecorder {
  wrote(write: ClientWrite): void;
}

const recorders = new AsyncLocalStorage<WriteRecorder>();
/** Whether {@link recordWritesOf} was ever called: until then, requests skip the lookup. */
let installed = false;

/** Runs `fn` with `recorder` receiving every write finished inside it (see the module documentation). */
export function recordWritesOf<R>(recorder: WriteRecorder, fn: () => R): R {
  installed = true;
  return recorders.run(recorder, fn);
}

/**
 * Runs `fn` outside any recorder: for work that outlives the run that starts it (a daemon), whose
 * writes belong to no run and whose async resources must not keep the run's recorder alive.
 */
export function outsideRuns<R>(fn: () => R): R {
  return installed ? recorders.exit(fn) : fn();
}

/** The recorder of the innermost {@link recordWritesOf} around the caller, if any. */
export function currentWriteRecorder(): WriteRecorder | undefined {
  return installed ? recorders.getStore() : undefined;
}

/**
 * Called by the client when a request's last attempt ended: reports it to the current recorder
 * when it is a write. `path` is the request path (query allowed), `body` the object sent.
 */
export function noteRequest(method: string, path: string, body: unknown, code: number): void {
  if (!installed || !WRITE_METHODS.has(method)) return;
  const recorder = recorders.getStore();
  if (recorder === undefined) return;
  const target = resourcePath(path);
  if (target === undefined) return;
  let name = target.name;
  if (name === undefined && method === "POST" && typeof body === "object" && body !== null) {
    const meta = (body as { metadata?: { name?: unknown; generateName?: unknown } }).metadata;
    if (typeof meta?.name === "string") name = meta.name;
    else if (typeof meta?.generateName === "string") name = `${meta.generateName}*`;
  }
  try {
    recorder.wrote({ verb: method, ...target, ...(name === undefined ? {} : { name }), code });
  } catch {
    // A broken recorder must not fail the caller's request.
  }
}

/** What a resource URL addresses: `/api/v1/namespaces/ns/configmaps/name/status` and the like. */
export function resourcePath(
  path: string,
): { group: string; resource: string; namespace?: string; name?: string; subresource?: string } | undefined {
  const query = path.indexOf("?");
  // Called for every write the runtime follows (write-visibility.ts): one split, no intermediate arrays.
  const start = path.startsWith("/") ? 1 : 0;
  const all = path.slice(start, query < 0 ? path.length : query).split("/");
  const parts = all.includes("") ? all.filter((p) => p !== "") : all;
  let i: number;
  let group: string;
  if (parts[0] === "api") {
    group = "";
    i = 2;
  } else if (parts[0] === "apis") {
    group = decodeURIComponent(parts[1] ?? "");
    i = 3;
  } else {
    return undefined;
  }
  let namespace: string | undefined;
  // `namespaces/<ns>/<resource>...`, but not `namespaces/<name>` or `namespaces/<name>/status`.
  if (parts[i] === "namespaces" && parts.length > i + 2 && !isNamespaceSubresource(parts, i)) {
    namespace = decodeURIComponent(parts[i + 1] as string);
    i += 2;
  }
  const resource = parts[i];
  if (resource === undefined) return undefined;
  const name = parts[i + 1];
  const subresource = parts[i + 2];
  const target: { group: string; resource: string; namespace?: string; name?: string; subresource?: string } = {
    group,
    resource,
  };
  if (namespace !== undefined) target.namespace = namespace;
  if (name !== undefined) target.name = decodeURIComponent(name);
  if (subresource !== undefined) target.subresource = subresource;
  return target;
}

/** `namespaces/<name>/status` and `namespaces/<name>/finalize` address the Namespace itself. */
function isNamespaceSubresource(parts: string[], i: number): boolean {
  return parts.length === i + 3 && (parts[i + 2] === "status" || parts[i + 2] === "finalize");
}
