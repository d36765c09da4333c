/**
 * Daemons: one long-running task per (object, daemon), as Kopf's `@kopf.daemon`.
 *
 * ## States ({@link DaemonState})
 * `waiting` (initial delay) -> `running` (<-> `sleeping`, inside `ctx.sleep`) -> (`backingOff` ->
 * `running`)* -> `finished` | `failed` | `stopped`. A daemon that returns is `finished` and is not restarted while the object exists;
 * one that throws a `PermanentError` (any {@link TerminalError}) is `failed` (also not restarted); any other error
 * restarts it after `backoff` (doubling to {@link MAX_BACKOFF_MS}) or a TemporaryError's delay.
 *
 * ## Guarantees
 * - The daemon's `signal` aborts when the object is deleted (deletionTimestamp set, or gone from
 *   the cache), when it stops matching the daemon's filters, and when the operator stops or
 *   loses leadership. Sleeps between restarts end at once on abort: no timer outlives `stop()`.
 * - {@link DaemonRun.stop} resolves when the daemon's function has returned (or after the given
 *   timeout, for a daemon that ignores its signal; it is then logged and left behind).
 * - The initial delay, restart delays and `ctx.sleep` follow the operator's clock; the stop
 *   timeout is real time. A daemon is busy (for `whenIdle`) only while `running`: waiting,
 *   sleeping, backing off or ended, it waits for the clock or for nothing.
 *
 * ## Caveats
 * - Daemons run alongside the object's handlers, not through the work queue (they never end
 *   on their own); they must not assume that no handler runs at the same time.
 * - Unlike Kopf, a daemon does not hold a finalizer: deletion aborts its signal and does not
 *   wait for it to exit.
 */
import type { Logger } from "pino";
import type { KubeObject } from "../client/types.ts";
import { type Clock, sleep } from "../runtime/clock.ts";
import type { EventRecorder } from "../runtime/event-recorder.ts";
import { TerminalError } from "../runtime/reconcile.ts";
import { errorMessage, TemporaryError } from "./errors.ts";

/** Kopf's cap of retry delays (its default backoff is a flat 60 s). */
export const MAX_BACKOFF_MS = 60_000;
/**
 * First retry delay of handlers and daemons after an arbitrary error: short enough that a
 * conflict or a momentary outage costs about a second, doubling to {@link MAX_BACKOFF_MS} so a
 * persistent failure settles at Kopf's pace.
 */
export const DEFAULT_BACKOFF_MS = 1_000;

/** Where a daemon is. */
export type DaemonState = "waiting" | "running" | "sleeping" | "backingOff" | "finished" | "failed" | "stopped";

/** What a daemon run needs. */
export interface DaemonRunOptions {
  id: string;
  initialDelayMs: number;
  backoffMs: number;
  /** Aborts with the operator (stop, leadership loss). */
  parentSignal: AbortSignal;
  logger: Logger;
  recorder: EventRecorder;
  /** The latest known object, for events. */
  current: () => KubeObject;
  /** Runs the daemon's function once with a context built for this attempt (`ctx.sleep` is {@link DaemonRun.sleep}). */
  invoke: (signal: AbortSignal, retry: number) => Promise<unknown>;
  /** The operator's clock: initial delay, restart delays, `ctx.sleep`. */
  clock: Clock;
  /** Called whenever the daemon may have become idle (it sleeps, waits or ended), for whenIdle. */
  onSettled?: () => void;
}

/** One daemon for one object. */
export class DaemonRun {
  private current: DaemonState = "waiting";
  private readonly abort = new AbortController();
  private readonly done: Promise<void>;
  private readonly signal: AbortSignal;
  /** `ctx.sleep` calls in progress (a daemon may sleep in several branches at once). */
  private sleeps = 0;

  constructor(private readonly options: DaemonRunOptions) {
    this.signal = AbortSignal.any([this.abort.signal, options.parentSignal]);
    this.done = this.run();
  }

  get state(): DaemonState {
    return this.current === "running" && this.sleeps > 0 ? "sleeping" : this.current;
  }

  /** Whether the daemon's function is at work (not waiting for the clock, not ended). */
  get busy(): boolean {
    return this.state === "running";
  }

  /** `ctx.sleep`: `ms` of the operator's clock, ended early (`false`) when the daemon's signal aborts. */
  async sleep(ms: number): Promise<boolean> {
    this.sleeps++;
    this.options.onSettled?.();
    try {
      return await sleep(ms, this.signal, this.options.clock);
    } finally {
      this.sleeps--;
    }
  }

  /** Whether it ended on its own (finished or failed): not to be restarted while the object exists. */
  get ended(): boolean {
    return this.current === "finished" || this.current === "failed";
  }

  /**
   * Aborts the daemon's signal; resolves when it returned, or after `timeoutMs` (when given) for
   * a daemon that ignores its signal.
   */
  async stop(timeoutMs?: number): Promise<void> {
    this.abort.abort();
    if (timeoutMs === undefined) {
      await this.done;
      return;
    }
    const timeout = new AbortController();
    const finished = await Promise.race([
      this.done.then(() => true),
      sleep(timeoutMs, timeout.signal).then(() => false),
    ]);
    timeout.abort();
    if (!finished) {
      this.options.logger.warn(
        { daemon: this.options.id },
        "daemon ignored its signal; left running in the background",
      );
    }
  }

  /** Resolves when the daemon's loop has ended. */
  stopped(): Promise<void> {
    return this.done;
  }

  private async run(): Promise<void> {
    try {
      await this.loop();
    } finally {
      this.options.onSettled?.();
    }
  }

  private async loop(): Promise<void> {
    const { options, signal } = this;
    if (options.initialDelayMs > 0 && !(await sleep(options.initialDelayMs, signal, options.clock))) {
      this.current = "stopped";
      return;
    }
    let delay = options.backoffMs;
    for (let retry = 0; ; retry++) {
      if (signal.aborted) break;
      this.current = "running";
      try {
        await options.invoke(signal, retry);
        if (signal.aborted) break;
        this.current = "finished";
        options.logger.info({ daemon: options.id }, "daemon finished");
        return;
      } catch (err) {
        if (signal.aborted) break;
        const message = errorMessage(err);
        if (err instanceof TerminalError) {
          this.current = "failed";
          options.logger.error({ daemon: options.id, err }, "daemon failed permanently");
          options.recorder.event(
            options.current(),
            "Warning",
            "DaemonFailed",
            `Daemon '${options.id}' failed permanently: ${message}`,
          );
          return;
        }
        const wait = err instanceof TemporaryError ? err.delayMs : delay;
        if (!(err instanceof TemporaryError)) delay = Math.min(delay * 2, MAX_BACKOFF_MS);
        options.logger.error({ daemon: options.id, err, retryInMs: wait }, "daemon failed; restarting after a delay");
        options.recorder.event(
          options.current(),
          "Warning",
          "DaemonRetrying",
          `Daemon '${options.id}' failed: ${message}`,
        );
        this.current = "backingOff";
        options.onSettled?.();
        if (!(await sleep(wait, signal, options.clock))) break;
      }
    }
    this.current = "stopped";
  }
}
