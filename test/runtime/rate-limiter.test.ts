import { describe, expect, it } from "vitest";
import { ExponentialBackoff } from "../../packages/capstan/src/runtime/backoff.ts";
import {
  defaultControllerRateLimiter,
  exponentialFailureRateLimiter,
  maxOf,
  tokenBucketRateLimiter,
} from "../../packages/capstan/src/runtime/rate-limiter.ts";

function manualClock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe("exponentialFailureRateLimiter", () => {
  it("doubles from 5 ms per failure of the same item, up to the 1000 s cap", () => {
    const limiter = exponentialFailureRateLimiter();
    const delays = Array.from({ length: 20 }, () => limiter.when("a"));
    expect(delays.slice(0, 5)).toEqual([5, 10, 20, 40, 80]);
    expect(delays[17]).toBe(5 * 2 ** 17); // 655.36 s, still under the cap
    expect(delays[18]).toBe(1_000_000);
    expect(delays[19]).toBe(1_000_000);
    expect(limiter.numRequeues("a")).toBe(20);
  });

  it("counts each item separately and forgets one without touching the others", () => {
    const limiter = exponentialFailureRateLimiter({ baseDelay: "1s", maxDelay: "1m" });
    limiter.when("a");
    limiter.when("a");
    expect(limiter.when("b")).toBe(1000);
    limiter.forget("a");
    expect(limiter.numRequeues("a")).toBe(0);
    expect(limiter.numRequeues("b")).toBe(1);
    expect(limiter.when("a")).toBe(1000);
  });

  it("stays at the cap instead of overflowing after thousands of failures", () => {
    const limiter = exponentialFailureRateLimiter();
    let last = 0;
    for (let i = 0; i < 2000; i++) last = limiter.when("x");
    expect(last).toBe(1_000_000);
  });

  it("rejects a max below the base", () => {
    expect(() => exponentialFailureRateLimiter({ baseDelay: "2s", maxDelay: "1s" })).toThrow(/baseDelay/);
  });
});

describe("tokenBucketRateLimiter", () => {
  it("lets a burst through, then spaces requests at 1/qps, refilling over time", () => {
    const clock = manualClock();
    const limiter = tokenBucketRateLimiter({ qps: 1, burst: 3, clock });
    expect([1, 2, 3, 4, 5].map((i) => limiter.when(`item-${i}`))).toEqual([0, 0, 0, 1000, 2000]);
    clock.advance(1000);
    expect(limiter.when("later")).toBe(2000);
    clock.advance(10_000);
    // Refill is capped at the burst size.
    expect([1, 2, 3, 4].map(() => limiter.when("x"))).toEqual([0, 0, 0, 1000]);
    expect(limiter.numRequeues("x")).toBe(0);
  });
});

describe("maxOf", () => {
  it("waits as long as the slowest limiter, counts in all, and forgets in all", () => {
    const clock = manualClock();
    const limiter = maxOf(
      exponentialFailureRateLimiter({ baseDelay: 100, maxDelay: "1s" }),
      tokenBucketRateLimiter({ qps: 1, burst: 1, clock }),
    );
    expect(limiter.when("a")).toBe(100); // bucket: 0, exponential: 100
    expect(limiter.when("a")).toBe(1000); // bucket: 1000, exponential: 200
    expect(limiter.numRequeues("a")).toBe(2);
    limiter.forget("a");
    expect(limiter.numRequeues("a")).toBe(0);
  });

  it("is client-go's default: 5 ms per-item backoff under a 10 qps / 100 burst bucket", () => {
    const limiter = defaultControllerRateLimiter();
    expect([1, 2, 3].map(() => limiter.when("k"))).toEqual([5, 10, 20]);
  });
});

describe("ExponentialBackoff", () => {
  it("doubles from 800 ms to a 30 s cap and adds up to 100% jitter", () => {
    const clock = manualClock();
    const backoff = new ExponentialBackoff({ clock, random: () => 0 });
    const delays = Array.from({ length: 8 }, () => backoff.next());
    expect(delays).toEqual([800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]);
    const jittered = new ExponentialBackoff({ clock, random: () => 0.5 });
    expect(jittered.next()).toBe(1200);
  });

  it("starts over after two quiet minutes", () => {
    const clock = manualClock();
    const backoff = new ExponentialBackoff({ clock, random: () => 0 });
    backoff.next();
    backoff.next();
    clock.advance(60_000);
    expect(backoff.next()).toBe(3200);
    clock.advance(120_001);
    expect(backoff.next()).toBe(800);
  });
});
