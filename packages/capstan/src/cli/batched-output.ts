/**
 * Standard output for `capstan run`'s logger: lines go out in batches (what was logged within 50 ms
 * of a batch's first line, or 64 KB), one system call each, from the main thread, in order.
 *
 * Why not pino's asynchronous destination (sonic-boom with `sync: false`): its writes run on libuv's
 * thread pool, and at `process.exit` it writes what is buffered while a write may still be in flight
 * there, so lines came out of order (seen in CI), and a write waiting to retry after EAGAIN was lost.
 * Writing synchronously keeps order and loses nothing at exit; batching keeps a burst (one line per
 * handler run) to a few system calls instead of one per line, and wakes the reader (a container
 * runtime, a terminal) as seldom. Like a Go operator's logger, a reader that stops reading stops
 * the process once the pipe is full. Only a SIGKILL loses lines: those of the last 50 ms.
 * sonic-boom's synchronous mode with `minLength` and `periodicFlush` comes close, but its flush
 * timer fires every period even when nothing is pending, it sleeps 100 ms per EAGAIN, and a failed
 * write (EPIPE) becomes an unhandled 'error' that ends the process.
 */
import { writeSync } from "node:fs";

/** How long to wait before retrying a write the pipe refused (EAGAIN: its reader is behind). */
const BUSY_WAIT_MS = 2;
/** What `Atomics.wait` sleeps on: nothing ever notifies it, so each wait lasts BUSY_WAIT_MS. */
const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** Writes all of `text` to `fd`, waiting while a non-blocking pipe is full. */
export function writeAllSync(fd: number, text: string): void {
  const bytes = Buffer.from(text, "utf8");
  let offset = 0;
  while (offset < bytes.length) {
    try {
      offset += writeSync(fd, bytes, offset);
    } catch (err) {
      // Node makes standard output non-blocking once anything touches `process.stdout` (console.log).
      if ((err as NodeJS.ErrnoException).code !== "EAGAIN") throw err;
      Atomics.wait(sleeper, 0, 0, BUSY_WAIT_MS);
    }
  }
}

/** How long a logged line may wait for others to go out with it. */
export const MAX_DELAY_MS = 50;
/**
 * Pending text (in characters: ~64 KB of log lines, which are ASCII but for the odd name or
 * message) that is written at once rather than after {@link MAX_DELAY_MS}.
 */
export const MAX_PENDING_CHARS = 64 * 1024;

/**
 * Collects lines and writes them with `writeOut` at most {@link MAX_DELAY_MS} after the first of
 * them, at once when {@link MAX_PENDING_CHARS} are pending, and on `flush()`.
 */
export class BatchedOutput {
  #pending: string[] = [];
  #pendingLength = 0;
  #timer: NodeJS.Timeout | undefined;
  #broken = false;

  constructor(private readonly writeOut: (text: string) => void) {}

  write(line: string): boolean {
    if (this.#broken) return true;
    this.#pending.push(line);
    this.#pendingLength += line.length;
    if (this.#pendingLength >= MAX_PENDING_CHARS) this.flush();
    else if (this.#timer === undefined) {
      // Unreferenced: pending lines never keep the process alive; the exit flush writes them.
      this.#timer = setTimeout(() => this.flush(), MAX_DELAY_MS).unref();
    }
    return true;
  }

  /** Writes what is pending now. An output that fails (its reader is gone: EPIPE) is dropped from then on. */
  flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#pending.length === 0 || this.#broken) return;
    const text = this.#pending.join("");
    this.#pending = [];
    this.#pendingLength = 0;
    try {
      this.writeOut(text);
    } catch {
      // Logging must not take the operator down with it; there is nowhere left to report this.
      this.#broken = true;
    }
  }
}

let stdout: BatchedOutput | undefined;

/** The process's one batched standard output, flushed when the process exits (also on `process.exit`). */
export function batchedStdout(): BatchedOutput {
  if (!stdout) {
    const out = new BatchedOutput((text) => writeAllSync(1, text));
    process.on("exit", () => out.flush());
    stdout = out;
  }
  return stdout;
}
