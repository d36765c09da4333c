/**
 * One operator of `capstan dev`, run as a `capstan run` child process so that a restart reloads
 * every module it imports (Node's ES module cache cannot be cleared in-process).
 *
 * ## States ({@link OperatorProcessState})
 * `idle` -> `running` (child alive) -> `stopping` (SIGTERM sent, waiting for its exit) ->
 * `running` again on restart, or `crashed` (it exited on its own: waits for the next file change
 * instead of restarting in a loop), or `stopped` (after `stop()`, final).
 *
 * ## Guarantees
 * - At most one child per operator at any time: a restart waits for the old child's exit.
 * - A child that ignores SIGTERM gets SIGKILL after {@link KILL_AFTER_MS}.
 * - After `stop()` resolves, the child has exited.
 *
 * - The child has an IPC channel to this process: when `capstan dev` dies, even by SIGKILL, the
 *   channel closes and `capstan run` stops the operator (no orphan keeps running).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { basename } from "node:path";
import { CAPSTAN_BIN } from "capstan/internal";

/**
 * How long a stopping operator may take before SIGKILL. Its graceful stop drains reconciles; in
 * development a restart should feel immediate, and a handler that needs longer is stuck.
 */
export const KILL_AFTER_MS = 5_000;

export type OperatorProcessState = "idle" | "running" | "stopping" | "crashed" | "stopped";

export interface OperatorProcessOptions {
  /** The operator module, as given on the command line. */
  file: string;
  /** What its output lines are prefixed with, in brackets (default: the file's name). */
  label?: string;
  kubeconfigPath: string;
  /** Extra `capstan run` flags (log level and format). */
  runArgs: readonly string[];
  /** Where lines of the child's output and of this supervisor go, already prefixed. */
  print(line: string): void;
}

/** Supervises one operator child process; see the module documentation. */
export class OperatorProcess {
  private current: OperatorProcessState = "idle";
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  /** Serialises start, restart and stop. */
  private queue: Promise<void> = Promise.resolve();
  private readonly prefix: string;

  constructor(private readonly options: OperatorProcessOptions) {
    this.prefix = `[${options.label ?? basename(options.file)}]`;
  }

  /** The operator module, as given on the command line. */
  get file(): string {
    return this.options.file;
  }

  get state(): OperatorProcessState {
    return this.current;
  }

  /** The running child's pid, if any. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Starts the child (or restarts it if one runs). */
  restart(reason: string): Promise<void> {
    return this.enqueue(async () => {
      if (this.current === "stopped") return;
      if (this.child !== undefined) {
        this.options.print(`${this.prefix} ${reason}: restarting`);
        await this.killChild();
      }
      this.spawnChild();
    });
  }

  /** Stops the child for good. */
  stop(): Promise<void> {
    return this.enqueue(async () => {
      if (this.current === "stopped") return;
      await this.killChild();
      this.current = "stopped";
    });
  }

  private enqueue(step: () => Promise<void>): Promise<void> {
    const next = this.queue.then(step);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private spawnChild(): void {
    const args = [
      CAPSTAN_BIN,
      "run",
      this.options.file,
      "--kubeconfig",
      this.options.kubeconfigPath,
      ...this.options.runArgs,
    ];
    // Its own process group: Ctrl-C in the terminal signals the whole foreground group, and a child
    // that got SIGINT there and SIGTERM from us would take the second signal as "exit at once".
    // The IPC channel is how the child notices that this process died (see `capstan run`).
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe", "ipc"], detached: true });
    this.child = child;
    this.current = "running";
    this.options.print(`${this.prefix} started (pid ${child.pid})`);
    for (const stream of [child.stdout, child.stderr]) {
      let partial = "";
      stream?.setEncoding("utf8");
      stream?.on("data", (chunk: string) => {
        const lines = (partial + chunk).split("\n");
        partial = lines.pop() ?? "";
        for (const line of lines) this.options.print(`${this.prefix} ${line}`);
      });
      stream?.on("end", () => {
        if (partial !== "") this.options.print(`${this.prefix} ${partial}`);
      });
    }
    this.exited = new Promise((resolve) => {
      child.once("exit", (code, signal) => {
        if (this.child === child) this.child = undefined;
        const status = signal ?? `code ${code}`;
        if (this.current === "running") {
          this.current = "crashed";
          this.options.print(`${this.prefix} exited (${status}); save a file to start it again`);
        } else {
          this.options.print(`${this.prefix} stopped (${status})`);
        }
        resolve();
      });
    });
  }

  private async killChild(): Promise<void> {
    const child = this.child;
    if (child === undefined) return;
    this.current = "stopping";
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), KILL_AFTER_MS);
    try {
      await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}
