/**
 * The envtest backend of `startTestCluster`: etcd and kube-apiserver (and kube-controller-manager)
 * from `KUBEBUILDER_ASSETS`, started for the cluster and stopped with it.
 *
 * CI has none of these binaries, so the binaries here are STAND-INS (support/envtest-stand-ins.ts):
 * Node scripts under the binaries' names that record their flags, answer the health checks, and
 * (kube-apiserver) serve Capstan's embedded API server from the built dist (`npm run build` first)
 * with the certificate and admin token the backend made. They prove the flags, the start order and
 * readiness waits, the errors and the teardown; the same suites on real binaries are run as
 * docs/testing-cli.md ("Backends") says.
 */
import { access, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { ConfigMap } from "capstan/core";
import { missingCapability, startTestCluster, type TestCluster } from "capstan-dev/testing";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { selectBackend } from "../../packages/capstan-dev/src/testing/backends/backend-selection.ts";
import {
  type EnvtestControlPlane,
  startEnvtestControlPlane,
} from "../../packages/capstan-dev/src/testing/backends/envtest-control-plane.ts";
import { flag, isRunning, type StandInOptions, writeStandIns } from "./support/envtest-stand-ins.ts";

let dir: string;
const toStop: { stop(): Promise<void> }[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "capstan-envtest-backend-"));
});
afterEach(async () => {
  vi.unstubAllEnvs();
  await Promise.all(toStop.splice(0).map((c) => c.stop().catch(() => undefined)));
  await rm(dir, { recursive: true, force: true });
});

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

async function standIns(options: StandInOptions = {}) {
  return writeStandIns(dir, options);
}

async function plane(options: Parameters<typeof startEnvtestControlPlane>[0]): Promise<EnvtestControlPlane> {
  const started = await startEnvtestControlPlane(options, {});
  toStop.push(started);
  return started;
}

describe("choosing the envtest backend", () => {
  it("accepts envtest from the option or CAPSTAN_TEST_BACKEND and lists it among the supported backends", () => {
    expect(selectBackend(undefined, { CAPSTAN_TEST_BACKEND: "envtest" })).toBe("envtest");
    expect(selectBackend("envtest", {})).toBe("envtest");
    expect(() => selectBackend("kind", {})).toThrow("supported: embedded, kubeconfig, envtest");
  });

  it("runs on the binaries CAPSTAN_TEST_BACKEND=envtest and KUBEBUILDER_ASSETS name, with nothing else", async () => {
    const bins = await standIns();
    vi.stubEnv("CAPSTAN_TEST_BACKEND", "envtest");
    vi.stubEnv("KUBEBUILDER_ASSETS", bins.assets);
    const cluster = await startTestCluster();
    toStop.push(cluster);
    expect(cluster.capabilities.backend).toBe("envtest");
    expect(flag(await bins.recorded("kube-apiserver"), "secure-port")).toBe(new URL(cluster.url).port);
  });
});

describe("a TestCluster on envtest's binaries", () => {
  it("starts etcd then kube-apiserver with envtest's flags, and serves the run's namespace as the admin", async () => {
    const bins = await standIns();
    const cluster: TestCluster = await startTestCluster({
      backend: "envtest",
      envtest: { binaryAssetsDirectory: bins.assets },
    });
    toStop.push(cluster);

    const etcd = await bins.recorded("etcd");
    const apiserver = await bins.recorded("kube-apiserver");
    const clientUrl = flag(etcd, "listen-client-urls") ?? "";
    expect(clientUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(flag(etcd, "advertise-client-urls")).toBe(clientUrl);
    expect(flag(etcd, "listen-peer-urls")).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(flag(etcd, "listen-peer-urls")).not.toBe(clientUrl);
    expect(flag(etcd, "unsafe-no-fsync")).toBe("true");
    const dataDir = flag(etcd, "data-dir") ?? "";
    expect(await exists(dataDir)).toBe(true);

    const port = new URL(cluster.url).port;
    expect(cluster.url).toBe(`https://127.0.0.1:${port}`);
    expect(flag(apiserver, "etcd-servers")).toBe(clientUrl);
    expect(flag(apiserver, "secure-port")).toBe(port);
    expect(flag(apiserver, "bind-address")).toBe("127.0.0.1");
    expect(flag(apiserver, "service-cluster-ip-range")).toBe("10.0.0.0/24");
    expect(flag(apiserver, "authorization-mode")).toBe("RBAC");
    expect(flag(apiserver, "allow-privileged")).toBe("true");
    expect(flag(apiserver, "disable-admission-plugins")).toBe("ServiceAccount");
    expect(flag(apiserver, "service-account-issuer")).toBe(`https://127.0.0.1:${port}/`);
    const certDir = flag(apiserver, "cert-dir") ?? "";
    expect(await readFile(join(certDir, "apiserver.crt"), "utf8")).toContain("BEGIN CERTIFICATE");
    expect(await readFile(flag(apiserver, "service-account-key-file") ?? "", "utf8")).toContain("BEGIN PUBLIC KEY");
    expect(await readFile(flag(apiserver, "service-account-signing-key-file") ?? "", "utf8")).toContain(
      "BEGIN PRIVATE KEY",
    );
    expect(await readFile(flag(apiserver, "token-auth-file") ?? "", "utf8")).toMatch(
      /^[\w-]+,admin,admin,"system:masters"\n$/,
    );
    expect(apiserver?.args.some((a) => a.startsWith("--insecure-port"))).toBe(false);

    // As on the kubeconfig backend: a namespace of the run's own, the default of the client.
    expect(cluster.namespace).toMatch(/^capstan-test-/);
    expect(cluster.client.defaultNamespace).toBe(cluster.namespace);
    await cluster.client
      .resource(ConfigMap, cluster.namespace)
      .create({ metadata: { name: "hello" }, data: { a: "1" } });
    const cm = await cluster.client.resource(ConfigMap, cluster.namespace).get("hello");
    expect(cm.data).toEqual({ a: "1" });
    expect(cluster.capabilities).toMatchObject({
      backend: "envtest",
      faults: false,
      serverInternals: false,
      garbageCollection: false,
      namespaceDeletion: false,
    });
    expect(cluster.waitTimeout).toBe("30000ms");

    await cluster.stop();
    expect(isRunning(etcd?.pid ?? 0)).toBe(false);
    expect(isRunning(apiserver?.pid ?? 0)).toBe(false);
    // The plane's folder (etcd's data, certificates, keys, token file) is gone.
    expect(await exists(dirname(dataDir))).toBe(false);
    expect(await exists(certDir)).toBe(false);
  });

  it("starts kube-controller-manager when it is in the folder, and says garbage collection and namespace deletion work", async () => {
    const bins = await standIns({ controllerManager: true });
    const cluster = await startTestCluster({ backend: "envtest", envtest: { binaryAssetsDirectory: bins.assets } });
    toStop.push(cluster);
    const kcm = await bins.recorded("kube-controller-manager");
    expect(flag(kcm, "controllers")).toBe("garbagecollector,namespace");
    expect(flag(kcm, "leader-elect")).toBe("false");
    expect(flag(kcm, "bind-address")).toBe("127.0.0.1");
    expect(flag(kcm, "secure-port")).toMatch(/^\d+$/);
    const kubeconfig = await readFile(flag(kcm, "kubeconfig") ?? "", "utf8");
    expect(kubeconfig).toContain(cluster.url);
    expect(flag(kcm, "authentication-kubeconfig")).toBe(flag(kcm, "kubeconfig"));
    expect(flag(kcm, "authorization-kubeconfig")).toBe(flag(kcm, "kubeconfig"));
    expect(cluster.capabilities).toMatchObject({ garbageCollection: true, namespaceDeletion: true });

    vi.stubEnv("KUBEBUILDER_ASSETS", bins.assets);
    expect(missingCapability("garbageCollection", "envtest")).toBeUndefined();
    vi.stubEnv("KUBEBUILDER_ASSETS", join(dir, "elsewhere"));
    expect(missingCapability("namespaceDeletion", "envtest")).toBe(
      "needs namespace deletion (a deleted namespace's content removed, then the namespace), which the envtest backend lacks: kube-controller-manager is not in KUBEBUILDER_ASSETS beside kube-apiserver",
    );

    await cluster.stop();
    expect(isRunning(kcm?.pid ?? 0)).toBe(false);
  });
});

describe("errors and bounds", () => {
  it("names the folder, the missing binary and KUBEBUILDER_ASSETS when a binary is missing", async () => {
    const empty = join(dir, "empty");
    vi.stubEnv("KUBEBUILDER_ASSETS", empty);
    await expect(startTestCluster({ backend: "envtest" })).rejects.toThrow(
      `startTestCluster: the envtest backend runs etcd, kube-apiserver from ${empty} (KUBEBUILDER_ASSETS), but ${empty}/etcd is missing and ${empty}/kube-apiserver is missing. Point KUBEBUILDER_ASSETS (or the binaryAssetsDirectory option) at a folder with the binaries, e.g. KUBEBUILDER_ASSETS=$(setup-envtest use -p path 1.30.x)`,
    );
    const bins = await standIns();
    await expect(plane({ binaryAssetsDirectory: bins.assets, controllerManager: true })).rejects.toThrow(
      `but ${bins.assets}/kube-controller-manager is missing`,
    );
    expect(await bins.recorded("etcd")).toBeUndefined();
  });

  it("reports a kube-apiserver that exits before it is ready with its last log lines, and stops etcd", async () => {
    const bins = await standIns({ apiserver: { mode: "exit" } });
    const error = await plane({ binaryAssetsDirectory: bins.assets }).catch((err: Error) => err);
    expect(error).toBeInstanceOf(Error);
    const message = (error as Error).message;
    expect(message).toContain(
      `the envtest backend could not start its control plane: kube-apiserver (${bins.assets}/kube-apiserver) exited with code 1 before it was ready; its last log lines:`,
    );
    expect(message).toContain("  I0101 00:00:00.000100       1 server.go:142] Version: v1.30.0");
    expect(message).toMatch(/failed to listen on 127\.0\.0\.1:\d+: address already in use/);
    const etcd = await bins.recorded("etcd");
    expect(isRunning(etcd?.pid ?? 0)).toBe(false);
    expect(await exists(dirname(flag(etcd, "data-dir") ?? ""))).toBe(false);
  });

  it("waits for /readyz of a kube-apiserver that answers 500 for a while", async () => {
    const readyAfterMs = 800;
    const bins = await standIns({ apiserver: { mode: "slow", readyAfterMs } });
    const started = Date.now();
    const cp = await plane({ binaryAssetsDirectory: bins.assets });
    expect(Date.now() - started).toBeGreaterThanOrEqual(readyAfterMs);
    expect(await bins.notReadyAnswers()).toBeGreaterThan(1);
    expect(cp.processes.map((p) => p.name)).toEqual(["etcd", "kube-apiserver"]);
  });

  it("gives up on a kube-apiserver never ready after the start timeout, with its last log lines, and leaves no process", async () => {
    const bins = await standIns({ apiserver: { mode: "never-ready" } });
    const error = await plane({ binaryAssetsDirectory: bins.assets, startTimeout: "1s" }).catch((err: Error) => err);
    const message = (error as Error).message;
    expect(message).toContain(
      `kube-apiserver (${bins.assets}/kube-apiserver) did not become ready within 1000 ms (last check: GET https://127.0.0.1:`,
    );
    expect(message).toContain("ECONNREFUSED");
    expect(message).toContain("grpc: addrConn.createTransport failed to connect to etcd");
    const etcd = await bins.recorded("etcd");
    const apiserver = await bins.recorded("kube-apiserver");
    expect(isRunning(apiserver?.pid ?? 0)).toBe(false);
    expect(isRunning(etcd?.pid ?? 0)).toBe(false);
    expect(await exists(dirname(flag(etcd, "data-dir") ?? ""))).toBe(false);
  });

  it("kills a process that ignores SIGTERM once the stop timeout has passed", async () => {
    const bins = await standIns({ controllerManager: "ignore-sigterm" });
    const cp = await plane({ binaryAssetsDirectory: bins.assets, stopTimeout: "300ms" });
    const kcm = cp.processes.find((p) => p.name === "kube-controller-manager");
    expect(kcm).toBeDefined();
    await cp.stop();
    expect(isRunning(kcm?.pid ?? 0)).toBe(false);
    expect(kcm?.logTail()).toContain("I0101 ignoring SIGTERM");
    expect(await exists(cp.dir)).toBe(false);
  });
});
