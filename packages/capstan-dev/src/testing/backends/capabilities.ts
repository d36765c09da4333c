/**
 * What a test backend can do beyond the Kubernetes API. The embedded server is in the test's own
 * process, so a test can inject faults into it, compact its history, read its internals and make
 * its simulated kubelet's containers exit; a real cluster offers none of that. The envtest
 * backend's control plane garbage-collects and deletes namespaces only when kube-controller-manager
 * runs beside kube-apiserver. A test that needs
 * one of these asks first and skips with a reason the runner shows; one that does not ask gets a
 * {@link CapabilityError} naming the backend that lacks it, never a silent no-op.
 *
 * ```ts
 * const reason = missingCapability("faults"); // undefined on the embedded backend
 * it.skipIf(reason !== undefined)(`retries a 500 ${reason ?? ""}`, ...);
 * it("retries a 500", (ctx) => { ctx.skip(reason !== undefined, reason); ... });
 * ```
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
  | "garbageCollection"
  | "namespaceDeletion";

/** What one backend can do: `cluster.capabilities`, or {@link capabilitiesOf} before a cluster starts. */
export interface TestCapabilities extends Readonly<Record<TestCapability, boolean>> {
  readonly backend: TestBackendName;
}

/** What each capability is, as the member a test uses: the subject of the error and skip messages. */
const DESCRIPTIONS: Readonly<Record<TestCapability, string>> = {
  faults: "fault injection (cluster.faults)",
  compaction: "history compaction (cluster.faults.compact)",
  serverInternals: "the API server's internals (cluster.server)",
  simulatedKubelet: "the simulated kubelet (cluster.kubelet)",
  serverOptions: "the embedded server's options (startTestCluster({ server }))",
  garbageCollection: "garbage collection (dependents deleted with their owner)",
  namespaceDeletion: "namespace deletion (a deleted namespace's content removed, then the namespace)",
};

const EMBEDDED_ONLY: readonly TestCapability[] = [
  "faults",
  "compaction",
  "serverInternals",
  "simulatedKubelet",
  "serverOptions",
];

/** What kube-controller-manager does for a cluster; the envtest backend runs it only when its binary is there. */
const CONTROLLER_MANAGER: readonly TestCapability[] = ["garbageCollection", "namespaceDeletion"];

/**
 * The capabilities of `backend`. For envtest, `controllerManager` says whether kube-controller-manager
 * runs; default: whether `KUBEBUILDER_ASSETS` holds it (a started cluster's `capabilities` is exact).
 */
export function capabilitiesOf(
  backend: TestBackendName,
  options: { controllerManager?: boolean } = {},
): TestCapabilities {
  const embedded = backend === "embedded";
  const controllers = backend !== "envtest" || (options.controllerManager ?? controllerManagerInAssets());
  return {
    backend,
    ...(Object.fromEntries([
      ...EMBEDDED_ONLY.map((c) => [c, embedded]),
      ...CONTROLLER_MANAGER.map((c) => [c, controllers]),
    ]) as Record<TestCapability, boolean>),
  };
}

/**
 * Why `capability` is missing on `backend` (default: the one `startTestCluster()` would choose from
 * the environment), for a skip message; `undefined` when the backend has it.
 */
export function missingCapability(
  capability: TestCapability,
  backend: TestBackendName = selectBackend(undefined),
): string | undefined {
  if (capabilitiesOf(backend)[capability]) return undefined;
  const why = CONTROLLER_MANAGER.includes(capability)
    ? "kube-controller-manager is not in KUBEBUILDER_ASSETS beside kube-apiserver"
    : "only the embedded backend has it";
  return `needs ${DESCRIPTIONS[capability]}, which the ${backend} backend lacks: ${why}`;
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
