/**
 * Standard output for `capstan run`'s logger: the lines logged in one turn of the event loop go out
 * together in one system call, from the main thread, in the order they were logged.
 *
 * Why not pino's asynchronous destination (sonic-boom with `sync: false`): its writes run on libuv's
 * thread pool, and at `process.exit` it writes what is buffered while a write may still be in flight
 * there, so lines came out of order (seen in CI), and a write waiting to retry after EAGAIN was lost.
 * Writing synchronously keeps order and loses nothing at exit; batching per turn keeps the cost of a
 * burst (one line per handler run) to a few system calls instead of one per line. Like a Go
 * operator's logger, a reader that stops reading stops the process once the pipe is full.
 */
import { writeSync } from "node:fs";

/** How long to wait before retrying a write the pipe refused (EAGAIN: its reader is behind). */
const BUSY_WAIT_MS = 2;

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
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, BUSY_WAIT_MS);
    }
  }
}

/** Collects lines and writes them with `writeOut` once per turn of the event loop, and on `flush()`. */
export class BatchedOutput {
  #pending: string[] = [];
  #scheduled = false;
  #broken = false;

  constructor(private readonly writeOut: (text: string) => void) {}

  write(line: string): boolean {
    if (this.#broken) return true;
    this.#pending.push(line);
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => {
        this.#scheduled = false;
        this.flush();
      });
    }
    return true;
  }

  /** Writes what is pending now. An output that fails (its reader is gone: EPIPE) is dropped from then on. */
  flush(): void {
    if (this.#pending.length === 0 || this.#broken) return;
    const text = this.#pending.join("");
    this.#pending = [];
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
