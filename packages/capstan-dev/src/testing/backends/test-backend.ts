/**
 * What `startTestCluster` needs of a backend: a cluster reachable through a kubeconfig file, an
 * admin client, the namespace the test's own objects go to, and a `stop` that leaves nothing of
 * the run behind. The TestCluster builds everything else (run, waits, kubectl, ServiceAccounts)
 * on top of this, the same way for every backend.
 */
import type { KubeClient } from "capstan";
import type { ApiServer } from "../../devcluster/index.ts";
import type { TestBackendName } from "./backend-selection.ts";
import type { TestCapabilities } from "./capabilities.ts";
import type { KubectlOutcome } from "./kubectl-creations.ts";

/** A manifest a TestCluster helper applies with kubectl on the test's behalf. */
export interface AppliedManifest {
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
}

/** A started backend. */
export interface TestBackend {
  readonly name: TestBackendName;
  readonly capabilities: TestCapabilities;
  /** A kubeconfig file for the admin, whose context's namespace is {@link namespace}. */
  readonly kubeconfigPath: string;
  /** Its YAML. */
  readonly kubeconfig: string;
  readonly url: string;
  /** The namespace for the test's objects: `default` on the embedded server, the run's own elsewhere. */
  readonly namespace: string;
  /** The admin client; closed by `stop()`. */
  readonly client: KubeClient;
  /** Whether the cluster authorizes requests (ServiceAccount tokens need it). */
  readonly rbac: boolean;
  /** The embedded server, when there is one. */
  readonly server: ApiServer | undefined;
  /** Factor on default wait timeouts: a real cluster's garbage collection and deletions take seconds. */
  readonly waitScale: number;
  /** A client for another identity's kubeconfig (the cluster's ServiceAccounts). */
  newClient(kubeconfigPath: string): KubeClient;
  /**
   * Called before kubectl applies `manifests` for the run (generatedRbac): the kubeconfig backend
   * records and labels the cluster-scoped ones that do not exist yet, so `stop()` deletes them.
   */
  beforeApply<M extends AppliedManifest>(manifests: readonly M[]): Promise<M[]>;
  /**
   * When present, `cluster.kubectl` tracks what its commands create (`kubectl-creations.ts`) and
   * hands it here: a backend on a shared cluster records it, to delete it at `stop()`.
   */
  kubectlCreated?(outcome: KubectlOutcome): Promise<void>;
  /**
   * When present, called with the names of the CRDs the run uses (its `crds`, an operator's before it
   * starts and once they are served): a backend on a shared cluster keeps them while the run lasts.
   */
  useCrds?(names: readonly string[]): Promise<void>;
  /** Called once operators and commands have stopped: deletes what the run created, closes the client. */
  stop(): Promise<void>;
}
