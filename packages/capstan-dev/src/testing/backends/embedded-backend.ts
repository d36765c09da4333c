/**
 * The embedded backend: Capstan's API server started in the test's process, exactly as
 * `startTestCluster` always started it (same options, same defaults, same speed). Everything a run
 * creates goes with the server, so there is nothing to record or delete.
 */
import { KubeClient } from "capstan";
import { loadClientConfig } from "capstan/client";
import { type ApiServerOptions, startApiServer } from "../../devcluster/index.ts";
import { capabilitiesOf } from "./capabilities.ts";
import type { TestBackend } from "./test-backend.ts";

/** The embedded server's options as `startTestCluster` resolves them. */
export interface EmbeddedBackendOptions {
  server?: ApiServerOptions;
  kubelet?: boolean;
  namespaceDefaults?: boolean;
  /** Where the admin kubeconfig goes unless `server.kubeconfigPath` says. */
  defaultKubeconfigPath: string;
}

/** Starts the embedded API server (random port unless `server.port` says). */
export async function startEmbeddedBackend(options: EmbeddedBackendOptions): Promise<TestBackend> {
  const serverOptions = options.server ?? {};
  const kubeconfigPath = serverOptions.kubeconfigPath ?? options.defaultKubeconfigPath;
  const rbac = serverOptions.rbac !== false;
  const kubelet = options.kubelet ?? serverOptions.kubelet ?? true;
  const server = await startApiServer({
    port: 0,
    ...serverOptions,
    kubeconfigPath,
    rbac,
    kubelet,
    namespaceDefaults: options.namespaceDefaults ?? serverOptions.namespaceDefaults ?? false,
  });
  const newClient = (path: string) => new KubeClient(loadClientConfig({ kubeconfig: path }));
  const client = newClient(kubeconfigPath);
  return {
    name: "embedded",
    // `kubelet` may be an object of delays: anything but `false` runs it.
    capabilities: capabilitiesOf("embedded", { runningPods: kubelet !== false }),
    kubeconfigPath,
    kubeconfig: server.kubeconfig,
    url: server.url,
    namespace: client.defaultNamespace,
    client,
    rbac,
    server,
    waitScale: 1,
    newClient,
    beforeApply: async (manifests) => [...manifests],
    async stop() {
      await client.close();
      await server.stop();
    },
  };
}
