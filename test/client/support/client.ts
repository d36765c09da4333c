/** Builds a KubeClient that trusts a test server's CA, with a static bearer token. */
import { StaticCredentials } from "../../../packages/capstan/src/client/credentials.ts";
import { KubeClient, type KubeClientOptions } from "../../../packages/capstan/src/client/resource-client.ts";
import type { ResourceKind } from "../../../packages/capstan/src/client/types.ts";
import type { RecordingHttpsServer } from "./recording-https-server.ts";

export function clientFor(
  server: RecordingHttpsServer,
  opts: KubeClientOptions = {},
  namespace = "default",
): KubeClient {
  return new KubeClient(
    {
      server: server.url,
      tls: { ca: server.pki.caPem, insecureSkipTLSVerify: false },
      credentials: new StaticCredentials({ authorization: "Bearer test-token" }),
      namespace,
      source: "test",
    },
    // Tiny backoffs keep retry tests fast; the policy itself is unit-tested in retry.test.ts.
    { retry: { baseDelayMs: 1, maxDelayMs: 20 }, ...opts },
  );
}

export interface ConfigMap {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string> };
  data?: Record<string, string>;
}

export const ConfigMapKind: ResourceKind<ConfigMap> = {
  group: "",
  version: "v1",
  kind: "ConfigMap",
  plural: "configmaps",
  namespaced: true,
};

export interface Widget {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string };
  spec?: { size?: number };
  status?: { ready?: boolean };
}

export const WidgetKind: ResourceKind<Widget> = {
  group: "example.com",
  version: "v1",
  kind: "Widget",
  plural: "widgets",
  namespaced: true,
};

export const NodeKind: ResourceKind = { group: "", version: "v1", kind: "Node", plural: "nodes", namespaced: false };
