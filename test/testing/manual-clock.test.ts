import { MAX_FIRINGS_AT_ONE_TIME, ManualClock } from "capstan-dev/testing";
import { describe, expect, it } from "vitest";
import { sleep } from "../../packages/capstan/src/runtime/clock.ts";

const start = Date.parse("2030-01-01T00:00:00Z");
const at = (clock: ManualClock) => new Date(clock.now()).toISOString().slice(11, 19);

describe("ManualClock", () => {
  it("stands still until advanced, and starts at the time it is given", async () => {
    const clock = new ManualClock("2030-01-01T00:00:00Z");
    expect(clock.now()).toBe(start);
    await new Promise((r) => setTimeout(r, 5));
    expect(clock.now()).toBe(start);
    await clock.advance("90s");
    expect(clock.now()).toBe(start + 90_000);
  });

  it("fires timers due within an advance in due order, each seeing its own due time as now()", async () => {
    const clock = new ManualClock(start);
    const fired: string[] = [];
    clock.setTimer(30_000, () => fired.push(`b ${at(clock)}`));
    clock.setTimer(10_000, () => fired.push(`a ${at(clock)}`));
    clock.setTimer(30_000, () => fired.push(`c ${at(clock)}`)); // same time as b: after it, as set
    clock.setTimer(61_000, () => fired.push("too late"));
    await clock.advance("1m");
    expect(fired).toEqual(["a 00:00:10", "b 00:00:30", "c 00:00:30"]);
    expect(clock.pendingTimers).toBe(1);
    expect(clock.nextTimerAt()?.toISOString()).toBe("2030-01-01T00:01:01.000Z");
  });

  it("fires the timers that fired timers set within the same advance, after settling each step", async () => {
    const clock = new ManualClock(start);
    const runs: string[] = [];
    const every10m = () => {
      runs.push(at(clock));
      // As an operator would: its next run is set by work that ends in a promise continuation.
      void Promise.resolve().then(() => clock.setTimer(600_000, every10m));
    };
    clock.setTimer(600_000, every10m);
    const settles: string[] = [];
    await clock.advance("1h", {
      settle: async () => {
        settles.push(at(clock));
        await new Promise((r) => setImmediate(r));
      },
    });
    expect(runs).toEqual(["00:10:00", "00:20:00", "00:30:00", "00:40:00", "00:50:00", "01:00:00"]);
    // Before the first timer and after each due time; the last due time is the end: no more.
    expect(settles).toEqual(["00:00:00", ...runs]);
  });

  it("fires a timer set for a time already reached on the next turn, without an advance", async () => {
    const clock = new ManualClock(start);
    let fired = false;
    clock.setTimer(0, () => {
      fired = true;
    });
    expect(fired).toBe(false);
    await new Promise((r) => setImmediate(r));
    expect(fired).toBe(true);
  });

  it("ends sleeps on the clock: after the time passed (true) or at once on abort (false), leaving no timer", async () => {
    const clock = new ManualClock(start);
    const slept = sleep(5000, undefined, clock);
    await clock.advance(5000);
    expect(await slept).toBe(true);
    const abort = new AbortController();
    const aborted = sleep(5000, abort.signal, clock);
    abort.abort();
    expect(await aborted).toBe(false);
    expect(clock.pendingTimers).toBe(0);
  });

  it("cancels a timer, and runs advances one after another in the order asked", async () => {
    const clock = new ManualClock(start);
    const fired: string[] = [];
    const cancel = clock.setTimer(1000, () => fired.push("cancelled"));
    clock.setTimer(2500, () => fired.push(at(clock)));
    cancel();
    await Promise.all([clock.advance(2000), clock.advance(1000)]);
    expect(fired).toEqual(["00:00:02"]);
    expect(clock.now()).toBe(start + 3000);
  });

  it("set() forward is an advance; backward moves now() back and keeps each timer's remaining delay", async () => {
    const clock = new ManualClock(start);
    const fired: string[] = [];
    clock.setTimer(60_000, () => fired.push(at(clock)));
    await clock.set("2030-01-01T00:00:30Z");
    await clock.set("2030-01-01T00:00:10Z");
    expect(fired).toEqual([]);
    expect(clock.nextTimerAt()?.toISOString()).toBe("2030-01-01T00:00:40.000Z");
    await clock.advance("30s");
    expect(fired).toEqual(["00:00:40"]);
  });

  it("rejects an advance whose timers keep falling due at one instant, and one whose callback throws", async () => {
    const clock = new ManualClock(start);
    let spinning = true;
    const spin = () => {
      if (spinning) clock.setTimer(0, spin);
    };
    clock.setTimer(1000, spin);
    await expect(clock.advance(1000)).rejects.toThrow(`for ${MAX_FIRINGS_AT_ONE_TIME} rounds`);
    spinning = false;
    const other = new ManualClock(start);
    other.setTimer(10, () => {
      throw new Error("callback failed");
    });
    await expect(other.advance(10)).rejects.toThrow("callback failed");
    await expect(other.advance(-1)).rejects.toThrow(RangeError);
  });
});
