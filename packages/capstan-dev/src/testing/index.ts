/**
 * `capstan-dev/testing`: end-to-end tests for operators, against the embedded Kubernetes API server
 * started in the test's own process (milliseconds, random port, real HTTPS, real kubectl works).
 *
 * ```ts
 * import { afterAll, beforeAll, it } from "vitest";
 * import { ConfigMap } from "capstan/core";
 * import { startTestCluster, type TestCluster } from "capstan-dev/testing";
 * import op, { ExchangeRate } from "./operator.ts";
 *
 * let cluster: TestCluster;
 * beforeAll(async () => {
 *   cluster = await startTestCluster();
 *   await cluster.run(op);
 * });
 * afterAll(() => cluster.stop());
 *
 * it("writes the rate into a ConfigMap", async () => {
 *   await cluster.client.resource(ExchangeRate).create(
 *     ExchangeRate.make({ metadata: { name: "usd", namespace: "default" }, spec: { currency: "USD" } }),
 *   );
 *   await cluster.waitFor(ConfigMap, "default/usd", (cm) => cm.data?.rate !== undefined, { timeout: "5s" });
 * });
 * ```
 *
 * Operator logs are silent unless `CAPSTAN_TEST_LOG=<level>` is set. The same tests run against an
 * existing cluster with `CAPSTAN_TEST_BACKEND=kubeconfig CAPSTAN_TEST_KUBECONFIG=<file>`, each
 * TestCluster in a namespace of its own (`cluster.namespace`) that `stop()` deletes.
 */

export { TEST_BACKENDS, type TestBackendName } from "./backends/backend-selection.ts";
export {
  CapabilityError,
  type CapabilityFacts,
  capabilitiesOf,
  missingCapability,
  type TestCapabilities,
  type TestCapability,
} from "./backends/capabilities.ts";
export type { EnvtestBackendOptions } from "./backends/envtest-backend.ts";
export {
  DEFAULT_STALE_AFTER,
  DEFAULT_TEARDOWN_TIMEOUT,
  type KubeconfigBackendOptions,
} from "./backends/kubeconfig-backend.ts";
export { RUN_LABEL, STARTED_LABEL } from "./backends/run-labels.ts";
export type { AuthenticatedUser } from "./backends/whoami.ts";
export { ConsistentlyError, type ConsistentlyOptions, consistently } from "./consistently.ts";
export type { GeneratedManifest, GeneratedRbac, GeneratedRule } from "./generated-rbac.ts";
export { DEFAULT_KUBECTL_TIMEOUT, type KubectlOptions, type KubectlResult } from "./kubectl.ts";
export { LOG_CAPTURE_LIMIT, type LogRecord } from "./log-capture.ts";
export { type AdvanceOptions, MAX_FIRINGS_AT_ONE_TIME, ManualClock } from "./manual-clock.ts";
export {
  type ObservedAccessView,
  RBAC_REPORT_DIR_ENV,
  type RbacReport,
} from "./observed-access.ts";
export {
  type ShardedReplica,
  type ShardedRun,
  type ShardedRunOptions,
  TEST_SHARDING_TIMINGS,
} from "./sharded-run.ts";
export {
  type ClusterIdleOptions,
  DEFAULT_CAPSTAN_TIMEOUT,
  REAL_CLUSTER_GARBAGE_COLLECTION_TIMEOUT,
  type RunnableOperator,
  type RunningOperator,
  type RunOptions,
  type ServiceAccountIdentity,
  startTestCluster,
  type TestCluster,
  type TestClusterOptions,
  type TestTimeouts,
} from "./test-cluster.ts";
export {
  DEFAULT_WAIT_TIMEOUT,
  isEstablished,
  WAIT_UNTIL_INTERVAL_MS,
  type WaitForOptions,
  WaitForTimeoutError,
  type WaitUntilOptions,
  waitFor,
  waitForDeletion,
  waitUntil,
} from "./wait-for.ts";
