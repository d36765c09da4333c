/**
 * What the devcluster's kubectl and controller tests add to `capstan-dev/testing`'s cluster: `kubectl`
 * started as a child whose output is read while it runs (`get -w`, `logs -f`, `delete --wait`), one
 * HTTPS request with the admin token, kubectl's minor release, an ExchangeRate CRD, a kubectl command
 * that must succeed, and a printed table's cells.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import type { TestCluster } from "capstan-dev/testing";
import { Agent, request } from "undici";
import { expect } from "vitest";

/** kubectl starts in ~100 ms; a command that has not finished in 20 s is stuck. */
const KUBECTL_TIMEOUT_MS = 20_000;

export interface HttpResult {
  status: number;
  body: unknown;
  text: string;
}

/** A running kubectl: its output so far, its exit, and a way to stop it. */
export interface SpawnedKubectl {
  output: () => string;
  exited: Promise<{ code: number; stdout: string; stderr: string }>;
  kill: () => void;
}

/**
 * Starts kubectl against the cluster (its kubeconfig and kubectl caches, `KUBECTL=<binary>` as the
 * cluster's own `kubectl()`) and returns the child with its output collected so far. Killed after
 * 20 s; `cluster.stop()` does not wait for it.
 */
export function spawnKubectl(cluster: TestCluster, args: string[]): SpawnedKubectl {
  const env = { ...process.env, KUBECONFIG: cluster.kubeconfigPath, KUBECACHEDIR: join(cluster.dir, "kubectl-cache") };
  let out = "";
  let err = "";
  let child: ReturnType<typeof execFile> | undefined;
  const exited = new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    child = execFile(process.env.KUBECTL ?? "kubectl", args, { env, timeout: KUBECTL_TIMEOUT_MS }, (error) => {
      resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout: out, stderr: err });
    });
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      err += chunk.toString();
    });
    child.stdin?.end();
  });
  return { output: () => out, exited, kill: () => child?.kill() };
}

/** One agent per server, trusting its CA; its sockets end when the server stops. */
const agents = new WeakMap<TestCluster, Agent>();

/** One HTTPS request to the cluster's server with the admin token; a JSON body is decoded. */
export async function http(
  cluster: TestCluster,
  method: string,
  path: string,
  body?: unknown,
  contentType = "application/json",
): Promise<HttpResult> {
  let agent = agents.get(cluster);
  if (agent === undefined) {
    agent = new Agent({ connect: { ca: cluster.server.caPem } });
    agents.set(cluster, agent);
  }
  const res = await request(`${cluster.url}${path}`, {
    method: method as "GET",
    dispatcher: agent,
    headers: {
      authorization: `Bearer ${cluster.server.token}`,
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

/** Runs kubectl and expects it to succeed (its stderr in the failure); resolves its stdout. */
export async function kubectlOk(cluster: TestCluster, args: string[]): Promise<string> {
  const r = await cluster.kubectl(args);
  expect(r.code, `kubectl ${args.join(" ")}: ${r.stderr}`).toBe(0);
  return r.stdout;
}

/** A printed table's lines as cells (columns are at least two spaces apart; empty cells vanish). */
export function tableRows(out: string): string[][] {
  return out
    .trim()
    .split("\n")
    .map((l) => l.trim().split(/\s{2,}/));
}
