/**
 * An RBAC-enabled devcluster for tests: the server with `rbac: true`, its admin kubeconfig in a temp dir,
 * kubeconfigs for other bearer tokens (ServiceAccounts), the real kubectl, and an HTTPS client that
 * sends any token and impersonation headers.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, request } from "undici";
import { type ApiServer, startApiServer } from "../../../packages/capstan-dev/src/devcluster/index.ts";

/** kubectl starts in ~100 ms; a command that has not finished in 20 s is stuck. */
const KUBECTL_TIMEOUT_MS = 20_000;

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface HttpResult {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: test assertions read arbitrary JSON
  body: any;
  text: string;
}

export interface RbacCluster {
  server: ApiServer;
  dir: string;
  /** kubectl with the admin kubeconfig, or with `kubeconfig` when given. */
  kubectl(args: string[], kubeconfig?: string): Promise<KubectlResult>;
  /** Writes a kubeconfig for `token` and returns its path. */
  kubeconfigFor(name: string, token: string): Promise<string>;
  http(
    method: string,
    path: string,
    options?: { body?: unknown; token?: string | null; headers?: Record<string, string | string[]> },
  ): Promise<HttpResult>;
  /** Creates a ServiceAccount and returns a token for it (TokenRequest over HTTP, as the admin). */
  serviceAccountToken(namespace: string, name: string): Promise<string>;
  stop(): Promise<void>;
}

export async function startRbacCluster(): Promise<RbacCluster> {
  const dir = await mkdtemp(join(tmpdir(), "capstan-rbac-"));
  const kubeconfigPath = join(dir, "kubeconfig");
  const server = await startApiServer({ kubeconfigPath, rbac: true, kubelet: false });
  const agent = new Agent({ connect: { ca: server.caPem } });
  const children = new Set<ReturnType<typeof execFile>>();

  const kubectl: RbacCluster["kubectl"] = (args, kubeconfig = kubeconfigPath) =>
    new Promise((resolve) => {
      // Each kubeconfig gets its own caches under the temp dir, never the user's ~/.kube.
      const env = { ...process.env, KUBECONFIG: kubeconfig, KUBECACHEDIR: `${kubeconfig}.cache`, HOME: dir };
      const child = execFile(
        process.env.KUBECTL ?? "kubectl",
        args,
        { env, timeout: KUBECTL_TIMEOUT_MS },
        (err, stdout, stderr) => {
          children.delete(child);
          const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
          resolve({ code, stdout: String(stdout), stderr: String(stderr) });
        },
      );
      children.add(child);
      child.stdin?.end();
    });

  const kubeconfigFor: RbacCluster["kubeconfigFor"] = async (name, token) => {
    const path = join(dir, `kubeconfig-${name}`);
    await writeFile(path, server.kubeconfig.replace(server.token, token), { mode: 0o600 });
    return path;
  };

  const http: RbacCluster["http"] = async (method, path, options = {}) => {
    const token = options.token === undefined ? server.token : options.token;
    const headers: Record<string, string | string[]> = { ...options.headers };
    if (token !== null) headers["authorization"] = `Bearer ${token}`;
    if (options.body !== undefined) headers["content-type"] ??= "application/json";
    const res = await request(`${server.url}${path}`, {
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
  };

  const serviceAccountToken: RbacCluster["serviceAccountToken"] = async (namespace, name) => {
    if ((await http("GET", `/api/v1/namespaces/${namespace}`)).status === 404) {
      await http("POST", "/api/v1/namespaces", { body: { metadata: { name: namespace } } });
    }
    await http("POST", `/api/v1/namespaces/${namespace}/serviceaccounts`, { body: { metadata: { name } } });
    const res = await http("POST", `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, {
      body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: {} },
    });
    if (res.status !== 201) throw new Error(`TokenRequest failed: ${res.text}`);
    return res.body.status.token as string;
  };

  return {
    server,
    dir,
    kubectl,
    kubeconfigFor,
    http,
    serviceAccountToken,
    stop: async () => {
      for (const child of children) child.kill();
      await agent.close();
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
