/**
 * The embedded API server (with its CRD, garbage-collection and namespace controllers) and a real
 * client configured from the kubeconfig it writes, for the runtime's end-to-end tests.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CustomResourceDefinition } from "kubernetes-types/apiextensions/v1.d.ts";
import { type ClientConfig, loadClientConfig } from "../../../packages/capstan/src/client/config.ts";
import { KubeClient } from "../../../packages/capstan/src/client/resource-client.ts";
import type { KubeObject, ResourceKind } from "../../../packages/capstan/src/client/types.ts";
import { controllersPlugin } from "../../../packages/capstan-dev/src/devcluster/controllers/index.ts";
import { type ApiServer, startApiServer } from "../../../packages/capstan-dev/src/devcluster/index.ts";

export interface E2eCluster {
  server: ApiServer;
  config: ClientConfig;
  /** A client for the test's own calls (closed by `stop`). */
  client: KubeClient;
  stop(): Promise<void>;
}

export async function startCluster(): Promise<E2eCluster> {
  const dir = await mkdtemp(join(tmpdir(), "capstan-runtime-e2e-"));
  const kubeconfig = join(dir, "kubeconfig");
  const server = await startApiServer({ kubeconfigPath: kubeconfig, plugins: [controllersPlugin] });
  const config = loadClientConfig({ kubeconfig });
  const client = new KubeClient(config);
  return {
    server,
    config,
    client,
    stop: async () => {
      await client.close();
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export type Widget = KubeObject & {
  spec: { size: number };
  status?: { observedSize?: number };
};

export const Widget: ResourceKind<Widget> = {
  group: "example.com",
  version: "v1",
  kind: "Widget",
  plural: "widgets",
  namespaced: true,
};

export type ConfigMapObject = KubeObject & { data?: Record<string, string> };
export const ConfigMap: ResourceKind<ConfigMapObject> = {
  group: "",
  version: "v1",
  kind: "ConfigMap",
  plural: "configmaps",
  namespaced: true,
};

/** The Widget CRD: spec.size, status.observedSize, status subresource. */
export function widgetCrd(
  extraColumns: { name: string; type: string; jsonPath: string }[] = [],
): CustomResourceDefinition {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "widgets.example.com" },
    spec: {
      group: "example.com",
      names: { kind: "Widget", plural: "widgets", singular: "widget", listKind: "WidgetList" },
      scope: "Namespaced",
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          subresources: { status: {} },
          ...(extraColumns.length > 0 ? { additionalPrinterColumns: extraColumns } : {}),
          schema: {
            openAPIV3Schema: {
              type: "object",
              properties: {
                spec: { type: "object", properties: { size: { type: "integer" } } },
                status: { type: "object", properties: { observedSize: { type: "integer" } } },
              },
            },
          },
        },
      ],
    },
  };
}
