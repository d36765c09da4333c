import { describe, expect, it } from "vitest";
import { TokenBucket } from "../../packages/capstan/src/client/rate-limiter.ts";
import {
  defaultRetryPolicy,
  isRetryableNetworkError,
  retryDelayMs,
  shouldRetryStatus,
  sleep,
} from "../../packages/capstan/src/client/retry.ts";

describe("retry rules", () => {
  it("retries 429 for every request, 5xx only for idempotent ones, never 501 or 4xx", () => {
    expect(shouldRetryStatus(429, false)).toBe(true);
    expect(shouldRetryStatus(503, true)).toBe(true);
    expect(shouldRetryStatus(500, false)).toBe(false);
    expect(shouldRetryStatus(501, true)).toBe(false);
    expect(shouldRetryStatus(409, true)).toBe(false);
  });

  it("waits what Retry-After says, capped by the policy", () => {
    expect(retryDelayMs(1, defaultRetryPolicy, 3)).toBe(3000);
    expect(retryDelayMs(1, defaultRetryPolicy, 3600)).toBe(defaultRetryPolicy.maxDelayMs);
  });

  it("backs off exponentially with full jitter when the server gave no Retry-After", () => {
    const p = { maxAttempts: 10, baseDelayMs: 100, maxDelayMs: 30_000 };
    expect(retryDelayMs(1, p, undefined, () => 1)).toBe(100);
    expect(retryDelayMs(3, p, undefined, () => 1)).toBe(400);
    expect(retryDelayMs(3, p, undefined, () => 0.5)).toBe(200);
    expect(retryDelayMs(20, p, undefined, () => 1)).toBe(5000); // capped
  });

  it("treats connection resets as retryable and timeouts as not", () => {
    expect(isRetryableNetworkError(Object.assign(new Error("x"), { code: "ECONNRESET" }))).toBe(true);
    expect(isRetryableNetworkError(Object.assign(new Error("x"), { code: "UND_ERR_HEADERS_TIMEOUT" }))).toBe(false);
  });

  it("sleep rejects with the abort reason", async () => {
    const ac = new AbortController();
    const p = sleep(10_000, ac.signal);
    ac.abort(new Error("stopped"));
    await expect(p).rejects.toThrow("stopped");
  });
});

describe("token bucket", () => {
  it("lets a burst through, then one request per 1/qps seconds", () => {
    let now = 0;
    const tb = new TokenBucket(2, 3, () => now);
    expect([tb.tryAccept(), tb.tryAccept(), tb.tryAccept(), tb.tryAccept()]).toEqual([true, true, true, false]);
    now += 499;
    expect(tb.tryAccept()).toBe(false);
    now += 1;
    expect(tb.tryAccept()).toBe(true);
    now += 10_000; // refills to the burst, not beyond
    expect([tb.tryAccept(), tb.tryAccept(), tb.tryAccept(), tb.tryAccept()]).toEqual([true, true, true, false]);
  });

  it("queues waiters in order and gives the reservation back when a wait aborts", async () => {
    let now = 0;
    const tb = new TokenBucket(1000, 1, () => now);
    await tb.wait(); // takes the only token
    const ac = new AbortController();
    const aborted = tb.wait(ac.signal);
    ac.abort(new Error("no longer needed"));
    await expect(aborted).rejects.toThrow("no longer needed");
    now += 1; // one token's worth of time: it must go to the next caller, not to the aborted one
    expect(tb.tryAccept()).toBe(true);
  });

  it("rejects nonsense settings", () => {
    expect(() => new TokenBucket(0, 1)).toThrow(/qps/);
    expect(() => new TokenBucket(1, 0)).toThrow(/burst/);
  });
});
