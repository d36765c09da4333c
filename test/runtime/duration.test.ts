import { describe, expect, it } from "vitest";
import { toMilliseconds } from "../../packages/capstan/src/runtime/duration.ts";

describe("toMilliseconds", () => {
  it("takes numbers as milliseconds", () => {
    expect(toMilliseconds(250)).toBe(250);
    expect(toMilliseconds(0)).toBe(0);
  });

  it("parses Go-style duration strings, including compound and fractional ones", () => {
    expect(toMilliseconds("5s")).toBe(5000);
    expect(toMilliseconds("250ms")).toBe(250);
    expect(toMilliseconds("2m")).toBe(120_000);
    expect(toMilliseconds("1h30m")).toBe(5_400_000);
    expect(toMilliseconds("1.5s")).toBe(1500);
    expect(toMilliseconds("1d")).toBe(86_400_000);
    expect(toMilliseconds("0")).toBe(0);
  });

  it("rejects malformed or negative durations with a message naming the input", () => {
    expect(() => toMilliseconds("5")).toThrow(/"5"/);
    expect(() => toMilliseconds("5 s")).toThrow(/"5 s"/);
    expect(() => toMilliseconds("fast")).toThrow(/"fast"/);
    expect(() => toMilliseconds("")).toThrow(/invalid duration/);
    expect(() => toMilliseconds(-1)).toThrow(/-1/);
    expect(() => toMilliseconds(Number.NaN)).toThrow(/NaN/);
  });
});
