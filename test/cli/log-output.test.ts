import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger, prettyLine } from "../../packages/capstan/src/cli/log-output.ts";

function capture(): { out: Writable; text: () => string } {
  let text = "";
  const out = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk);
      done();
    },
  });
  return { out, text: () => text };
}

describe("capstan run's log output", () => {
  it("writes pino JSON lines with --log-format json", () => {
    const { out, text } = capture();
    createLogger({ level: "info", format: "json", out }).info({ operator: "rates" }, "starting operator");
    expect(JSON.parse(text())).toMatchObject({ level: 30, msg: "starting operator", operator: "rates" });
  });

  it("writes one readable line per record with --log-format pretty, error stacks indented below", () => {
    const { out, text } = capture();
    const logger = createLogger({ level: "debug", format: "pretty", out });
    logger.debug({ kind: "Widget", name: "w 1" }, "reconciled");
    logger.error({ err: new Error("boom") }, "operator failed");
    const [first, second, stack] = text().split("\n");
    expect(first).toMatch(/^\d\d:\d\d:\d\d\.\d{3} DEBUG reconciled kind=Widget name="w 1"$/);
    expect(second).toMatch(/^\d\d:\d\d:\d\d\.\d{3} ERROR operator failed err="boom"$/);
    expect(stack).toMatch(/^ {4}Error: boom$/);
  });

  it("passes a line that is not JSON through unchanged, and refuses an unknown level", () => {
    expect(prettyLine("plain text\n")).toBe("plain text\n");
    expect(() => createLogger({ level: "verbose", format: "json" })).toThrow('unknown log level "verbose"');
  });
});
