/**
 * A throwaway Kubernetes control plane from the binaries of controller-runtime's envtest: `etcd` and
 * `kube-apiserver` (and `kube-controller-manager` when there is one) from `KUBEBUILDER_ASSETS`,
 * started the way envtest starts them (pkg/internal/testing/controlplane/{etcd,apiserver,plane}.go,
 * pkg/envtest/server.go): free loopback ports, a temporary folder for etcd's data and the
 * apiserver's certificates, a CA and serving certificate made for the run, a ServiceAccount signing
 * key, and an admin in `system:masters`.
 *
 * ## Expected flow
 * 1. Find the binaries: `binaryAssetsDirectory`, else `KUBEBUILDER_ASSETS`, else envtest's default
 *    `/usr/local/kubebuilder/bin`. A missing `etcd` or `kube-apiserver` is an error naming the folder
 *    and the file.
 * 2. etcd, ready when `GET /health` on its client URL answers 200.
 * 3. kube-apiserver on etcd, ready when `GET /readyz` answers 200 (every post-start hook done: the
 *    RBAC bootstrap policy is in) and the `default` namespace exists (envtest's
 *    waitForDefaultNamespace).
 * 4. kube-controller-manager, when present, with only the garbage collector and the namespace
 *    controller, ready when `GET /healthz` answers 200.
 * 5. `stop()`: the processes in reverse order, then the temporary folder.
 *
 * ## Guarantees
 * - When starting fails, whatever had started is stopped and the folder removed before the error.
 * - After `stop()` no process of the plane runs and its folder is gone (even when a stop failed).
 *
 * ## Where it differs from envtest, and why
 * - The admin authenticates with a bearer token from `--token-auth-file`, where envtest makes client
 *   certificates (`--client-ca-file`): every kubeconfig Capstan writes and reads carries a token, and
 *   a ServiceAccount kubeconfig is the admin's with another token.
 * - Readiness is `/readyz` with the admin's token, where envtest polls `/healthz` anonymously: ready
 *   also means the post-start hooks have run, and it does not depend on the anonymous role bindings.
 * - `--insecure-port` is never passed: kube-apiserver 1.24 removed it (envtest asks `--help` and
 *   leaves it out there); this backend targets 1.26 and later.
 * - envtest never starts kube-controller-manager; without it nothing garbage-collects and a deleted
 *   namespace stays Terminating, so it is started when its binary is in the folder.
 */
import { execFile } from "node:child_process";
import { generateKeyPair } from "node:crypto";
import { accessSync, constants } from "node:fs";
import { access, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { type Duration, toMilliseconds } from "capstan";
import { newBearerToken, renderKubeconfig } from "../../devcluster/kubeconfig.ts";
import { createServingCertificates } from "../../devcluster/tls.ts";
import { ControlPlaneError, type ControlPlaneProcess, httpProbe, startProcess } from "./envtest-processes.ts";
import { freePorts, LOOPBACK } from "./free-ports.ts";

/** Options of the envtest backend's control plane (`startTestCluster({ backend: "envtest", envtest })`). */
export interface EnvtestControlPlaneOptions {
  /**
   * The folder holding `etcd`, `kube-apiserver` and optionally `kube-controller-manager` (as
   * `setup-envtest use -p path` prints it); default `KUBEBUILDER_ASSETS`, else `/usr/local/kubebuilder/bin`.
   */
  binaryAssetsDirectory?: string;
  /**
   * Start `kube-controller-manager` (garbage collection, namespace deletion): default when its
   * binary is in the folder; `true` makes a missing binary an error, `false` never starts it.
   */
  controllerManager?: boolean;
  /** How long each process may take to be ready; default `KUBEBUILDER_CONTROLPLANE_START_TIMEOUT`, else 20 s. */
  startTimeout?: Duration;
  /** How long each process gets after SIGTERM before SIGKILL; default `KUBEBUILDER_CONTROLPLANE_STOP_TIMEOUT`, else 5 s. */
  stopTimeout?: Duration;
  /**
   * Flags added after the backend's own, per binary (for a repeated flag the last one wins, as
   * with envtest's `Configure().Set`): `{ kubeApiserver: ["--feature-gates=..."] }`.
   */
  args?: {
    etcd?: readonly string[];
    kubeApiserver?: readonly string[];
    kubeControllerManager?: readonly string[];
  };
}

/** A running control plane. */
export interface EnvtestControlPlane {
  /** `https://127.0.0.1:<secure port>` */
  readonly url: string;
  readonly caPem: string;
  /** The admin's bearer token (`system:masters`). */
  readonly token: string;
  /** The admin kubeconfig, YAML, and the file holding it (in {@link dir}). */
  readonly kubeconfig: string;
  readonly kubeconfigPath: string;
  /** The plane's temporary folder (etcd's data, certificates, keys), removed by `stop()`. */
  readonly dir: string;
  /** Whether kube-controller-manager runs. */
  readonly controllerManager: boolean;
  /** The running processes, in start order. */
  readonly processes: readonly ControlPlaneProcess[];
  stop(): Promise<void>;
}

/** envtest's default folder when `KUBEBUILDER_ASSETS` is not set (process.AssetsDefaultPath). */
export const DEFAULT_ASSETS_DIRECTORY = "/usr/local/kubebuilder/bin";

/** envtest's default start timeout per process (defaultKubebuilderControlPlaneStartTimeout). */
const DEFAULT_START_TIMEOUT: Duration = "20s";

/**
 * An idle etcd or kube-apiserver stops within a second of SIGTERM; 5 s (envtest waits 20) keeps the
 * three stops of `cluster.stop()` within a test runner's usual 30 s hook timeout even when each needs
 * its SIGKILL.
 */
const DEFAULT_STOP_TIMEOUT: Duration = "5s";

/** How long `etcd --help` may take: it prints and exits at once. */
const HELP_TIMEOUT_MS = 10_000;

/**
 * The Services' virtual IP range: envtest's, a range no test reaches (there is no kube-proxy), given
 * because kube-apiserver allocates the `kubernetes` Service's IP from it.
 */
const SERVICE_CLUSTER_IP_RANGE = "10.0.0.0/24";

/**
 * The only controllers started: the two a test of an operator relies on (dependents deleted with
 * their owner, a namespace's content deleted with it). Without kubelet or scheduler, the workload
 * controllers would only leave Pods Pending. The names are those kube-controller-manager 1.26+
 * accepts (later versions also take `garbage-collector-controller`, `namespace-controller`).
 */
const CONTROLLERS = "garbagecollector,namespace";

const ETCD = "etcd";
const KUBE_APISERVER = "kube-apiserver";
const KUBE_CONTROLLER_MANAGER = "kube-controller-manager";

/** Where the binaries are, as found from the options and the environment. */
export interface EnvtestAssets {
  readonly directory: string;
  /** How the folder was chosen, for messages. */
  readonly from: string;
}

/** The folder of the binaries: the option, else `KUBEBUILDER_ASSETS`, else envtest's default. */
export function envtestAssets(
  options: Pick<EnvtestControlPlaneOptions, "binaryAssetsDirectory">,
  env: NodeJS.ProcessEnv = process.env,
): EnvtestAssets {
  if (options.binaryAssetsDirectory !== undefined) {
    return { directory: resolve(options.binaryAssetsDirectory), from: "the binaryAssetsDirectory option" };
  }
  const fromEnv = env.KUBEBUILDER_ASSETS?.trim();
  if (fromEnv !== undefined && fromEnv !== "") return { directory: resolve(fromEnv), from: "KUBEBUILDER_ASSETS" };
  return { directory: DEFAULT_ASSETS_DIRECTORY, from: "envtest's default, as KUBEBUILDER_ASSETS is not set" };
}

/**
 * Whether the folder `KUBEBUILDER_ASSETS` (or envtest's default) names holds kube-controller-manager:
 * what the envtest backend's capabilities are before a cluster starts.
 */
export function controllerManagerInAssets(env: NodeJS.ProcessEnv = process.env): boolean {
  try {
    accessSync(join(envtestAssets({}, env).directory, KUBE_CONTROLLER_MANAGER), constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Why `name` in `directory` cannot be run, or `undefined` when it can. */
async function unusable(directory: string, name: string): Promise<string | undefined> {
  const path = join(directory, name);
  try {
    await access(path, constants.F_OK);
  } catch {
    return `${path} is missing`;
  }
  try {
    await access(path, constants.X_OK);
  } catch {
    return `${path} is not executable`;
  }
  return undefined;
}

/** Starts the control plane; see the module documentation. */
export async function startEnvtestControlPlane(
  options: EnvtestControlPlaneOptions = {},
  env: NodeJS.ProcessEnv = process.env,
): Promise<EnvtestControlPlane> {
  const assets = envtestAssets(options, env);
  const required = [ETCD, KUBE_APISERVER, ...(options.controllerManager === true ? [KUBE_CONTROLLER_MANAGER] : [])];
  const problems = (await Promise.all(required.map((name) => unusable(assets.directory, name)))).filter(
    (p): p is string => p !== undefined,
  );
  if (problems.length > 0) {
    throw new Error(
      `startTestCluster: the envtest backend runs ${required.join(", ")} from ${assets.directory} (${assets.from}), ` +
        `but ${problems.join(" and ")}. Point KUBEBUILDER_ASSETS (or the binaryAssetsDirectory option) at a folder ` +
        "with the binaries, e.g. KUBEBUILDER_ASSETS=$(setup-envtest use -p path 1.30.x)",
    );
  }
  const withControllerManager =
    options.controllerManager ?? (await unusable(assets.directory, KUBE_CONTROLLER_MANAGER)) === undefined;
  const startTimeoutMs = toMilliseconds(
    options.startTimeout ?? nonEmpty(env.KUBEBUILDER_CONTROLPLANE_START_TIMEOUT) ?? DEFAULT_START_TIMEOUT,
  );
  const stopTimeoutMs = toMilliseconds(
    options.stopTimeout ?? nonEmpty(env.KUBEBUILDER_CONTROLPLANE_STOP_TIMEOUT) ?? DEFAULT_STOP_TIMEOUT,
  );
  const binary = (name: string) => join(assets.directory, name);

  const dir = await mkdtemp(join(tmpdir(), "capstan-envtest-"));
  const started: ControlPlaneProcess[] = [];
  const stop = async (): Promise<void> => {
    const failures: unknown[] = [];
    for (const p of [...started].reverse()) {
      try {
        await p.stop();
      } catch (err) {
        failures.push(err);
      }
    }
    started.length = 0;
    await rm(dir, { recursive: true, force: true });
    if (failures.length > 0) throw new AggregateError(failures, "the envtest control plane did not stop cleanly");
  };

  try {
    const [etcdClientPort, etcdPeerPort, securePort, controllerManagerPort] = (await freePorts(4)) as [
      number,
      number,
      number,
      number,
    ];
    const etcdUrl = `http://${LOOPBACK}:${etcdClientPort}`;
    const etcdDataDir = join(dir, "etcd");
    const certDir = join(dir, "kube-apiserver");
    // etcd warns about a data dir others may read; the certificates and keys are secrets too.
    await mkdir(etcdDataDir, { mode: 0o700 });
    await mkdir(certDir, { mode: 0o700 });

    const etcdArgs = [
      `--listen-peer-urls=http://${LOOPBACK}:${etcdPeerPort}`,
      `--advertise-client-urls=${etcdUrl}`,
      `--listen-client-urls=${etcdUrl}`,
      `--data-dir=${etcdDataDir}`,
      // A test's data need not survive a power cut; envtest passes it whenever etcd has the flag.
      ...((await hasFlag(binary(ETCD), "unsafe-no-fsync")) ? ["--unsafe-no-fsync=true"] : []),
      ...(options.args?.etcd ?? []),
    ];
    started.push(
      await startProcess({
        name: ETCD,
        path: binary(ETCD),
        args: etcdArgs,
        probe: httpProbe(`${etcdUrl}/health`),
        startTimeoutMs,
        stopTimeoutMs,
      }),
    );

    const url = `https://${LOOPBACK}:${securePort}`;
    const [certs, signingKey] = await Promise.all([createServingCertificates(LOOPBACK), serviceAccountKeys()]);
    const token = newBearerToken();
    const files = {
      // kube-apiserver reads apiserver.crt and apiserver.key from --cert-dir, as envtest writes them.
      cert: join(certDir, "apiserver.crt"),
      key: join(certDir, "apiserver.key"),
      saPublic: join(certDir, "sa-signer.pub"),
      saPrivate: join(certDir, "sa-signer.key"),
      tokens: join(certDir, "token-auth.csv"),
    };
    await Promise.all([
      writeFile(files.cert, certs.certPem, { mode: 0o600 }),
      writeFile(files.key, certs.keyPem, { mode: 0o600 }),
      writeFile(files.saPublic, signingKey.publicPem, { mode: 0o600 }),
      writeFile(files.saPrivate, signingKey.privatePem, { mode: 0o600 }),
      // token,user,uid,"groups": the admin envtest provisions (name admin, group system:masters).
      writeFile(files.tokens, `${token},admin,admin,"system:masters"\n`, { mode: 0o600 }),
    ]);
    const apiserverArgs = [
      `--etcd-servers=${etcdUrl}`,
      `--cert-dir=${certDir}`,
      `--secure-port=${securePort}`,
      `--bind-address=${LOOPBACK}`,
      `--service-cluster-ip-range=${SERVICE_CLUSTER_IP_RANGE}`,
      "--allow-privileged=true",
      // envtest's: no controller-manager creates the `default` ServiceAccount a Pod would need.
      "--disable-admission-plugins=ServiceAccount",
      "--authorization-mode=RBAC",
      `--service-account-issuer=${url}/`,
      `--service-account-key-file=${files.saPublic}`,
      `--service-account-signing-key-file=${files.saPrivate}`,
      `--token-auth-file=${files.tokens}`,
      ...(options.args?.kubeApiserver ?? []),
    ];
    const readyz = httpProbe(`${url}/readyz`, { ca: certs.caPem, token });
    const defaultNamespace = httpProbe(`${url}/api/v1/namespaces/default`, { ca: certs.caPem, token });
    started.push(
      await startProcess({
        name: KUBE_APISERVER,
        path: binary(KUBE_APISERVER),
        args: apiserverArgs,
        probe: async () => {
          const ready = await readyz();
          return ready.ok ? await defaultNamespace() : ready;
        },
        startTimeoutMs,
        stopTimeoutMs,
      }),
    );

    const kubeconfig = renderKubeconfig({ server: url, caPem: certs.caPem, token });
    const kubeconfigPath = join(dir, "admin.kubeconfig");
    await writeFile(kubeconfigPath, kubeconfig, { mode: 0o600 });

    if (withControllerManager) {
      const controllerManagerArgs = [
        `--kubeconfig=${kubeconfigPath}`,
        // Delegated authentication and authorization of its own /healthz and metrics, as kubeadm sets them.
        `--authentication-kubeconfig=${kubeconfigPath}`,
        `--authorization-kubeconfig=${kubeconfigPath}`,
        `--bind-address=${LOOPBACK}`,
        `--secure-port=${controllerManagerPort}`,
        // It makes a self-signed serving certificate there.
        `--cert-dir=${join(dir, "kube-controller-manager")}`,
        // One instance: taking the lease would only delay its start by seconds.
        "--leader-elect=false",
        `--controllers=${CONTROLLERS}`,
        ...(options.args?.kubeControllerManager ?? []),
      ];
      started.push(
        await startProcess({
          name: KUBE_CONTROLLER_MANAGER,
          path: binary(KUBE_CONTROLLER_MANAGER),
          args: controllerManagerArgs,
          // Its certificate is self-signed, made by itself: nothing to verify it against.
          probe: httpProbe(`https://${LOOPBACK}:${controllerManagerPort}/healthz`, { insecure: true }),
          startTimeoutMs,
          stopTimeoutMs,
        }),
      );
    }

    return {
      url,
      caPem: certs.caPem,
      token,
      kubeconfig,
      kubeconfigPath,
      dir,
      controllerManager: withControllerManager,
      processes: [...started],
      stop,
    };
  } catch (err) {
    await stop().catch(() => undefined);
    if (err instanceof ControlPlaneError) {
      throw new Error(`startTestCluster: the envtest backend could not start its control plane: ${err.message}`, {
        cause: err,
      });
    }
    throw err;
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value.trim();
}

/** Whether `binary --help` lists `--<flag>` at the start of a line (envtest's process.CheckFlag). */
async function hasFlag(binary: string, flag: string): Promise<boolean> {
  const run = promisify(execFile);
  try {
    const { stdout, stderr } = await run(binary, ["--help"], { timeout: HELP_TIMEOUT_MS });
    return new RegExp(`^\\s*--${flag}\\b`, "m").test(`${stdout}\n${stderr}`);
  } catch {
    // A binary that cannot print its help will fail to start as well, and say why there.
    return false;
  }
}

/**
 * The key pair ServiceAccount tokens are signed and verified with. ECDSA P-256, as envtest's tiny CA
 * makes them: a few milliseconds where RSA would take tens.
 */
async function serviceAccountKeys(): Promise<{ publicPem: string; privatePem: string }> {
  const pair = await promisify(generateKeyPair)("ec", {
    namedCurve: "prime256v1",
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
  });
  return { publicPem: pair.publicKey, privatePem: pair.privateKey };
}
