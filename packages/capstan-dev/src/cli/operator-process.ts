/**
 * One operator of `capstan dev`, run by `capstan run` in a child process so that a restart reloads
 * every module it imports (Node's ES module cache cannot be cleared in-process).
 *
 * ## States ({@link OperatorProcessState})
 * `idle` -> `running` (a child runs the operator) -> `stopping` (SIGTERM sent, waiting for its exit)
 * -> `running` again on restart, or `crashed` (it exited on its own: waits for the next change
 * instead of restarting in a loop), or `stopped` (after `stop()`, final).
 *
 * ## Standby
 * A cold child spends one to three seconds starting Node and loading Capstan (most of it in
 * `@kubernetes/client-node` and TypeBox) before it loads the operator, which takes a few hundred
 * milliseconds. So a second child waits beside the running one as a *standby*, with Capstan loaded
 * and no project file (operator-child-main.ts), and with the packages the operator imported from
 * `node_modules` so far (those do not change on a save; TypeBox alone is some 700 modules). A
 * restart stops the running child, then tells the standby to run the operator; a new standby is
 * spawned once the new child is past its start, so that it does not compete with it for the CPU:
 * {@link STANDBY_AFTER_OUTPUT_MS} after its first output line, at once when it exits, at the latest
 * {@link STANDBY_AFTER_MS} after its start.
 *
 * ## Guarantees
 * - At most one process runs the operator at a time: the standby has loaded none of the project and
 *   is told to start only after the previous child has exited. (So there are two processes: the
 *   running child and the standby.)
 * - Restart requests made while a restart waits for the old child's exit are merged into it: the
 *   child started then loads every file as saved until then.
 * - A child that ignores SIGTERM gets SIGKILL after {@link KILL_AFTER_MS}.
 * - After `stop()` resolves, the child and the standby have exited and no timer is left.
 * - `onLoaded` reports the files of the child started last, also after it crashed (what to watch
 *   for the save that fixes it); `onStart` says when a new child begins reporting.
 */
import { basename } from "node:path";
import type { ReconcileRun } from "capstan";
import type { ContentDigest } from "./content-digest.ts";
import { OperatorChild } from "./operator-child.ts";

/**
 * How long a stopping operator may take before SIGKILL. Its graceful stop drains reconciles; in
 * development a restart should feel immediate, and a handler that needs longer is stuck.
 */
export const KILL_AFTER_MS = 5_000;

/**
 * How long after a child's first output line (it has loaded the operator and connected) the next
 * standby is spawned: the operator then registers its CRDs and syncs its caches, tens to hundreds of
 * milliseconds that a standby loading Capstan (about a second of CPU) would stretch on two cores.
 */
export const STANDBY_AFTER_OUTPUT_MS = 500;

/**
 * The latest time after a child's start that the next standby is spawned, for an operator that
 * prints nothing (`--log-level silent`): past the one to three seconds of a cold start on a loaded
 * two-core machine.
 */
export const STANDBY_AFTER_MS = 3_000;

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
  /** A new child is told to run the operator: what it loads is reported from now on. */
  onStart?(): void;
  /** The running (or last started) child loaded `path` with this content (`null`: looked for, absent). */
  onLoaded?(path: string, digest: ContentDigest): void;
  /** A child finished a reconcile, handler or timer run (also a child that is stopping). */
  onRun?(run: ReconcileRun): void;
}

/** Supervises one operator's child processes; see the module documentation. */
export class OperatorProcess {
  private current: OperatorProcessState = "idle";
  /** The child running the operator (or stopping). */
  private child: OperatorChild | undefined;
  /** The child started last, whose reports count (it may have exited). */
  private reporting: OperatorChild | undefined;
  /** What the operator imported from `node_modules`, since the first start: each standby preloads it. */
  private readonly dependencies = new Set<string>();
  private standby: OperatorChild | undefined;
  private standbyTimer: NodeJS.Timeout | undefined;
  /** When {@link standbyTimer} fires (`Date.now()` time). */
  private standbyAt = 0;
  /** The reason of a restart asked for and not yet begun. */
  private wanted: string | undefined;
  private looping = false;
  private restarted: Promise<void> = Promise.resolve();
  private stopRequested = false;
  private stopped: Promise<void> | undefined;
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

  /** Starts the operator, or restarts it; resolves once the new child was told to start. */
  restart(reason: string): Promise<void> {
    if (this.stopRequested) return Promise.resolve();
    this.wanted = reason;
    if (!this.looping) {
      this.looping = true;
      this.restarted = this.restartLoop();
    }
    return this.restarted;
  }

  /** Stops the child and the standby for good. */
  stop(): Promise<void> {
    this.stopped ??= (async () => {
      this.stopRequested = true;
      this.wanted = undefined;
      await this.restarted;
      clearTimeout(this.standbyTimer);
      this.standbyTimer = undefined;
      const standby = this.standby;
      this.standby = undefined;
      await Promise.all([this.stopChild(), standby && this.terminate(standby)]);
      this.current = "stopped";
    })();
    return this.stopped;
  }

  private async restartLoop(): Promise<void> {
    try {
      while (this.wanted !== undefined && !this.stopRequested) {
        if (this.child !== undefined) {
          this.options.print(`${this.prefix} ${this.wanted}: restarting`);
          await this.stopChild();
          continue; // a stop request may have come meanwhile
        }
        this.wanted = undefined; // the child started now loads every save made until now
        this.startChild();
      }
    } finally {
      this.looping = false;
    }
  }

  private startChild(): void {
    const child = this.standby ?? this.spawn();
    this.standby = undefined;
    clearTimeout(this.standbyTimer);
    this.standbyTimer = undefined;
    this.options.onStart?.();
    this.child = child;
    this.reporting = child;
    this.current = "running";
    child.start(["run", this.options.file, "--kubeconfig", this.options.kubeconfigPath, ...this.options.runArgs]);
    this.options.print(`${this.prefix} started (pid ${child.pid})`);
    this.scheduleStandby(STANDBY_AFTER_MS);
  }

  private spawn(): OperatorChild {
    let pastStart = false;
    const child: OperatorChild = new OperatorChild({
      preload: [...this.dependencies],
      onLine: (line) => {
        this.options.print(`${this.prefix} ${line}`);
        if (!pastStart && child === this.child) {
          pastStart = true;
          this.scheduleStandby(STANDBY_AFTER_OUTPUT_MS);
        }
      },
      onReport: (report) => {
        if (report.kind === "run") {
          this.options.onRun?.(report.run);
          return;
        }
        if (child !== this.reporting) return;
        if (report.kind === "file") this.options.onLoaded?.(report.path, report.digest);
        else this.dependencies.add(report.url);
      },
      onExit: (status) => this.exited(child, status),
    });
    return child;
  }

  private exited(child: OperatorChild, status: string): void {
    if (child === this.standby) {
      // Not asked to: something killed it. The next start spawns a fresh one.
      this.standby = undefined;
      this.options.print(`${this.prefix} standby process exited (${status})`);
      return;
    }
    if (child !== this.child) return; // a standby discarded by stop()
    this.child = undefined;
    if (this.current === "running") {
      this.current = "crashed";
      this.options.print(`${this.prefix} exited (${status}); save a file to start it again`);
      this.prepareStandby();
    } else {
      this.options.print(`${this.prefix} stopped (${status})`);
    }
  }

  /** Spawns the next standby in `delayMs`, or sooner if it was planned sooner. */
  private scheduleStandby(delayMs: number): void {
    if (this.stopRequested || this.standby !== undefined) return;
    const at = Date.now() + delayMs;
    if (this.standbyTimer !== undefined && this.standbyAt <= at) return;
    clearTimeout(this.standbyTimer);
    this.standbyAt = at;
    this.standbyTimer = setTimeout(() => this.prepareStandby(), delayMs);
  }

  /** Spawns the next standby now, unless there is one or everything stops. */
  private prepareStandby(): void {
    clearTimeout(this.standbyTimer);
    this.standbyTimer = undefined;
    if (this.stopRequested || this.standby !== undefined) return;
    this.standby = this.spawn();
  }

  private async stopChild(): Promise<void> {
    const child = this.child;
    if (child === undefined) return;
    this.current = "stopping";
    await this.terminate(child);
  }

  /** SIGTERM, SIGKILL after {@link KILL_AFTER_MS}; resolves once `child` has exited. */
  private async terminate(child: OperatorChild): Promise<void> {
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), KILL_AFTER_MS);
    try {
      await child.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}
