/**
 * The logger `cluster.run` gives an operator: prints at the cluster's log level (silent by default)
 * and keeps every record from debug up in memory, so a test can assert on what the operator logged
 * (a 403 naming its ServiceAccount, a handler's retry) without making test output noisy.
 */
import pino, { type Logger } from "pino";

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
