/**
 * What the RBAC tests add to `capstan-dev/testing`'s cluster started with {@link RBAC_CLUSTER}: an
 * HTTPS client that sends any token and impersonation headers, a ServiceAccount's raw token, and
 * kubectl options that run kubectl as the bearer of a token.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { KubectlOptions, TestCluster, TestClusterOptions } from "capstan-dev/testing";
import { Agent, request } from "undici";

/** No simulated kubelet (these tests run no pods); RBAC is on in every cluster. */
export const RBAC_CLUSTER: TestClusterOptions = { kubelet: false };

export interface HttpResult {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: test assertions read arbitrary JSON
  body: any;
  text: string;
}

/** One agent per cluster, trusting its CA; its sockets end when the server stops. */
const agents = new WeakMap<TestCluster, Agent>();

/**
 * One HTTPS request: with the admin token unless `token` says otherwise (`null`: none), and any
 * headers (`Impersonate-User`, a content type); a JSON body is decoded.
 */
export async function http(
  cluster: TestCluster,
  method: string,
  path: string,
  options: { body?: unknown; token?: string | null; headers?: Record<string, string | string[]> } = {},
): Promise<HttpResult> {
  let agent = agents.get(cluster);
  if (agent === undefined) {
    agent = new Agent({ connect: { ca: cluster.server.caPem } });
    agents.set(cluster, agent);
  }
  const token = options.token === undefined ? cluster.server.token : options.token;
  const headers: Record<string, string | string[]> = { ...options.headers };
  if (token !== null) headers["authorization"] = `Bearer ${token}`;
  if (options.body !== undefined) headers["content-type"] ??= "application/json";
  const res = await request(`${cluster.url}${path}`, {
    method: method as "GET",
    dispatcher: agent,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await res.body.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.statusCode, body, text };
}

/**
 * Creates a ServiceAccount (and its namespace when missing) and returns a token for it, asked of
 * the TokenRequest API over HTTP as the admin with the API's default lifetime.
 */
export async function serviceAccountToken(cluster: TestCluster, namespace: string, name: string): Promise<string> {
  if ((await http(cluster, "GET", `/api/v1/namespaces/${namespace}`)).status === 404) {
    await http(cluster, "POST", "/api/v1/namespaces", { body: { metadata: { name: namespace } } });
  }
  await http(cluster, "POST", `/api/v1/namespaces/${namespace}/serviceaccounts`, { body: { metadata: { name } } });
  const res = await http(cluster, "POST", `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, {
    body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: {} },
  });
  if (res.status !== 201) throw new Error(`TokenRequest failed: ${res.text}`);
  return res.body.status.token as string;
}

/**
 * Options of `cluster.kubectl` that run it as the bearer of `token`: the admin kubeconfig with the
 * token swapped, written as `kubeconfig-<name>`, and kubectl caches of its own.
 */
export async function kubectlAs(cluster: TestCluster, name: string, token: string): Promise<KubectlOptions> {
  const path = join(cluster.dir, `kubeconfig-${name}`);
  await writeFile(path, cluster.kubeconfig.replace(cluster.server.token, token), { mode: 0o600 });
  return { env: { KUBECONFIG: path, KUBECACHEDIR: `${path}.cache` } };
}
