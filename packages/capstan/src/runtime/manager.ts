/**
 * The manager runs an operator process: shared informers, the controllers built on them, optional
 * leader election, the health/readiness/metrics endpoints, and graceful shutdown.
 *
 * ## Expected flow
 * `const mgr = new Manager({ client })`, build controllers with `mgr.controller(Kind)...reconcile(fn)`,
 * then `await mgr.start(signal)`: it resolves once the manager has stopped (signal aborted,
 * `stop()` called, or SIGTERM/SIGINT with `handleSignals`), and rejects when it had to stop on
 * its own (leadership lost, caches not synced within `cacheSyncTimeout`).
 *
 * ## States ({@link ManagerState})
 * `idle` -> `syncing` (informers listing; endpoints up, `/readyz` failing) -> `candidate`
 * (caches synced, `/readyz` ok; waiting for the Lease; skipped without leader election) ->
 * `leading` (controllers running) -> `stopping` -> `stopped`.
 *
 * ## Guarantees
 * - Informers start on every replica, leader or not (as controller-runtime's caches do), so a
 *   standby that takes over has a warm cache; controllers run only while this replica leads.
 * - `/readyz` has one check per informer (`informer:apps/v1/deployments`, watch-health.ts): ok
 *   once it has synced and while its watch is open and the API server answers the probe, or was
 *   so less than `watchHealth.notReadyAfter` ago (default 10 s); the same on the leader and on
 *   standbys (a standby is ready to take over). `/healthz` fails an informer's check once it has
 *   been without contact for `watchHealth.notLiveAfter` (default 5 min), so the kubelet restarts
 *   an operator whose watches stay broken. When the probe gets no answer, open watches are
 *   reconnected; when it answers again, informers waiting in their backoff retry at once.
 * - Lost leadership (the Lease could not be renewed within `renewDeadline`) aborts every running
 *   reconcile's signal at once and stops intake; nothing waits for them. `start()` then rejects
 *   with {@link LeadershipLostError}; exit the process (as controller-runtime does) and let the
 *   Deployment restart it.
 * - Graceful stop: intake stops, running reconciles get up to `gracefulShutdownTimeout` to finish
 *   (then their signal aborts), the Lease is released (so a standby takes over at once),
 *   informers stop, pending events are written, the endpoints close.
 * - While `start()` runs, the manager keeps the process alive, with or without controllers,
 *   informers or endpoints (as controller-runtime's `Start` blocks): an operator that registers
 *   nothing yet still runs until it is stopped, instead of Node exiting with code 13 when the event
 *   loop has nothing left but the pending `start()`.
 * - After `start()` settles, no timer, socket or signal handler of the manager is left (the client
 *   is closed only if the manager created it).
 * - Every delay of the operator's schedule follows `clock` (requeueAfter, rate-limited retries,
 *   informer resync, leader election's periods and lease expiry, `ctx.now()`); what measures the
 *   network or the process stays on real time (clock.ts lists both).
 * - `whenIdle()` resolves once nothing is left to do now: the caches synced, no key queued or being
 *   reconciled, no check added to `idleness` busy (the operator layer's daemons), no write of the
 *   manager's client in flight or unseen by an informer that will see it (write-visibility.ts).
 *
 * ## Caveats
 * - A reconcile that ignores its signal keeps running in the background after the drain timeout.
 */
import { randomUUID } from "node:crypto";
import { setMaxListeners } from "node:events";
import { hostname } from "node:os";
import pino, { type Logger } from "pino";
import type { ClientConfig } from "../client/config.ts";
import { KubeClient, type KubeClientOptions } from "../client/resource-client.ts";
import type { KubeObject, ResourceKind } from "../client/types.ts";
import { ApiServerProbe } from "./apiserver-probe.ts";
import { type BindAddress, formatBindAddress, resolveBindAddress, runningInCluster } from "./bind-address.ts";
import { type Clock, systemClock } from "./clock.ts";
import type { Controller } from "./controller.ts";
import { ControllerBuilder, type WatchOptions } from "./controller-builder.ts";
import type { Duration } from "./duration.ts";
import { toMilliseconds } from "./duration.ts";
import { ApiEventRecorder, EVENT_KIND, type EventRecorder } from "./event-recorder.ts";
import { type Check, checksHandler, HttpEndpoints, type RouteHandler } from "./health.ts";
import { Idleness, type WhenIdleOptions } from "./idleness.ts";
import type { InformerOptions } from "./informer.ts";
import { LEASE_KIND, LeaderElector, leaderElectionTimings } from "./leader-election.ts";
import { RuntimeMetrics } from "./metrics.ts";
import {
  type MetricsEndpoint,
  MetricsServer,
  type MetricsServerOptions,
  type MetricsServing,
  resolveMetricsServing,
} from "./metrics-server.ts";
import { Sharding, type ShardingConfig, ShardMembershipLostError } from "./sharding.ts";
import { clientListerWatchers, SharedInformerFactory } from "./shared-informers.ts";
import { WatchHealth, type WatchHealthOptions, type WatchHealthTimings, watchHealthTimings } from "./watch-health.ts";
import { WriteVisibility } from "./write-visibility.ts";

export { LEASE_KIND };

/**
 * Leader election settings: controller-runtime's `LeaderElectionNamespace`, `LeaderElectionID`,
 * `LeaseDuration`, `RenewDeadline`, `RetryPeriod`, with client-go's defaults and validation
 * (leaseDuration > renewDeadline > 1.2 * retryPeriod > 0; see leader-election.ts for why).
 */
export interface LeaderElectionConfig {
  /** Namespace of the Lease (default: the client's namespace: kubeconfig context or service account). */
  namespace?: string;
  /** Name of the Lease (default `<manager name>-leader`). */
  name?: string;
  /** This replica's identity (default `<hostname>_<uuid>`, client-go's convention). */
  identity?: string;
  /** How long a Lease is valid after its last observed change (default 15 s). */
  leaseDuration?: Duration;
  /** The leader steps down this long after its last successful renewal started (default 10 s). */
  renewDeadline?: Duration;
  /** Time between acquire or renew attempts (default 2 s; candidates jitter it up to 2.2x). */
  retryPeriod?: Duration;
}

/** Options of a {@link Manager}. */
export interface ManagerOptions {
  /** Names the operator: event source, default Lease name, logs (default `capstan-operator`). */
  name?: string;
  /** The client to use; the manager does not close it. Give `config` instead to get rest_client metrics. */
  client?: KubeClient;
  /** Build (and close on stop) a client from this configuration, wired to `rest_client_requests_total`. */
  config?: ClientConfig;
  clientOptions?: Omit<KubeClientOptions, "onResponse">;
  /** Watch only this namespace unless a watch says otherwise (default: all namespaces). */
  namespace?: string;
  logger?: Logger;
  /** Metrics registry wrapper (default: a new private one). */
  metrics?: RuntimeMetrics;
  /** Enable leader election (`true` for defaults). */
  leaderElection?: boolean | LeaderElectionConfig;
  /**
   * Shard the controllers over every replica (`true` for defaults): each replica holds a Lease of
   * its own, reconciles and caches only the objects labelled with its member name, and one of
   * them (chosen by leader election, with `leaderElection`'s settings when given) assigns objects
   * to members. See sharding.ts and docs/runtime.md "Sharding". Off by default.
   */
  sharding?: boolean | ShardingConfig;
  /**
   * Address of `/healthz` and `/readyz`, controller-runtime's `HealthProbeBindAddress`: `":8081"`
   * (every interface), `"127.0.0.1:8081"`, `"[::1]:8081"`, `"0"` (not served). Excludes `healthProbePort`.
   */
  healthProbeBindAddress?: string;
  /** Port of `/healthz` and `/readyz`, bound on `bindHost` (0 = a free one; absent = not served). */
  healthProbePort?: number;
  /**
   * Port of `/metrics`, bound on `bindHost` (0 = a free one; absent = not served unless
   * `metricsServer.bindAddress` says). May equal `healthProbePort` when served over plain HTTP.
   */
  metricsPort?: number;
  /**
   * How `/metrics` is served, controller-runtime's `metricsserver.Options`: bind address, HTTPS
   * (`secureServing`, default in a pod), certificate directory, filter (default on HTTPS: every
   * scrape authenticated with a TokenReview and authorized with a SubjectAccessReview). See
   * metrics-server.ts and docs/runtime.md.
   */
  metricsServer?: MetricsServerOptions;
  /**
   * Host that `healthProbePort` and `metricsPort` bind (default: every interface in a pod, where
   * the kubelet probes the pod IP; 127.0.0.1 elsewhere, so a workstation serves nothing to the network).
   */
  bindHost?: string;
  /**
   * Whether the operator runs in a pod, which decides the defaults above (default: detected,
   * KUBERNETES_SERVICE_HOST and a mounted service account token, as client-go's in-cluster config).
   */
  inCluster?: boolean;
  /**
   * How long running reconciles may take to finish on a graceful stop (default 30 s,
   * controller-runtime's, which fits the 30 s default terminationGracePeriodSeconds of a pod).
   */
  gracefulShutdownTimeout?: Duration;
  /** How long to wait for the caches to sync before giving up (default 2 min, controller-runtime's). */
  cacheSyncTimeout?: Duration;
  /** Stop gracefully on SIGTERM and SIGINT (default false: the embedding program decides). */
  handleSignals?: boolean;
  /**
   * Workers of every controller that does not set `maxConcurrentReconciles` itself (default 16,
   * `DEFAULT_MAX_CONCURRENT_RECONCILES`), as
   * controller-runtime's manager-wide `Controller.MaxConcurrentReconciles`; `capstan run
   * --max-concurrent-reconciles` sets it.
   */
  maxConcurrentReconciles?: number;
  /** Extra informer options (tests use short backoffs). */
  informerDefaults?: Partial<Omit<InformerOptions<KubeObject>, "listerWatcher">>;
  /**
   * When an informer without contact with the API server fails readiness (`notReadyAfter`,
   * default 10 s) and liveness (`notLiveAfter`, default 5 min), and the API server probe that
   * vouches for open watches (watch-health.ts, docs/runtime.md "Readiness and liveness").
   */
  watchHealth?: WatchHealthOptions;
  /** Path of the readiness endpoint (default `/readyz`, controller-runtime's `ReadinessEndpointName`). */
  readinessEndpointName?: string;
  /** Path of the liveness endpoint (default `/healthz`, controller-runtime's `LivenessEndpointName`). */
  livenessEndpointName?: string;
  /**
   * The operator's clock (default {@link systemClock}): requeueAfter, rate-limited retries,
   * informer resync, leader election and `ctx.now()` follow it. Tests pass a manual one
   * (`capstan-dev/testing`'s `ManualClock`) to move the operator's time themselves.
   */
  clock?: Clock;
  /**
   * Clients besides the manager's own whose writes `whenIdle()` also waits for the informers to
   * show (a test's client, when the operator runs with another).
   */
  idleAwaitsWritesOf?: readonly KubeClient[];
  /**
   * Whether `whenIdle()` waits for the informers to show the writes of the manager's client (and
   * of `idleAwaitsWritesOf`): default true. Following them costs a little on every write (~4% of
   * an operator's CPU in a reconcile burst, measured); `capstan run`, where nothing asks
   * `whenIdle()`, turns it off. Without it, `whenIdle()` still waits for everything else.
   */
  idleAwaitsWrites?: boolean;
}

/**
 * Period of the timer that keeps the process alive while the manager runs (see the guarantees): the
 * longest delay Node's timers take, as the timer only has to exist, never to fire.
 */
const KEEP_ALIVE_PERIOD_MS = 2 ** 31 - 1;

/** Where a manager is; see the module documentation. */
export type ManagerState = "idle" | "syncing" | "candidate" | "leading" | "stopping" | "stopped";

/** Thrown by `start()` when the Lease could not be renewed: this replica stopped acting. */
export class LeadershipLostError extends Error {
  constructor(lease: string) {
    super(`leader election lost: could not renew lease ${lease} in time; every controller was stopped`);
    this.name = "LeadershipLostError";
  }
}

/** Runs informers, controllers, leader election and endpoints; see the module documentation. */
export class Manager {
  readonly name: string;
  readonly client: KubeClient;
  readonly metrics: RuntimeMetrics;
  readonly informers: SharedInformerFactory;
  readonly logger: Logger;
  /** The operator's clock (`options.clock`, else the system's). */
  readonly clock: Clock;
  /**
   * What `whenIdle()` waits for: components built on the manager add their own checks here
   * (`idleness.add(name, () => reason)`) and call `idleness.changed()` when they may have become idle.
   */
  readonly idleness = new Idleness();
  private readonly options: ManagerOptions;
  private readonly ownsClient: boolean;
  /**
   * The clients of the leader election's Lease and of the API server probe: views of the manager's
   * client with connections of their own (`withOwnConnections`), one per periodic loop. HTTP/1.1
   * carries one request per socket: when the controllers keep every socket of the main client busy,
   * a renewal on it opens a new TLS connection, and on a busy API server that handshake waits
   * several turns of its event loop (measured: 2-5 s at a load of 15 on 2 cores, bench:sharding),
   * so renewals missed their deadline. client-go multiplexes on one HTTP/2 connection and has no
   * such wait. A loop that sends one request every retryPeriod (2 s) or probe period (3 s) keeps
   * its own socket within the keep-alive time (4 s), so each request goes on an open connection.
   */
  private readonly electionClient: KubeClient;
  private readonly probeClient: KubeClient;
  private readonly controllers: Controller<KubeObject>[] = [];
  private readonly recorders = new Map<string, ApiEventRecorder>();
  private readonly healthChecks = new Map<string, Check>([["ping", () => true]]);
  private readonly readyChecks = new Map<string, Check>();
  private readonly stopAbort = new AbortController();
  private current: ManagerState = "idle";
  private running: Promise<void> | undefined;
  /** Aborts when leadership ends (any cause); late controllers wait on it for their caches. */
  private leaderSignal: AbortSignal | undefined;
  /** Stops controllers at once; aborted after a graceful drain, or straight away on lost leadership. */
  private hardStop: AbortSignal | undefined;
  private ports: { healthProbe?: number; metrics?: number } = {};
  private readonly watchTimings: WatchHealthTimings;
  private probe: ApiServerProbe | undefined;
  private readonly watchHealth: WatchHealth;
  /** Where the endpoints are served, resolved from the options at construction (bad ones throw there). */
  private readonly serving: { health?: BindAddress; metrics?: MetricsServing };
  private listening: { healthProbe?: { host: string; port: number }; metrics?: MetricsEndpoint } = {};
  private readonly writes: WriteVisibility;
  /** Set when the manager shards its controllers (`options.sharding`). */
  readonly sharding: Sharding | undefined;

  constructor(options: ManagerOptions) {
    this.options = options;
    this.name = options.name ?? "capstan-operator";
    this.logger = options.logger ?? pino({ level: "info" });
    this.metrics = options.metrics ?? new RuntimeMetrics();
    if (options.client !== undefined) {
      this.client = options.client;
      this.ownsClient = false;
    } else if (options.config !== undefined) {
      const host = new URL(options.config.server).host;
      this.client = new KubeClient(options.config, {
        ...options.clientOptions,
        onResponse: this.metrics.restClient(host),
      });
      this.ownsClient = true;
    } else {
      throw new Error("a manager needs a client or a client config");
    }
    this.electionClient = this.client.withOwnConnections();
    this.probeClient = this.client.withOwnConnections();
    this.clock = options.clock ?? systemClock;
    this.informers = new SharedInformerFactory({
      listerWatcherFor: clientListerWatchers(this.client),
      logger: this.logger,
      informerDefaults: { resyncClock: this.clock, ...options.informerDefaults },
    });
    this.writes = new WriteVisibility(this.informers, () => this.idleness.changed());
    this.idleness.add("manager", () => this.notReady());
    this.idleness.add("writes", () => {
      const unseen = this.writes.busy();
      return unseen.length === 0 ? undefined : unseen.join("; ");
    });
    // Bad timings fail here, not minutes later when the caches have synced.
    const election = options.leaderElection;
    if (typeof election === "object") leaderElectionTimings(election);
    this.watchTimings = watchHealthTimings(options.watchHealth);
    for (const [option, path] of [
      ["readinessEndpointName", options.readinessEndpointName],
      ["livenessEndpointName", options.livenessEndpointName],
    ] as const) {
      if (path !== undefined && !/^\/[^?#\s]+$/.test(path)) {
        throw new Error(`${option} must be a path such as "/readyz", got "${path}"`);
      }
    }
    if (this.watchTimings.probePeriodMs > 0) {
      this.probe = new ApiServerProbe({
        // /livez: allowed to every user (system:public-info-viewer) and exempt from priority and fairness.
        request: (signal) => this.probeClient.request("GET", "/livez", { signal }),
        periodMs: this.watchTimings.probePeriodMs,
        timeoutMs: this.watchTimings.probeTimeoutMs,
        logger: this.logger,
        onLost: (_err, sentAt) => {
          for (const i of this.watchHealth.silentWatches(sentAt))
            i.reconnect("the API server does not answer the probe");
        },
        onBack: () => {
          for (const i of this.watchHealth.waiting()) i.reconnect("the API server answers the probe again");
        },
      });
    }
    this.sharding = shardingOf(this, options);
    if (this.sharding !== undefined) {
      const sharding = this.sharding;
      this.idleness.add("sharding", () => sharding.busy());
    }
    this.watchHealth = new WatchHealth(() => this.informers.entries(), this.watchTimings, systemClock, this.probe);
    this.serving = resolveServing(options);
  }

  /** Where the manager is. */
  get state(): ManagerState {
    return this.current;
  }

  /** Whether this replica leads (always true once running without leader election). */
  get isLeader(): boolean {
    return this.current === "leading";
  }

  /** Ports the endpoints listen on (after `start`), useful with port 0. */
  get endpoints(): { healthProbe?: number; metrics?: number } {
    return { ...this.ports };
  }

  /** The addresses the endpoints listen on (after `start`), and whether metrics are served over HTTPS. */
  get endpointAddresses(): { healthProbe?: { host: string; port: number }; metrics?: MetricsEndpoint } {
    return { ...this.listening };
  }

  /**
   * Resolves once the operator has nothing to do now (see the guarantees): what a test waits for
   * after it created objects or moved the clock. Rejects with `NotIdleError` (naming what is
   * busy) after `timeout`, or with the signal's reason when it aborts. Waits for `start()` and the
   * caches to sync first; resolves at once once the manager has stopped.
   */
  whenIdle(options?: WhenIdleOptions): Promise<void> {
    return this.idleness.whenIdle(options);
  }

  /** Starts building a controller for `kind`: `mgr.controller(Widget).owns(ConfigMap).reconcile(fn)`. */
  controller<T extends KubeObject>(kind: ResourceKind<T>, options?: WatchOptions<T>): ControllerBuilder<T> {
    return this.builder().for(kind, options);
  }

  /** An empty builder, for `for(...)` written out. */
  builder(): ControllerBuilder {
    return new ControllerBuilder({
      informers: this.informers,
      client: this.client,
      logger: this.logger,
      metrics: this.metrics,
      namespace: this.options.namespace,
      maxConcurrentReconciles: this.options.maxConcurrentReconciles,
      clock: this.clock,
      ...(this.sharding === undefined ? {} : { sharding: this.sharding }),
      settled: () => this.idleness.changed(),
      recorderFor: (name) => this.recorderFor(name),
      register: (c) => this.register(c),
    });
  }

  /** The event recorder posting as `component` (one per controller name). */
  recorderFor(component: string): EventRecorder {
    let recorder = this.recorders.get(component);
    if (recorder === undefined) {
      recorder = new ApiEventRecorder({
        events: this.client.resource(EVENT_KIND),
        component,
        host: hostname(),
        logger: this.logger,
        clock: this.clock,
      });
      this.recorders.set(component, recorder);
    }
    return recorder;
  }

  /** Adds a `/healthz` check. */
  addHealthCheck(name: string, check: Check): void {
    this.healthChecks.set(name, check);
  }

  /** Adds a `/readyz` check. */
  addReadyCheck(name: string, check: Check): void {
    this.readyChecks.set(name, check);
  }

  /**
   * Runs until `signal` aborts or `stop()` is called (resolves), or until it must stop on its own
   * (rejects: leadership lost, cache sync timeout, endpoint port in use).
   */
  start(signal?: AbortSignal): Promise<void> {
    if (this.running !== undefined) throw new Error("the manager was already started");
    if (signal !== undefined) {
      if (signal.aborted) this.stopAbort.abort();
      else
        signal.addEventListener("abort", () => this.stopAbort.abort(), { once: true, signal: this.stopAbort.signal });
    }
    this.running = this.run();
    return this.running;
  }

  /** Graceful stop; resolves when the manager has stopped (errors of the run are not re-thrown). */
  async stop(): Promise<void> {
    this.stopAbort.abort();
    await this.running?.catch(() => {});
  }

  private enter(state: ManagerState): void {
    this.current = state;
    this.idleness.changed();
  }

  /** Why the manager itself is not idle: not started, or its caches not synced yet. */
  private notReady(): string | undefined {
    switch (this.current) {
      case "idle":
        return "not started";
      case "syncing":
        return "waiting for the informers' caches to sync";
      case "stopping":
        return "stopping";
      default:
        return undefined;
    }
  }

  private register(controller: Controller<KubeObject>): void {
    if (this.controllers.some((c) => c.name === controller.name)) {
      throw new Error(`a controller named "${controller.name}" already exists; name it with .named("...")`);
    }
    this.controllers.push(controller);
    this.idleness.add(`controller ${controller.name}`, () =>
      this.current === "leading" ? controller.busy() : undefined,
    );
    const { leaderSignal, hardStop } = this;
    if (this.current === "leading" && leaderSignal !== undefined && hardStop !== undefined) {
      // Added while running: start it once its informers have synced. It is in `controllers`
      // already, so a graceful stop drains it like the others.
      void this.informers.waitForCacheSync(leaderSignal).then((ok) => {
        if (ok && !leaderSignal.aborted) controller.start(hardStop);
      });
    }
  }

  private async run(): Promise<void> {
    const stop = this.stopAbort.signal;
    const onSignal = (sig: NodeJS.Signals) => {
      this.logger.info({ signal: sig }, "received signal, stopping gracefully");
      this.stopAbort.abort();
    };
    if (this.options.handleSignals) {
      process.on("SIGTERM", onSignal);
      process.on("SIGINT", onSignal);
    }
    const keepAlive = setInterval(() => {}, KEEP_ALIVE_PERIOD_MS);
    const writers = new Set([this.client, ...(this.options.idleAwaitsWritesOf ?? [])]);
    if (this.options.idleAwaitsWrites !== false) for (const client of writers) this.writes.track(client);
    const informerAbort = new AbortController();
    let informersRun: Promise<void> = Promise.resolve();
    const endpoints: { stop(): Promise<void> }[] = [];
    let failure: unknown;
    try {
      await this.startEndpoints(endpoints);
      this.enter("syncing");
      informersRun = this.informers.start(informerAbort.signal);
      // The probe vouches for the informers' watches: it runs as long as they do.
      if (this.probe !== undefined) {
        informersRun = Promise.all([informersRun, this.probe.run(informerAbort.signal)]).then(() => undefined);
      }
      const synced = await this.waitForSync(stop);
      if (!synced) {
        if (!stop.aborted) throw new Error("timed out waiting for the informer caches to sync");
        return;
      }
      const election = this.options.leaderElection;
      if (this.sharding !== undefined) {
        await this.shard(this.sharding, stop);
      } else if (election === undefined || election === false) {
        await this.lead(stop);
      } else {
        await this.campaign(election === true ? {} : election, stop);
      }
    } catch (err) {
      failure = err;
    } finally {
      clearInterval(keepAlive); // what the stop awaits below holds the process while it is pending
      this.enter("stopping");
      informerAbort.abort();
      await informersRun;
      await Promise.all([...this.recorders.values()].map((r) => r.close()));
      await Promise.all(endpoints.map((e) => e.stop()));
      if (this.options.handleSignals) {
        process.off("SIGTERM", onSignal);
        process.off("SIGINT", onSignal);
      }
      await Promise.all([this.electionClient.close(), this.probeClient.close()]);
      if (this.ownsClient) await this.client.close();
      this.writes.close();
      this.stopAbort.abort();
      this.enter("stopped");
      this.logger.info({ manager: this.name }, failure === undefined ? "stopped" : "stopped after an error");
    }
    if (failure !== undefined) throw failure;
  }

  private async startEndpoints(endpoints: { stop(): Promise<void> }[]): Promise<void> {
    const { health: healthAt, metrics: metricsServing } = this.serving;
    const health: Record<string, RouteHandler> = {
      [this.options.livenessEndpointName ?? "/healthz"]: checksHandler(
        () => new Map([...this.healthChecks, ...this.watchHealth.healthChecks()]),
      ),
      [this.options.readinessEndpointName ?? "/readyz"]: checksHandler(
        () => new Map([...this.watchHealth.readyChecks(), ...this.readyChecks]),
      ),
    };
    const metrics: RouteHandler = async (_req, res) => {
      const text = await this.metrics.text();
      res.writeHead(200, { "content-type": this.metrics.registry.contentType }).end(text);
    };
    if (healthAt !== undefined && metricsServing !== undefined && sharesPort(healthAt, metricsServing)) {
      // Plain HTTP on one address (resolveServing refuses it for HTTPS): one server for both.
      const both = new HttpEndpoints({ ...health, "/metrics": metrics });
      endpoints.push(both);
      const port = await both.listen(healthAt.port, healthAt.host);
      this.ports = { healthProbe: port, metrics: port };
      const at = both.address() ?? { host: healthAt.host ?? "::", port };
      const url = `http://${formatBindAddress({ host: at.host, port })}/metrics`;
      this.listening = { healthProbe: at, metrics: { ...at, secure: false, url } };
      return;
    }
    if (healthAt !== undefined) {
      const e = new HttpEndpoints(health);
      endpoints.push(e);
      this.ports.healthProbe = await e.listen(healthAt.port, healthAt.host);
      this.listening.healthProbe = e.address() ?? { host: healthAt.host ?? "::", port: this.ports.healthProbe };
      this.logger.info({ bindAddress: formatBindAddress(this.listening.healthProbe) }, "serving health probes");
    }
    if (metricsServing !== undefined) {
      const server = new MetricsServer(metricsServing, metrics, { client: this.client, logger: this.logger });
      endpoints.push(server);
      this.listening.metrics = await server.start();
      this.ports.metrics = this.listening.metrics.port;
    }
  }

  private async waitForSync(stop: AbortSignal): Promise<boolean> {
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), toMilliseconds(this.options.cacheSyncTimeout ?? "2m"));
    const onStop = () => timeout.abort();
    stop.addEventListener("abort", onStop, { once: true });
    try {
      return await this.informers.waitForCacheSync(timeout.signal);
    } finally {
      clearTimeout(timer);
      stop.removeEventListener("abort", onStop);
    }
  }

  private async campaign(config: LeaderElectionConfig, stop: AbortSignal): Promise<void> {
    this.enter("candidate");
    const namespace = config.namespace ?? this.client.defaultNamespace;
    const name = config.name ?? `${this.name}-leader`;
    // 0 while a candidate, 1 while leading: client-go's gauge, as controller-runtime exposes it.
    this.metrics.leaderElection(name, false);
    const elector = new LeaderElector({
      leases: this.electionClient.resource(LEASE_KIND, namespace),
      namespace,
      name,
      identity: config.identity ?? `${hostname()}_${randomUUID()}`,
      clock: this.clock,
      activity: this.idleness,
      leaseDuration: config.leaseDuration,
      renewDeadline: config.renewDeadline,
      retryPeriod: config.retryPeriod,
      logger: this.logger,
      onStartedLeading: (leaderSignal) => {
        this.metrics.leaderElection(name, true);
        leaderSignal.addEventListener("abort", () => this.metrics.leaderElection(name, false), { once: true });
        return this.lead(leaderSignal);
      },
    });
    await elector.run(stop);
    if (!stop.aborted) throw new LeadershipLostError(`${namespace}/${name}`);
  }

  /** Joins the shard ring and runs the controllers while a member. */
  private async shard(sharding: Sharding, stop: AbortSignal): Promise<void> {
    this.enter("candidate");
    const result = await sharding.run(stop, (signal) => this.lead(signal));
    if (result === "lost") throw new ShardMembershipLostError(sharding.labels.ring, sharding.member);
  }

  /** Runs the controllers until `leaderSignal` aborts; drains them if the manager is stopping. */
  private async lead(leaderSignal: AbortSignal): Promise<void> {
    this.enter("leading");
    this.leaderSignal = leaderSignal;
    this.logger.info({ manager: this.name, controllers: this.controllers.length }, "starting controllers");
    // Controllers stop at once if leadership is lost; a graceful stop drains them first (below).
    const hard = new AbortController();
    setMaxListeners(0, hard.signal); // one listener per controller
    this.hardStop = hard.signal;
    for (const c of this.controllers) c.start(hard.signal);
    await new Promise<void>((resolve) => {
      if (leaderSignal.aborted) resolve();
      else leaderSignal.addEventListener("abort", () => resolve(), { once: true });
    });
    if (this.stopAbort.signal.aborted) {
      this.enter("stopping");
      const timeout = this.options.gracefulShutdownTimeout ?? "30s";
      await Promise.all(this.controllers.map((c) => c.stop(timeout)));
    } else {
      this.logger.error({ manager: this.name }, "leadership lost: stopping every controller now");
    }
    hard.abort();
  }
}

/** The sharding of a manager with `options.sharding` (built only then: off costs nothing). */
function shardingOf(mgr: Manager, options: ManagerOptions): Sharding | undefined {
  const config = options.sharding;
  if (config === undefined || config === false) return undefined;
  const election = typeof options.leaderElection === "object" ? options.leaderElection : {};
  const settings = config === true ? {} : config;
  return new Sharding({
    config: settings,
    observer: mgr.metrics.sharding(settings.ring ?? mgr.name),
    managerName: mgr.name,
    client: mgr.client,
    clock: mgr.clock,
    logger: mgr.logger,
    activity: mgr.idleness,
    election,
    informerDefaults: options.informerDefaults,
    onSettled: () => mgr.idleness.changed(),
  });
}

/** Where the health probes and metrics are served, from the manager's options (throws for bad ones). */
function resolveServing(options: ManagerOptions): { health?: BindAddress; metrics?: MetricsServing } {
  const inCluster = options.inCluster ?? runningInCluster();
  const health = resolveBindAddress(
    { bindAddress: "healthProbeBindAddress", port: "healthProbePort" },
    { bindAddress: options.healthProbeBindAddress, port: options.healthProbePort, host: options.bindHost, inCluster },
  );
  const metrics = resolveMetricsServing({
    metricsServer: options.metricsServer,
    metricsPort: options.metricsPort,
    bindHost: options.bindHost,
    inCluster,
  });
  if (health !== undefined && metrics !== undefined && health.port !== 0 && health.port === metrics.address.port) {
    if (metrics.secure || metrics.filterProvider !== undefined) {
      throw new Error(
        `the health probes and the secure metrics server cannot share port ${health.port}: probes are plain, unauthenticated HTTP; give metrics a port of their own`,
      );
    }
  }
  return { ...(health !== undefined ? { health } : {}), ...(metrics !== undefined ? { metrics } : {}) };
}

/** Plain metrics on the health probes' own address: served by one server (port 0 means two free ports). */
function sharesPort(health: BindAddress, metrics: MetricsServing): boolean {
  return (
    health.port !== 0 &&
    health.port === metrics.address.port &&
    health.host === metrics.address.host &&
    !metrics.secure &&
    metrics.filterProvider === undefined
  );
}
