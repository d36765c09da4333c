import { ConsistentlyError, consistently } from "capstan-dev/testing";
import { describe, expect, it } from "vitest";

describe("consistently", () => {
  it("keeps running the condition for the whole duration and resolves with its last value", async () => {
    let calls = 0;
    const started = performance.now();
    const value = await consistently(() => ++calls, { for: 100, interval: 5 });
    expect(performance.now() - started).toBeGreaterThanOrEqual(100);
    expect(calls).toBeGreaterThan(1);
    expect(value).toBe(calls);
  });

  it("fails at the first run that returns false, saying how long it held", async () => {
    let calls = 0;
    const checking = consistently(() => ++calls < 3, { for: "10s", interval: 1, what: "fewer than three Jobs" });
    await expect(checking).rejects.toThrow(ConsistentlyError);
    await expect(checking).rejects.toThrow(
      /^expected fewer than three Jobs to keep holding, but after \d+ ms it returned false$/,
    );
    expect(calls).toBe(3);
  });

  it("fails when a run throws or rejects, with its error", async () => {
    const checking = consistently(
      async () => {
        throw new Error('jobs "nightly-1" already exists');
      },
      { for: "10s" },
    );
    await expect(checking).rejects.toThrow(/it threw: jobs "nightly-1" already exists/);
  });

  it("rejects with the signal's reason when it aborts", async () => {
    const abort = new AbortController();
    const checking = consistently(() => true, { for: "10s", signal: abort.signal });
    abort.abort(new Error("the operator failed"));
    await expect(checking).rejects.toThrow("the operator failed");
  });
});
