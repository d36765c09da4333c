/**
 * Prometheus metrics with controller-runtime's names and labels, on a private prom-client
 * Registry (never the global one, so two managers in one process, or a test, do not collide).
 *
 * | metric | labels | fed by |
 * |---|---|---|
 * | controller_runtime_reconcile_total | controller, result (success, error, requeue, requeue_after) | controller |
 * | controller_runtime_reconcile_errors_total | controller | controller |
 * | controller_runtime_terminal_reconcile_errors_total | controller | controller |
 * | controller_runtime_reconcile_time_seconds (histogram) | controller | controller |
 * | controller_runtime_max_concurrent_reconciles | controller | controller |
 * | controller_runtime_active_workers | controller | controller |
 * | workqueue_depth | name, controller, priority | work queue |
 * | workqueue_adds_total, workqueue_retries_total | name, controller | work queue |
 * | workqueue_queue_duration_seconds, workqueue_work_duration_seconds (histograms) | name, controller | work queue |
 * | workqueue_unfinished_work_seconds, workqueue_longest_running_processor_seconds | name, controller | read at scrape time |
 * | rest_client_requests_total | code, method, host | the client's response observer |
 * | controller_runtime_webhook_requests_total | code, webhook | the webhook server |
 * | controller_runtime_webhook_latency_seconds (histogram) | webhook | the webhook server |
 * | controller_runtime_webhook_requests_in_flight | webhook | the webhook server |
 * | leader_election_master_status | name (the Lease's) | the manager's leader election |
 *
 * A webhook's label is its path, as in controller-runtime.
 *
 * As in controller-runtime, a work queue's `name` and `controller` labels are both the
 * controller's name, and `priority` is `""` (our queue has no priorities).
 *
 * Counters and gauges are kept as plain numbers per controller and queue and copied into their
 * Prometheus series when the registry is read (`collect`): a reconcile bumps half a dozen of them,
 * and a prom-client labelled update validates and hashes its labels on every call. Scrapes see
 * exactly the same values. Histograms are {@link FastHistogram}s bound to their labels once: same
 * output as prom-client's, a fraction of the cost per observation.
 */
import { Counter, exponentialBuckets, Gauge, Histogram, Registry } from "prom-client";
import type { ResponseObserver } from "../client/resource-client.ts";
import type { ResourceKind } from "../client/types.ts";
import { FastHistogram } from "./histogram.ts";
import type { ReconcileOutcome } from "./reconcile.ts";
import type { WorkQueueMetrics } from "./workqueue.ts";

const reconcileOutcomes: readonly ReconcileOutcome[] = ["success", "error", "requeue", "requeue_after"];

/** controller-runtime's reconcile-time buckets: fine below 1 s, where most reconciles land, up to 60 s. */
const RECONCILE_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5, 1.75,
  2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];
/** controller-runtime's work-queue buckets: 10 ns to 1000 s by factors of 10 (queue waits span that range). */
const WORKQUEUE_BUCKETS = exponentialBuckets(10e-9, 10, 12);

/** What a controller reports. */
export interface ControllerObserver {
  /** One reconcile finished with `outcome` after `seconds`. */
  reconciled(outcome: ReconcileOutcome, seconds: number): void;
  /** A reconcile threw; `terminal` for a TerminalError (not retried). */
  failed(terminal: boolean): void;
  /** Workers busy right now changed by `delta`. */
  activeWorkers(delta: number): void;
}

/** What the webhook server reports (webhooks/webhook-server.ts `WebhookObserver`). */
export interface WebhookRequestObserver {
  started(webhook: string): void;
  finished(webhook: string, code: number, seconds: number): void;
}

type InFlight = () => { unfinishedWorkSeconds: number; longestRunningProcessorSeconds: number };

/** A monotonic count and how much of it the Prometheus counter already holds. */
interface Count {
  value: number;
  reported: number;
}

const newCount = (): Count => ({ value: 0, reported: 0 });

/** The counts of one controller, read at scrape time. */
interface ControllerCounts {
  name: string;
  results: Record<ReconcileOutcome, Count>;
  errors: Count;
  terminal: Count;
  active: number;
}

/** The counts of one work queue, read at scrape time. */
interface QueueCounts {
  name: string;
  depth: number;
  adds: Count;
  retries: Count;
}

/** Adds what `count` gained since the last scrape to its counter series. */
function report(counter: { inc(value: number): void }, count: Count): void {
  const delta = count.value - count.reported;
  if (delta > 0) counter.inc(delta);
  count.reported = count.value;
}

/** What sharding reports (sharding.ts): the coordinator's view and this replica's hand-overs. */
export interface ShardingObserver {
  members(live: readonly string[]): void;
  assigned(perMember: ReadonlyMap<string, number>): void;
  rebalanced(ms: number): void;
  handedOver(kind: Pick<ResourceKind, "group" | "kind">): void;
}

/** The metrics of one manager (or one test). */
export class RuntimeMetrics {
  /** The registry to expose; pass your own to add application metrics next to ours. */
  readonly registry: Registry;
  private readonly reconcileTotal: Counter<"controller" | "result">;
  private readonly reconcileErrors: Counter<"controller">;
  private readonly terminalErrors: Counter<"controller">;
  private readonly reconcileTime: FastHistogram;
  private readonly maxConcurrent: Gauge<"controller">;
  private readonly active: Gauge<"controller">;
  private readonly depth: Gauge<"name" | "controller" | "priority">;
  private readonly adds: Counter<"name" | "controller">;
  private readonly retries: Counter<"name" | "controller">;
  private readonly queueDuration: FastHistogram;
  private readonly workDuration: FastHistogram;
  private readonly restRequests: Counter<"code" | "method" | "host">;
  private readonly webhookRequests: Counter<"code" | "webhook">;
  private readonly webhookLatency: Histogram<"webhook">;
  private readonly webhookInFlight: Gauge<"webhook">;
  private readonly leaderStatus: Gauge<"name">;
  private readonly inFlight = new Map<string, InFlight>();
  /** Every controller and queue ever observed (a handful per process: one per controller built). */
  private readonly controllers: ControllerCounts[] = [];
  private readonly queues: QueueCounts[] = [];

  constructor(registry: Registry = new Registry()) {
    this.registry = registry;
    const registers = [registry];
    const controllers = this.controllers;
    const queues = this.queues;
    this.reconcileTotal = new Counter({
      name: "controller_runtime_reconcile_total",
      help: "Total number of reconciliations per controller",
      labelNames: ["controller", "result"],
      registers,
      collect() {
        for (const c of controllers) {
          for (const result of reconcileOutcomes) {
            report(this.labels({ controller: c.name, result }), c.results[result]);
          }
        }
      },
    });
    this.reconcileErrors = new Counter({
      name: "controller_runtime_reconcile_errors_total",
      help: "Total number of reconciliation errors per controller",
      labelNames: ["controller"],
      registers,
      collect() {
        for (const c of controllers) report(this.labels({ controller: c.name }), c.errors);
      },
    });
    this.terminalErrors = new Counter({
      name: "controller_runtime_terminal_reconcile_errors_total",
      help: "Total number of terminal reconciliation errors per controller",
      labelNames: ["controller"],
      registers,
      collect() {
        for (const c of controllers) report(this.labels({ controller: c.name }), c.terminal);
      },
    });
    this.reconcileTime = new FastHistogram({
      name: "controller_runtime_reconcile_time_seconds",
      help: "Length of time per reconciliation per controller",
      labelNames: ["controller"],
      buckets: RECONCILE_BUCKETS,
      registers,
    });
    this.maxConcurrent = new Gauge({
      name: "controller_runtime_max_concurrent_reconciles",
      help: "Maximum number of concurrent reconciles per controller",
      labelNames: ["controller"],
      registers,
    });
    this.active = new Gauge({
      name: "controller_runtime_active_workers",
      help: "Number of currently used workers per controller",
      labelNames: ["controller"],
      registers,
      collect() {
        // Two controllers of one name (a rebuilt manager on the same metrics) share the series, as before.
        const byName = new Map<string, number>();
        for (const c of controllers) byName.set(c.name, (byName.get(c.name) ?? 0) + c.active);
        for (const [controller, active] of byName) this.set({ controller }, active);
      },
    });
    this.depth = new Gauge({
      name: "workqueue_depth",
      help: "Current depth of workqueue by workqueue and priority",
      labelNames: ["name", "controller", "priority"],
      registers,
      collect() {
        for (const q of queues) this.set({ name: q.name, controller: q.name, priority: "" }, q.depth);
      },
    });
    this.adds = new Counter({
      name: "workqueue_adds_total",
      help: "Total number of adds handled by workqueue",
      labelNames: ["name", "controller"],
      registers,
      collect() {
        for (const q of queues) report(this.labels({ name: q.name, controller: q.name }), q.adds);
      },
    });
    this.retries = new Counter({
      name: "workqueue_retries_total",
      help: "Total number of retries handled by workqueue",
      labelNames: ["name", "controller"],
      registers,
      collect() {
        for (const q of queues) report(this.labels({ name: q.name, controller: q.name }), q.retries);
      },
    });
    this.queueDuration = new FastHistogram({
      name: "workqueue_queue_duration_seconds",
      help: "How long in seconds an item stays in workqueue before being requested",
      labelNames: ["name", "controller"],
      buckets: WORKQUEUE_BUCKETS,
      registers,
    });
    this.workDuration = new FastHistogram({
      name: "workqueue_work_duration_seconds",
      help: "How long in seconds processing an item from workqueue takes.",
      labelNames: ["name", "controller"],
      buckets: WORKQUEUE_BUCKETS,
      registers,
    });
    const inFlight = this.inFlight;
    new Gauge({
      name: "workqueue_unfinished_work_seconds",
      help:
        "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. " +
        "Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
      labelNames: ["name", "controller"],
      registers,
      collect() {
        for (const [name, read] of inFlight) this.set({ name, controller: name }, read().unfinishedWorkSeconds);
      },
    });
    new Gauge({
      name: "workqueue_longest_running_processor_seconds",
      help: "How many seconds has the longest running processor for workqueue been running.",
      labelNames: ["name", "controller"],
      registers,
      collect() {
        for (const [name, read] of inFlight) {
          this.set({ name, controller: name }, read().longestRunningProcessorSeconds);
        }
      },
    });
    this.restRequests = new Counter({
      name: "rest_client_requests_total",
      help: "Number of HTTP requests, partitioned by status code, method, and host.",
      labelNames: ["code", "method", "host"],
      registers,
    });
    this.webhookRequests = new Counter({
      name: "controller_runtime_webhook_requests_total",
      help: "Total number of admission requests by HTTP status code.",
      labelNames: ["code", "webhook"],
      registers,
    });
    this.webhookLatency = new Histogram({
      name: "controller_runtime_webhook_latency_seconds",
      help: "Histogram of the latency of processing admission requests",
      labelNames: ["webhook"],
      registers,
    });
    this.webhookInFlight = new Gauge({
      name: "controller_runtime_webhook_requests_in_flight",
      help: "Current number of admission requests being served.",
      labelNames: ["webhook"],
      registers,
    });
    // client-go's leader election metric, which controller-runtime registers (same name and help).
    this.leaderStatus = new Gauge({
      name: "leader_election_master_status",
      help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
      labelNames: ["name"],
      registers,
    });
  }

  /** Sets `leader_election_master_status{name=lease}`: 1 while this replica leads, 0 otherwise. */
  leaderElection(lease: string, leading: boolean): void {
    this.leaderStatus.set({ name: lease }, leading ? 1 : 0);
  }

  /**
   * The observer of a sharded manager's ring (sharding.ts), its series created on first use so an
   * operator without sharding exposes none: `capstan_shard_members{ring}` and
   * `capstan_shard_objects{ring,member}` (kept by the coordinator at each assignment, hand-over and
   * deletion; none on other replicas),
   * `capstan_shard_handovers_total{ring,kind}` (objects this replica let go of after a drain) and
   * `capstan_shard_rebalance_seconds{ring}` (from the last membership change until every object
   * was on the ring's choice, as the coordinator saw it).
   */
  sharding(ring: string): ShardingObserver {
    const registers = [this.registry];
    const members = new Gauge({
      name: "capstan_shard_members",
      help: "Live members of the shard ring, as its coordinator sees them (0 on other replicas)",
      labelNames: ["ring"],
      registers,
    });
    const objects = new Gauge({
      name: "capstan_shard_objects",
      help: 'Objects of the ring\'s kinds assigned to each member (member "" = unassigned), as the coordinator last counted them',
      labelNames: ["ring", "member"],
      registers,
    });
    const handovers = new Counter({
      name: "capstan_shard_handovers_total",
      help: "Objects this replica let go of after the coordinator drained them",
      labelNames: ["ring", "kind"],
      registers,
    });
    const rebalance = new Gauge({
      name: "capstan_shard_rebalance_seconds",
      help: "Time from the last membership change until every object was assigned to the ring's choice",
      labelNames: ["ring"],
      registers,
    });
    members.set({ ring }, 0);
    return {
      members: (live) => members.set({ ring }, live.length),
      assigned: (perMember) => {
        objects.reset();
        for (const [member, n] of perMember) objects.set({ ring, member }, n);
      },
      rebalanced: (ms) => rebalance.set({ ring }, ms / 1000),
      handedOver: (kind) => handovers.inc({ ring, kind: `${kind.kind}.${kind.group}` }),
    };
  }

  /** The observer of a webhook server: requests by code, latency and in-flight count per webhook path. */
  webhookObserver(): WebhookRequestObserver {
    return {
      started: (webhook) => this.webhookInFlight.inc({ webhook }),
      finished: (webhook, code, seconds) => {
        this.webhookInFlight.dec({ webhook });
        this.webhookRequests.inc({ code: String(code), webhook });
        this.webhookLatency.observe({ webhook }, seconds);
      },
    };
  }

  /**
   * The observer for controller `name`. Initialises its series at zero (as controller-runtime does),
   * so dashboards see every result label before the first reconcile.
   */
  controller(name: string, maxConcurrentReconciles: number): ControllerObserver {
    for (const result of ["success", "error", "requeue", "requeue_after"] as const) {
      this.reconcileTotal.inc({ controller: name, result }, 0);
    }
    this.reconcileErrors.inc({ controller: name }, 0);
    this.terminalErrors.inc({ controller: name }, 0);
    this.maxConcurrent.set({ controller: name }, maxConcurrentReconciles);
    this.active.set({ controller: name }, 0);
    const counts: ControllerCounts = {
      name,
      results: { success: newCount(), error: newCount(), requeue: newCount(), requeue_after: newCount() },
      errors: newCount(),
      terminal: newCount(),
      active: 0,
    };
    this.controllers.push(counts);
    // Bound once: resolving labels per call would validate and hash them on every reconcile.
    const time = this.reconcileTime.labels({ controller: name });
    return {
      reconciled: (outcome, seconds) => {
        counts.results[outcome].value++;
        time.observe(seconds);
      },
      failed: (isTerminal) => {
        counts.errors.value++;
        if (isTerminal) counts.terminal.value++;
      },
      activeWorkers: (delta) => {
        counts.active += delta;
      },
    };
  }

  /** The work-queue observer for queue `name`; `inFlight` is read at scrape time. */
  workQueue(name: string, inFlight?: InFlight): WorkQueueMetrics {
    const labels = { name, controller: name };
    this.depth.set({ ...labels, priority: "" }, 0);
    this.adds.inc(labels, 0);
    this.retries.inc(labels, 0);
    if (inFlight !== undefined) this.inFlight.set(name, inFlight);
    const counts: QueueCounts = { name, depth: 0, adds: newCount(), retries: newCount() };
    this.queues.push(counts);
    const queueDuration = this.queueDuration.labels(labels);
    const workDuration = this.workDuration.labels(labels);
    return {
      depth: (d) => {
        counts.depth = d;
      },
      added: () => {
        counts.adds.value++;
      },
      queueDuration: (s) => queueDuration.observe(s),
      workDuration: (s) => workDuration.observe(s),
      retried: () => {
        counts.retries.value++;
      },
    };
  }

  /** Stops reading the in-flight figures of queue `name` (its controller stopped). */
  forgetWorkQueue(name: string): void {
    this.inFlight.delete(name);
  }

  /**
   * A response observer for `KubeClientOptions.onResponse` that counts
   * `rest_client_requests_total{code,method,host}`; `host` is the API server's `host:port`.
   */
  restClient(host: string): ResponseObserver {
    const bound = new Map<string, { inc(): void }>();
    return (method, code) => {
      const key = `${method} ${code}`;
      let counter = bound.get(key);
      if (counter === undefined) {
        counter = this.restRequests.labels({ code, method, host });
        bound.set(key, counter);
      }
      counter.inc();
    };
  }

  /** The Prometheus text exposition of every metric in the registry. */
  text(): Promise<string> {
    return this.registry.metrics();
  }
}
