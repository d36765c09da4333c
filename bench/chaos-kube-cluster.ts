/**
 * The chaos operator's replicas (bench/chaos-operator.ts, `capstan run` child processes) against a
 * cluster named by a kubeconfig instead of the embedded server: bench/sharding.ts with
 * BENCH_KUBECONFIG, e.g. a real kube-apiserver with its controller manager. Labels, Leases and
 * label selectors are all the operators need of it.
 *
 * A shared cluster is left as it was found: every run works in a namespace of its own
 * (`capstan-<scenario>-<base-36 time>`, labelled `bench.capstan.dev/scenario: <scenario>`), and the
 * ChaosItem CRD is registered if absent and deleted at the end if this run registered it and no
 * ChaosItem is left outside that namespace. The ChaosItems hold a finalizer only a running replica
 * removes, so a namespace deleted after the replicas stopped would hang in Terminating: the end of a
 * run (also when it fails, or is interrupted with SIGINT/SIGTERM, through cleanUpOnSignal) stops the
 * replicas, removes that finalizer from every ChaosItem left, then deletes the namespace. A driver
 * killed with SIGKILL cannot: its namespace stays, found by that label (docs/runtime.md, "Sharding").
 */
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { isNotFound, KubeClient, type ResourceClient, toCrd } from "capstan";
import { loadClientConfig } from "capstan/client";
import { CustomResourceDefinition, Namespace } from "capstan/core";
import { ensureCrds } from "capstan/runtime";
import { parse as parseYaml } from "yaml";
import { chaosItemKind, type OperatorCluster, operatorDir, operatorStarter } from "./chaos-cluster.ts";
import { CHAOS_FINALIZER } from "./chaos-operator.ts";
import { type ChaosItemObject, DRIVER_CONCURRENCY, forEach } from "./chaos-workload.ts";
import { cleanUpOnSignal, type Proc } from "./child-processes.ts";

/** The label of a run's namespace: the scenario (e.g. `sharding`). */
export const SCENARIO_LABEL = "bench.capstan.dev/scenario";

/** How long the end of a run waits for its namespace to be gone. */
const NAMESPACE_GONE_MS = 600_000;
/** "Quiet": kube-apiserver under 10% of a core (idle with its controller manager: 2-3%) for 3 samples of 1 s. */
const QUIET_CPU_SHARE = 0.1;
const QUIET_SAMPLES = 3;

/** An OperatorCluster on a cluster this process did not start. */
export interface KubeCluster extends OperatorCluster {
  /** The server's version (`gitVersion` of `GET /version`). */
  readonly version: string;
  /**
   * Waits until kube-apiserver's CPU (its /metrics) is near idle, at most `timeoutMs`: a run starts
   * after the aftermath of an earlier one (the garbage collector and namespace controller deleting
   * its objects). Resolves with whether it got quiet (false too when /metrics cannot be read).
   */
  whenQuiet(timeoutMs: number): Promise<boolean>;
}

function log(message: string): void {
  process.stderr.write(`[kube-cluster ${new Date().toISOString().slice(11, 23)}] ${message}\n`);
}

/** kube-apiserver's own CPU seconds from its /metrics (null when the user may not read them). */
export async function apiServerCpuSeconds(client: KubeClient): Promise<number | null> {
  try {
    const text = await client.request<string>("GET", "/metrics", { accept: "text/plain" });
    const m = /^process_cpu_seconds_total (\S+)$/m.exec(text);
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/**
 * The operators' KUBECONFIG: a file of one context, the current one of `kubeconfig` with `namespace`
 * as its namespace, before `kubeconfig` itself (which gives the cluster and user). `--namespace` of
 * `capstan run` only scopes its watches; its Leases (sharding's and leader election's) go to the
 * client's namespace, i.e. the context's, "default" when it has none: shared by every run there.
 */
async function inNamespace(dir: string, kubeconfig: string, namespace: string): Promise<string[]> {
  const config = parseYaml(await readFile(kubeconfig, "utf8")) as {
    "current-context"?: string;
    contexts?: { name: string; context?: Record<string, unknown> }[];
  };
  const current = config.contexts?.find((c) => c.name === config["current-context"]);
  if (current === undefined) throw new Error(`${kubeconfig}: no current context`);
  const name = `${current.name}-${namespace}`;
  const overlay = join(dir, "kubeconfig-namespace.json");
  const context = { ...current.context, namespace };
  await writeFile(
    overlay,
    JSON.stringify({ apiVersion: "v1", kind: "Config", "current-context": name, contexts: [{ name, context }] }),
  );
  return [overlay, kubeconfig];
}

/**
 * Registers the ChaosItem CRD on the cluster of `kubeconfig` (if absent) and creates the run's
 * namespace; the operators started from it run with `--kubeconfig <kubeconfig> --namespace <it>`.
 */
export async function connectCluster(kubeconfig: string, scenario: string): Promise<KubeCluster> {
  const dir = await operatorDir();
  const marks = join(dir, "marks");
  const client = new KubeClient(loadClientConfig({ kubeconfig }));
  const version = (await client.request<{ gitVersion?: string }>("GET", "/version")).gitVersion ?? "unknown";
  const ChaosItem = await chaosItemKind(dir);
  const crds = client.resource(CustomResourceDefinition);
  const crdName = `${ChaosItem.plural}.${ChaosItem.group}`;
  const crdExisted = (await crds.get(crdName).catch(() => undefined)) !== undefined;
  await ensureCrds(client, [toCrd(ChaosItem)]);
  const namespace = `capstan-${scenario}-${Date.now().toString(36)}`;
  const namespaces = client.resource(Namespace);
  await namespaces.create(Namespace.make({ metadata: { name: namespace, labels: { [SCENARIO_LABEL]: scenario } } }));
  log(`${version} (${kubeconfig}): namespace ${namespace}${crdExisted ? "" : `, CRD ${crdName} registered`}`);
  const operatorKubeconfig = await inNamespace(dir, kubeconfig, namespace);
  const items = client.resource(ChaosItem, namespace) as unknown as ResourceClient<ChaosItemObject>;
  const operators: Proc[] = [];

  /** Stops the replicas, lets go of the ChaosItems' finalizer, deletes the namespace (and the CRD). */
  const teardown = async (interrupted: boolean): Promise<void> => {
    // An interrupted run is short of time: its replicas need not drain.
    await Promise.all(operators.map((op) => (interrupted ? op.kill9() : op.stop())));
    let released = 0;
    const held: string[] = [];
    for await (const item of items.listAll()) {
      if (item.metadata?.finalizers?.includes(CHAOS_FINALIZER)) held.push(item.metadata.name ?? "");
    }
    await forEach(held, DRIVER_CONCURRENCY, async (name) => {
      try {
        // The only finalizer they have; null removes the field (a merge patch).
        await items.patch(name, { metadata: { finalizers: null } }, { type: "merge" });
        released++;
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    });
    await namespaces.delete(namespace).catch((err: unknown) => {
      if (!isNotFound(err)) throw err;
    });
    log(`namespace ${namespace} deleted (${released} ChaosItems' finalizer removed first)`);
    if (!interrupted) {
      const deadline = Date.now() + NAMESPACE_GONE_MS;
      while ((await namespaces.get(namespace).catch(() => undefined)) !== undefined) {
        if (Date.now() > deadline) {
          log(`namespace ${namespace} still terminating after ${NAMESPACE_GONE_MS / 1000} s; left to the cluster`);
          break;
        }
        await sleep(1000);
      }
    }
    if (!crdExisted) {
      const elsewhere = await client
        .resource(ChaosItem)
        .list({ fieldSelector: `metadata.namespace!=${namespace}`, limit: 1 });
      if (elsewhere.items.length === 0) await crds.delete(crdName);
      else log(`CRD ${crdName} kept: ChaosItems exist in other namespaces`);
    }
  };
  let ended: Promise<void> | undefined;
  const end = (interrupted: boolean) => {
    ended ??= teardown(interrupted).finally(async () => {
      await client.close();
      await rm(dir, { recursive: true, force: true });
    });
    return ended;
  };
  const unregister = cleanUpOnSignal(() => end(true));

  return {
    dir,
    kubeconfig,
    namespace,
    marks,
    client,
    ChaosItem,
    version,
    startOperator: operatorStarter({ dir, kubeconfig: operatorKubeconfig, namespace, marks }, operators),
    async whenQuiet(timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      let last = await apiServerCpuSeconds(client);
      let lastAt = Date.now();
      let quiet = 0;
      while (last !== null && quiet < QUIET_SAMPLES && Date.now() < deadline) {
        await sleep(1000);
        const now = await apiServerCpuSeconds(client);
        if (now === null) return false;
        const at = Date.now();
        quiet = (now - last) / ((at - lastAt) / 1000) <= QUIET_CPU_SHARE ? quiet + 1 : 0;
        last = now;
        lastAt = at;
      }
      return quiet >= QUIET_SAMPLES;
    },
    async stop() {
      unregister();
      await end(false);
    },
  };
}
