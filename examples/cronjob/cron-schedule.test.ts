/** Cron schedules read as robfig/cron's ParseStandard reads them (what Kubernetes and the tutorial use). */
import { describe, expect, it } from "vitest";
import { CronSyntaxError, parseCronSchedule } from "./cron-schedule.ts";

/** The next `count` run times after `from`, as ISO strings. */
function runs(spec: string, from: string, count = 3): string[] {
  const schedule = parseCronSchedule(spec);
  const out: string[] = [];
  let t: Date | undefined = new Date(from);
  for (let i = 0; i < count && t !== undefined; i++) {
    t = schedule.next(t);
    if (t !== undefined) out.push(t.toISOString().replace(".000Z", "Z"));
  }
  return out;
}

describe("parseCronSchedule", () => {
  it("runs every minute, strictly after the time given, on whole minutes", () => {
    expect(runs("* * * * *", "2030-01-01T10:00:00Z")).toEqual([
      "2030-01-01T10:01:00Z",
      "2030-01-01T10:02:00Z",
      "2030-01-01T10:03:00Z",
    ]);
    expect(runs("* * * * *", "2030-01-01T10:00:59.999Z", 1)).toEqual(["2030-01-01T10:01:00Z"]);
  });

  it("reads steps, ranges, lists and names", () => {
    expect(runs("*/20 * * * *", "2030-01-01T10:05:00Z")).toEqual([
      "2030-01-01T10:20:00Z",
      "2030-01-01T10:40:00Z",
      "2030-01-01T11:00:00Z",
    ]);
    // 9, 13 and 17 o'clock on weekdays; 2030-01-04 is a Friday, so after 17:00 comes Monday.
    expect(runs("0 9-17/4 * * MON-FRI", "2030-01-04T16:00:00Z")).toEqual([
      "2030-01-04T17:00:00Z",
      "2030-01-07T09:00:00Z",
      "2030-01-07T13:00:00Z",
    ]);
    expect(runs("15,45 6 1 jan,Jul ?", "2030-01-01T06:30:00Z")).toEqual([
      "2030-01-01T06:45:00Z",
      "2030-07-01T06:15:00Z",
      "2030-07-01T06:45:00Z",
    ]);
    expect(runs("30/10 * * * *", "2030-01-01T10:00:00Z")).toEqual([
      "2030-01-01T10:30:00Z",
      "2030-01-01T10:40:00Z",
      "2030-01-01T10:50:00Z",
    ]);
  });

  it("runs on a day matching either day field when both are restricted, both when one is *", () => {
    // 2030-01-04 is a Friday, 2030-01-13 a Sunday.
    expect(runs("0 0 13 * 5", "2030-01-01T00:00:00Z")).toEqual([
      "2030-01-04T00:00:00Z",
      "2030-01-11T00:00:00Z",
      "2030-01-13T00:00:00Z",
    ]);
    expect(runs("0 0 * * 5", "2030-01-01T00:00:00Z", 2)).toEqual(["2030-01-04T00:00:00Z", "2030-01-11T00:00:00Z"]);
    expect(runs("0 0 13 * *", "2030-01-01T00:00:00Z", 2)).toEqual(["2030-01-13T00:00:00Z", "2030-02-13T00:00:00Z"]);
  });

  it("knows the descriptors and @every", () => {
    expect(runs("@hourly", "2030-01-01T10:30:00Z", 2)).toEqual(["2030-01-01T11:00:00Z", "2030-01-01T12:00:00Z"]);
    expect(runs("@daily", "2030-01-01T10:30:00Z", 1)).toEqual(["2030-01-02T00:00:00Z"]);
    expect(runs("@weekly", "2030-01-01T10:30:00Z", 1)).toEqual(["2030-01-06T00:00:00Z"]);
    expect(runs("@monthly", "2030-01-31T10:30:00Z", 1)).toEqual(["2030-02-01T00:00:00Z"]);
    expect(runs("@yearly", "2030-01-31T10:30:00Z", 1)).toEqual(["2031-01-01T00:00:00Z"]);
    expect(runs("@every 1h30m", "2030-01-01T10:00:00.500Z", 2)).toEqual([
      "2030-01-01T11:30:00Z",
      "2030-01-01T13:00:00Z",
    ]);
  });

  it("crosses month and year ends, and has no next time for a date that never comes", () => {
    expect(runs("59 23 31 12 *", "2030-06-01T00:00:00Z", 2)).toEqual(["2030-12-31T23:59:00Z", "2031-12-31T23:59:00Z"]);
    expect(runs("0 0 29 2 *", "2030-01-01T00:00:00Z", 1)).toEqual(["2032-02-29T00:00:00Z"]);
    expect(parseCronSchedule("0 0 30 2 *").next(new Date("2030-01-01T00:00:00Z"))).toBeUndefined();
  });

  it("refuses what ParseStandard refuses, saying why", () => {
    const refusal = (spec: string) => {
      try {
        parseCronSchedule(spec);
      } catch (err) {
        expect(err).toBeInstanceOf(CronSyntaxError);
        return (err as Error).message;
      }
      throw new Error(`${spec} was accepted`);
    };
    expect(refusal("* * * *")).toBe("expected exactly 5 fields, found 4: * * * *");
    expect(refusal("0 0 * * * *")).toMatch(/expected exactly 5 fields, found 6/);
    expect(refusal("60 * * * *")).toBe("minute value 60 out of range [0, 59]");
    expect(refusal("* * * * 7")).toBe("day of week value 7 out of range [0, 6]");
    expect(refusal("*/0 * * * *")).toMatch(/step of range should be a positive number/);
    expect(refusal("5-1 * * * *")).toMatch(/beginning of range \(5\) beyond end of range \(1\)/);
    expect(refusal("* * * FOO *")).toMatch(/failed to parse int from FOO/);
    expect(refusal("@fortnightly")).toBe("unrecognized descriptor: @fortnightly");
    expect(refusal("@every soon")).toMatch(/failed to parse duration/);
    expect(refusal("")).toMatch(/expected exactly 5 fields/);
  });
});
