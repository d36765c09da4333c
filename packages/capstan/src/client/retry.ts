/**
 * When a failed request is sent again, and after how long.
 *
 * client-go's rule (rest/with_retry.go, `checkWait`): a response with status 429 or >= 500 is retried,
 * whatever the verb, only when it carries a `Retry-After` header, up to 10 times; a connection reset or
 * EOF is retried for GET only. Ours differs in two deliberate ways:
 * - idempotent requests (GET, HEAD, PUT, DELETE, watch establishment, and the idempotent patch
 *   flavours: merge, strategic, apply) are also retried on 5xx without Retry-After, with exponential
 *   backoff and jitter, because the fault-injecting dev server and real proxies send bare 500/503s and
 *   repeating an idempotent request is harmless;
 * - a non-idempotent request (POST, JSON patch) is retried only on 429. A 429 means the server refused
 *   the request before processing it (priority and fairness, max-in-flight), so sending it again cannot
 *   apply it twice; a 5xx may come after the write was stored (a timeout past etcd), so we do not
 *   resend it even when the server adds Retry-After — the caller (a controller) re-reads and decides.
 * 501 Not Implemented is never retried: it will not change.
 *
 * A 429 with `Retry-After` is waited out inside the request, as client-go does, unless the policy says
 * `throttled: "fail"`: then it fails at once with an `ApiError` whose `retryAfterSeconds` says when to
 * come back. A controller's reconciles use that (runtime/throttling.ts): a worker sleeping out a
 * Retry-After serves no other key meanwhile, so the key is requeued after Retry-After instead and the
 * worker moves on (docs/runtime.md, "Throttling").
 */

/** Retry tuning. */
export interface RetryPolicy {
  /** Attempts in total, the first included. */
  maxAttempts: number;
  /** Backoff before the second attempt when the server gave no Retry-After (ms). */
  baseDelayMs: number;
  /** Upper bound for the backoff and for a server's Retry-After (ms). */
  maxDelayMs: number;
  /**
   * A 429 that carries Retry-After: `"wait"` sleeps it out and sends again (client-go's behaviour);
   * `"fail"` rejects at once with the `ApiError` (its `retryAfterSeconds` set), for a caller that has
   * other work to do meanwhile and reschedules this one itself. A 429 without Retry-After is retried
   * with backoff either way.
   */
  throttled: "wait" | "fail";
}

/**
 * Defaults: 5 attempts with 100 ms doubling (about 1.5 s of backoff in the worst case with jitter) ride
 * out a leader election or an API server restart behind a load balancer, while a caller still hears of a
 * persistent failure within seconds and its own backoff (the work queue's) takes over. A Retry-After is
 * honoured up to 30 s: longer, and the caller is better placed to decide than a client blocked in a retry.
 */
export const defaultRetryPolicy: RetryPolicy = {
  maxAttempts: 5,
  baseDelayMs: 100,
  maxDelayMs: 30_000,
  throttled: "wait",
};

/** The largest backoff we compute ourselves (a server's Retry-After may ask for more, up to maxDelayMs). */
const maxBackoffMs = 5_000;

/**
 * Whether an HTTP status is worth another attempt for a request of this idempotency; with a policy,
 * a 429 that carried Retry-After (`retryAfterSeconds`) is not when the policy says `throttled: "fail"`.
 */
export function shouldRetryStatus(
  status: number,
  idempotent: boolean,
  policy?: Pick<RetryPolicy, "throttled">,
  retryAfterSeconds?: number,
): boolean {
  if (status === 429) return !(policy?.throttled === "fail" && retryAfterSeconds !== undefined);
  if (status >= 500 && status !== 501) return idempotent;
  return false;
}

/** Network failures (no response at all) that an idempotent request may retry. Timeouts and aborts are not. */
export function isRetryableNetworkError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return (
    code === "ECONNRESET" || code === "ECONNREFUSED" || code === "EPIPE" || code === "ENOTFOUND" || code === "EAI_AGAIN"
  );
}

/**
 * Delay before attempt `attempt + 1` (attempt counts from 1): the server's Retry-After when it sent one
 * (capped), else full-jitter exponential backoff (uniform in [0, base * 2^(attempt-1)], capped), which
 * spreads out clients that failed together.
 */
export function retryDelayMs(
  attempt: number,
  policy: Pick<RetryPolicy, "baseDelayMs" | "maxDelayMs">,
  retryAfterSeconds?: number,
  random: () => number = Math.random,
): number {
  if (retryAfterSeconds !== undefined && retryAfterSeconds > 0) {
    return Math.min(retryAfterSeconds * 1000, policy.maxDelayMs);
  }
  const ceiling = Math.min(policy.baseDelayMs * 2 ** (attempt - 1), maxBackoffMs, policy.maxDelayMs);
  return random() * ceiling;
}

/** Sleeps `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
