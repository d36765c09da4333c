/**
 * `capstan run <operator.ts>`: runs one operator module against a cluster until SIGTERM/SIGINT.
 *
 * Expected flow: parse the flags, load the client configuration (`--kubeconfig`/`--context`, else
 * KUBECONFIG, else the pod's service account when run in a pod, else ~/.kube/config), load the
 * module (default export or `operator`), ask the server for its version (the first request: it
 * proves the server is reachable, its certificate verifies and the credentials are accepted), start
 * the operator, and on the first SIGTERM or SIGINT stop it gracefully (reconciles drain, the Lease is
 * released, informers stop).
 *
 * Guarantees: exit code 0 after a graceful stop, 1 when the operator failed (lost leadership, CRDs
 * not served, caches not synced) or could not start, 2 for bad flags. A second signal during the
 * graceful stop exits at once (130), for an impatient Ctrl-C. When it cannot start because of the
 * configuration, the module, the connection or the credentials, it logs one record saying which
 * (naming the kubeconfig and context, or the server), without a stack below debug level
 * (anticipated-errors.ts).
 */
import { readFile } from "node:fs/promises";
import { relative } from "node:path";
import { parseArgs } from "node:util";
import type { Logger } from "pino";
import { loadClientConfig } from "../client/config.ts";
import { ConnectionError } from "../client/connection-error.ts";
import { ApiError, isUnauthorized } from "../client/errors.ts";
import { KubeClient } from "../client/resource-client.ts";
import { parseBindAddress, runningInCluster } from "../runtime/bind-address.ts";
import { toMilliseconds } from "../runtime/duration.ts";
import { leaderElectionTimings } from "../runtime/leader-election.ts";
import { RuntimeMetrics } from "../runtime/metrics.ts";
import { checkShardName } from "../runtime/shard-labels.ts";
import { watchHealthTimings } from "../runtime/watch-health.ts";
import { parseCommandArgs } from "./command-args.ts";
import {
  type DevelopmentWebhookCertificates,
  developmentWebhookCertificates,
  webhookCertificateSource,
} from "./development-webhook-certificates.ts";
import { tuneOperatorHeap } from "./heap-tuning.ts";
import { createLogger, LOG_FORMATS, type LogFormat } from "./log-output.ts";
import { type LoadedOperator, loadOperator } from "./operator-module.ts";

const USAGE = `Usage: capstan run <operator.ts> [options]

Runs the operator (the module's default export, or its export "operator") until SIGTERM or SIGINT.

Options:
  --kubeconfig FILE      kubeconfig to use (default: KUBECONFIG, in-cluster config in a pod, ~/.kube/config)
  --context NAME         kubeconfig context (default: the current context)
  --namespace NS         watch only this namespace; repeat for several (default: all namespaces)
  --all-namespaces, -A   watch every namespace (the default)
  --leader-elect         run only while holding the <name>-leader Lease (for several replicas)
  --sharded              share the work with every other replica: each holds a Lease of its own
                         and reconciles only the objects labelled shard.capstan.dev/<name>=<member>
                         (one replica, elected, assigns them); the --leader-elect-* timings apply
                         to its Lease (docs/runtime.md "Sharding")
  --shard-member NAME    this replica's member name (default: the host name, i.e. the pod's name,
                         and a random suffix)
  --shard-admission      also assign new objects as they are created: serve the mutating webhook
                         of \`capstan generate --sharded --shard-admission\` (needs --sharded)
  --leader-elect-lease-duration D
                         how long the Lease stays valid after it last changed (default 15s): a
                         crashed leader is replaced 13-24 s later with the defaults
  --leader-elect-renew-deadline D
                         the leader steps down D after its last successful renewal (default 10s)
  --leader-elect-retry-period D
                         time between attempts to acquire or renew the Lease (default 2s); must
                         satisfy lease duration > renew deadline > 1.2 x retry period
  --watch-not-ready-after D
                         /readyz fails when an informer has been without a working watch for D
                         (default 10s)
  --watch-not-live-after D
                         /healthz fails when an informer has been without a working watch for D,
                         so the kubelet restarts the operator (default 5m; see docs/runtime.md)
  --no-crd-registration  do not create/update the operator's CRDs at start-up (they are applied
                         separately, and the operator needs no write access to CRDs)
  --max-concurrent-reconciles N
                         objects of one kind handled in parallel, by handlers and by every
                         controller that sets no maxConcurrentReconciles of its own
                         (default 16, chosen by measurement: docs/runtime.md, "Throughput")
  --health-probe-bind-address ADDR
                         serve /healthz and /readyz on ADDR: ":8081" (every interface),
                         "127.0.0.1:8081", "[::1]:8081", "0" (not served; the default)
  --metrics-bind-address ADDR
                         serve /metrics (Prometheus) on ADDR, same forms (default "0": not served)
  --health-port P, --metrics-port P
                         the same on port P of 127.0.0.1, or of every interface in a pod
  --metrics-secure[=true|false]
                         /metrics over HTTPS, every scrape authenticated (TokenReview) and
                         authorized (SubjectAccessReview: get on the /metrics URL) by the API
                         server (default: true in a pod, false elsewhere)
  --metrics-cert-dir D   where the HTTPS metrics server reads tls.crt and tls.key (reloaded when
                         they change; default /tmp/k8s-metrics-server/serving-certs, else self-signed)
  --webhook-port P       webhook server port (default 9443), when it has webhooks
  --webhook-host H       webhook server address (default: all interfaces)
  --webhook-cert-dir D   where the webhook server reads tls.crt and tls.key
                         (default /tmp/k8s-webhook-server/serving-certs, reloaded when they change;
                         outside a pod, when it holds none, a development certificate is made)
  --managed-webhooks-url URL
                         register its own webhook configurations and the conversion of the CRDs it
                         converts, calling the webhook server at URL ({port}: the server's port),
                         as Kopf's managed admission does (development; deployments apply
                         \`capstan generate webhooks\`). Outside a pod and without
                         --managed-webhooks-ca or --webhook-cert-dir, the server gets a certificate
                         for URL's host signed by a development CA kept in .capstan/webhook-ca/,
                         and that CA is registered
  --managed-webhooks-ca FILE
                         the PEM CA the API server trusts for those calls (with --webhook-cert-dir)
  --log-level L          fatal, error, warn, info (default), debug, trace or silent
  --log-format F         json or pretty (default: pretty on a terminal, json otherwise)
`;

/** Exit code of a second signal during the graceful stop: 128 + SIGINT, what shells report. */
const FORCED_EXIT_CODE = 130;

export interface RunFlags {
  file: string;
  kubeconfig?: string;
  context?: string;
  namespaces?: string[];
  leaderElect: boolean;
  /** `--sharded`. */
  sharded: boolean;
  /** `--shard-member`. */
  shardMember?: string;
  /** `--shard-admission`. */
  shardAdmission?: boolean;
  /** `--leader-elect-lease-duration`, `--leader-elect-renew-deadline`, `--leader-elect-retry-period`, validated. */
  leaderElectTimings?: { leaseDuration?: string; renewDeadline?: string; retryPeriod?: string };
  /** `--watch-not-ready-after`, `--watch-not-live-after`, validated. */
  watchHealth?: { notReadyAfter?: string; notLiveAfter?: string };
  registerCrds: boolean;
  maxConcurrentReconciles?: number;
  healthPort?: number;
  metricsPort?: number;
  /** `--health-probe-bind-address`, validated. */
  healthProbeBindAddress?: string;
  /** `--metrics-bind-address`, validated. */
  metricsBindAddress?: string;
  /** `--metrics-secure`; undefined: the manager's default (true in a pod). */
  metricsSecure?: boolean;
  metricsCertDir?: string;
  webhookPort?: number;
  webhookHost?: string;
  webhookCertDir?: string;
  managedWebhooksUrl?: string;
  managedWebhooksCa?: string;
  logLevel: string;
  logFormat: LogFormat;
}

/** `capstan run`. */
export async function run(args: string[]): Promise<number> {
  const parsed = parseCommandArgs("capstan run", USAGE, () => parseRunFlags(args));
  if (!parsed.ok) return parsed.exitCode;
  const flags = parsed.value;
  tuneOperatorHeap();
  let logger: Logger;
  try {
    logger = createLogger({ level: flags.logLevel, format: flags.logFormat });
  } catch (err) {
    process.stderr.write(`capstan run: ${(err as Error).message}\n`);
    return 2;
  }
  const stop = new AbortController();
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals++;
    if (signals === 1) {
      logger.info({ signal }, "stopping gracefully (send the signal again to exit at once)");
      stop.abort();
    } else {
      process.exit(FORCED_EXIT_CODE);
    }
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  // Started by `capstan dev` with an IPC channel: the channel closes when dev exits, even killed
  // with SIGKILL (which it cannot pass on), so the operator never outlives it as an orphan.
  const onParentGone = () => {
    logger.info("capstan dev is gone, stopping");
    stop.abort();
  };
  process.channel?.unref();
  process.once("disconnect", onParentGone);
  try {
    return await runOperator(flags, logger, stop.signal);
  } finally {
    process.off("SIGTERM", onSignal);
    process.off("SIGINT", onSignal);
    process.off("disconnect", onParentGone);
  }
}

/** Parses `capstan run`'s arguments; throws with a message naming the bad flag. */
export function parseRunFlags(args: string[]): RunFlags | "help" {
  const { values, positionals } = parseArgs({
    // A bare --metrics-secure means true; Go's flag package (kubebuilder's main.go) reads it so.
    args: args.map((a) => (a === "--metrics-secure" ? "--metrics-secure=true" : a)),
    allowPositionals: true,
    strict: true,
    options: {
      kubeconfig: { type: "string" },
      context: { type: "string" },
      namespace: { type: "string", short: "n", multiple: true },
      "all-namespaces": { type: "boolean", short: "A", default: false },
      "leader-elect": { type: "boolean", default: false },
      sharded: { type: "boolean", default: false },
      "shard-member": { type: "string" },
      "shard-admission": { type: "boolean", default: false },
      "leader-elect-lease-duration": { type: "string" },
      "leader-elect-renew-deadline": { type: "string" },
      "leader-elect-retry-period": { type: "string" },
      "watch-not-ready-after": { type: "string" },
      "watch-not-live-after": { type: "string" },
      "no-crd-registration": { type: "boolean", default: false },
      "max-concurrent-reconciles": { type: "string" },
      "health-port": { type: "string" },
      "metrics-port": { type: "string" },
      "health-probe-bind-address": { type: "string" },
      "metrics-bind-address": { type: "string" },
      "metrics-secure": { type: "string" },
      "metrics-cert-dir": { type: "string" },
      "webhook-port": { type: "string" },
      "webhook-host": { type: "string" },
      "webhook-cert-dir": { type: "string" },
      "managed-webhooks-url": { type: "string" },
      "managed-webhooks-ca": { type: "string" },
      "log-level": { type: "string", default: "info" },
      "log-format": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return "help";
  const [file, ...extra] = positionals;
  if (file === undefined) throw new Error("the operator module is missing");
  if (extra.length > 0) throw new Error(`unexpected arguments: ${extra.join(" ")}`);
  const namespaces = values.namespace;
  if (namespaces !== undefined && values["all-namespaces"]) {
    throw new Error("--namespace and --all-namespaces exclude each other");
  }
  for (const ns of namespaces ?? []) {
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(ns))
      throw new Error(`--namespace "${ns}" is not a valid namespace name`);
  }
  const managedUrl = values["managed-webhooks-url"];
  if (managedUrl !== undefined && !/^https:\/\/[^/]+/.test(managedUrl)) {
    throw new Error(
      `--managed-webhooks-url must be an https:// URL (the API server calls webhooks over TLS), got "${managedUrl}"`,
    );
  }
  if (values["managed-webhooks-ca"] !== undefined && managedUrl === undefined) {
    throw new Error("--managed-webhooks-ca needs --managed-webhooks-url");
  }
  if (values.sharded && values["leader-elect"]) {
    throw new Error(
      "--sharded and --leader-elect exclude each other: sharded replicas all work (one of them, elected, assigns the objects)",
    );
  }
  if (values["shard-member"] !== undefined && !values.sharded) throw new Error("--shard-member needs --sharded");
  if (values["shard-admission"] && !values.sharded) throw new Error("--shard-admission needs --sharded");
  const serving = servingFlags(values);
  const format = values["log-format"] ?? (process.stdout.isTTY ? "pretty" : "json");
  if (!(LOG_FORMATS as readonly string[]).includes(format)) {
    throw new Error(`--log-format must be one of ${LOG_FORMATS.join(", ")}, got "${format}"`);
  }
  return {
    file,
    kubeconfig: values.kubeconfig,
    context: values.context,
    namespaces,
    leaderElect: values["leader-elect"],
    sharded: values.sharded,
    ...(values["shard-member"] !== undefined ? { shardMember: checkShardName("member", values["shard-member"]) } : {}),
    ...(values["shard-admission"] ? { shardAdmission: true } : {}),
    ...timingFlags(values),
    registerCrds: !values["no-crd-registration"],
    maxConcurrentReconciles: positiveInteger("--max-concurrent-reconciles", values["max-concurrent-reconciles"]),
    ...serving,
    webhookPort: port("--webhook-port", values["webhook-port"]),
    webhookHost: values["webhook-host"],
    webhookCertDir: values["webhook-cert-dir"],
    managedWebhooksUrl: managedUrl,
    managedWebhooksCa: values["managed-webhooks-ca"],
    logLevel: values["log-level"],
    logFormat: format as LogFormat,
  };
}

/** The health and metrics flags, checked together (a flag that contradicts another is an error). */
function servingFlags(values: {
  "health-port"?: string;
  "metrics-port"?: string;
  "health-probe-bind-address"?: string;
  "metrics-bind-address"?: string;
  "metrics-secure"?: string;
  "metrics-cert-dir"?: string;
}): Pick<
  RunFlags,
  "healthPort" | "metricsPort" | "healthProbeBindAddress" | "metricsBindAddress" | "metricsSecure" | "metricsCertDir"
> {
  const healthPort = port("--health-port", values["health-port"]);
  const metricsPort = port("--metrics-port", values["metrics-port"]);
  const healthAddress = values["health-probe-bind-address"];
  const metricsAddress = values["metrics-bind-address"];
  if (healthPort !== undefined && healthAddress !== undefined) {
    throw new Error("--health-port and --health-probe-bind-address exclude each other");
  }
  if (metricsPort !== undefined && metricsAddress !== undefined) {
    throw new Error("--metrics-port and --metrics-bind-address exclude each other");
  }
  if (healthAddress !== undefined) parseBindAddress(healthAddress, "--health-probe-bind-address");
  const metricsServed =
    metricsPort !== undefined ||
    (metricsAddress !== undefined && parseBindAddress(metricsAddress, "--metrics-bind-address") !== "disabled");
  const secureText = values["metrics-secure"];
  if (secureText !== undefined && secureText !== "true" && secureText !== "false") {
    throw new Error(`--metrics-secure must be true or false, got "${secureText}"`);
  }
  const metricsSecure = secureText === undefined ? undefined : secureText === "true";
  const certDir = values["metrics-cert-dir"];
  if ((metricsSecure !== undefined || certDir !== undefined) && !metricsServed) {
    const flag = certDir !== undefined ? "--metrics-cert-dir" : "--metrics-secure";
    throw new Error(`${flag} needs metrics to be served: give --metrics-bind-address (or --metrics-port)`);
  }
  if (certDir !== undefined && metricsSecure === false) {
    throw new Error("--metrics-cert-dir needs HTTPS: it cannot go with --metrics-secure=false");
  }
  return {
    healthPort,
    metricsPort,
    ...(healthAddress !== undefined ? { healthProbeBindAddress: healthAddress } : {}),
    ...(metricsAddress !== undefined ? { metricsBindAddress: metricsAddress } : {}),
    ...(metricsSecure !== undefined ? { metricsSecure } : {}),
    ...(certDir !== undefined ? { metricsCertDir: certDir } : {}),
  };
}

/** Leader election and watch health durations, checked as the manager would, naming the flags. */
function timingFlags(values: {
  "leader-elect": boolean;
  "leader-elect-lease-duration"?: string;
  "leader-elect-renew-deadline"?: string;
  "leader-elect-retry-period"?: string;
  "watch-not-ready-after"?: string;
  "watch-not-live-after"?: string;
}): Pick<RunFlags, "leaderElectTimings" | "watchHealth"> {
  const leader = durationFlags({
    leaseDuration: ["--leader-elect-lease-duration", values["leader-elect-lease-duration"]],
    renewDeadline: ["--leader-elect-renew-deadline", values["leader-elect-renew-deadline"]],
    retryPeriod: ["--leader-elect-retry-period", values["leader-elect-retry-period"]],
  });
  const health = durationFlags({
    notReadyAfter: ["--watch-not-ready-after", values["watch-not-ready-after"]],
    notLiveAfter: ["--watch-not-live-after", values["watch-not-live-after"]],
  });
  if (leader.given.length > 0 && !values["leader-elect"]) {
    throw new Error(`${leader.given.join(", ")} needs --leader-elect`);
  }
  leader.check(leaderElectionTimings);
  health.check(watchHealthTimings);
  return {
    ...(leader.given.length > 0 ? { leaderElectTimings: leader.values } : {}),
    ...(health.given.length > 0 ? { watchHealth: health.values } : {}),
  };
}

/**
 * Duration flags that map to options of one kind: their values by option name, the flags given,
 * and `check(validate)`, which runs the manager's validation and names flags, not options, in its error.
 */
function durationFlags<K extends string>(
  flags: Record<K, [flag: string, text: string | undefined]>,
): {
  values: Partial<Record<K, string>>;
  given: string[];
  check(validate: (v: Partial<Record<K, string>>) => unknown): void;
} {
  const values: Partial<Record<K, string>> = {};
  const given: string[] = [];
  for (const [option, [flag, text]] of Object.entries(flags) as [K, [string, string | undefined]][]) {
    if (text === undefined) continue;
    try {
      toMilliseconds(text);
    } catch {
      throw new Error(`${flag} must be a duration such as "15s" or "1m30s", got "${text}"`);
    }
    values[option] = text;
    given.push(flag);
  }
  return {
    values,
    given,
    check(validate) {
      try {
        validate(values);
      } catch (err) {
        let message = (err as Error).message;
        for (const [option, [flag]] of Object.entries(flags) as [K, [string]][])
          message = message.replaceAll(option, flag);
        throw new Error(message);
      }
    },
  };
}

function positiveInteger(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!/^[0-9]+$/.test(text) || !Number.isSafeInteger(n) || n < 1) {
    throw new Error(`${flag} must be an integer of at least 1, got "${text}"`);
  }
  return n;
}

function port(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new Error(`${flag} must be an integer from 0 to 65535, got "${text}"`);
  return n;
}

async function runOperator(flags: RunFlags, logger: Logger, signal: AbortSignal): Promise<number> {
  let op: LoadedOperator;
  let client: KubeClient;
  const metrics = new RuntimeMetrics();
  try {
    const source = { kubeconfig: flags.kubeconfig, context: flags.context };
    // The host labels rest_client_requests_total; KubeClient.load also runs exec credential plugins once.
    const host = new URL(loadClientConfig(source).server).host;
    client = await KubeClient.load({ ...source, onResponse: metrics.restClient(host) });
  } catch (err) {
    logger.error({ err }, "cannot start: no usable cluster configuration");
    return 1;
  }
  try {
    op = await loadOperator(flags.file);
  } catch (err) {
    logger.error({ err }, "cannot start: the operator module cannot be used");
    await client.close();
    return 1;
  }
  let managedCa: string | undefined;
  if (flags.managedWebhooksCa !== undefined) {
    try {
      managedCa = Buffer.from(await readFile(flags.managedWebhooksCa, "utf8")).toString("base64");
    } catch (err) {
      logger.error({ err }, `cannot start: --managed-webhooks-ca ${flags.managedWebhooksCa} cannot be read`);
      await client.close();
      return 1;
    }
  }
  let development: DevelopmentWebhookCertificates | undefined;
  try {
    development = await developmentCertificates(flags, op, logger);
  } catch (err) {
    logger.error({ err }, "cannot start: the development webhook certificate cannot be made");
    await client.close();
    return 1;
  }
  if (development !== undefined) managedCa = Buffer.from(development.caPem).toString("base64");
  const cluster = { cluster: client.config.server, source: client.config.source };
  const reached = await reachServer(client, signal, logger, cluster);
  if ("exitCode" in reached) {
    await client.close();
    return reached.exitCode;
  }
  logger.info(
    {
      operator: op.name,
      ...cluster,
      version: reached.version,
      namespaces: flags.namespaces ?? "all",
      leaderElect: flags.leaderElect,
      sharded: flags.sharded,
    },
    "starting operator",
  );
  try {
    await op.start({
      client,
      signal,
      logger,
      metrics,
      namespaces: flags.namespaces,
      leaderElection: (flags.leaderElect && flags.leaderElectTimings) || flags.leaderElect,
      // Sharded: the timings flags set the member Leases and the coordinator's election alike.
      ...(flags.sharded
        ? {
            sharding: {
              ...flags.leaderElectTimings,
              ...(flags.shardMember ? { member: flags.shardMember } : {}),
              ...(flags.shardAdmission ? { admission: true } : {}),
            },
            ...(flags.leaderElectTimings !== undefined ? { leaderElection: flags.leaderElectTimings } : {}),
          }
        : {}),
      ...(flags.watchHealth !== undefined ? { watchHealth: flags.watchHealth } : {}),
      registerCrds: flags.registerCrds,
      maxConcurrentReconciles: flags.maxConcurrentReconciles,
      // Nothing asks a `capstan run` process whether it is idle: its writes need not be followed.
      idleAwaitsWrites: false,
      workers: flags.maxConcurrentReconciles,
      healthProbePort: flags.healthPort,
      metricsPort: flags.metricsPort,
      ...(flags.healthProbeBindAddress !== undefined ? { healthProbeBindAddress: flags.healthProbeBindAddress } : {}),
      ...(flags.metricsBindAddress !== undefined ||
      flags.metricsSecure !== undefined ||
      flags.metricsCertDir !== undefined
        ? {
            metricsServer: {
              ...(flags.metricsBindAddress !== undefined ? { bindAddress: flags.metricsBindAddress } : {}),
              ...(flags.metricsSecure !== undefined ? { secureServing: flags.metricsSecure } : {}),
              ...(flags.metricsCertDir !== undefined ? { certDir: flags.metricsCertDir } : {}),
            },
          }
        : {}),
      ...(flags.webhookPort !== undefined ||
      flags.webhookHost !== undefined ||
      flags.webhookCertDir !== undefined ||
      development !== undefined
        ? {
            webhookServer: {
              ...(flags.webhookPort !== undefined ? { port: flags.webhookPort } : {}),
              ...(flags.webhookHost !== undefined ? { host: flags.webhookHost } : {}),
              ...(flags.webhookCertDir !== undefined ? { certDir: flags.webhookCertDir } : {}),
              ...(development !== undefined ? { tls: development.tls } : {}),
            },
          }
        : {}),
      ...(flags.managedWebhooksUrl !== undefined
        ? {
            managedWebhooks: {
              url: flags.managedWebhooksUrl,
              ...(managedCa !== undefined ? { caBundle: managedCa } : {}),
            },
          }
        : {}),
    });
    logger.info({ operator: op.name }, "operator stopped");
    return 0;
  } catch (err) {
    logger.error({ err, operator: op.name }, "operator failed");
    return 1;
  } finally {
    await client.close();
  }
}

/**
 * The development certificate of the webhook server, when it needs one (see
 * development-webhook-certificates.ts), logged in one line: for which hosts, where its CA is kept.
 */
async function developmentCertificates(
  flags: RunFlags,
  op: LoadedOperator,
  logger: Logger,
): Promise<DevelopmentWebhookCertificates | undefined> {
  const source = webhookCertificateSource({
    hasWebhooks: op.webhooks().length + (op.conversions?.().length ?? 0) > 0,
    inCluster: runningInCluster(),
    certDir: flags.webhookCertDir,
    webhookHost: flags.webhookHost,
    managedUrl: flags.managedWebhooksUrl,
    managedCa: flags.managedWebhooksCa,
  });
  if (source.kind === "directory") return undefined;
  const made = await developmentWebhookCertificates({ hosts: source.hosts });
  const caFile = relative(process.cwd(), made.caFile);
  const ca =
    made.ca === "made"
      ? "made now"
      : made.ca === "kept"
        ? "kept from an earlier run"
        : made.ca.replace("replaced: ", "made now: the one there was unusable, ");
  logger.info(
    { hosts: source.hosts, caFile: made.caFile, ca: made.ca, why: source.reason },
    `webhook server: development certificate for ${source.hosts[0]}, signed by the CA in ${caFile} (${ca})${flags.managedWebhooksUrl !== undefined ? ", which is registered" : ""}; for development only: in a cluster, cert-manager provides it`,
  );
  return made;
}

/**
 * The first request, GET /version: it proves that the server is reachable, that its certificate
 * verifies and that it accepts the credentials (a wrong token is refused even there). Resolves with
 * the server's version; with none when it answered with another error (a proxy or RBAC may filter
 * /version: it was reached and accepted the credentials all the same); with the exit code after
 * logging why it cannot start (exit 0 when stopped meanwhile).
 */
async function reachServer(
  client: KubeClient,
  signal: AbortSignal,
  logger: Logger,
  cluster: { cluster: string; source: string },
): Promise<{ version: string | undefined } | { exitCode: number }> {
  try {
    const answer = await client.request<{ gitVersion?: string } | undefined>("GET", "/version", { signal });
    return { version: answer?.gitVersion };
  } catch (err) {
    if (signal.aborted) return { exitCode: 0 };
    const connection = connectionErrorIn(err);
    if (connection !== undefined) {
      logger.error({ err: connection, ...cluster }, "cannot start: cannot reach the API server");
    } else if (isUnauthorized(err)) {
      logger.error({ err, ...cluster }, "cannot start: the API server refused the credentials");
    } else if (err instanceof ApiError) {
      logger.warn({ err, ...cluster }, "cannot read the API server's version; starting all the same");
      return { version: undefined };
    } else {
      logger.error({ err, ...cluster }, "cannot start: asking the API server for its version failed");
    }
    return { exitCode: 1 };
  }
}

/** The `ConnectionError` among `err`'s causes (the client wraps it): its message is the one to show. */
function connectionErrorIn(err: unknown): ConnectionError | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (e instanceof ConnectionError) return e;
  }
  return undefined;
}
