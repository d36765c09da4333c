/**
 * What bench/chaos.ts starts for a scenario: a folder holding the operator's modules, the embedded
 * API server (`capstan apiserver`) and operators (`capstan run`) as child processes on loopback
 * ports, and the fault injector driven over HTTP (`POST /capstan/faults`, docs/faults.md).
 * bench/chaos-kube-cluster.ts runs the same operators against a cluster named by a kubeconfig.
 */
import { mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { pathToFileURL } from "node:url";
import { type CustomResource, KubeClient, toCrd } from "capstan";
import { loadClientConfig } from "capstan/client";
import { Namespace } from "capstan/core";
import { CAPSTAN_BIN } from "capstan/internal";
import { ensureCrds } from "capstan/runtime";
import { CHAOS_ITEM_MODULE, CHAOS_OPERATOR_MODULE } from "./chaos-operator.ts";
import { freePort, launch, type Proc, removeAtExit } from "./child-processes.ts";

const repo = new URL("..", import.meta.url).pathname;

/** The namespace every scenario works in. */
export const NAMESPACE = "chaos";

/** One scenario's folder, namespace, operators and driver client, on any API server. */
export interface OperatorCluster {
  readonly dir: string;
  readonly kubeconfig: string;
  /** The namespace the operators watch and hold their Leases in, and the driver writes to. */
  readonly namespace: string;
  /** The marks file the operators write (bench/chaos-operator.ts). */
  readonly marks: string;
  readonly client: KubeClient;
  readonly ChaosItem: CustomResource & { apiVersion: string };
  /** Starts an operator replica; resolves once it runs (for a standby: once it has started). */
  startOperator(options?: OperatorOptions): Promise<Operator>;
  /** Stops every operator and leaves the API server as it was found (or stops it). */
  stop(): Promise<void>;
}

/** An OperatorCluster on the embedded API server this process started, with its fault injector. */
export interface Cluster extends OperatorCluster {
  /** The running API server process. */
  apiserver: Proc;
  /** SIGKILLs the API server; resolves with the time it was seen dead. */
  killApiServer(): Promise<number>;
  /** Starts the API server again on the same port (and data dir); resolves once it answers. */
  restartApiServer(): Promise<void>;
  /** `POST /capstan/faults` with `body`. */
  faults(body: Record<string, unknown>): Promise<unknown>;
}

export interface OperatorOptions {
  leaderElect?: boolean;
  /** `--max-concurrent-reconciles` (default: capstan run's). */
  workers?: number;
  /** Extra environment of the operator process. */
  env?: Record<string, string>;
  /** Extra `capstan run` flags (e.g. `--sharded --shard-member r1`). */
  args?: string[];
}

/** An operator replica (`capstan run`). */
export interface Operator {
  readonly proc: Proc;
  /** Its `/readyz` on loopback. */
  readonly readyzUrl: string;
}

/**
 * Node flags for a child process from an environment variable, split at spaces: to profile one
 * (`BENCH_APISERVER_NODE_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof"`; `--cpu-prof` is refused in
 * NODE_OPTIONS). BENCH_APISERVER_NODE_FLAGS is the API server's, BENCH_OPERATOR_NODE_FLAGS every replica's.
 */
function nodeFlags(variable: string): string[] {
  return (process.env[variable] ?? "").split(" ").filter((flag) => flag !== "");
}

/** A scenario's folder: the operator's modules, importing `capstan` from this repository's node_modules. */
export async function operatorDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "capstan-chaos-"));
  removeAtExit(dir);
  await writeFile(join(dir, "package.json"), '{ "type": "module" }\n');
  await symlink(join(repo, "node_modules"), join(dir, "node_modules"));
  await writeFile(join(dir, "chaos-item.js"), CHAOS_ITEM_MODULE);
  await writeFile(join(dir, "operator.js"), CHAOS_OPERATOR_MODULE);
  return dir;
}

/** The ChaosItem kind of the module the operators import (its `capstan` is this process's), so the CRD is theirs. */
export async function chaosItemKind(dir: string): Promise<CustomResource & { apiVersion: string }> {
  const { ChaosItem } = (await import(pathToFileURL(join(dir, "chaos-item.js")).href)) as {
    ChaosItem: CustomResource & { apiVersion: string };
  };
  return ChaosItem;
}

/** Starts `capstan run operator.js` replicas of a scenario, remembering each in `operators`. */
export function operatorStarter(
  where: {
    dir: string;
    /** `--kubeconfig`; or, as a list, the operators' KUBECONFIG (merged, the first file winning). */
    kubeconfig: string | string[];
    namespace: string;
    marks: string;
  },
  operators: Proc[],
): (options?: OperatorOptions) => Promise<Operator> {
  return async (opts = {}) => {
    const healthPort = await freePort();
    const args = [...nodeFlags("BENCH_OPERATOR_NODE_FLAGS"), CAPSTAN_BIN, "run", "operator.js"];
    if (typeof where.kubeconfig === "string") args.push("--kubeconfig", where.kubeconfig);
    args.push("--namespace", where.namespace);
    args.push("--health-port", String(healthPort), "--log-format", "json", "--no-crd-registration");
    if (opts.leaderElect) args.push("--leader-elect");
    if (opts.workers !== undefined) args.push("--max-concurrent-reconciles", String(opts.workers));
    if (opts.args !== undefined) args.push(...opts.args);
    const env: Record<string, string> = { CHAOS_MARKS: where.marks, ...opts.env };
    if (typeof where.kubeconfig !== "string") env["KUBECONFIG"] = where.kubeconfig.join(delimiter);
    const proc = launch("capstan run operator.js", args, { cwd: where.dir, env });
    operators.push(proc);
    const readyzUrl = `http://127.0.0.1:${healthPort}/readyz`;
    // A standby starts no workers until it leads: its synced caches (/readyz) are its start.
    if (opts.leaderElect) await waitReady(proc, readyzUrl);
    else await proc.line((l) => l.includes('"msg":"Starting workers"'), '"Starting workers"', 60_000);
    return { proc, readyzUrl };
  };
}

/**
 * Writes the operator's modules, starts `capstan apiserver` (`--data-dir` when `persistent`),
 * registers the ChaosItem CRD and creates the namespace.
 */
export async function startCluster(options: { persistent: boolean }): Promise<Cluster> {
  const dir = await operatorDir();
  const kubeconfig = join(dir, "kubeconfig");
  const marks = join(dir, "marks");
  const port = await freePort();
  const serverArgs = [
    ...nodeFlags("BENCH_APISERVER_NODE_FLAGS"),
    CAPSTAN_BIN,
    "apiserver",
    "--port",
    String(port),
    "--kubeconfig",
    kubeconfig,
    "--no-kubelet",
  ];
  if (options.persistent) serverArgs.push("--data-dir", join(dir, "data"));
  const startServer = async (): Promise<Proc> => {
    const proc = launch("capstan apiserver", serverArgs);
    await proc.line((l) => l.startsWith("ready "), '"ready" line', 60_000);
    return proc;
  };
  const operators: Proc[] = [];
  let apiserver = await startServer();
  const client = new KubeClient(loadClientConfig({ kubeconfig }));
  const ChaosItem = await chaosItemKind(dir);
  await ensureCrds(client, [toCrd(ChaosItem)]);
  await client.resource(Namespace).create(Namespace.make({ metadata: { name: NAMESPACE } }));
  return {
    dir,
    kubeconfig,
    namespace: NAMESPACE,
    marks,
    client,
    ChaosItem,
    get apiserver() {
      return apiserver;
    },
    killApiServer: () => apiserver.kill9(),
    async restartApiServer() {
      apiserver = await startServer();
    },
    startOperator: operatorStarter({ dir, kubeconfig, namespace: NAMESPACE, marks }, operators),
    faults: (body) => client.request("POST", "/capstan/faults", { body }),
    async stop() {
      for (const op of operators) await op.stop();
      await client.close();
      await apiserver.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The status `/readyz` answers now, or 0 when it does not answer within a second. */
export async function readyzStatus(url: string): Promise<number> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}

async function waitReady(proc: Proc, url: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while ((await readyzStatus(url)) !== 200) {
    if (proc.gone) throw new Error(`${proc.name} (pid ${proc.pid}) exited before /readyz answered 200`);
    if (Date.now() > deadline) throw new Error(`${proc.name} (pid ${proc.pid}): /readyz not 200 within 60 s`);
    await sleep(100);
  }
}
