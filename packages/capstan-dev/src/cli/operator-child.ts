/**
 * One operator child process of `capstan dev`, from `capstan dev`'s side: spawned as a standby
 * (operator-child-main.ts: Node started, Capstan loaded, no operator), told to run the operator with
 * {@link OperatorChild.start}, its output passed on line by line, the project files it loads passed
 * on as they are reported (operator-child-protocol.ts), its exit awaited.
 *
 * Guarantees: `onExit` is called once, `exited` resolves after it, also when the process could not
 * be spawned. A signal to a process that has exited is a no-op.
 *
 * Caveats: the entry script is the compiled operator-child-main.js beside this module: `capstan dev`
 * runs from the built package (as `capstan` does), not from TypeScript sources.
 *
 * The child has its own process group: Ctrl-C in the terminal signals the whole foreground group,
 * and a child that got SIGINT there and SIGTERM from `capstan dev` would take the second signal as
 * "exit at once". Its IPC channel is also how it notices that `capstan dev` died, even by SIGKILL
 * (see `capstan run`).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { extname } from "node:path";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { type ChildReport, parseReport, REPORT_FD, type StartMessage } from "./operator-child-protocol.ts";

const CHILD_MAIN = fileURLToPath(
  new URL(`./operator-child-main${extname(fileURLToPath(import.meta.url))}`, import.meta.url),
);

export interface OperatorChildOptions {
  /** Modules (`file:` URLs of `node_modules`) the standby loads in advance: the operator's dependencies. */
  preload: readonly string[];
  /** Each line of the child's stdout and stderr, without its newline. */
  onLine(line: string): void;
  /** Each project file and dependency the child loads (a standby's preloading is not reported). */
  onReport(report: ChildReport): void;
  /** The child exited: `code N` or the signal's name. */
  onExit(status: string): void;
}

/** One child process; see the module documentation. */
export class OperatorChild {
  /** Resolves once the process has exited (after `onExit`). */
  readonly exited: Promise<void>;
  private readonly process: ChildProcess;
  private gone = false;

  constructor(options: OperatorChildOptions) {
    const child = spawn(process.execPath, [CHILD_MAIN, ...options.preload], {
      stdio: ["ignore", "pipe", "pipe", "ipc", "pipe"],
      detached: true,
    });
    this.process = child;
    for (const stream of [child.stdout, child.stderr]) if (stream) forEachLine(stream, options.onLine);
    const reports = child.stdio[REPORT_FD] as Readable | null | undefined;
    if (reports) {
      forEachLine(reports, (line) => {
        const report = parseReport(line);
        if (report !== undefined) options.onReport(report);
      });
    }
    this.exited = new Promise((resolve) => {
      const done = (status: string) => {
        if (this.gone) return;
        this.gone = true;
        options.onExit(status);
        resolve();
      };
      child.once("exit", (code, signal) => done(signal ?? `code ${code}`));
      child.on("error", (err) => {
        // Spawning failed (no exit follows), or a signal could not be sent (harmless).
        if (child.pid === undefined) done(`not started: ${err.message}`);
      });
    });
  }

  get pid(): number | undefined {
    return this.process.pid;
  }

  /** Tells the standby to run `capstan <args>`. */
  start(args: string[]): void {
    const message: StartMessage = { type: "capstan-dev:start", args };
    // A child that died meanwhile cannot be told: its exit is reported as for any other crash.
    if (!this.gone && this.process.connected) this.process.send(message, () => undefined);
  }

  kill(signal: NodeJS.Signals): void {
    if (!this.gone) this.process.kill(signal);
  }
}

/** Calls `onLine` for each line of `stream`, and for a last line without a newline at its end. */
function forEachLine(stream: Readable, onLine: (line: string) => void): void {
  let partial = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk: string) => {
    const lines = (partial + chunk).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) onLine(line);
  });
  stream.on("end", () => {
    if (partial !== "") onLine(partial);
  });
}
