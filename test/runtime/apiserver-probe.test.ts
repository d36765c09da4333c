import { waitUntil } from "capstan-dev/testing";
import { describe, expect, it } from "vitest";
import { ApiServerProbe } from "../../packages/capstan/src/runtime/apiserver-probe.ts";
import { apiError, trackRuntimeTimers } from "./support/fake-lister-watcher.ts";

describe("ApiServerProbe", () => {
  it("counts any HTTP answer as reachable, and no answer in time as lost; reports each loss and one return", async () => {
    const timers = trackRuntimeTimers();
    type Answer = "ok" | "forbidden" | "refused" | "hang";
    let answer: Answer = "ok";
    let requests = 0;
    const lost: unknown[] = [];
    let back = 0;
    const probe = new ApiServerProbe({
      request: (signal) => {
        requests++;
        if (answer === "ok") return Promise.resolve("ok");
        if (answer === "forbidden") return Promise.reject(apiError(403, "forbidden"));
        if (answer === "refused")
          return Promise.reject(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }));
        return new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
      },
      periodMs: 10,
      timeoutMs: 50,
      onLost: (err) => lost.push(err),
      onBack: () => back++,
    });
    const stop = new AbortController();
    const run = probe.run(stop.signal);
    await waitUntil(() => probe.lastAnsweredAt > 0, { what: "an answer" });
    answer = "forbidden"; // a 403 is an answer: the server is there
    const seen = requests;
    await waitUntil(() => requests > seen + 2);
    expect(probe.reachable).toBe(true);
    expect(lost).toHaveLength(0);

    answer = "hang"; // a frozen server: nothing within the timeout
    await waitUntil(() => lost.length >= 2, { what: "two lost probes" });
    expect(probe.reachable).toBe(false);
    expect(String(lost[0])).toContain("no answer within 50 ms");
    answer = "refused";
    const lostBefore = lost.length;
    await waitUntil(() => lost.length > lostBefore);
    const answeredBefore = probe.lastAnsweredAt;

    answer = "ok";
    await waitUntil(() => probe.reachable, { what: "reachable again" });
    await waitUntil(() => requests > seen + 20);
    expect(back).toBe(1);
    expect(probe.lastAnsweredAt).toBeGreaterThan(answeredBefore);

    answer = "hang";
    await waitUntil(() => requests > seen + 21);
    stop.abort(); // a probe in flight ends with the signal
    await run;
    expect(await timers.pending()).toBe(0);
    timers.stop();
  });

  it("refuses a period or timeout of zero", () => {
    const request = async () => "ok";
    expect(() => new ApiServerProbe({ request, periodMs: 0, timeoutMs: 10 })).toThrow(
      "API server probe: period and timeout must be greater than zero, got 0 ms and 10 ms",
    );
  });
});
