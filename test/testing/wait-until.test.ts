import { WaitForTimeoutError, waitUntil } from "capstan-dev/testing";
import { describe, expect, it } from "vitest";

describe("waitUntil", () => {
  it("resolves with the first value that is not undefined, null or false, 0 included", async () => {
    let calls = 0;
    const values = [undefined, null, false, 0];
    expect(await waitUntil(() => values[calls++])).toBe(0);
    expect(calls).toBe(4);
  });

  it("counts a condition that throws or rejects as not yet", async () => {
    let calls = 0;
    const value = await waitUntil(async () => {
      calls++;
      if (calls < 3) throw new Error("not found");
      return "found";
    });
    expect(value).toBe("found");
  });

  it("times out naming what it waited for and the condition's last error", async () => {
    const waiting = waitUntil(
      () => {
        throw new Error('configmaps "usd" not found');
      },
      { what: "the rate ConfigMap", timeout: 50 },
    );
    await expect(waiting).rejects.toThrow(WaitForTimeoutError);
    await expect(waiting).rejects.toThrow(/timed out after 50 waiting for the rate ConfigMap; .*"usd" not found/);
  });

  it("rejects with the signal's reason when it aborts", async () => {
    const abort = new AbortController();
    const waiting = waitUntil(() => false, { signal: abort.signal });
    abort.abort(new Error("the operator failed"));
    await expect(waiting).rejects.toThrow("the operator failed");
  });
});
