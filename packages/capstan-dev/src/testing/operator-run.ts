/**
 * What `cluster.run` starts and hands back: the operator it accepts, its options, and the handle
 * of a running operator (test-cluster.ts, sharded-run.ts).
 */
import type { AdmissionWebhook, ConversionWebhook, Duration, KubeClient, ShardingConfig } from "capstan";
import type { WhenIdleOptions } from "capstan/runtime";
import type { Logger } from "pino";
import type { LogRecord } from "./log-capture.ts";
import type { WaitForOptions } from "./wait-for.ts";

/**
 * What `run` needs of an operator: `operator()` objects fit. `requirements().crds` (when present)
 * names the CRDs `run` waits for before resolving.
 */
export interface RunnableOperator<O = Record<string, unknown>> {
  readonly name: string;
  start(options: O & { client: KubeClient; signal: AbortSignal; logger: Logger }): Promise<void>;
  requirements?(): { readonly crds: readonly { readonly crdName: string }[] };
  /**
   * Settles once the operator is past its own CRD registration (rejects with its start-up error);
   * `operator()` objects have it. `run` waits for it when present.
   */
  readonly registered?: Promise<void>;
  /**
   * Its admission handlers (`op.on.validate`/`mutate`): `run` then serves them with a fresh
   * certificate and registers their webhook configurations while the operator runs. Given the
   * run's `sharding` option, they include the webhooks of assignment at admission when it asks
   * for them (`sharding: { admission: true }`).
   */
  webhooks?(options?: { sharding?: boolean | ShardingConfig }): readonly AdmissionWebhook[];
  /**
   * Its conversion webhooks (`op.convert`): `run` serves them as it serves admission handlers and
   * has the operator register its CRDs with `conversion.strategy: Webhook` calling them.
   */
  conversions?(): readonly ConversionWebhook[];
  /** The port its webhook server listens on, once started. */
  readonly webhookPort?: number;
  /**
   * Resolves once it has nothing to do now (`operator()` objects have it: `Operator.whenIdle`);
   * `cluster.whenIdle` and `cluster.advance` need it.
   */
  whenIdle?(options?: WhenIdleOptions): Promise<void>;
  /** What keeps it from being idle right now (empty when nothing does). */
  busy?(): readonly string[];
}

/**
 * Options of {@link TestCluster.run}. The operator's own start options (`namespaces`,
 * `leaderElection`, `gracefulShutdownTimeout`, ...) are accepted beside these.
 */
export interface RunOptions {
  /**
   * Default: a pino logger at the cluster's log level whose records are also kept in
   * {@link RunningOperator.logs}. A logger given here is used as is (and `logs` stays empty).
   */
  logger?: Logger;
  /**
   * The client the operator uses (default: the cluster's admin client), e.g. a ServiceAccount's
   * from {@link TestCluster.serviceAccount} to test it under its RBAC rules. `run` still waits for
   * the CRDs with the admin client.
   */
  client?: KubeClient;
  /** Passed to the operator; `false` also skips waiting for the CRDs. */
  registerCrds?: boolean;
  /** How long `run` waits for the operator's CRDs to be served (default {@link DEFAULT_WAIT_TIMEOUT}). */
  readyTimeout?: Duration;
}

/** An operator started with {@link TestCluster.run}. */
export interface RunningOperator {
  /** Stops the operator gracefully; resolves once it has stopped (even if it had failed). */
  stop(): Promise<void>;
  /** Settles when the operator stops: rejects with its error if it failed. */
  readonly done: Promise<void>;
  /**
   * What the operator logged (debug and above, the newest `LOG_CAPTURE_LIMIT` records),
   * whatever the cluster's log level: pino's JSON records (`level` as a number, `msg`, `err`, ...).
   */
  readonly logs: readonly LogRecord[];
  /**
   * Waits for a log record: one whose JSON contains `match`, or that satisfies it
   * (`running.waitForLog((r) => r.err?.code === 403)`); resolves with the record.
   */
  waitForLog(match: string | ((record: LogRecord) => boolean), options?: WaitForOptions): Promise<LogRecord>;
  /**
   * For an operator with admission handlers started without `webhookServer` options: the PEM of
   * the CA that signed its webhook server's certificate (made for this run; the server listens on
   * 127.0.0.1, `op.webhookPort`). Its Validating/MutatingWebhookConfigurations
   * (`<operator>-validating`, `<operator>-mutating`, by URL) are registered while it runs. An
   * operator with conversions (`op.convert`) registers its CRDs calling its conversion webhooks by
   * URL; they stay so after it stops, so reading a converted version then fails as on a cluster
   * whose conversion webhook is down.
   */
  readonly webhookCa?: string;
}
