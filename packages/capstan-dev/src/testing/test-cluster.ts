/**
 * `startTestCluster`: a cluster for an operator's tests, with a client, a kubeconfig file for
 * kubectl, operators run against it, and watch-based waits. By default the embedded API server,
 * started in-process; with `backend: "kubeconfig"` (or `CAPSTAN_TEST_BACKEND=kubeconfig`) an existing
 * cluster, in a namespace of the run's own (backends/kubeconfig-backend.ts); with `backend: "envtest"`
 * a kube-apiserver and etcd from `KUBEBUILDER_ASSETS` started for it (backends/envtest-backend.ts).
 *
 * ## Expected flow
 * ```ts
 * const cluster = await startTestCluster();                 // random port, real HTTPS
 * await cluster.run(op);                                     // resolves once its CRDs are served
 * await cluster.client.resource(ExchangeRate).create(ExchangeRate.make({ ... }));
 * await cluster.waitFor(ConfigMap, "default/usd", (cm) => cm.data?.rate !== undefined);
 * await cluster.stop();                                      // in afterEach / afterAll
 * ```
 *
 * ## Guarantees
 * - `stop()` stops every operator started with `run` (each gets its graceful shutdown), kills
 *   kubectl commands still running, closes the clients, stops the embedded server (or, on the
 *   kubeconfig backend, deletes what the run created and waits until it is gone; on the envtest
 *   backend, stops its processes and removes their folder) and removes the
 *   kubeconfig's temporary folder; afterwards nothing of the cluster holds a timer, socket or file.
 *   It may be called more than once.
 * - When an operator started with `run` fails (its `start` rejects) after `run` resolved, every
 *   `cluster.waitFor` in progress or started later rejects with that failure instead of timing
 *   out. One that fails before (CRDs not served) rejects `run` instead.
 *
 * - RBAC is on, as on every real cluster: `cluster.client` (and `cluster.kubectl`) are the admin,
 *   in system:masters; a ServiceAccount's client (`cluster.serviceAccount`) may do what its bindings
 *   grant; a request without a token is system:anonymous.
 *
 * - On every backend the same API; what only the embedded server has (`faults`, `server`, `kubelet`)
 *   throws a `CapabilityError` naming the backend elsewhere (`capabilities` says beforehand, and
 *   whether pods run there). What the server's Kubernetes version serves, `missingApi` asks its
 *   discovery; who the admin is, `whoami` asks the server on every version.
 *
 * - Time travel: with `clock: "manual"` (or a {@link ManualClock} of the test's), every operator
 *   `run` starts follows that clock, and `advance(duration)` moves it: it waits until the operators
 *   are idle (`whenIdle`), fires what falls due in due order, waiting for them again after each
 *   due time, and resolves once they are idle at the new time. Idle is each operator's own
 *   `whenIdle`: caches synced, nothing queued or being handled, no daemon at work outside
 *   `ctx.sleep`, and every write of the cluster's client and the operator's seen by the informers
 *   that will see it. Nothing in it sleeps for a guessed time.
 *
 * ## Caveats
 * - The embedded server is the devcluster: what it does not emulate is listed in docs/limitations.md.
 * - Operators run in the test's process and share its event loop; a handler that blocks the loop
 *   blocks the server too.
 * - The manual clock is the operators' only: the API server's timestamps (creationTimestamp, a
 *   Lease's renewTime written by the server) and its own controllers (garbage collection, the
 *   simulated kubelet) keep real time, and `advance` does not wait for what they do later.
 * - Under a manual clock nothing the operators schedule by the clock happens until the test
 *   advances it: a reconcile that failed (a conflict) is retried only after `advance` past its
 *   backoff (5 ms the first time; `advance("1s")` is plenty).
 */
import { setMaxListeners } from "node:events";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Duration, KubeObject, ResourceKind, ShardingConfig } from "capstan";
import { isAlreadyExists, type KubeClient, toMilliseconds } from "capstan";
import { CustomResourceDefinition, Namespace, ServiceAccount } from "capstan/core";
import {
  CAPSTAN_BIN,
  createCertificateAuthority,
  issueServingCertificate,
  registerWebhookConfigurations,
  removeWebhookConfigurations,
} from "capstan/internal";
import { type Clock, systemClock } from "capstan/runtime";
import type { CustomResourceDefinition as CustomResourceDefinitionObject } from "kubernetes-types/apiextensions/v1.d.ts";
import type { Logger } from "pino";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import type { KubeletHandle } from "../devcluster/controllers/kubelet.ts";
import type { AccessRecorder, ApiServer, ApiServerOptions } from "../devcluster/index.ts";
import { selectBackend, type TestBackendName } from "./backends/backend-selection.ts";
import { CapabilityError, type TestCapabilities, type TestCapability } from "./backends/capabilities.ts";
import { startEmbeddedBackend } from "./backends/embedded-backend.ts";
import { type EnvtestBackendOptions, startEnvtestBackend } from "./backends/envtest-backend.ts";
import { connectKubeconfigBackend, type KubeconfigBackendOptions } from "./backends/kubeconfig-backend.ts";
import { trackingKubectl } from "./backends/kubectl-creations.ts";
import { ServedApis } from "./backends/served-apis.ts";
import type { TestBackend } from "./backends/test-backend.ts";
import { type AuthenticatedUser, whoami } from "./backends/whoami.ts";
import { type GeneratedRbac, generatedRbac } from "./generated-rbac.ts";
import { commandRunner, type KubectlOptions, type KubectlResult, kubectlRunner } from "./kubectl.ts";
import { logCapture, waitForRecord } from "./log-capture.ts";
import { ManualClock } from "./manual-clock.ts";
import {
  type ObservedAccessView,
  observedAccessOf,
  type RbacReport,
  rbacReportOf,
  writeAccessReport,
  writeAccessReportFromEnv,
} from "./observed-access.ts";
import type { RunnableOperator, RunningOperator, RunOptions } from "./operator-run.ts";
import { runSharded, type ShardedRun, type ShardedRunOptions } from "./sharded-run.ts";
import {
  DEFAULT_WAIT_TIMEOUT,
  isEstablished,
  type WaitForOptions,
  waitFor,
  waitForDeletion,
  waitUntil,
} from "./wait-for.ts";

/**
 * Graceful shutdown allowed to an operator `run` started (unless its options say otherwise): a
 * reconcile still running after this is stuck, and the operator's own 30 s default would outlast
 * a test runner's usual 30 s hook timeout, hiding the stuck handler behind a hook timeout.
 */
export const TEST_GRACEFUL_SHUTDOWN = "5s";

/** The operator's webhook server listens on 127.0.0.1; its certificate names loopback every way a test may call it. */
const LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "::1"];

/** `capstan` commands load TypeScript through tsx (about a second); one that runs this long is stuck. */
export const DEFAULT_CAPSTAN_TIMEOUT: Duration = "60s";

/**
 * How long dependents may take to go after their owner on a real cluster: kube-controller-manager's
 * garbage collector learns a kind from discovery every 30 s (its `Sync` period, fixed in
 * startGarbageCollectorController), so the dependents of a kind whose CRD was created a moment ago
 * may wait that long before the collector even watches the kind; the rest is margin for a loaded
 * machine. The embedded server's collector knows every kind at once: there the default wait applies.
 */
export const REAL_CLUSTER_GARBAGE_COLLECTION_TIMEOUT: Duration = "60s";

/** The cluster's timeouts for what takes longer on a real cluster: `cluster.timeouts`. */
export interface TestTimeouts {
  /** Default of `waitFor`, `waitForDeletion` and `run`'s wait for CRDs (same as `cluster.waitTimeout`). */
  readonly wait: Duration;
  /**
   * How long to wait for garbage collection (`waitForDeletion` of a dependent, `kubectl wait
   * --for=delete`): {@link DEFAULT_WAIT_TIMEOUT} on the embedded backend,
   * {@link REAL_CLUSTER_GARBAGE_COLLECTION_TIMEOUT} on a real cluster.
   */
  readonly garbageCollection: Duration;
}

/** Options of {@link startTestCluster}. */
export interface TestClusterOptions {
  /**
   * Where the cluster comes from: `"embedded"` (default: the embedded API server in this process),
   * `"kubeconfig"` (an existing cluster, see {@link kubeconfig}) or `"envtest"` (kube-apiserver and
   * etcd from `KUBEBUILDER_ASSETS`, started for this cluster, see {@link envtest}); default the
   * `CAPSTAN_TEST_BACKEND` environment variable, else `"embedded"`. Any other name is an error.
   */
  backend?: TestBackendName;
  /**
   * The kubeconfig backend's cluster (default `CAPSTAN_TEST_KUBECONFIG` and `CAPSTAN_TEST_CONTEXT`),
   * the prefix of the run's namespace, when earlier runs count as crashed, how long `stop()` waits.
   */
  kubeconfig?: KubeconfigBackendOptions;
  /**
   * The envtest backend's binaries (default `KUBEBUILDER_ASSETS`), whether kube-controller-manager
   * runs, start and stop timeouts, extra flags, the prefix of the run's namespace.
   */
  envtest?: EnvtestBackendOptions;
  /**
   * Log level of the operators `run` starts when no logger is given: default `"silent"` (test output
   * stays readable), or the `CAPSTAN_TEST_LOG` environment variable (`CAPSTAN_TEST_LOG=debug npx vitest`).
   */
  logLevel?: string;
  /** Run the simulated kubelet and workload controllers (default true): pods become Running. */
  kubelet?: boolean;
  /**
   * Give every namespace its `default` ServiceAccount and `kube-root-ca.crt` ConfigMap, as a real
   * cluster's controllers do (default false: tests that count a namespace's objects see only theirs).
   */
  namespaceDefaults?: boolean;
  /**
   * More options of the embedded API server (embedded backend only), for tests of the server itself: `builtinPlugins: false`
   * (the bare REST layer), `historySize`, `bookmarkIntervalMs`, `dataDir`, extra `plugins`, kubelet
   * delays (`kubelet: { readyDelayMs: 10 }`), a `kubeconfigPath` of the test's choosing (then
   * `cluster.kubeconfigPath`). `kubelet` and `namespaceDefaults` given beside `server` win over the
   * same options inside it; `port` defaults to 0 (a free one). `rbac: false` (AlwaysAllow, which no
   * real cluster runs) is only for tests of the bare REST layer.
   */
  server?: ApiServerOptions;
  /**
   * CustomResourceDefinitions created before `startTestCluster` resolves, each waited for until
   * Established (its kind is served): tests can create objects of these kinds before any operator
   * has started, as envtest's `CRDs` option does (`crds: [toCrd(ExchangeRate)]`).
   */
  crds?: readonly CustomResourceDefinitionObject[];
  /**
   * The clock of the operators `run` starts: `"manual"` for a {@link ManualClock} at the real time
   * now (then `cluster.advance` moves it), a clock of the test's own (a `ManualClock` starting at
   * a date of its choosing), or the system's (default). A `clock` in `run`'s options wins.
   */
  clock?: "manual" | Clock;
}

export type { RunnableOperator, RunningOperator, RunOptions } from "./operator-run.ts";

/** A ServiceAccount of the cluster and the credentials to act as it. */
export interface ServiceAccountIdentity {
  /** `system:serviceaccount:<namespace>:<name>` */
  readonly username: string;
  /** A client authenticated with a token issued to the ServiceAccount (closed by `cluster.stop()`). */
  readonly client: KubeClient;
  /** A kubeconfig file with that token (`kubectl --kubeconfig`, `capstan run --kubeconfig`). */
  readonly kubeconfigPath: string;
}

/** A running test cluster; see the module documentation. */
export interface TestCluster {
  /** A client with the cluster's admin credentials; its default namespace is {@link namespace}. */
  readonly client: KubeClient;
  /** `https://127.0.0.1:<port>`, or the existing cluster's URL. */
  readonly url: string;
  /** The backend this cluster runs on and what it can do beyond the Kubernetes API. */
  readonly capabilities: TestCapabilities;
  /**
   * The namespace for the test's objects, also the default of `client` and `kubectl`: `default` on
   * the embedded backend; on the kubeconfig and envtest backends one made for this run
   * (`capstan-test-<id>`), deleted by `stop()`.
   */
  readonly namespace: string;
  /**
   * Default timeout of `waitFor`, `waitForDeletion` and `run`'s wait for CRDs:
   * {@link DEFAULT_WAIT_TIMEOUT} on the embedded backend, three times that on a real cluster.
   */
  readonly waitTimeout: Duration;
  /** Timeouts of what takes longer on a real cluster (garbage collection); see {@link TestTimeouts}. */
  readonly timeouts: TestTimeouts;
  /**
   * Whether the API server serves `resource` (plural, or `plural/subresource`) in `groupVersion`
   * (`"v1"` for the core group), from its discovery documents.
   */
  serves(groupVersion: string, resource: string): Promise<boolean>;
  /**
   * Why a test that needs `resource` of `groupVersion` cannot run on this cluster, naming the API,
   * the backend and the server's Kubernetes version; `undefined` when it is served. For a skip:
   * `ctx.skip(reason !== undefined, reason)`.
   *
   * ```ts
   * const noPolicies = await cluster.missingApi("admissionregistration.k8s.io/v1", "validatingadmissionpolicies");
   * ```
   */
  missingApi(groupVersion: string, resource: string): Promise<string | undefined>;
  /**
   * Who `client` and `kubectl` are, as the API server authenticates them (`kubectl auth whoami`, on
   * every Kubernetes version: SelfSubjectReview where served, else TokenReview of the admin's token,
   * else the client certificate's subject).
   */
  whoami(): Promise<AuthenticatedUser>;
  /** The kubeconfig YAML (CA, URL, admin token). */
  readonly kubeconfig: string;
  /** The kubeconfig written to a temporary file, for kubectl (`kubectl --kubeconfig <path>`). */
  readonly kubeconfigPath: string;
  /**
   * The cluster's temporary folder (the kubeconfig's, kubectl's caches), removed by `stop()`: a
   * place for the test's own files (`kubectl apply -f <dir>/crd.yaml`, a `KUBE_EDITOR` script).
   */
  readonly dir: string;
  /**
   * The devcluster's fault-injection handle: fail the next N requests or a fraction of them with
   * 500 or 429, add latency, drop watches, compact history (410s), restart (docs/faults.md).
   * Embedded backend only: elsewhere reading it throws a `CapabilityError`.
   */
  readonly faults: ApiServer["faults"];
  /**
   * The embedded API server itself: its CA (`caPem`), admin `token`, and `internals` (registry,
   * store, storage) for tests of the server's own behaviour. The internals are not a stable API.
   * Embedded backend only: elsewhere reading it throws a `CapabilityError`.
   */
  readonly server: ApiServer;
  /**
   * Runs `op` against the cluster until `stop()` (of the operator or of the cluster). Resolves once
   * the CRDs the operator registers are served; rejects if the operator fails before that.
   */
  run<O>(op: RunnableOperator<O>, options?: RunOptions & Partial<O>): Promise<RunningOperator>;
  /**
   * Runs an operator as `replicas` (default 3) sharded replicas, each an operator `makeOperator`
   * returns for its member name, started as `run` starts one, with `sharding` and
   * `leaderElection` in the cluster's namespace (docs/runtime.md, "Sharding"). Resolves once every
   * replica holds its member Lease; each can then be stopped alone and the others take its objects
   * over. Webhooks are served by every replica behind one address (see sharded-run.ts).
   *
   * ```ts
   * const sharded = await cluster.runSharded(() => myOperator(), { replicas: 3 });
   * await sharded.replicas[0]?.stop();
   * ```
   */
  runSharded<O>(
    makeOperator: (member: string) => RunnableOperator<O>,
    options?: ShardedRunOptions & RunOptions & Partial<O>,
  ): Promise<ShardedRun>;
  /**
   * The operators' clock (see {@link TestClusterOptions.clock}): a {@link ManualClock} with
   * `clock: "manual"`, else the system's.
   */
  readonly clock: Clock;
  /**
   * Moves the manual clock forward by `duration` (`"1m"`, ms) and waits until every operator `run`
   * started is idle again: first at the current time (so what the test just wrote is handled
   * now), then after each due time on the way, in due order, and at the new time (see the module
   * documentation). `timeout` (real time, default {@link waitTimeout}) bounds each of those waits;
   * one that runs out rejects with a `NotIdleError` naming what was busy. Rejects when an
   * operator fails, like `waitFor`.
   *
   * @throws Error (rejected) when the cluster's clock is not a ManualClock.
   */
  advance(duration: Duration, options?: ClusterIdleOptions): Promise<void>;
  /**
   * Resolves once every operator `run` started is idle at the same moment (see {@link advance}),
   * without moving any clock: after creating objects, instead of waiting for an effect.
   */
  whenIdle(options?: ClusterIdleOptions): Promise<void>;
  /** {@link waitFor} with this cluster's client; also rejects when an operator it runs fails. */
  waitFor<T extends KubeObject>(
    kind: ResourceKind<T>,
    key: string,
    predicate: (obj: T) => boolean,
    options?: WaitForOptions,
  ): Promise<T>;
  /**
   * Runs the real `kubectl` against the cluster (`cluster.kubectl(["apply", "-f", "-"], { stdin })`).
   * A non-zero exit is a result: check `code` and `stderr`.
   */
  kubectl(args: readonly string[], options?: KubectlOptions): Promise<KubectlResult>;
  /**
   * Runs the `capstan` CLI in a child process with `KUBECONFIG` set to the cluster's, e.g.
   * `cluster.capstan(["generate", "rbac", "./operator.ts"])`. A non-zero exit is a result.
   */
  capstan(args: readonly string[], options?: KubectlOptions): Promise<KubectlResult>;
  /**
   * Credentials of the ServiceAccount `"<namespace>/<name>"`, created (with its namespace) when
   * missing, from a token the TokenRequest API issues (valid one hour). It may do what RBAC grants
   * it, and nothing else: bind it to roles (e.g. `capstan generate rbac`'s output applied with
   * `kubectl`), then `run(op, { client: sa.client })`.
   */
  serviceAccount(key: string): Promise<ServiceAccountIdentity>;
  /**
   * The RBAC `capstan generate rbac <operatorFile>` prints, ready to apply (whole, or with rules
   * edited away) and to run the operator as its ServiceAccount.
   */
  generatedRbac(
    operatorFile: string,
    options?: { namespace?: string; args?: readonly string[] },
  ): Promise<GeneratedRbac<ServiceAccountIdentity>>;
  /**
   * What `user` (a ServiceAccount's `system:serviceaccount:<ns>:<name>`, any username but the
   * admin's) did on the cluster so far: its distinct allowed and denied requests, and the RBAC rules
   * the allowed ones used (docs/rbac.md, "Observed RBAC").
   * Embedded backend only: elsewhere it throws a `CapabilityError` (capability `observedAccess`).
   */
  observedAccess(user: string): Promise<ObservedAccessView>;
  /**
   * The generated RBAC beside what its ServiceAccount did: the grants used, the grants never used,
   * and the requests no generated rule allows (`missing`). A request denied because the test edited
   * a rule away still counts as a use of that rule. Embedded backend only, as {@link observedAccess}.
   */
  rbacReport(rbac: GeneratedRbac<ServiceAccountIdentity>): Promise<RbacReport>;
  /**
   * Writes what `users` (default: everyone but the admin) did as the JSON report
   * `capstan generate rbac <operator> --observed <path>` reads. Embedded backend only, as
   * {@link observedAccess}. `CAPSTAN_RBAC_REPORT_DIR=<dir>` writes one at every `stop()` instead.
   */
  writeRbacReport(path: string, users?: readonly string[]): Promise<void>;
  /**
   * The simulated kubelet (absent with `{ kubelet: false }`): make a container exit (docs/kubelet.md).
   * Embedded backend only: elsewhere reading it throws a `CapabilityError`.
   */
  readonly kubelet: KubeletHandle | undefined;
  /** {@link waitForDeletion} with this cluster's client. */
  waitForDeletion(kind: ResourceKind, key: string, options?: WaitForOptions): Promise<void>;
  /**
   * Stops operators, commands and clients, then the embedded server, or on the kubeconfig backend
   * deletes what the run created and waits for it to be gone, or on the envtest backend stops its
   * control plane; see the module documentation.
   */
  stop(): Promise<void>;
}

/** Options of {@link TestCluster.advance} and {@link TestCluster.whenIdle}. */
export interface ClusterIdleOptions {
  /** Real time each wait for idleness may take (default the cluster's {@link TestCluster.waitTimeout}). */
  timeout?: Duration;
  /** Stops waiting: the promise rejects with the signal's reason. */
  signal?: AbortSignal;
}

/**
 * Starts a cluster for a test: by default the embedded Kubernetes API server in this process
 * (random port, HTTPS with its own CA, its built-in controllers: garbage collector, namespace
 * lifecycle, CRD lifecycle); with the kubeconfig backend, a namespace of its own on an existing
 * cluster; with the envtest backend, a control plane of its own. Stop it with `cluster.stop()` in
 * `afterEach`/`afterAll`.
 */
export async function startTestCluster(options: TestClusterOptions = {}): Promise<TestCluster> {
  const backendName = selectBackend(options.backend);
  if (backendName !== "embedded" && options.server !== undefined) {
    throw new CapabilityError("serverOptions", backendName);
  }
  const dir = await mkdtemp(join(tmpdir(), "capstan-test-cluster-"));
  let backend: TestBackend;
  try {
    backend =
      backendName === "kubeconfig"
        ? await connectKubeconfigBackend(options.kubeconfig ?? {}, dir)
        : backendName === "envtest"
          ? await startEnvtestBackend(options.envtest ?? {}, dir)
          : await startEmbeddedBackend({
              ...options,
              defaultKubeconfigPath: join(dir, "kubeconfig"),
            });
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  const { client, kubeconfigPath, rbac } = backend;
  const waitTimeout: Duration = `${toMilliseconds(DEFAULT_WAIT_TIMEOUT) * backend.waitScale}ms`;
  const timeouts: TestTimeouts = {
    wait: waitTimeout,
    garbageCollection: backend.server === undefined ? REAL_CLUSTER_GARBAGE_COLLECTION_TIMEOUT : DEFAULT_WAIT_TIMEOUT,
  };
  const apis = new ServedApis(client, backend.name);
  try {
    for (const crd of options.crds ?? []) {
      // On a shared cluster the CRD may exist already: used as it is, and left there at the end.
      await createIfMissing(() => client.resource(CustomResourceDefinition).create(crd));
    }
    await backend.useCrds?.((options.crds ?? []).map((crd) => crd.metadata?.name ?? ""));
    for (const crd of options.crds ?? []) {
      await waitFor(client, CustomResourceDefinition, crd.metadata?.name ?? "", isEstablished, {
        timeout: waitTimeout,
      });
    }
  } catch (err) {
    await backend.stop().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  const kubectlCommands = kubectlRunner(kubeconfigPath, dir);
  const { kubectlCreated } = backend;
  const kubectl =
    kubectlCreated === undefined
      ? kubectlCommands
      : trackingKubectl(kubectlCommands, (outcome) => kubectlCreated.call(backend, outcome));
  const capstan = commandRunner({
    binary: process.execPath,
    prefix: [CAPSTAN_BIN],
    env: { KUBECONFIG: kubeconfigPath },
    timeout: DEFAULT_CAPSTAN_TIMEOUT,
  });
  const extraClients: KubeClient[] = [];
  const logLevel = options.logLevel ?? process.env.CAPSTAN_TEST_LOG ?? "silent";
  const running = new Set<RunningOperator>();
  const shardedRuns = new Set<ShardedRun>();
  /** The operator each running handle runs, for `whenIdle`. */
  const operators = new Map<RunningOperator, RunnableOperator<never>>();
  const clock: Clock =
    options.clock === "manual" ? new ManualClock() : options.clock === undefined ? systemClock : options.clock;
  // Aborted with the error of the first operator that fails: waits reject with it at once.
  const failure = new AbortController();
  let stopping: Promise<void> | undefined;

  // Every wait listens to `failure`; dozens at once (Promise.all over many objects) are normal.
  setMaxListeners(0, failure.signal);

  const run = async <O>(
    op: RunnableOperator<O>,
    runOptions: RunOptions & Partial<O> = {},
  ): Promise<RunningOperator> => {
    if (stopping !== undefined) throw new Error("the test cluster is stopped");
    const { readyTimeout, client: opClient, ...startOptions } = runOptions;
    // Admission handlers need an HTTPS server: on loopback, a free port and a certificate made now
    // (controller-runtime's envtest does the same), unless the test set it up itself.
    let webhookCa: string | undefined;
    const converts = (op.conversions?.().length ?? 0) > 0;
    // With `sharding: { admission }`, the operator serves its shard assignment webhooks too.
    const webhooks = () => op.webhooks?.({ sharding: (startOptions as { sharding?: ShardingConfig }).sharding }) ?? [];
    if ((webhooks().length > 0 || converts) && !("webhookServer" in startOptions)) {
      const ca = createCertificateAuthority({ commonName: "capstan-dev/testing webhook CA" });
      webhookCa = ca.cert;
      Object.assign(startOptions, {
        webhookServer: { port: 0, host: "127.0.0.1", tls: issueServingCertificate(ca, { hosts: LOOPBACK_HOSTS }) },
        // The CRDs it registers call its conversion webhooks on the port it listens on.
        ...(converts && !("managedWebhooks" in startOptions)
          ? {
              managedWebhooks: {
                url: "https://127.0.0.1:{port}",
                caBundle: Buffer.from(ca.cert).toString("base64"),
                // Admission configurations are registered below, as the cluster's admin.
                configurations: false,
              },
            }
          : {}),
      });
    }
    // A CRD the operator finds on a shared cluster is kept for this run from now on (see useCrds).
    const crdNames = runOptions.registerCrds === false ? [] : (op.requirements?.().crds ?? []).map((c) => c.crdName);
    await backend.useCrds?.(crdNames);
    const abort = new AbortController();
    const capture = logCapture(logLevel);
    const logger = (runOptions.logger as Logger | undefined) ?? capture.logger;
    const done = op.start({
      gracefulShutdownTimeout: TEST_GRACEFUL_SHUTDOWN,
      ...(clock === systemClock ? {} : { clock }),
      // The test's writes through the cluster's client count for the operator's idleness too.
      ...(opClient === undefined || opClient === client ? {} : { idleAwaitsWritesOf: [client] }),
      ...(startOptions as O),
      client: opClient ?? client,
      signal: abort.signal,
      logger,
    });
    // Failed before ready: this rejects run() (the test sees it there); failed later: waits reject with it.
    const stopped = new AbortController();
    let ready = false;
    done.then(
      () => stopped.abort(new Error(`operator ${op.name} stopped`)),
      (err: unknown) => {
        const reason = new Error(`operator ${op.name} failed: ${err instanceof Error ? err.message : String(err)}`, {
          cause: err,
        });
        stopped.abort(reason);
        if (ready && !abort.signal.aborted && !failure.signal.aborted) failure.abort(reason);
      },
    );
    const handle: RunningOperator = {
      done,
      ...(webhookCa === undefined ? {} : { webhookCa }),
      logs: capture.records,
      waitForLog: (match, options) => waitForRecord(capture.records, match, options),
      stop: async () => {
        abort.abort();
        await done.catch(() => undefined);
        running.delete(handle);
        operators.delete(handle);
      },
    };
    running.add(handle);
    operators.set(handle, op as unknown as RunnableOperator<never>);
    try {
      for (const crd of runOptions.registerCrds === false ? [] : (op.requirements?.().crds ?? [])) {
        await waitFor(client, CustomResourceDefinition, crd.crdName, isEstablished, {
          timeout: readyTimeout ?? waitTimeout,
          signal: stopped.signal,
        });
      }
      // Served now, whoever created it: kept for this run (a no-op for the CRDs it created itself).
      await backend.useCrds?.(crdNames);
      if (webhookCa !== undefined) {
        await waitUntil(() => op.webhookPort !== undefined, {
          what: `operator ${op.name}'s webhook server`,
          timeout: readyTimeout ?? waitTimeout,
          signal: stopped.signal,
        });
        // Replaces one a crashed earlier run left behind.
        await registerWebhookConfigurations(client, {
          name: op.name,
          labels: { "app.kubernetes.io/managed-by": "capstan-dev-testing" },
          webhooks: webhooks(),
          clientConfig: {
            url: `https://127.0.0.1:${op.webhookPort}`,
            caBundle: Buffer.from(webhookCa).toString("base64"),
          },
        });
        const stopOperator = handle.stop;
        handle.stop = async () => {
          await stopOperator();
          await removeWebhookConfigurations(client, op.name);
        };
      }
      // Served CRDs are not enough: the operator's own registration may still fail (a 403 on a CRD
      // someone else created). Its failure rejects `registered`.
      if (runOptions.registerCrds !== false && op.registered !== undefined) {
        await op.registered.catch((err: unknown) => {
          throw new Error(`operator ${op.name} failed: ${err instanceof Error ? err.message : String(err)}`, {
            cause: err,
          });
        });
      }
    } catch (err) {
      await handle.stop();
      throw err;
    }
    ready = true;
    return handle;
  };

  const whenIdle = (opts: ClusterIdleOptions = {}): Promise<void> =>
    withSignals(opts.signal, failure.signal, async (signal) => {
      const timeout = opts.timeout ?? waitTimeout;
      for (;;) {
        const ops = [...operators.values()];
        for (const op of ops) {
          if (op.whenIdle === undefined)
            throw new Error(`operator ${op.name} cannot tell when it is idle (no whenIdle)`);
        }
        await Promise.all(ops.map((op) => op.whenIdle?.({ signal, timeout })));
        // One operator's work (a write) may have woken another meanwhile: idle means all at once.
        if (ops.every((op) => (op.busy?.() ?? []).length === 0)) return;
      }
    });

  const advance = async (duration: Duration, opts: ClusterIdleOptions = {}): Promise<void> => {
    if (!(clock instanceof ManualClock)) {
      throw new Error('cluster.advance needs a manual clock: startTestCluster({ clock: "manual" })');
    }
    await clock.advance(duration, { settle: () => whenIdle(opts) });
  };

  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      await Promise.all([...shardedRuns].map((r) => r.stop()));
      await Promise.all([...running].map((r) => r.stop()));
      await Promise.all([kubectl.stopAll(), capstan.stopAll()]);
      await Promise.all(extraClients.map((c) => c.close()));
      try {
        if (backend.server?.access !== undefined) await writeAccessReportFromEnv(backend.server.access);
        await backend.stop();
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    })();
    return stopping;
  };

  const serviceAccount = async (key: string): Promise<ServiceAccountIdentity> => {
    const [namespace, name, ...rest] = key.split("/");
    if (namespace === undefined || name === undefined || namespace === "" || name === "" || rest.length > 0) {
      throw new Error(`serviceAccount: expected "<namespace>/<name>", got ${JSON.stringify(key)}`);
    }
    if (!rbac) {
      throw new Error("serviceAccount: a cluster started with server: { rbac: false } issues no ServiceAccount tokens");
    }
    await createIfMissing(() => client.resource(Namespace).create({ metadata: { name: namespace } }));
    await createIfMissing(() => client.resource(ServiceAccount, namespace).create({ metadata: { name } }));
    // TokenRequest is a create on a subresource, which the typed client has no verb for.
    const review = await client.request<{ status: { token: string } }>(
      "POST",
      `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
      { body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 3600 } } },
    );
    const username = `system:serviceaccount:${namespace}:${name}`;
    const path = join(dir, `kubeconfig-${namespace}-${name}`);
    await writeFile(path, kubeconfigWithToken(backend.kubeconfig, username, review.status.token, namespace), {
      mode: 0o600,
    });
    const saClient = backend.newClient(path);
    extraClients.push(saClient);
    return { username, client: saClient, kubeconfigPath: path };
  };

  // What only the embedded server has: read elsewhere, it says which backend lacks it.
  const embeddedServer = (capability: TestCapability): ApiServer => {
    if (backend.server === undefined) throw new CapabilityError(capability, backend.name);
    return backend.server;
  };
  const recorder = (): AccessRecorder => {
    const access = embeddedServer("observedAccess").access;
    if (access === undefined) throw new Error("a cluster started with server: { rbac: false } records no access");
    return access;
  };
  return {
    client,
    url: backend.url,
    capabilities: backend.capabilities,
    namespace: backend.namespace,
    waitTimeout,
    timeouts,
    serves: (groupVersion, resource) => apis.serves(groupVersion, resource),
    missingApi: (groupVersion, resource) => apis.missing(groupVersion, resource),
    whoami: () => whoami(client, apis),
    kubeconfig: backend.kubeconfig,
    kubeconfigPath,
    dir,
    get faults() {
      return embeddedServer("faults").faults;
    },
    get server() {
      return embeddedServer("serverInternals");
    },
    run,
    runSharded: async (makeOperator, options) => {
      const sharded = await runSharded(
        { client, namespace: backend.namespace, waitTimeout, run },
        makeOperator,
        options,
      );
      shardedRuns.add(sharded);
      return sharded;
    },
    clock,
    advance,
    whenIdle,
    kubectl: (args, opts) => kubectl.run(args, opts),
    capstan: (args, opts) => capstan.run(args, opts),
    serviceAccount,
    generatedRbac: (file, opts = {}) =>
      generatedRbac(file, opts, {
        capstan: (args, o) => capstan.run(args, o),
        kubectl: (args, o) => kubectl.run(args, o),
        serviceAccount,
        beforeApply: (manifests) => backend.beforeApply(manifests),
      }),
    observedAccess: async (user) => observedAccessOf(recorder(), user),
    rbacReport: async (generated) =>
      rbacReportOf(
        observedAccessOf(recorder(), `system:serviceaccount:${generated.serviceAccount.replace("/", ":")}`),
        generated.rules,
      ),
    writeRbacReport: (path, users) => writeAccessReport(recorder(), path, users),
    get kubelet() {
      return embeddedServer("simulatedKubelet").kubelet;
    },
    waitFor: (kind, key, predicate, opts = {}) =>
      withSignals(opts.signal, failure.signal, (signal) =>
        waitFor(client, kind, key, predicate, { timeout: waitTimeout, ...opts, signal }),
      ),
    waitForDeletion: (kind, key, opts = {}) =>
      withSignals(opts.signal, failure.signal, (signal) =>
        waitForDeletion(client, kind, key, { timeout: waitTimeout, ...opts, signal }),
      ),
    stop,
  };
}

async function createIfMissing(create: () => Promise<unknown>): Promise<void> {
  try {
    await create();
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
  }
}

/** The admin kubeconfig with its user replaced by `username` holding `token`, in `namespace`. */
function kubeconfigWithToken(admin: string, username: string, token: string, namespace: string): string {
  const config = parseYaml(admin) as {
    contexts: { name: string; context: { cluster: string; user: string; namespace?: string } }[];
    users: { name: string; user: Record<string, unknown> }[];
    "current-context": string;
  };
  const context = config.contexts.find((c) => c.name === config["current-context"]) ?? config.contexts[0];
  if (context === undefined) throw new Error("the cluster's kubeconfig has no context");
  config.users = [{ name: username, user: { token } }];
  config.contexts = [{ name: username, context: { cluster: context.context.cluster, user: username, namespace } }];
  config["current-context"] = username;
  return stringifyYaml(config);
}

/**
 * Runs `fn` with a signal aborted when `outer` or `failure` aborts, and detaches from both when it
 * settles (a long-lived cluster signal must not collect one listener per finished wait).
 */
async function withSignals<R>(
  outer: AbortSignal | undefined,
  failure: AbortSignal,
  fn: (signal: AbortSignal) => Promise<R>,
): Promise<R> {
  const combined = new AbortController();
  const sources = outer === undefined ? [failure] : [outer, failure];
  const listeners = sources.map((source) => {
    const onAbort = () => combined.abort(source.reason);
    if (source.aborted) onAbort();
    else source.addEventListener("abort", onAbort, { once: true });
    return () => source.removeEventListener("abort", onAbort);
  });
  try {
    return await fn(combined.signal);
  } finally {
    for (const remove of listeners) remove();
  }
}
