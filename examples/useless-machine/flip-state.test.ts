/** The flip cycle's decisions, from status timestamps alone (no cluster, no clock). */
import { describe, expect, it } from "vitest";
import { flipState } from "./flip-state.ts";

const DELAY = 5_000;
const T0 = Date.parse("2026-01-01T00:00:00.000Z");
const at = (ms: number) => new Date(T0 + ms).toISOString();

describe("flipState", () => {
  it("is allDown when nothing is up, whatever the status says", () => {
    expect(flipState(false, {}, T0, DELAY)).toEqual({ phase: "allDown" });
    expect(flipState(false, { seenAt: at(0), lastFlipAt: at(0) }, T0 + 10 * DELAY, DELAY)).toEqual({
      phase: "allDown",
    });
  });

  it("is firstSeen when a switch is up and seenAt is not set, even long after the last flip", () => {
    expect(flipState(true, {}, T0, DELAY)).toEqual({ phase: "firstSeen" });
    expect(flipState(true, { lastFlipAt: at(0) }, T0 + 60_000, DELAY)).toEqual({ phase: "firstSeen" });
  });

  it("waits a full delay after seenAt, then is due", () => {
    expect(flipState(true, { seenAt: at(0) }, T0 + 1_000, DELAY)).toEqual({ phase: "waiting", dueInMs: 4_000 });
    expect(flipState(true, { seenAt: at(0) }, T0 + DELAY - 1, DELAY)).toEqual({ phase: "waiting", dueInMs: 1 });
    expect(flipState(true, { seenAt: at(0) }, T0 + DELAY, DELAY)).toEqual({ phase: "due" });
  });

  it("waits a full delay after the last flip even when seenAt is older", () => {
    const status = { seenAt: at(0), lastFlipAt: at(7_000) };
    expect(flipState(true, status, T0 + 8_000, DELAY)).toEqual({ phase: "waiting", dueInMs: 4_000 });
    expect(flipState(true, status, T0 + 12_000, DELAY)).toEqual({ phase: "due" });
  });

  it("never answers due twice within one delay when each flip is recorded before the next decision", () => {
    let status: { seenAt?: string; lastFlipAt?: string } = { seenAt: at(0) };
    const dues: number[] = [];
    for (let now = T0; now <= T0 + 30_000; now += 250) {
      if (flipState(true, status, now, DELAY).phase === "due") {
        dues.push(now);
        status = { ...status, lastFlipAt: new Date(now).toISOString() };
      }
    }
    expect(dues.map((t) => t - T0)).toEqual([5_000, 10_000, 15_000, 20_000, 25_000, 30_000]);
  });
});
