/**
 * The operator log lines the dashboard shows: a bounded ring of the newest lines, each parsed
 * once (a pino JSON record gives its level, message, and the object it is about), with
 * subscribers for the live panel.
 *
 * Anything that produces lines can feed it: `capstan dev` writes each operator process's output
 * lines with {@link LogFeed.write}; an in-process operator (a test's `cluster.run(op, { logger })`)
 * logs through `pino(logs.destination("my-operator"))`.
 *
 * Guarantees: at most {@link LOG_RING_SIZE} lines are kept (the oldest go first); `seq` numbers
 * increase by one per line, so a page can tell what it has already shown; `write` never throws.
 */
import pino from "pino";

/**
 * Lines kept: a few minutes of a chatty operator at debug level, or hours at info, in a few MB;
 * the terminal keeps everything else.
 */
export const LOG_RING_SIZE = 5_000;

/** One log line as the page shows it. */
export interface LogLine {
  /** Position in the feed: 1 for the first line written, +1 per line. */
  seq: number;
  /** Who printed it: an operator's label in `capstan dev`, the name given to `destination()`. */
  source: string;
  /** The line as printed. */
  text: string;
  /** Milliseconds since the epoch: the record's `time`, else when the line was written. */
  time: number;
  /** pino's level name (`info`, `warn`, ...) for records, absent for plain text. */
  level?: string;
  msg?: string;
  /** The object the record is about (pino bindings of Capstan's per-object loggers). */
  namespace?: string;
  name?: string;
  /** The record's other fields (`controller`, `kind`, `err`, ...), for the page to show. */
  fields?: Record<string, unknown>;
}

/** Which lines a reader wants; every given field must match. */
export interface LogFilter {
  source?: string;
  namespace?: string;
  name?: string;
}

/** Record fields shown in the line's head, not among `fields`. */
const HEAD_FIELDS = new Set(["level", "time", "msg", "pid", "hostname", "namespace", "name"]);

/** True when `line` passes `filter`. */
export function matchesLogFilter(line: LogLine, filter: LogFilter): boolean {
  return (
    (!filter.source || line.source === filter.source) &&
    (!filter.namespace || line.namespace === filter.namespace) &&
    (!filter.name || line.name === filter.name)
  );
}

/** The ring of operator log lines; see the module documentation. */
export class LogFeed {
  readonly #lines: LogLine[] = [];
  readonly #listeners = new Set<(line: LogLine) => void>();
  #seq = 0;

  constructor(private readonly size: number = LOG_RING_SIZE) {}

  /** Adds one line printed by `source` (a pino JSON record, or any text). */
  write(source: string, text: string): void {
    const line = parseLine(++this.#seq, source, text.replace(/\r?\n$/, ""));
    this.#lines.push(line);
    if (this.#lines.length > this.size) this.#lines.shift();
    for (const listener of this.#listeners) {
      try {
        listener(line);
      } catch {
        // A broken subscriber must not lose the line for the others.
      }
    }
  }

  /** A pino destination (`pino(feed.destination("my-operator"))`): each record becomes a line. */
  destination(source: string): { write(chunk: string): void } {
    return {
      write: (chunk: string) => {
        for (const text of chunk.split("\n")) if (text !== "") this.write(source, text);
      },
    };
  }

  /** The kept lines that pass `filter`, oldest first, at most `limit` (the newest of them). */
  lines(filter: LogFilter = {}, limit = this.size): LogLine[] {
    const out = this.#lines.filter((l) => matchesLogFilter(l, filter));
    return out.slice(Math.max(0, out.length - limit));
  }

  /** Every source that wrote a kept line, sorted. */
  sources(): string[] {
    return [...new Set(this.#lines.map((l) => l.source))].sort();
  }

  /** Calls `listener` with each new line until the returned function is called. */
  subscribe(listener: (line: LogLine) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}

function parseLine(seq: number, source: string, text: string): LogLine {
  const line: LogLine = { seq, source, text, time: Date.now() };
  if (!text.startsWith("{")) return line;
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return line;
  }
  if (typeof record !== "object" || record === null || typeof record.level !== "number") return line;
  if (typeof record.time === "number") line.time = record.time;
  line.level = pino.levels.labels[record.level] ?? String(record.level);
  if (typeof record.msg === "string") line.msg = record.msg;
  if (typeof record.namespace === "string") line.namespace = record.namespace;
  if (typeof record.name === "string") line.name = record.name;
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) if (!HEAD_FIELDS.has(key)) fields[key] = value;
  if (Object.keys(fields).length > 0) line.fields = fields;
  return line;
}
