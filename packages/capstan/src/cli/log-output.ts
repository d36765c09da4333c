/**
 * The logger of `capstan run` and `capstan dev`: pino JSON lines (for log collectors), or one
 * readable line per record for a terminal (`--log-format pretty`), without extra dependencies.
 * An anticipated error (anticipated-errors.ts: configuration, connection, credentials, the operator
 * module) is logged by its message; its stack only at debug and trace level. Other errors keep theirs.
 */
import pino, { type Logger } from "pino";
import { errorSerializer } from "./anticipated-errors.ts";
import { batchedStdout } from "./batched-output.ts";

export const LOG_FORMATS = ["json", "pretty"] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];
export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

/** Fields every record has, shown in the line's head instead of as key=value. */
const HEAD_FIELDS = new Set(["level", "time", "msg", "pid", "hostname"]);

/** Levels at which anticipated errors are logged with their stack. */
const STACK_LEVELS = new Set(["debug", "trace"]);

/**
 * A logger writing `format` to `out` at `level`. Without `out` it writes to standard output,
 * in batches of up to 50 ms, flushed at exit (batched-output.ts): one system call per
 * line was ~8% of a handler-style operator's wall-clock profile in a burst, measured.
 */
export function createLogger(options: {
  level: string;
  format: LogFormat;
  out?: { write(line: string): unknown };
}): Logger {
  if (!(LOG_LEVELS as readonly string[]).includes(options.level)) {
    throw new Error(`unknown log level "${options.level}"; use one of ${LOG_LEVELS.join(", ")}`);
  }
  const out = options.out ?? batchedStdout();
  const destination = options.format === "json" ? out : { write: (line: string) => out.write(prettyLine(line)) };
  const serializers = { err: errorSerializer(STACK_LEVELS.has(options.level)) };
  return pino({ level: options.level, serializers }, destination);
}

/** `12:00:01.123 INFO  message key=value ...` for one pino JSON line (left as is if it is not JSON). */
export function prettyLine(line: string): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const time = typeof record.time === "number" ? new Date(record.time).toISOString().slice(11, 23) : "";
  const level = (pino.levels.labels[record.level as number]?.toUpperCase() ?? String(record.level)).padEnd(5);
  const fields: string[] = [];
  let stack = "";
  for (const [key, value] of Object.entries(record)) {
    if (HEAD_FIELDS.has(key)) continue;
    if (key === "err" && typeof value === "object" && value !== null) {
      const err = value as { message?: string; stack?: string };
      fields.push(`err=${JSON.stringify(err.message ?? "")}`);
      if (err.stack) stack = `\n    ${err.stack.split("\n").join("\n    ")}`;
      continue;
    }
    fields.push(`${key}=${typeof value === "string" && !/\s/.test(value) ? value : JSON.stringify(value)}`);
  }
  const msg = typeof record.msg === "string" ? record.msg : "";
  return `${time} ${level} ${msg}${fields.length > 0 ? ` ${fields.join(" ")}` : ""}${stack}\n`;
}
