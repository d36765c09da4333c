/**
 * Client-side rate limiting: a token bucket (`qps` tokens per second, at most `burst` saved up), the
 * shape of client-go's `flowcontrol.NewTokenBucketRateLimiter`.
 *
 * Off by default in `KubeClient`. client-go's defaults (5 QPS, burst 10) predate API Priority and
 * Fairness: today the API server protects itself, answering 429 with Retry-After when a client sends more
 * than its share, and the client honours that (`retry.ts`). A client-side limit by default would only cap
 * the throughput an operator gets from a server that has room, which is exactly what the bench measures.
 * Turn it on (`qps`/`burst`) to be a polite neighbour on a shared cluster.
 *
 * Guarantees: over any window of t seconds at most `burst + qps * t` requests pass; waiters are served in
 * arrival order (each takes a reservation); an aborted wait returns its reservation and rejects with the
 * signal's reason.
 */

/** Something that admits requests. */
export interface RateLimiter {
  /** Resolves when the caller may send one request; rejects with the signal's reason if it aborts first. */
  wait(signal?: AbortSignal): Promise<void>;
}

/** Token bucket rate limiter. */
export class TokenBucket implements RateLimiter {
  readonly #qps: number;
  readonly #burst: number;
  readonly #now: () => number;
  /** May go negative: each waiter reserves a future token, so waits queue up in order. */
  #tokens: number;
  #last: number;

  constructor(qps: number, burst: number, now: () => number = () => performance.now()) {
    if (!(qps > 0) || !Number.isFinite(qps))
      throw new RangeError(`rate limiter qps must be a positive number, got ${qps}`);
    if (!(burst >= 1) || !Number.isInteger(burst)) {
      throw new RangeError(`rate limiter burst must be an integer of at least 1, got ${burst}`);
    }
    this.#qps = qps;
    this.#burst = burst;
    this.#now = now;
    this.#tokens = burst;
    this.#last = now();
  }

  #refill(): void {
    const now = this.#now();
    this.#tokens = Math.min(this.#burst, this.#tokens + ((now - this.#last) / 1000) * this.#qps);
    this.#last = now;
  }

  /** Takes a token if one is available now. */
  tryAccept(): boolean {
    this.#refill();
    if (this.#tokens >= 1) {
      this.#tokens -= 1;
      return true;
    }
    return false;
  }

  wait(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    this.#refill();
    this.#tokens -= 1;
    if (this.#tokens >= 0) return Promise.resolve();
    const delayMs = (-this.#tokens / this.#qps) * 1000;
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        clearTimeout(timer);
        this.#tokens += 1; // give the reservation back
        reject(signal?.reason);
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      }, delayMs);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }
}
