/**
 * The kubeconfig backend: an existing cluster (kind, a staging cluster, another process's embedded
 * server) reached only through a kubeconfig file, shared with other runs and other people.
 *
 * ## Expected flow
 * 1. Read the kubeconfig (`kubeconfig.path` or `CAPSTAN_TEST_KUBECONFIG`) and pick its context
 *    (`kubeconfig.context`, `CAPSTAN_TEST_CONTEXT`, or its current one); write a copy of just that
 *    context into the run's folder, with the run's namespace as the context's namespace (kubectl
 *    and the typed client then default to it).
 * 2. Sweep what crashed earlier runs left (`run-labels.ts`), then create the run's namespace.
 * 3. `stop()`: delete what the run created (`created-objects.ts`) and wait for it to be gone.
 *
 * ## Guarantees
 * - Each run has its own namespace, `<namespacePrefix>-<random id>`, labelled with the run's id and
 *   start time; two runs on one cluster never share one.
 * - Deleted at `stop()`: that namespace (with everything in it); the namespaces, cluster-scoped
 *   objects and objects in other namespaces (`default`) that the run's clients or its
 *   `cluster.kubectl` commands created (`created-objects.ts`, `kubectl-creations.ts`); the
 *   ClusterRoles, bindings and namespaces of `generatedRbac` that did not exist before. Nothing that
 *   existed before the run.
 * - CRDs are shared with the other runs on the cluster (`crd-users.ts`): the run marks those it
 *   uses, and the last user deletes a CRD a test run created, whichever run that was; one that
 *   existed before any test run stays.
 *
 * ## Caveats
 * - What a child process other than kubectl creates is not seen, except generatedRbac's manifests.
 * - Objects outside the run's namespaces are not labelled: a crashed run leaves them.
 */
import { readFile, writeFile } from "node:fs/promises";
import { dirname, isAbsolute, resolve } from "node:path";
import { type Duration, toMilliseconds } from "capstan";
import { loadClientConfig } from "capstan/client";
import { Namespace } from "capstan/core";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { capabilitiesOf, type TestCapabilities } from "./capabilities.ts";
import { crdUserLabels, joinCrd, leaveCrd, sweepCrdUsers } from "./crd-users.ts";
import { type CreatedObject, CreatedObjects, RecordingClient } from "./created-objects.ts";
import type { KubectlOutcome } from "./kubectl-creations.ts";
import { newRun, STARTED_LABEL, sweepStaleRuns } from "./run-labels.ts";
import { detectRunningPods } from "./running-pods.ts";
import { deleteAndWait } from "./teardown.ts";
import type { AppliedManifest, TestBackend } from "./test-backend.ts";

/** Options of the kubeconfig backend (`startTestCluster({ backend: "kubeconfig", kubeconfig: { ... } })`). */
export interface KubeconfigBackendOptions {
  /** The cluster's kubeconfig file; default `CAPSTAN_TEST_KUBECONFIG`. */
  path?: string;
  /** Its context; default `CAPSTAN_TEST_CONTEXT`, else the file's current context. */
  context?: string;
  /** The run's namespace is `<namespacePrefix>-<random id>`; default `"capstan-test"`. */
  namespacePrefix?: string;
  /** Runs started longer ago than this are swept at start (default {@link DEFAULT_STALE_AFTER}). */
  staleAfter?: Duration;
  /** How long `stop()` waits for the run's objects to be deleted (default {@link DEFAULT_TEARDOWN_TIMEOUT}). */
  teardownTimeout?: Duration;
}

/**
 * A run older than this crashed (or was killed) before its `stop()`: test suites last minutes,
 * so an hour leaves a wide margin for a long one still going.
 */
export const DEFAULT_STALE_AFTER: Duration = "1h";

/**
 * Deleting a namespace on a real cluster takes seconds (its content is deleted first, by the
 * namespace controller); 25 s stays under a test runner's usual 30 s hook timeout, so the error
 * naming what is left is what the author sees.
 */
export const DEFAULT_TEARDOWN_TIMEOUT: Duration = "25s";

/**
 * Default waits on a real cluster: garbage collection, namespace deletion and an informer's first
 * list take seconds where the embedded server takes milliseconds.
 */
const REAL_CLUSTER_WAIT_SCALE = 3;

const DEFAULT_NAMESPACE_PREFIX = "capstan-test";

const NAMESPACES = "/api/v1/namespaces";

/** Where the kinds generatedRbac may apply without a namespace are served. */
const CLUSTER_SCOPED_COLLECTIONS: Readonly<Record<string, string>> = {
  Namespace: NAMESPACES,
  ClusterRole: "/apis/rbac.authorization.k8s.io/v1/clusterroles",
  ClusterRoleBinding: "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
};

interface KubeconfigFile {
  clusters?: { name: string; cluster: Record<string, unknown> }[];
  users?: { name: string; user: Record<string, unknown> }[];
  contexts?: { name: string; context: { cluster: string; user: string; namespace?: string } }[];
  "current-context"?: string;
}

/**
 * Connects to the cluster and creates the run's namespace; see the module documentation. Whether pods
 * run is asked of the cluster's Nodes (running-pods.ts), unless `capabilities` are given (the envtest
 * backend knows its own).
 */
export async function connectKubeconfigBackend(
  options: KubeconfigBackendOptions,
  dir: string,
  env: NodeJS.ProcessEnv = process.env,
  capabilities?: TestCapabilities,
): Promise<TestBackend> {
  const source = options.path ?? env.CAPSTAN_TEST_KUBECONFIG;
  if (source === undefined || source === "") {
    throw new Error(
      "startTestCluster: the kubeconfig backend needs a cluster: set CAPSTAN_TEST_KUBECONFIG (and CAPSTAN_TEST_CONTEXT) or the kubeconfig: { path, context } option",
    );
  }
  const run = newRun();
  const namespace = `${options.namespacePrefix ?? DEFAULT_NAMESPACE_PREFIX}-${run.id}`;
  const kubeconfig = await runKubeconfig(source, options.context ?? nonEmpty(env.CAPSTAN_TEST_CONTEXT), namespace);
  const kubeconfigPath = resolve(dir, "kubeconfig");
  await writeFile(kubeconfigPath, kubeconfig, { mode: 0o600 });
  const created = new CreatedObjects(namespace);
  const newClient = (path: string) => new RecordingClient(loadClientConfig({ kubeconfig: path }), run, created);
  const client = newClient(kubeconfigPath);
  const teardownMs = toMilliseconds(options.teardownTimeout ?? DEFAULT_TEARDOWN_TIMEOUT);
  const staleAfterMs = toMilliseconds(options.staleAfter ?? DEFAULT_STALE_AFTER);
  // Users of a CRD started before this are crashed runs (Unix seconds, as the labels).
  const staleCutoff = Number(run.labels[STARTED_LABEL]) - Math.floor(staleAfterMs / 1000);
  /** CRDs the run uses without having created them through its client. */
  const usedCrds = new Set<string>();
  const stop = async () => {
    try {
      const crds = new Set([...usedCrds, ...created.list().flatMap((o) => (o.crd ? [crdName(o)] : []))]);
      const released = await Promise.allSettled(
        [...crds].map(async (name): Promise<CreatedObject | undefined> => {
          const uid = await leaveCrd(client, name, run, staleCutoff);
          if (uid === undefined) return undefined;
          return {
            path: `${CRDS}/${name}`,
            description: `customresourcedefinitions/${name}`,
            namespace: false,
            crd: true,
            uid,
          };
        }),
      );
      const deleted = released.flatMap((r) => (r.status === "fulfilled" && r.value !== undefined ? [r.value] : []));
      await deleteAndWait(
        client,
        created
          .list()
          .filter((o) => !o.crd)
          .reverse(),
        teardownMs,
        deleted,
      );
      const failed = released.find((r): r is PromiseRejectedResult => r.status === "rejected");
      if (failed !== undefined) throw failed.reason;
    } finally {
      await client.close();
    }
  };
  let detected: TestCapabilities;
  try {
    detected = capabilities ?? capabilitiesOf("kubeconfig", await detectRunningPods(client));
    await sweepStaleRuns(client, staleAfterMs);
    // Housekeeping, as sweepStaleRuns: a caller that may not list or patch CRDs can still run its tests.
    await sweepCrdUsers(client, staleCutoff).catch(() => undefined);
    await client.resource(Namespace).create({ metadata: { name: namespace } });
  } catch (err) {
    await stop().catch(() => undefined);
    throw new Error(`startTestCluster: the kubeconfig backend could not use ${client.config.source}: ${String(err)}`, {
      cause: err,
    });
  }

  const beforeApply = async <M extends AppliedManifest>(manifests: readonly M[]): Promise<M[]> => {
    const namespaces = new Set(
      manifests.flatMap((m) => (m.metadata.namespace === undefined ? [] : [m.metadata.namespace])),
    );
    for (const ns of namespaces) {
      // kubectl cannot apply into a namespace that does not exist; created here, it is recorded.
      if (await created.recordIfAbsent(client, NAMESPACES, ns)) {
        await client.resource(Namespace).create({ metadata: { name: ns } });
      }
    }
    const out: M[] = [];
    for (const m of manifests) {
      const collection = m.metadata.namespace === undefined ? CLUSTER_SCOPED_COLLECTIONS[m.kind] : undefined;
      const ours =
        collection !== undefined &&
        (created.has(collection, m.metadata.name) ||
          (await created.recordIfAbsent(client, collection, m.metadata.name)));
      out.push(ours ? { ...m, metadata: { ...m.metadata, labels: { ...m.metadata.labels, ...run.labels } } } : m);
    }
    return out;
  };

  const useCrds = async (names: readonly string[]) => {
    for (const name of names) {
      if (await joinCrd(client, name, run)) usedCrds.add(name);
    }
  };

  const kubectlCreated = async (outcome: KubectlOutcome) => {
    for (const { collection, name, namespace: ns } of outcome.creations) {
      if (ns !== undefined) {
        if (!created.ownsNamespace(ns)) created.add(collection, name);
        continue;
      }
      created.add(collection, name);
      // Labelled after the fact (kubectl sent its own body), so a crash leaves it to the sweep.
      const labels = collection === CRDS ? { ...run.labels, ...crdUserLabels(run) } : run.labels;
      await client
        .request("PATCH", `${collection}/${name}`, {
          body: { metadata: { labels } },
          contentType: "application/merge-patch+json",
        })
        // Recorded either way: a missing label only hides it from the sweep after a crash.
        .catch(() => undefined);
    }
    await useCrds(outcome.appliedCrds);
  };

  return {
    name: "kubeconfig",
    capabilities: detected,
    kubeconfigPath,
    kubeconfig,
    url: client.config.server,
    namespace,
    client,
    rbac: true,
    server: undefined,
    waitScale: REAL_CLUSTER_WAIT_SCALE,
    newClient,
    beforeApply,
    kubectlCreated,
    useCrds,
    stop,
  };
}

const CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

function crdName(obj: CreatedObject): string {
  return obj.path.slice(obj.path.lastIndexOf("/") + 1);
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

/**
 * The kubeconfig of the run: only `context` (or the current one) of the file at `path`, its
 * namespace set to `namespace`, relative file references made absolute (the copy lives elsewhere).
 */
async function runKubeconfig(path: string, context: string | undefined, namespace: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    throw new Error(`startTestCluster: cannot read the kubeconfig ${path}: ${(err as Error).message}`, { cause: err });
  }
  const config = (parseYaml(text) ?? {}) as KubeconfigFile;
  const contextName = context ?? config["current-context"];
  const ctx = config.contexts?.find((c) => c.name === contextName);
  if (ctx === undefined) {
    throw new Error(
      `startTestCluster: the kubeconfig ${path} has no context ${JSON.stringify(contextName ?? "")} (it has: ${(config.contexts ?? []).map((c) => c.name).join(", ") || "none"})`,
    );
  }
  const cluster = config.clusters?.find((c) => c.name === ctx.context.cluster);
  const user = config.users?.find((u) => u.name === ctx.context.user);
  if (cluster === undefined || user === undefined) {
    throw new Error(`startTestCluster: the kubeconfig ${path}'s context ${ctx.name} names a missing cluster or user`);
  }
  const base = dirname(resolve(path));
  const absolute = (obj: Record<string, unknown>, keys: readonly string[]) =>
    Object.fromEntries(
      Object.entries(obj).map(([k, v]) => [
        k,
        keys.includes(k) && typeof v === "string" && v !== "" && !isAbsolute(v) ? resolve(base, v) : v,
      ]),
    );
  const out = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: cluster.name, cluster: absolute(cluster.cluster, ["certificate-authority"]) }],
    users: [{ name: user.name, user: absolute(user.user, ["client-certificate", "client-key", "tokenFile"]) }],
    contexts: [{ name: ctx.name, context: { ...ctx.context, namespace } }],
    "current-context": ctx.name,
  };
  return stringifyYaml(out);
}
