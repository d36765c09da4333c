/**
 * What a test backend can do beyond the Kubernetes API. The embedded server is in the test's own
 * process, so a test can inject faults into it, compact its history, read its internals and make
 * its simulated kubelet's containers exit; a real cluster offers none of that. The envtest
 * backend's control plane garbage-collects and deletes namespaces only when kube-controller-manager
 * runs beside kube-apiserver, and runs no pod at all (no scheduler, no kubelet). Whether pods run on
 * an existing cluster (kubeconfig backend) is asked of it when the cluster starts: is a Node Ready?
 * A test that needs one of these asks first and skips with a reason the runner shows; one that does
 * not ask gets a {@link CapabilityError} naming the backend that lacks it (for what only the
 * embedded server has), or waits in vain (pods that never run), never a silent no-op.
 *
 * ```ts
 * const reason = missingCapability("faults"); // undefined on the embedded backend
 * it.skipIf(reason !== undefined)(`retries a 500 ${reason ?? ""}`, ...);
 * it("retries a 500", (ctx) => { ctx.skip(reason !== undefined, reason); ... });
 * // Known once a cluster has started (detected on the kubeconfig backend):
 * it("runs the pod", (ctx) => {
 *   const noPods = missingCapability("runningPods", cluster.capabilities);
 *   ctx.skip(noPods !== undefined, noPods);
 * });
 * ```
 *
 * The Kubernetes API itself differs between versions too (a group or resource not served yet, or
 * behind a feature gate): `cluster.missingApi(groupVersion, resource)` asks the server's discovery.
 */
import { selectBackend, type TestBackendName } from "./backend-selection.ts";
import { controllerManagerInAssets } from "./envtest-control-plane.ts";

/** A feature only some backends have. */
export type TestCapability =
  | "faults"
  | "compaction"
  | "serverInternals"
  | "simulatedKubelet"
  | "serverOptions"
  | "observedAccess"
  | "garbageCollection"
  | "namespaceDeletion"
  | "runningPods"
  | "ownCluster";

/** What one backend can do: `cluster.capabilities`, or {@link capabilitiesOf} before a cluster starts. */
export interface TestCapabilities extends Readonly<Record<TestCapability, boolean>> {
  readonly backend: TestBackendName;
  /**
   * Why each capability the backend lacks is missing, where that depends on the cluster rather than
   * the backend (`runningPods` on the kubeconfig backend: `no Node is Ready`). {@link missingCapability}
   * uses it in its message.
   */
  readonly reasons?: Readonly<Partial<Record<TestCapability, string>>>;
}

/** What each capability is, as the member a test uses: the subject of the error and skip messages. */
const DESCRIPTIONS: Readonly<Record<TestCapability, string>> = {
  faults: "fault injection (cluster.faults)",
  compaction: "history compaction (cluster.faults.compact)",
  serverInternals: "the API server's internals (cluster.server)",
  simulatedKubelet: "the simulated kubelet (cluster.kubelet)",
  serverOptions: "the embedded server's options (startTestCluster({ server }))",
  observedAccess: "the requests each user made (cluster.observedAccess, cluster.rbacReport)",
  garbageCollection: "garbage collection (dependents deleted with their owner)",
  namespaceDeletion: "namespace deletion (a deleted namespace's content removed, then the namespace)",
  runningPods: "running pods (pods scheduled to a Ready Node and their containers started)",
  ownCluster: "a cluster of its own for each TestCluster (a new one holds no other run's CRDs or objects)",
};

const EMBEDDED_ONLY: readonly TestCapability[] = [
  "faults",
  "compaction",
  "serverInternals",
  "simulatedKubelet",
  "serverOptions",
  "observedAccess",
];

/** What kube-controller-manager does for a cluster; the envtest backend runs it only when its binary is there. */
const CONTROLLER_MANAGER: readonly TestCapability[] = ["garbageCollection", "namespaceDeletion"];

/** Why the kubeconfig backend's TestClusters are not clusters of their own. */
const SHARED_CLUSTER = "every TestCluster is a namespace on the one existing cluster, shared with other runs";

/** Why the envtest backend runs no pod. */
const ENVTEST_NO_PODS = "its control plane runs no scheduler and no kubelet, so pods stay Pending";

/** Options of {@link capabilitiesOf}: what only a started cluster knows. */
export interface CapabilityFacts {
  /** envtest: whether kube-controller-manager runs (default: whether `KUBEBUILDER_ASSETS` holds it). */
  controllerManager?: boolean;
  /**
   * Whether pods run: the embedded server's simulated kubelet runs (default true there), a Node of the
   * kubeconfig backend's cluster is Ready (detected at start; no default). Always false on envtest.
   */
  runningPods?: boolean;
  /** Why `runningPods` is false, when it is (kubeconfig backend: what the Nodes showed). */
  runningPodsReason?: string;
}

/**
 * The capabilities of `backend`. For envtest, `controllerManager` says whether kube-controller-manager
 * runs; default: whether `KUBEBUILDER_ASSETS` holds it (a started cluster's `capabilities` is exact).
 * @throws Error for the kubeconfig backend without `runningPods`: only a started cluster knows it.
 */
export function capabilitiesOf(backend: TestBackendName, facts: CapabilityFacts = {}): TestCapabilities {
  const embedded = backend === "embedded";
  const controllers = backend !== "envtest" || (facts.controllerManager ?? controllerManagerInAssets());
  const runningPods = backend === "envtest" ? false : (facts.runningPods ?? (embedded ? true : undefined));
  if (runningPods === undefined) throw new DetectedCapabilityError("runningPods", backend);
  const reason = runningPods ? undefined : (facts.runningPodsReason ?? defaultReason("runningPods", backend));
  return {
    backend,
    ...(Object.fromEntries([
      ...EMBEDDED_ONLY.map((c) => [c, embedded]),
      ...CONTROLLER_MANAGER.map((c) => [c, controllers]),
    ]) as Record<Exclude<TestCapability, "runningPods" | "ownCluster">, boolean>),
    runningPods,
    ownCluster: backend !== "kubeconfig",
    ...(reason === undefined ? {} : { reasons: { runningPods: reason } }),
  };
}

/**
 * Why `capability` is missing, for a skip message (`needs <what>, which the <backend> backend lacks:
 * <why>`); `undefined` when it is there. `from` is a started cluster's `capabilities` (exact), or a
 * backend's name (default: the one `startTestCluster()` would choose from the environment).
 * @throws Error for `runningPods` asked by the name `"kubeconfig"`: whether an existing cluster runs
 *   pods is detected when it starts, so pass `cluster.capabilities`.
 */
export function missingCapability(
  capability: TestCapability,
  from: TestBackendName | TestCapabilities = selectBackend(undefined),
): string | undefined {
  const capabilities = typeof from === "string" ? staticCapabilities(capability, from) : from;
  if (capabilities[capability]) return undefined;
  const why = capabilities.reasons?.[capability] ?? defaultReason(capability, capabilities.backend);
  return `needs ${DESCRIPTIONS[capability]}, which the ${capabilities.backend} backend lacks: ${why}`;
}

function staticCapabilities(capability: TestCapability, backend: TestBackendName): TestCapabilities {
  if (capability === "runningPods" && backend === "kubeconfig") throw new DetectedCapabilityError(capability, backend);
  return capabilitiesOf(backend, backend === "kubeconfig" ? { runningPods: false } : {});
}

function defaultReason(capability: TestCapability, backend: TestBackendName): string {
  if (CONTROLLER_MANAGER.includes(capability)) {
    return "kube-controller-manager is not in KUBEBUILDER_ASSETS beside kube-apiserver";
  }
  if (capability === "runningPods") {
    return backend === "envtest" ? ENVTEST_NO_PODS : "the cluster was started with kubelet: false";
  }
  if (capability === "ownCluster") return SHARED_CLUSTER;
  return "only the embedded backend has it";
}

/** A capability detected when a cluster starts was asked of a backend's name. */
class DetectedCapabilityError extends Error {
  override readonly name = "DetectedCapabilityError";
  constructor(capability: TestCapability, backend: TestBackendName) {
    super(
      `whether the ${backend} backend has ${DESCRIPTIONS[capability]} is asked of the cluster when it starts: ` +
        `read cluster.capabilities.${capability}, or missingCapability("${capability}", cluster.capabilities)`,
    );
  }
}

/** A test used a feature its backend lacks. */
export class CapabilityError extends Error {
  override readonly name = "CapabilityError";
  constructor(
    readonly capability: TestCapability,
    readonly backend: TestBackendName,
  ) {
    super(
      `${DESCRIPTIONS[capability]} is not available on the ${backend} backend: only the embedded backend has it ` +
        `(ask cluster.capabilities.${capability}, or missingCapability("${capability}"), and skip the test)`,
    );
  }
}
