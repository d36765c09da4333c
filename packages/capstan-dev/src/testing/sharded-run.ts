/**
 * `cluster.runSharded`: one operator run as N sharded replicas in the test's process, each with
 * its own operator object and member name, as N pods of a sharded Deployment would run
 * (docs/runtime.md, "Sharding"). Each replica is an operator `cluster.run` started, so waits,
 * `whenIdle`, logs and failures work per replica as they do for one operator.
 *
 * ## Guarantees
 * - Resolves once every replica runs and holds its member Lease (`<ring>-<member>` in the
 *   cluster's namespace, held by its member): objects created from then on are assigned among all
 *   of them, without a hand-over first.
 * - Each replica can be stopped alone (`replicas[i].stop()`): it drains its objects and releases
 *   its Lease, and the others take its objects over. `run.stop()` (or `cluster.stop()`) stops the rest.
 * - Admission and conversion webhooks: every replica serves them with one certificate made for
 *   the run, behind one loopback address forwarding each call to a replica still running (a
 *   Service's part, webhook-front.ts); the configurations and the CRDs' conversion name that
 *   address, so stopping a replica does not stop the webhooks.
 *
 * ## Caveats
 * - Lease timings default to {@link TEST_SHARDING_TIMINGS} (client-go's proportions halved), not
 *   client-go's 15 s / 10 s / 2 s: a replica's objects move on a graceful stop at once either way,
 *   but a coordinator that stops hands its election over one retry period later.
 * - A replica stopped is stopped gracefully (a crash's Lease expiry is not simulated: start the
 *   replicas yourself with `cluster.run` and a `sharding` option to test that).
 */
import type { Duration, KubeClient, KubeObject, ShardingConfig } from "capstan";
import { Lease } from "capstan/core";
import {
  createCertificateAuthority,
  issueServingCertificate,
  registerWebhookConfigurations,
  removeWebhookConfigurations,
} from "capstan/internal";
import { memberLeaseName } from "capstan/runtime";
import type { RunnableOperator, RunningOperator, RunOptions } from "./operator-run.ts";
import { waitUntil } from "./wait-for.ts";
import { startWebhookFront, type WebhookFront } from "./webhook-front.ts";

/**
 * Lease timings of a sharded test run: client-go's proportions (lease > renew deadline > retry
 * period * 1.2) halved, long enough that a loaded 2-core machine does not miss a renewal.
 */
export const TEST_SHARDING_TIMINGS = { leaseDuration: "8s", renewDeadline: "5s", retryPeriod: "500ms" } as const;

/** Options of {@link ShardedRunOptions} beside `cluster.run`'s. */
export interface ShardedRunOptions {
  /** How many replicas (default 3). */
  replicas?: number;
  /**
   * Sharding settings shared by the replicas (ring, timings, virtual nodes); `member` is set per
   * replica (`<prefix>-<i>`, prefix default `replica`), `namespace` defaults to the cluster's.
   */
  sharding?: Omit<ShardingConfig, "member"> & { memberPrefix?: string };
}

/** One replica of a {@link ShardedRun}. */
export interface ShardedReplica extends RunningOperator {
  /** Its member name in the ring (the value of the shard label on the objects it holds). */
  readonly member: string;
}

/** Replicas started with `cluster.runSharded`. */
export interface ShardedRun {
  /** The ring's name (the operator's name unless `sharding.ring` says otherwise). */
  readonly ring: string;
  /** The shard label's key: `shard.capstan.dev/<ring>`. */
  readonly shardLabel: string;
  readonly replicas: readonly ShardedReplica[];
  /** The replica `obj` is assigned to now, by its shard label (undefined while unassigned). */
  replicaOf(obj: KubeObject): ShardedReplica | undefined;
  /** The replicas not stopped. */
  running(): readonly ShardedReplica[];
  /** Stops every replica still running. */
  stop(): Promise<void>;
}

/** What a sharded run needs of its cluster. */
export interface ShardedRunContext {
  client: KubeClient;
  namespace: string;
  waitTimeout: Duration;
  run<O>(op: RunnableOperator<O>, options: RunOptions & Partial<O>): Promise<RunningOperator>;
}

/** `cluster.runSharded`; see the module documentation. */
export async function runSharded<O>(
  cluster: ShardedRunContext,
  makeOperator: (member: string) => RunnableOperator<O>,
  options: ShardedRunOptions & RunOptions & Partial<O> = {},
): Promise<ShardedRun> {
  const { replicas: count = 3, sharding = {}, ...runOptions } = options;
  if (!Number.isInteger(count) || count < 1)
    throw new Error(`runSharded: replicas must be a positive integer, got ${count}`);
  const { memberPrefix = "replica", ...shardingConfig } = sharding;
  const namespace = shardingConfig.namespace ?? cluster.namespace;
  const members = Array.from({ length: count }, (_, i) => `${memberPrefix}-${i}`);
  const operators = members.map((member) => makeOperator(member));
  const first = operators[0] as RunnableOperator<O>;
  const ring = shardingConfig.ring ?? first.name;
  const shardLabel = `shard.capstan.dev/${ring}`;
  const timings = {
    leaseDuration: shardingConfig.leaseDuration ?? TEST_SHARDING_TIMINGS.leaseDuration,
    renewDeadline: shardingConfig.renewDeadline ?? TEST_SHARDING_TIMINGS.renewDeadline,
    retryPeriod: shardingConfig.retryPeriod ?? TEST_SHARDING_TIMINGS.retryPeriod,
  };
  const stopped = new Set<string>();
  const replicas: ShardedReplica[] = [];

  // Webhooks: one certificate for all replicas, one address in front of them.
  // The sharding option too: with `admission`, the shard assignment webhooks are among them.
  const webhooks = first.webhooks?.({ sharding: { ...shardingConfig, namespace } }) ?? [];
  const converts = (first.conversions?.().length ?? 0) > 0;
  let front: WebhookFront | undefined;
  let webhookOptions: Record<string, unknown> = {};
  let caBundle = "";
  if ((webhooks.length > 0 || converts) && !("webhookServer" in runOptions)) {
    const ca = createCertificateAuthority({ commonName: "capstan-dev/testing sharded webhook CA" });
    caBundle = Buffer.from(ca.cert).toString("base64");
    const byMember = new Map(members.map((m, i) => [m, operators[i] as RunnableOperator<O>]));
    front = await startWebhookFront(() =>
      members
        .filter((m) => !stopped.has(m))
        .map((m) => byMember.get(m)?.webhookPort)
        .filter((p): p is number => p !== undefined),
    );
    webhookOptions = {
      webhookServer: { port: 0, host: "127.0.0.1", tls: issueServingCertificate(ca, { hosts: ["127.0.0.1"] }) },
      ...(converts && !("managedWebhooks" in runOptions)
        ? { managedWebhooks: { url: `https://127.0.0.1:${front.port}`, caBundle, configurations: false } }
        : {}),
    };
  }
  const removeWebhooks = async () => {
    if (webhooks.length > 0 && front !== undefined) await removeWebhookConfigurations(cluster.client, first.name);
    await front?.close();
  };

  try {
    const started = await Promise.allSettled(
      operators.map((op, i) =>
        cluster.run(op, {
          ...(runOptions as RunOptions & Partial<O>),
          ...webhookOptions,
          sharding: { ...shardingConfig, ...timings, namespace, member: members[i] },
          leaderElection: { ...timings, namespace },
        } as RunOptions & Partial<O>),
      ),
    );
    const failed = started.find((s) => s.status === "rejected");
    for (const [i, s] of started.entries()) {
      if (s.status !== "fulfilled") continue;
      const member = members[i] as string;
      const handle = s.value;
      replicas.push({
        member,
        done: handle.done,
        logs: handle.logs,
        waitForLog: handle.waitForLog,
        ...(handle.webhookCa === undefined ? {} : { webhookCa: handle.webhookCa }),
        stop: async () => {
          stopped.add(member);
          await handle.stop();
        },
      });
    }
    if (failed !== undefined) throw (failed as PromiseRejectedResult).reason;
    if (webhooks.length > 0 && front !== undefined) {
      await registerWebhookConfigurations(cluster.client, {
        name: first.name,
        labels: { "app.kubernetes.io/managed-by": "capstan-dev-testing" },
        webhooks,
        clientConfig: { url: `https://127.0.0.1:${front.port}`, caBundle },
      });
    }
    // Every member holds its Lease: the coordinator assigns among all of them from now on.
    await waitUntil(
      async () => {
        const leases = await cluster.client.resource(Lease, namespace).list();
        const held = new Set(leases.items.map((l) => `${l.metadata?.name}=${l.spec?.holderIdentity}`));
        return members.every((m) => held.has(`${memberLeaseName(ring, m)}=${m}`));
      },
      { what: `every replica of ${ring} holding its member Lease`, timeout: cluster.waitTimeout },
    );
  } catch (err) {
    await Promise.all(replicas.map((r) => r.stop()));
    await removeWebhooks();
    throw err;
  }

  let stopping: Promise<void> | undefined;
  return {
    ring,
    shardLabel,
    replicas,
    replicaOf: (obj) => replicas.find((r) => r.member === obj.metadata?.labels?.[shardLabel]),
    running: () => replicas.filter((r) => !stopped.has(r.member)),
    stop: () => {
      stopping ??= (async () => {
        await Promise.all(replicas.map((r) => r.stop()));
        await removeWebhooks();
      })();
      return stopping;
    },
  };
}
