/**
 * Readiness and liveness checks from the informers' watches: one check per informer, named after
 * what it watches (`informer:apps/v1/deployments`, `informer:v1/namespaces/ns/configmaps`).
 *
 * ## What the checks say
 * An informer's *outage* is how long it has been without contact with the server: 0 while its
 * watch is open and the API server answers the manager's probe (apiserver-probe.ts); otherwise
 * the time since its last contact (a list answered, a watch opened, an event, a watch the server
 * closed; see `InformerConnection`). The gap of an ordinary re-watch is a few milliseconds.
 * - readiness (`/readyz`): the informer has synced and its outage is shorter than
 *   `notReadyAfter` (default 10 s);
 * - liveness (`/healthz`): its outage is shorter than `notLiveAfter` (default 5 min), so that the
 *   kubelet restarts an operator whose watches stay broken (or which never manages to list)
 *   while a passing outage, or an API server that flaps, restarts nothing.
 *
 * ## Why those defaults
 * - `notReadyAfter` 10 s: with a killed API server the watches break at once, so readiness
 *   fails 10 s later; with a frozen one the probe (every 3 s, 5 s timeout) stops vouching for the
 *   open watches, so the outage counts from the last answer, at most 8 s before the freeze would
 *   be noticed otherwise: not ready within 10 s either. 10 s stays above the 8 s an answering but
 *   slow API server may take between two answers, so a slow server does not flap readiness.
 * - `notLiveAfter` 5 min: a liveness failure restarts the container, which cannot help while the
 *   API server itself is down and costs a full relist when it returns. Five minutes outlasts an
 *   API server restart or upgrade and any outage a flapping server has between two good minutes
 *   (each contact resets the count); an operator whose watch is broken for good (a bug, a lost
 *   connection nothing notices) is restarted after 5 min plus the probe's failureThreshold.
 *   `false` turns the liveness part off.
 */
import type { ResourceKind } from "../client/types.ts";
import type { ApiServerProbe } from "./apiserver-probe.ts";
import type { Clock } from "./clock.ts";
import type { Duration } from "./duration.ts";
import { toMilliseconds } from "./duration.ts";
import type { Check } from "./health.ts";
import type { Informer } from "./informer.ts";
import type { InformerScope, SharedInformerEntry } from "./shared-informers.ts";

/** When watch outages fail readiness and liveness; see the module documentation. */
export interface WatchHealthOptions {
  /** An informer without contact this long is not ready (default 10 s). */
  notReadyAfter?: Duration;
  /** An informer without contact this long fails liveness (default 5 min; `false`: never). */
  notLiveAfter?: Duration | false;
  /**
   * Period of the API server probe that vouches for open watches (default 3 s; `false`: no probe,
   * an open watch then always counts as contact and a frozen server goes unnoticed).
   */
  probePeriod?: Duration | false;
  /** How long the probe waits for an answer (default 5 s). */
  probeTimeout?: Duration;
}

/** The defaults of {@link WatchHealthOptions}, in milliseconds. */
export const WATCH_HEALTH_DEFAULTS = {
  notReadyAfterMs: 10_000,
  notLiveAfterMs: 300_000,
  probePeriodMs: 3_000,
  probeTimeoutMs: 5_000,
} as const;

/** The options in milliseconds, validated. */
export interface WatchHealthTimings {
  notReadyAfterMs: number;
  /** `Infinity` when liveness is off. */
  notLiveAfterMs: number;
  /** 0 when there is no probe. */
  probePeriodMs: number;
  probeTimeoutMs: number;
}

/** Converts and checks the options; throws naming the option that is wrong. */
export function watchHealthTimings(options: WatchHealthOptions = {}): WatchHealthTimings {
  const d = WATCH_HEALTH_DEFAULTS;
  const notReadyAfterMs =
    options.notReadyAfter === undefined ? d.notReadyAfterMs : toMilliseconds(options.notReadyAfter);
  const notLiveAfterMs =
    options.notLiveAfter === false
      ? Number.POSITIVE_INFINITY
      : options.notLiveAfter === undefined
        ? d.notLiveAfterMs
        : toMilliseconds(options.notLiveAfter);
  const probePeriodMs =
    options.probePeriod === false
      ? 0
      : options.probePeriod === undefined
        ? d.probePeriodMs
        : toMilliseconds(options.probePeriod);
  const probeTimeoutMs = options.probeTimeout === undefined ? d.probeTimeoutMs : toMilliseconds(options.probeTimeout);
  if (notReadyAfterMs <= 0) throw new Error("watch health: notReadyAfter must be greater than zero");
  if (notLiveAfterMs <= notReadyAfterMs) {
    throw new Error(
      `watch health: notLiveAfter (${notLiveAfterMs} ms) must be greater than notReadyAfter (${notReadyAfterMs} ms): an operator is taken out of readiness before it is restarted`,
    );
  }
  if (options.probePeriod !== false) {
    if (probePeriodMs <= 0) throw new Error("watch health: probePeriod must be greater than zero (or false)");
    if (probeTimeoutMs <= 0) throw new Error("watch health: probeTimeout must be greater than zero");
    if (probePeriodMs + probeTimeoutMs >= notReadyAfterMs) {
      throw new Error(
        `watch health: probePeriod + probeTimeout (${probePeriodMs + probeTimeoutMs} ms) must be less than notReadyAfter (${notReadyAfterMs} ms), or a slow but answering API server would make the operator flap between ready and not ready`,
      );
    }
  }
  return { notReadyAfterMs, notLiveAfterMs, probePeriodMs, probeTimeoutMs };
}

/**
 * The check name of an informer: its API path without `/api(s)` (`informer:apps/v1/deployments`,
 * `informer:v1/namespaces/ns/configmaps`), plus `;labelSelector=...`, `;fieldSelector=...` and
 * `;metadata` when it has them. Usable as `/readyz/<name>`.
 */
export function informerCheckName(kind: ResourceKind, scope: InformerScope = {}): string {
  const gv = kind.group === "" ? kind.version : `${kind.group}/${kind.version}`;
  let name = `informer:${gv}/${scope.namespace ? `namespaces/${scope.namespace}/` : ""}${kind.plural}`;
  if (scope.labelSelector) name += `;labelSelector=${scope.labelSelector}`;
  if (scope.fieldSelector) name += `;fieldSelector=${scope.fieldSelector}`;
  if (scope.metadataOnly) name += ";metadata";
  return name;
}

/** Builds the per-informer checks; see the module documentation. */
export class WatchHealth {
  constructor(
    private readonly informers: () => readonly SharedInformerEntry[],
    private readonly timings: WatchHealthTimings,
    private readonly clock: Pick<Clock, "now">,
    private readonly probe?: ApiServerProbe,
  ) {}

  /** How long `informer` has been without contact with the server, in ms (0: in contact). */
  outageMs(informer: Informer, now = this.clock.now()): number {
    // Not started yet (the manager starts its endpoints first): nothing is broken.
    if (informer.phase.phase === "idle") return 0;
    const { watchOpen, lastContactAt } = informer.connection;
    if (watchOpen) {
      if (this.probe === undefined) return 0;
      return Math.max(0, now - Math.max(lastContactAt, this.probe.lastAnsweredAt));
    }
    return Math.max(0, now - lastContactAt);
  }

  /** The readiness checks, one per informer handed out so far. */
  readyChecks(): Map<string, Check> {
    const checks = new Map<string, Check>();
    for (const { kind, scope, informer } of this.informers()) {
      checks.set(
        informerCheckName(kind, scope),
        () => informer.hasSynced() && this.outageMs(informer) < this.timings.notReadyAfterMs,
      );
    }
    return checks;
  }

  /** The liveness checks, one per informer (none when liveness is off). */
  healthChecks(): Map<string, Check> {
    const checks = new Map<string, Check>();
    if (this.timings.notLiveAfterMs === Number.POSITIVE_INFINITY) return checks;
    for (const { kind, scope, informer } of this.informers()) {
      checks.set(informerCheckName(kind, scope), () => this.outageMs(informer) < this.timings.notLiveAfterMs);
    }
    return checks;
  }

  /**
   * Every informer whose watch is open but silent since `since` (no event, no BOOKMARK): reconnect
   * them when the probe sent at `since` got no answer.
   */
  silentWatches(since: number): Informer[] {
    return this.informers()
      .map((e) => e.informer)
      .filter((i) => i.connection.watchOpen && i.connection.lastContactAt < since);
  }

  /** Every informer without an open watch: retry them at once when the server answers again. */
  waiting(): Informer[] {
    return this.informers()
      .map((e) => e.informer)
      .filter((i) => !i.connection.watchOpen && i.phase.phase !== "idle" && i.phase.phase !== "stopped");
  }
}
