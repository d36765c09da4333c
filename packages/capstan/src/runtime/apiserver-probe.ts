/**
 * A periodic request to the API server that tells whether it still answers, for the watch health
 * checks (watch-health.ts).
 *
 * Why: an API server that stops answering without closing its connections (a frozen process, a
 * network partition, a dead node behind a load balancer) leaves every watch open and silent. Over
 * HTTP/2, client-go notices through a connection ping (after ~30 s of silence plus a 15 s ping
 * timeout); Node's HTTP/1.1 connections have no ping, so a watch would look open for its whole
 * timeout (5-10 min). One small GET per period answers the question for every watch at once.
 *
 * ## Expected flow
 * `new ApiServerProbe({ request, period, timeout, onLost, onBack })`, `run(signal)` until the
 * signal aborts. `lastAnsweredAt` and `reachable` are read at any time.
 *
 * ## Guarantees
 * - Any HTTP answer counts, whatever its status (a 403 or a 500 still proves the connection
 *   works); only no answer within `timeout` (connection refused, reset, timed out) is a failure.
 * - `onLost` is called after every failed probe, with the time it was sent (the caller reconnects
 *   the watches that have been silent since: a watch still delivering events proves itself, and an
 *   overloaded server that answers slowly is not sent a new watch for every busy informer);
 *   `onBack` once when a probe answers after failures.
 * - `run()` resolves after the signal aborted, with no timer or request left.
 */
import { ApiError } from "../client/errors.ts";
import { type Clock, sleep, systemClock } from "./clock.ts";
import { type RuntimeLogger, silentLogger } from "./log.ts";

/** Options of an {@link ApiServerProbe}. */
export interface ApiServerProbeOptions {
  /** One probe request (e.g. `GET /livez`); resolves or rejects with an `ApiError` when answered. */
  request(signal: AbortSignal): Promise<unknown>;
  /** Time between the end of one probe and the start of the next (ms). */
  periodMs: number;
  /** How long a probe may wait for an answer (ms). */
  timeoutMs: number;
  /** After each probe that got no answer; `sentAt` is when it was sent (clock time). */
  onLost?(error: unknown, sentAt: number): void;
  /** After the first probe that got an answer following failures. */
  onBack?(): void;
  logger?: RuntimeLogger;
  clock?: Pick<Clock, "now">;
}

/** Probes the API server every period; see the module documentation. */
export class ApiServerProbe {
  private readonly options: ApiServerProbeOptions;
  private readonly clock: Pick<Clock, "now">;
  private readonly logger: RuntimeLogger;
  private answeredAt = Number.NEGATIVE_INFINITY;
  private failing = false;

  constructor(options: ApiServerProbeOptions) {
    if (!(options.periodMs > 0) || !(options.timeoutMs > 0)) {
      throw new Error(
        `API server probe: period and timeout must be greater than zero, got ${options.periodMs} ms and ${options.timeoutMs} ms`,
      );
    }
    this.options = options;
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? silentLogger;
  }

  /** Clock time of the last answer (`-Infinity` before the first). */
  get lastAnsweredAt(): number {
    return this.answeredAt;
  }

  /** False from a probe that got no answer until the next one that did. */
  get reachable(): boolean {
    return !this.failing;
  }

  /** Probes until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await this.probeOnce(signal);
      if (!(await sleep(this.options.periodMs, signal))) break;
    }
  }

  private async probeOnce(signal: AbortSignal): Promise<void> {
    const sentAt = this.clock.now();
    const limit = new AbortController();
    const giveUp = () => limit.abort(new Error(`no answer within ${this.options.timeoutMs} ms`));
    const timer = setTimeout(giveUp, this.options.timeoutMs);
    signal.addEventListener("abort", giveUp, { once: true });
    let answered: boolean;
    let error: unknown;
    try {
      await this.options.request(limit.signal);
      answered = true;
    } catch (err) {
      answered = err instanceof ApiError;
      error = err;
    } finally {
      clearTimeout(timer);
      signal.removeEventListener("abort", giveUp);
    }
    if (signal.aborted) return;
    if (answered) {
      this.answeredAt = this.clock.now();
      if (this.failing) {
        this.failing = false;
        this.logger.info({}, "the API server answers again");
        this.options.onBack?.();
      }
      return;
    }
    if (!this.failing) this.logger.warn({ err: error }, "the API server does not answer");
    this.failing = true;
    this.options.onLost?.(error, sentAt);
  }
}
