/**
 * How a controller's reconciles meet API server throttling: 429 Too Many Requests with a
 * `Retry-After` header (priority and fairness, max-in-flight).
 *
 * client-go waits out Retry-After inside the request (rest/with_retry.go, up to 10 retries) and
 * controller-runtime's reconciles inherit that, so a throttled reconcile holds its worker asleep
 * and no other key is served by it meanwhile. Measured with bench/chaos.ts (5% 429s with
 * Retry-After: 1 among other faults, docs/runtime.md "Throttling"), that cost most of the
 * throughput. So by default (`"requeue"`) a reconcile's requests fail at once on such a 429 (the
 * client's `throttled: "fail"`), and the controller turns the failure into "requeue this key after
 * Retry-After": the worker moves on to other keys, the throttled key comes back when the server
 * asked, and a level-triggered reconcile simply runs again. `"wait"` keeps client-go's behaviour.
 *
 * Only 429s that carry Retry-After are concerned: without it the client retries with its short
 * backoff as before, and a 5xx is never turned into a requeue here (it goes to the rate-limited
 * retry of an error). The informers' list and watch requests keep waiting in any case: they have
 * no other work to do.
 */

import type { Logger } from "pino";
import type { KubeClient } from "../client/kube-client.ts";
import { defaultRetryPolicy } from "../client/retry.ts";
import type { ReconcileResult } from "./reconcile.ts";

/** What a reconcile's throttled request does; see the module documentation. */
export type ThrottlePolicy = "requeue" | "wait";

/** Causes are followed this deep at most, as the client's `is*` helpers do. */
const MAX_CAUSE_DEPTH = 8;

/**
 * The milliseconds a 429 answer asked to wait (its Retry-After, capped as the client caps it), when
 * `err` is or wraps one; undefined for any other error.
 */
export function throttledForMs(err: unknown): number | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && e instanceof Error; depth++) {
    const { code, retryAfterSeconds } = e as { code?: unknown; retryAfterSeconds?: unknown };
    if (code === 429 && typeof retryAfterSeconds === "number" && retryAfterSeconds > 0) {
      return Math.min(retryAfterSeconds * 1000, defaultRetryPolicy.maxDelayMs);
    }
    e = e.cause;
  }
  return undefined;
}

/**
 * The client a controller's reconciles use under `policy`: a view of `client` that fails throttled
 * requests fast. A stand-in that cannot make views (a test double) is used as it is.
 */
export function reconcileClient(client: KubeClient, policy: ThrottlePolicy): KubeClient {
  if (policy === "wait" || typeof client.withRetry !== "function") return client;
  return client.withRetry({ throttled: "fail" });
}

/**
 * `reconcile`, with a throttled request's failure turned into `{ requeueAfter: <Retry-After> }`: the
 * key is reconciled again when the server asked, without counting as an error or growing the key's
 * backoff (the server, not the reconcile, said when).
 */
export function requeueWhenThrottled<Target, Ctx extends { readonly logger: Logger }>(
  reconcile: (target: Target, ctx: Ctx) => ReconcileResult | Promise<ReconcileResult> | void | Promise<void>,
): (target: Target, ctx: Ctx) => Promise<ReconcileResult> {
  return async (target, ctx): Promise<ReconcileResult> => {
    try {
      return (await reconcile(target, ctx)) ?? undefined;
    } catch (err) {
      const afterMs = throttledForMs(err);
      if (afterMs === undefined) throw err;
      ctx.logger.debug({ retryAfterMs: afterMs }, "Throttled by the API server: requeued after Retry-After");
      return { requeueAfter: afterMs };
    }
  };
}
