import { spawn } from "node:child_process";
import { once } from "node:events";
import { Writable } from "node:stream";
import { describe, expect, it, vi } from "vitest";
import { BatchedOutput, MAX_DELAY_MS, MAX_PENDING_CHARS } from "../../packages/capstan/src/cli/batched-output.ts";
import { createLogger, prettyLine } from "../../packages/capstan/src/cli/log-output.ts";

const logOutput = new URL("../../packages/capstan/src/cli/log-output.ts", import.meta.url).href;

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

  it("logs an anticipated error by its message alone below debug level, in both formats", () => {
    // Recognised by name, as the operator module's own copy of capstan throws its own classes.
    const config = Object.assign(new Error("kubeconfig file ./kc does not exist"), { name: "ConfigError" });
    const refused = new Error("GET /version to https://127.0.0.1:1 failed: cannot connect", {
      cause: Object.assign(new Error("cannot connect to https://127.0.0.1:1: connection refused"), {
        name: "ConnectionError",
      }),
    });
    const unauthorized = Object.assign(new Error("Unauthorized"), {
      name: "ApiError",
      code: 401,
      reason: "Unauthorized",
    });
    for (const err of [config, refused, unauthorized]) {
      const json = capture();
      createLogger({ level: "info", format: "json", out: json.out }).error({ err }, "cannot start");
      const record = JSON.parse(json.text()) as { err: { message: string; stack?: string } };
      expect(record.err.message).toBe(err.message);
      expect(record.err.stack).toBeUndefined();

      const pretty = capture();
      createLogger({ level: "info", format: "pretty", out: pretty.out }).error({ err }, "cannot start");
      expect(pretty.text()).toMatch(/^\d\d:\d\d:\d\d\.\d{3} ERROR cannot start err=".*"\n$/);

      const debug = capture();
      createLogger({ level: "debug", format: "json", out: debug.out }).error({ err }, "cannot start");
      expect((JSON.parse(debug.text()) as { err: { stack?: string } }).err.stack).toMatch(/\n\s+at /);
    }
  });

  it("keeps the stack of any other error at every level", () => {
    const { out, text } = capture();
    const apiNotFound = Object.assign(new Error("not found"), { name: "ApiError", code: 404, reason: "NotFound" });
    const logger = createLogger({ level: "info", format: "json", out });
    logger.error({ err: new TypeError("x is undefined") }, "reconcile failed");
    logger.error({ err: apiNotFound }, "reconcile failed");
    const [bug, notFound] = text()
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { err: { stack?: string } });
    expect(bug?.err.stack).toMatch(/^TypeError: x is undefined\n\s+at /);
    expect(notFound?.err.stack).toMatch(/not found\n\s+at /);
  });

  it("passes a line that is not JSON through unchanged, and refuses an unknown level", () => {
    expect(prettyLine("plain text\n")).toBe("plain text\n");
    expect(() => createLogger({ level: "verbose", format: "json" })).toThrow('unknown log level "verbose"');
  });

  it("writes the lines of 50 ms in one write, in order, and at once when 64 KB are pending", () => {
    vi.useFakeTimers();
    try {
      const writes: string[] = [];
      const output = new BatchedOutput((text) => writes.push(text));
      const logger = createLogger({ level: "info", format: "json", out: output });
      const numbers = () =>
        writes.map((w) =>
          w
            .split("\n")
            .filter(Boolean)
            .map((l) => (JSON.parse(l) as { i: number }).i),
        );
      logger.info({ i: 0 }, "line");
      vi.advanceTimersByTime(MAX_DELAY_MS - 1);
      logger.info({ i: 1 }, "line");
      expect(writes).toEqual([]);
      vi.advanceTimersByTime(1);
      expect(numbers()).toEqual([[0, 1]]);
      logger.info({ i: 2 }, "line");
      output.flush();
      expect(numbers()).toEqual([[0, 1], [2]]);
      vi.advanceTimersByTime(MAX_DELAY_MS);
      expect(writes).toHaveLength(2);

      const big = "x".repeat(MAX_PENDING_CHARS / 2);
      logger.info({ i: 3, big }, "line");
      expect(writes).toHaveLength(2);
      logger.info({ i: 4, big }, "line");
      expect(numbers().at(-1)).toEqual([3, 4]);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it("drops its output, not the process, once writing fails (the reader is gone)", () => {
    let calls = 0;
    const output = new BatchedOutput(() => {
      calls++;
      throw Object.assign(new Error("write EPIPE"), { code: "EPIPE" });
    });
    output.write("one\n");
    output.flush();
    output.write("two\n");
    output.flush();
    expect(calls).toBe(1);
  });

  // The child's standard output is made non-blocking (as Node does once anything touches
  // process.stdout) and filled before logging starts, so the logger meets EAGAIN; 20,000 lines are
  // 3.4 MB, written while the reader reads. The second half is logged in the same turn as
  // process.exit, so only the flush at exit can write it.
  it("to standard output: keeps every line, in order, through a full pipe and up to process.exit", async () => {
    const script = `
        const { writeSync } = await import("node:fs");
        const { createLogger } = await import(${JSON.stringify(logOutput)});
        process.stdout;
        try { for (;;) writeSync(1, "filler\\n"); } catch (err) { if (err.code !== "EAGAIN") throw err; }
        process.stderr.write("logging\\n");
        const logger = createLogger({ level: "info", format: "json" });
        for (let i = 0; i < 10_000; i++) logger.info({ i, pad: "x".repeat(150) }, "line");
        setImmediate(() => {
          for (let i = 10_000; i < 20_000; i++) logger.info({ i, pad: "x".repeat(150) }, "line");
          logger.info("last line");
          process.exit(0);
        });`;
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, NODE_OPTIONS: "" },
    });
    child.stdout.pause();
    let stderr = "";
    child.stderr.setEncoding("utf8");
    await new Promise<void>((resolve, reject) => {
      child.stderr.on("data", (chunk: string) => {
        stderr += chunk;
        if (stderr.includes("logging")) resolve();
      });
      child.once("exit", (code) => reject(new Error(`exited (${code}) before logging: ${stderr}`)));
    });
    let stdout = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stdout.resume();
    const [code] = await once(child, "exit");
    if (!child.stdout.readableEnded) await once(child.stdout, "end");
    expect(code).toBe(0);
    const lines = stdout
      .trim()
      .split("\n")
      .filter((l) => l !== "filler")
      .map((l) => JSON.parse(l) as { msg: string; i?: number });
    expect(lines).toHaveLength(20_001);
    expect(lines.slice(0, -1).findIndex((l, i) => l.i !== i)).toBe(-1);
    expect(lines.at(-1)?.msg).toBe("last line");
    expect(stderr).toBe("logging\n");
  }, 30_000);
});
