import { describe, expect, it } from "vitest";
import { logCapture, waitForRecord } from "../../packages/capstan-dev/src/testing/log-capture.ts";

describe("waitForRecord (running.waitForLog)", () => {
  it("finds a record by plain text, quotes included, once it is logged", async () => {
    const { logger, records } = logCapture("silent");
    const waiting = waitForRecord(records, 'configmaps "usd" is forbidden');
    setTimeout(() => logger.warn({ err: { message: 'configmaps "usd" is forbidden: no' } }, "retrying"), 30);
    const record = await waiting;
    expect(record.msg).toBe("retrying");
    expect(record.level).toBe(40);
  });

  it("takes a predicate, and names what it waited for when the time is up", async () => {
    const { logger, records } = logCapture("silent");
    logger.info({ code: 200 }, "ok");
    await expect(waitForRecord(records, (r) => r["code"] === 200)).resolves.toMatchObject({ msg: "ok" });
    await expect(waitForRecord(records, "never logged", { timeout: 50 })).rejects.toThrow(
      'no log record matching "never logged" after 50 (1 records)',
    );
  });

  it("stops waiting when its signal aborts", async () => {
    const { records } = logCapture("silent");
    const abort = new AbortController();
    const waiting = waitForRecord(records, "x", { signal: abort.signal });
    abort.abort(new Error("test over"));
    await expect(waiting).rejects.toThrow();
  });
});
