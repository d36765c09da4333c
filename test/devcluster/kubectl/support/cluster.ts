/**
 * A started devcluster for kubectl and controller tests: the server as `startApiServer()` starts it
 * (OpenAPI documents and controllers included), its kubeconfig in a temp dir, a `kubectl` runner (the real binary, no special flags,
 * its caches kept in the temp dir; `KUBECTL=<binary>` picks another release) and a small HTTPS client that trusts the server's CA.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, request } from "undici";
import { type ApiServer, startApiServer } from "../../../../packages/capstan-dev/src/devcluster/index.ts";

/** kubectl starts in ~100 ms; a command that has not finished in 20 s is stuck. */
const KUBECTL_TIMEOUT_MS = 20_000;

/** `KUBECTL=<binary>` runs the suite against another kubectl release, as `capstan-dev/testing`'s kubectl() does. */
const KUBECTL_BINARY = process.env.KUBECTL ?? "kubectl";

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface HttpResult {
  status: number;
  body: unknown;
  text: string;
}

export interface TestCluster {
  server: ApiServer;
  dir: string;
  kubeconfigPath: string;
  /** Runs kubectl with the cluster's kubeconfig. Never throws on a non-zero exit: check `code`. */
  kubectl(
    args: string[],
    options?: { stdin?: string; env?: Record<string, string>; timeoutMs?: number },
  ): Promise<KubectlResult>;
  /** Starts kubectl and returns the child (for `get -w` / `delete --wait`), with its output collected so far. */
  spawnKubectl(args: string[]): { output: () => string; exited: Promise<KubectlResult>; kill: () => void };
  /** One HTTPS request to the server with the admin token. */
  http(method: string, path: string, body?: unknown, contentType?: string): Promise<HttpResult>;
  stop(): Promise<void>;
}

export async function startTestCluster(): Promise<TestCluster> {
  const dir = await mkdtemp(join(tmpdir(), "capstan-kubectl-"));
  const kubeconfigPath = join(dir, "kubeconfig");
  // The OpenAPI documents and the controllers are built-in plugins: the server as every user starts it.
  const server = await startApiServer({ kubeconfigPath });
  const agent = new Agent({ connect: { ca: server.caPem } });
  // kubectl's discovery and OpenAPI caches live under the temp dir, never in the user's ~/.kube.
  const env = { ...process.env, KUBECONFIG: kubeconfigPath, KUBECACHEDIR: join(dir, "cache"), HOME: dir };
  const children = new Set<ReturnType<typeof execFile>>();

  const kubectl: TestCluster["kubectl"] = (args, options = {}) =>
    new Promise((resolve) => {
      const child = execFile(
        KUBECTL_BINARY,
        args,
        { env: { ...env, ...options.env }, timeout: options.timeoutMs ?? KUBECTL_TIMEOUT_MS },
        (err, stdout, stderr) => {
          children.delete(child);
          const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
          resolve({ code, stdout: String(stdout), stderr: String(stderr) });
        },
      );
      children.add(child);
      if (options.stdin !== undefined) child.stdin?.end(options.stdin);
      else child.stdin?.end();
    });

  const spawnKubectl: TestCluster["spawnKubectl"] = (args) => {
    let out = "";
    let err = "";
    let child: ReturnType<typeof execFile> | undefined;
    const exited = new Promise<KubectlResult>((resolve) => {
      child = execFile(KUBECTL_BINARY, args, { env, timeout: KUBECTL_TIMEOUT_MS }, (error) => {
        if (child) children.delete(child);
        resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout: out, stderr: err });
      });
      child.stdout?.on("data", (chunk: Buffer) => {
        out += chunk.toString();
      });
      child.stderr?.on("data", (chunk: Buffer) => {
        err += chunk.toString();
      });
      child.stdin?.end();
      children.add(child);
    });
    return { output: () => out, exited, kill: () => child?.kill() };
  };

  const http: TestCluster["http"] = async (method, path, body, contentType = "application/json") => {
    const res = await request(`${server.url}${path}`, {
      method: method as "GET",
      dispatcher: agent,
      headers: {
        authorization: `Bearer ${server.token}`,
        ...(body === undefined ? {} : { "content-type": contentType }),
      },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    });
    const text = await res.body.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: res.statusCode, body: parsed, text };
  };

  return {
    server,
    dir,
    kubeconfigPath,
    kubectl,
    spawnKubectl,
    http,
    stop: async () => {
      for (const child of children) child.kill();
      await agent.close();
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The minor release of the kubectl the suite runs (`KUBECTL`, else the one on PATH), for the few
 * outputs that differ between releases (`version --client` does not contact the server).
 */
export async function kubectlMinor(cluster: TestCluster): Promise<number> {
  const res = await cluster.kubectl(["version", "--client", "-o", "json"]);
  // The JSON form is the same from 1.27 to 1.33 (the plain text form changed in 1.28).
  const minor = Number.parseInt(
    (JSON.parse(res.stdout) as { clientVersion: { minor: string } }).clientVersion.minor,
    10,
  );
  if (Number.isNaN(minor)) throw new Error(`cannot read kubectl's minor version from ${res.stdout}`);
  return minor;
}

/**
 * Long enough for kubectl round trips on a loaded 2-core machine; a working feature settles in well
 * under a second, a broken one never does.
 */
const EVENTUALLY_TIMEOUT_MS = 10_000;

/** Polls `check` until it returns a value other than undefined/false, or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = EVENTUALLY_TIMEOUT_MS,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value as T;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`condition not met within ${timeoutMs} ms${last ? `: ${String(last)}` : ""}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A CRD like seed 003's ExchangeRate: namespaced, shortName `er`, currency enum, printer columns, status subresource. */
export function exchangeRateCrd(overrides: { group?: string } = {}): Record<string, unknown> {
  const group = overrides.group ?? "operators.example.com";
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `exchangerates.${group}` },
    spec: {
      group,
      scope: "Namespaced",
      names: {
        plural: "exchangerates",
        singular: "exchangerate",
        kind: "ExchangeRate",
        shortNames: ["er"],
        categories: ["all"],
      },
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [
            { name: "Currency", type: "string", jsonPath: ".spec.currency" },
            { name: "Rate", type: "number", jsonPath: ".status.rate" },
            { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
          ],
          schema: {
            openAPIV3Schema: {
              type: "object",
              properties: {
                spec: {
                  type: "object",
                  properties: { currency: { type: "string", enum: ["CAD", "USD"] } },
                },
                status: { type: "object", properties: { rate: { type: "number" } } },
              },
            },
          },
        },
      ],
    },
  };
}
