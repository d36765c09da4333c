/**
 * The logger `cluster.run` gives an operator: prints at the cluster's log level (silent by default)
 * and keeps every record from debug up in memory, so a test can assert on what the operator logged
 * (a 403 naming its ServiceAccount, a handler's retry) without making test output noisy.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { toMilliseconds } from "capstan";
import pino, { type Logger } from "pino";
import { DEFAULT_WAIT_TIMEOUT, type WaitForOptions } from "./wait-for.ts";

/**
 * Records kept per operator: enough for a test's scenario, bounded so a long test with a chatty
 * operator does not grow without end (the oldest are dropped first).
 */
export const LOG_CAPTURE_LIMIT = 5_000;

/** One pino record as logged: `level` (30 info, 40 warn, 50 error), `time`, `msg`, and the bindings. */
export type LogRecord = Readonly<Record<string, unknown>> & { readonly level: number; readonly msg?: string };

/** A logger printing at `printLevel` that also keeps its records (debug and above) in `records`. */
export function logCapture(printLevel: string): { logger: Logger; records: readonly LogRecord[] } {
  const records: LogRecord[] = [];
  const memory = {
    write(line: string) {
      records.push(JSON.parse(line) as LogRecord);
      if (records.length > LOG_CAPTURE_LIMIT) records.shift();
    },
  };
  const streams: pino.StreamEntry[] = [{ level: "debug", stream: memory }];
  if (printLevel !== "silent") streams.push({ level: printLevel as pino.Level, stream: process.stdout });
  const lowest = printLevel === "trace" ? "trace" : "debug";
  return { logger: pino({ level: lowest }, pino.multistream(streams)), records };
}

/** How often {@link waitForRecord} looks again: records arrive as the operator logs, in microseconds. */
const POLL_MS = 20;

/**
 * Waits until a record matches: a string is looked for in the record's values (message, error, bindings),
 * a function is a predicate. Resolves with the first matching record; rejects after `timeout`
 * (default {@link DEFAULT_WAIT_TIMEOUT}) naming what it waited for, or when `signal` aborts.
 */
export async function waitForRecord(
  records: readonly LogRecord[],
  match: string | ((record: LogRecord) => boolean),
  options: WaitForOptions = {},
): Promise<LogRecord> {
  // The text as it appears inside the record's JSON (quotes in an error message are escaped there).
  const text = typeof match === "string" ? JSON.stringify(match).slice(1, -1) : "";
  const matches = typeof match === "string" ? (r: LogRecord) => JSON.stringify(r).includes(text) : match;
  const timeout = options.timeout ?? DEFAULT_WAIT_TIMEOUT;
  const deadline = Date.now() + toMilliseconds(timeout);
  for (;;) {
    const found = records.find(matches);
    if (found) return found;
    if (Date.now() >= deadline) {
      const what = typeof match === "string" ? JSON.stringify(match) : "the predicate";
      throw new Error(`no log record matching ${what} after ${timeout} (${records.length} records)`);
    }
    await sleep(POLL_MS, undefined, { signal: options.signal });
  }
}
