/**
 * Running one admission handler for one AdmissionReview: what a validating or mutating handler
 * gets, and how what it does becomes the answer.
 *
 * ## Expected flow
 * 1. The handler gets a typed context: the object (for a mutating handler a copy it may change),
 *    the old object, the operation, who asked, dryRun, the subresource, and `warn()`.
 * 2. It returns (allowed), throws {@link AdmissionDenied} (denied with its message and code), or
 *    throws anything else (denied with code 500 and the error's message: a broken handler must not
 *    let objects through silently; the webhook's failurePolicy decides what an unreachable one does).
 * 3. A mutating handler's changes (to the copy, or the object it returns) become a JSON Patch
 *    against the object the API server sent (json-patch-diff.ts).
 *
 * ## Guarantees
 * - The answer always carries the request's uid; warnings given before a denial or an error are kept.
 * - A handler that does not settle within its timeout is answered for (denied, code 500) and its
 *   signal aborts; what it does afterwards is ignored.
 * - The object the API server sent is never changed; a patch applied to it gives exactly the
 *   object the handler left (after a JSON round trip, so `undefined` fields are dropped as JSON drops them).
 */
import type { KubeClient } from "../client/kube-client.ts";
import type { KubeObject } from "../client/types.ts";
import type { AdmissionOperation, AdmissionRequest, AdmissionResponse, AdmissionUserInfo } from "./admission-review.ts";
import { jsonPatchBetween } from "./json-patch-diff.ts";

/**
 * Kube-apiserver's default `timeoutSeconds` for a webhook: a handler slower than this has already
 * failed the API server's call, so there is no point waiting longer.
 */
export const DEFAULT_ADMISSION_TIMEOUT_MS = 10_000;

/** What an admission handler gets. */
export interface AdmissionContext<T extends KubeObject = KubeObject> {
  readonly operation: AdmissionOperation;
  /**
   * The object being admitted: as it would be stored for CREATE and UPDATE, the stored one for
   * DELETE. A mutating handler's `obj` is its own copy, to change in place.
   */
  readonly obj: T;
  /** The stored object (UPDATE, DELETE); undefined for CREATE. */
  readonly oldObj: T | undefined;
  readonly userInfo: AdmissionUserInfo;
  /** The request changes nothing when true: a handler with side effects must not make them. */
  readonly dryRun: boolean;
  /** `status`, `scale`, ... when a subresource is written; undefined for the object itself. */
  readonly subResource: string | undefined;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  /** The whole request, for anything the fields above leave out. */
  readonly request: AdmissionRequest;
  /**
   * The operator's API client, for what a schema cannot check (does the object this one names
   * exist?). Its requests go to the API server as the operator (its RBAC rules apply: declare
   * them with `operator({ permissions })`), not to a cache; pass `signal` so they end with the
   * handler's time. Using it in a handler served without an operator throws.
   */
  readonly api: KubeClient;
  /** Aborts when the handler's time is up. */
  readonly signal: AbortSignal;
  /** Adds a warning the client shows (kubectl prints `Warning: ...`), allowed or not. */
  warn(message: string): void;
}

/** A validating handler: return to allow, throw {@link AdmissionDenied} to deny. */
export type ValidatingHandler<T extends KubeObject = KubeObject> = (ctx: AdmissionContext<T>) => void | Promise<void>;

/**
 * A mutating handler: change `ctx.obj` in place or return the object to admit; throw
 * {@link AdmissionDenied} to deny.
 */
export type MutatingHandler<T extends KubeObject = KubeObject> = (
  ctx: AdmissionContext<T>,
  // biome-ignore lint/suspicious/noConfusingVoidType: an async handler that only changes ctx.obj returns Promise<void>
) => T | undefined | void | Promise<T | undefined | void>;

/**
 * Denies the request with `message` (the client sees `admission webhook "<name>" denied the
 * request: <message>`). `code` defaults to 403 (Forbidden), as controller-runtime's `Denied`.
 */
export class AdmissionDenied extends Error {
  override name = "AdmissionDenied";
  readonly code: number;
  readonly reason: string | undefined;
  constructor(message: string, options: { code?: number; reason?: string } = {}) {
    super(message);
    this.code = options.code ?? 403;
    this.reason = options.reason ?? (this.code === 403 ? "Forbidden" : undefined);
  }
}

/** One registered handler, as the runner needs it. */
export interface AdmissionHandlerSpec {
  /** Names the handler in errors, logs and metrics. */
  name: string;
  type: "validating" | "mutating";
  fn: ValidatingHandler | MutatingHandler;
  timeoutMs?: number;
  /** What the handler gets as `api` (the operator's client); absent, `api` throws when used. */
  api?: KubeClient;
}

/** How one handler run ended, for logs and metrics beside the answer. */
export interface AdmissionOutcome {
  response: AdmissionResponse;
  /** `error` when the handler threw something other than a denial, `timeout` when it did not settle. */
  failure?: { kind: "error" | "timeout"; error?: unknown };
}

/** Runs `handler` for `request`; see the module documentation. Never rejects. */
export async function runAdmission(
  handler: AdmissionHandlerSpec,
  request: AdmissionRequest,
): Promise<AdmissionOutcome> {
  const warnings: string[] = [];
  const mutating = handler.type === "mutating";
  const sent = request.object ?? request.oldObject;
  const obj = (mutating && sent !== undefined ? structuredClone(sent) : sent) as KubeObject;
  const timeoutMs = handler.timeoutMs ?? DEFAULT_ADMISSION_TIMEOUT_MS;
  const abort = new AbortController();
  const ctx: AdmissionContext = {
    operation: request.operation,
    obj,
    oldObj: request.operation === "CREATE" ? undefined : request.oldObject,
    userInfo: request.userInfo,
    dryRun: request.dryRun === true,
    subResource: request.subResource || undefined,
    namespace: request.namespace || undefined,
    name: request.name || undefined,
    request,
    get api(): KubeClient {
      if (handler.api === undefined)
        throw new Error(`${handler.name} has no API client: it is not served by an operator`);
      return handler.api;
    },
    signal: abort.signal,
    warn(message) {
      if (!abort.signal.aborted) warnings.push(message);
    },
  };
  const answer = (fields: Omit<AdmissionResponse, "uid" | "warnings">): AdmissionResponse => ({
    uid: request.uid,
    ...fields,
    ...(warnings.length > 0 ? { warnings: [...warnings] } : {}),
  });

  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), timeoutMs);
  });
  try {
    const settled = await Promise.race([Promise.resolve().then(() => handler.fn(ctx)), timedOut]);
    if (settled === "timeout") {
      abort.abort(new Error(`timed out after ${timeoutMs} ms`));
      return {
        response: answer({
          allowed: false,
          status: { code: 500, message: `${handler.name} did not answer within ${timeoutMs} ms` },
        }),
        failure: { kind: "timeout" },
      };
    }
    if (!mutating || request.object === undefined) return { response: answer({ allowed: true }) };
    const admitted = JSON.parse(JSON.stringify(settled ?? obj)) as unknown;
    const patch = jsonPatchBetween(request.object, admitted);
    if (patch.length === 0) return { response: answer({ allowed: true }) };
    return {
      response: answer({
        allowed: true,
        patchType: "JSONPatch",
        patch: Buffer.from(JSON.stringify(patch)).toString("base64"),
      }),
    };
  } catch (err) {
    if (err instanceof AdmissionDenied) {
      const status = { code: err.code, message: err.message, ...(err.reason ? { reason: err.reason } : {}) };
      return { response: answer({ allowed: false, status }) };
    }
    const message = err instanceof Error ? err.message : String(err);
    return {
      response: answer({ allowed: false, status: { code: 500, message: `${handler.name} failed: ${message}` } }),
      failure: { kind: "error", error: err },
    };
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
}
