/**
 * The envtest backend: a real kube-apiserver and etcd (and kube-controller-manager when present)
 * from `KUBEBUILDER_ASSETS`, started for one TestCluster (envtest-control-plane.ts) and used as the
 * kubeconfig backend uses any cluster: through the admin kubeconfig the plane wrote, with a namespace
 * of the run's own as the default of the client and of kubectl.
 *
 * ## Expected flow
 * 1. Start the control plane (etcd, then kube-apiserver until `/readyz`, then kube-controller-manager).
 * 2. Connect to it as the kubeconfig backend (kubeconfig-backend.ts): the run's namespace, the
 *    recording client, `beforeApply`.
 * 3. `stop()`: close the client, stop the processes and remove the plane's folder.
 *
 * ## Guarantees
 * - The same TestCluster as on the kubeconfig backend (`cluster.namespace` is the run's own,
 *   default waits three times the embedded server's), with `capabilities.backend` `"envtest"` and
 *   `garbageCollection`/`namespaceDeletion` true only when kube-controller-manager runs, and
 *   `runningPods` false (no scheduler, no kubelet: pods stay Pending).
 * - `stop()` deletes nothing object by object: the whole cluster, etcd's data with it, goes away, and
 *   without kube-controller-manager a namespace deletion would never finish. It resolves once no
 *   process of the plane runs and its folder is gone.
 */
import { capabilitiesOf } from "./capabilities.ts";
import { type EnvtestControlPlaneOptions, startEnvtestControlPlane } from "./envtest-control-plane.ts";
import { connectKubeconfigBackend } from "./kubeconfig-backend.ts";
import type { TestBackend } from "./test-backend.ts";

/** Options of the envtest backend (`startTestCluster({ backend: "envtest", envtest: { ... } })`). */
export interface EnvtestBackendOptions extends EnvtestControlPlaneOptions {
  /** The run's namespace is `<namespacePrefix>-<random id>`; default `"capstan-test"`. */
  namespacePrefix?: string;
}

/** Starts a control plane and connects to it; see the module documentation. */
export async function startEnvtestBackend(
  options: EnvtestBackendOptions,
  dir: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<TestBackend> {
  const plane = await startEnvtestControlPlane(options, env);
  const capabilities = capabilitiesOf("envtest", { controllerManager: plane.controllerManager });
  let connected: TestBackend;
  try {
    // Only the plane's kubeconfig: CAPSTAN_TEST_KUBECONFIG and CAPSTAN_TEST_CONTEXT name another cluster.
    connected = await connectKubeconfigBackend(
      {
        path: plane.kubeconfigPath,
        ...(options.namespacePrefix === undefined ? {} : { namespacePrefix: options.namespacePrefix }),
      },
      dir,
      {},
      capabilities,
    );
  } catch (err) {
    await plane.stop().catch(() => undefined);
    throw err;
  }
  return {
    name: "envtest",
    capabilities,
    kubeconfigPath: connected.kubeconfigPath,
    kubeconfig: connected.kubeconfig,
    url: plane.url,
    namespace: connected.namespace,
    client: connected.client,
    rbac: true,
    server: undefined,
    waitScale: connected.waitScale,
    newClient: (path) => connected.newClient(path),
    beforeApply: (manifests) => connected.beforeApply(manifests),
    async stop() {
      try {
        await connected.client.close();
      } finally {
        await plane.stop();
      }
    },
  };
}
