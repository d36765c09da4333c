import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitUntil } from "capstan-dev/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseRunFlags } from "../../packages/capstan/src/cli/run.ts";
import { ConfigMap, Lease } from "../../packages/capstan/src/resources/builtins.ts";
import { CRD_KIND } from "../../packages/capstan/src/runtime/crd-registration.ts";
import { isEstablished, startTestCluster, type TestCluster } from "../../packages/capstan-dev/src/testing/index.ts";
import { GadgetKind, gadget, gadgetOperatorSource } from "./fixtures/gadget-operator-source.ts";

const repo = new URL("../..", import.meta.url).pathname;
const bin = join(repo, "packages/capstan/bin/capstan.js");
/** A port free right now (the kernel's pick, released again) for a child process to listen on. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** An operator module with nothing registered, in JavaScript (no TypeScript loader to wait for). */
const EMPTY_OPERATOR = 'import { operator } from "capstan";\nexport default operator({ name: "empty" });\n';

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

describe("capstan run", () => {
  let cluster: TestCluster;
  let dir: string;
  let child: ChildProcess | undefined;
  let exited: Promise<Exit> | undefined;

  beforeAll(async () => {
    cluster = await startTestCluster();
    dir = await mkdtemp(join(tmpdir(), "capstan-run-"));
    await writeFile(join(dir, "package.json"), '{ "type": "module" }\n');
    // The operator's own dependencies (typebox) resolve as in a user's project.
    await symlink(join(repo, "node_modules"), join(dir, "node_modules"));
    await writeFile(join(dir, "operator.ts"), gadgetOperatorSource(repo, "1"));
  });
  afterEach(async () => {
    if (child !== undefined && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
    child = undefined;
    exited = undefined;
  });
  afterAll(async () => {
    await cluster?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  function start(args: string[]): { output: () => string } {
    let out = "";
    const proc = spawn(process.execPath, [bin, "run", ...args], { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
    proc.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    proc.stderr?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    child = proc;
    exited = new Promise((resolve) => proc.once("exit", (code, signal) => resolve({ code, signal })));
    return { output: () => out };
  }

  it("runs the operator module against the kubeconfig's cluster, and stops gracefully on SIGTERM", async () => {
    const [healthPort, metricsPort] = [await freePort(), await freePort()];
    const run = start([
      "operator.ts",
      "--kubeconfig",
      cluster.kubeconfigPath,
      "--namespace",
      "default",
      "--leader-elect",
      "--leader-elect-lease-duration",
      "20s",
      "--health-port",
      String(healthPort),
      "--metrics-port",
      String(metricsPort),
      "--log-format",
      "json",
    ]);
    await cluster.waitFor(CRD_KIND, "gadgets.gadgets.capstan.test", isEstablished, { timeout: "20s" });
    await cluster.client.resource(GadgetKind).create(gadget("g1", 3));
    const cm = await cluster.waitFor(ConfigMap, "default/g1-size", (c) => c.data?.size === "3", { timeout: "20s" });
    expect(cm.metadata?.ownerReferences?.[0]).toMatchObject({ kind: "Gadget", name: "g1", controller: true });
    // --leader-elect: it acted while holding the Lease in the kubeconfig context's namespace.
    const lease = await cluster.client.resource(Lease).get("gadgets-leader", { namespace: "default" });
    expect(lease.spec?.holderIdentity).toBeTruthy();
    expect(lease.spec?.leaseDurationSeconds).toBe(20); // --leader-elect-lease-duration
    // --health-port and --metrics-port serve the manager's endpoints, with the client's request metrics.
    expect((await fetch(`http://127.0.0.1:${healthPort}/readyz`)).status).toBe(200);
    expect(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()).toContain(
      "rest_client_requests_total",
    );
    expect(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()).toContain(
      'leader_election_master_status{name="gadgets-leader"} 1',
    );
    expect(await (await fetch(`http://127.0.0.1:${healthPort}/readyz?verbose`)).text()).toContain(
      "[+]informer:gadgets.capstan.test/v1/namespaces/default/gadgets ok",
    );

    child?.kill("SIGTERM");
    const exit = await exited;
    expect(exit).toEqual({ code: 0, signal: null });
    // The graceful stop released the Lease, so a standby would take over at once.
    const released = await cluster.client.resource(Lease).get("gadgets-leader", { namespace: "default" });
    expect(released.spec?.holderIdentity ?? "").toBe("");
    const lines = run
      .output()
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as { msg: string; namespaces?: unknown });
    expect(lines.find((l) => l.msg === "starting operator")?.namespaces).toEqual(["default"]);
    expect(lines.map((l) => l.msg)).toContain("operator stopped");
  }, 60_000); // a process start-up through tsx takes seconds on a shared machine

  /** The JSON records written so far by a `start`ed process. */
  function records(run: { output: () => string }): { level: number; msg: string }[] {
    return run
      .output()
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as { level: number; msg: string });
  }

  it("runs an operator that registers nothing yet until stopped, with one warning saying what to add", async () => {
    await writeFile(join(dir, "empty.mjs"), EMPTY_OPERATOR);
    // No endpoints either: nothing but the manager holds the process, which used to exit with code 13
    // and no word right after starting the (zero) controllers.
    const run = start(["empty.mjs", "--kubeconfig", cluster.kubeconfigPath, "--log-format", "json"]);
    await waitUntil(() => records(run).some((r) => r.msg === "starting controllers"), { timeout: "30s" });
    expect(records(run).filter((r) => r.level === 40)).toMatchObject([
      {
        msg: "operator empty registers no handlers or controllers, so it does nothing yet; add op.controller(Kind).reconcile(fn) or op.on.create(Kind, fn) before starting it",
      },
    ]);
    child?.kill("SIGTERM");
    expect(await exited).toEqual({ code: 0, signal: null });
    expect(records(run).map((r) => r.msg)).toContain("operator stopped");
  }, 60_000);

  it("serves the health endpoints of an operator that registers nothing yet", async () => {
    await writeFile(join(dir, "empty.mjs"), EMPTY_OPERATOR);
    const healthPort = await freePort();
    const run = start(["empty.mjs", "--kubeconfig", cluster.kubeconfigPath, "--health-port", String(healthPort)]);
    await waitUntil(() => records(run).some((r) => r.msg === "starting controllers"), { timeout: "30s" });
    expect((await fetch(`http://127.0.0.1:${healthPort}/healthz`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${healthPort}/readyz`)).status).toBe(200);
    child?.kill("SIGTERM");
    expect(await exited).toEqual({ code: 0, signal: null });
  }, 60_000);

  it("serves probes and plain-HTTP metrics on 127.0.0.1 only outside a cluster, by default", async () => {
    await writeFile(join(dir, "empty.mjs"), EMPTY_OPERATOR);
    const [healthPort, metricsPort] = [await freePort(), await freePort()];
    const run = start([
      "empty.mjs",
      "--kubeconfig",
      cluster.kubeconfigPath,
      "--health-port",
      String(healthPort),
      "--metrics-bind-address",
      `:${metricsPort}`, // every interface, unless the --metrics-port shorthand is used
      "--log-format",
      "json",
    ]);
    await waitUntil(() => records(run).some((r) => r.msg === "starting controllers"), { timeout: "30s" });
    const logged = records(run) as unknown as { msg: string; bindAddress?: string; url?: string; secure?: boolean }[];
    expect(logged.find((r) => r.msg === "serving health probes")?.bindAddress).toBe(`127.0.0.1:${healthPort}`);
    expect(logged.find((r) => r.msg === "serving metrics")).toMatchObject({
      bindAddress: `:${metricsPort}`,
      secure: false,
    });
    expect((await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).status).toBe(200);
    child?.kill("SIGTERM");
    expect(await exited).toEqual({ code: 0, signal: null });

    const loopback = start([
      "empty.mjs",
      "--kubeconfig",
      cluster.kubeconfigPath,
      "--metrics-port",
      String(metricsPort),
      "--log-format",
      "json",
    ]);
    await waitUntil(() => records(loopback).some((r) => r.msg === "starting controllers"), { timeout: "30s" });
    const served = records(loopback) as unknown as { msg: string; url?: string }[];
    expect(served.find((r) => r.msg === "serving metrics")?.url).toBe(`http://127.0.0.1:${metricsPort}/metrics`);
    child?.kill("SIGTERM");
    expect(await exited).toEqual({ code: 0, signal: null });
  }, 60_000);

  it("exits 2 for contradicting flags", async () => {
    const bad = await new Promise<{ code: number; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [bin, "run", "operator.ts", "--namespace", "a", "--all-namespaces"],
        { cwd: dir, timeout: 30_000 },
        (err, _stdout, stderr) => resolve({ code: typeof err?.code === "number" ? err.code : 0, stderr }),
      );
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--namespace and --all-namespaces exclude each other");
  }, 60_000);

  it("exits 1 with the reason when the kubeconfig is missing", async () => {
    const run = start(["operator.ts", "--kubeconfig", join(dir, "absent-kubeconfig"), "--log-format", "pretty"]);
    const exit = await exited;
    expect(exit?.code).toBe(1);
    expect(run.output()).toMatch(/ERROR cannot start: no usable cluster configuration err=".*absent-kubeconfig/);
  }, 60_000);
});

describe("capstan run flags", () => {
  it("parses repeated namespaces, leader election, ports and CRD registration", () => {
    expect(
      parseRunFlags([
        "op.ts",
        "-n",
        "shop",
        "--namespace",
        "billing",
        "--leader-elect",
        "--no-crd-registration",
        "--health-port",
        "8081",
        "--log-format",
        "json",
      ]),
    ).toMatchObject({
      file: "op.ts",
      namespaces: ["shop", "billing"],
      leaderElect: true,
      registerCrds: false,
      healthPort: 8081,
      logFormat: "json",
    });
    expect(parseRunFlags(["op.ts", "--log-format", "json"])).toMatchObject({
      namespaces: undefined,
      leaderElect: false,
      registerCrds: true,
    });
  });

  it("reads --sharded and --shard-member, refusing them with --leader-elect or a name that cannot be a label", () => {
    expect(parseRunFlags(["op.ts", "--sharded", "--shard-member", "op-0"])).toMatchObject({
      sharded: true,
      shardMember: "op-0",
      leaderElect: false,
    });
    expect(parseRunFlags(["op.ts"])).toMatchObject({ sharded: false });
    expect(() => parseRunFlags(["op.ts", "--sharded", "--leader-elect"])).toThrow(/exclude each other/);
    expect(() => parseRunFlags(["op.ts", "--shard-member", "a"])).toThrow(/--shard-member needs --sharded/);
    expect(() => parseRunFlags(["op.ts", "--sharded", "--shard-member", "Op_0"])).toThrow(/member "Op_0"/);
  });

  it("reads --shard-admission, only with --sharded", () => {
    expect(parseRunFlags(["op.ts", "--sharded", "--shard-admission"])).toMatchObject({ shardAdmission: true });
    expect(parseRunFlags(["op.ts", "--sharded"])).not.toHaveProperty("shardAdmission");
    expect(() => parseRunFlags(["op.ts", "--shard-admission"])).toThrow(/--shard-admission needs --sharded/);
  });

  it("reads leader election timings (client-go's checks, naming the flags) and watch health bounds", () => {
    expect(
      parseRunFlags([
        "op.ts",
        "--leader-elect",
        "--leader-elect-lease-duration=30s",
        "--leader-elect-renew-deadline=20s",
        "--leader-elect-retry-period=4s",
        "--watch-not-ready-after=12s",
        "--watch-not-live-after=10m",
      ]),
    ).toMatchObject({
      leaderElectTimings: { leaseDuration: "30s", renewDeadline: "20s", retryPeriod: "4s" },
      watchHealth: { notReadyAfter: "12s", notLiveAfter: "10m" },
    });
    const plain = parseRunFlags(["op.ts", "--leader-elect"]);
    expect(plain !== "help" && [plain.leaderElectTimings, plain.watchHealth]).toEqual([undefined, undefined]);
    expect(() => parseRunFlags(["op.ts", "--leader-elect", "--leader-elect-lease-duration=10s"])).toThrow(
      "leader election: --leader-elect-lease-duration (10000 ms) must be greater than --leader-elect-renew-deadline (10000 ms)",
    );
    expect(() => parseRunFlags(["op.ts", "--leader-elect", "--leader-elect-retry-period=9s"])).toThrow(
      "--leader-elect-renew-deadline (10000 ms) must be greater than --leader-elect-retry-period * 1.2 (10800 ms)",
    );
    expect(() => parseRunFlags(["op.ts", "--leader-elect", "--leader-elect-retry-period=0"])).toThrow(
      "leader election: --leader-elect-retry-period must be greater than zero",
    );
    expect(() => parseRunFlags(["op.ts", "--leader-elect", "--leader-elect-retry-period=2"])).toThrow(
      '--leader-elect-retry-period must be a duration such as "15s" or "1m30s", got "2"',
    );
    expect(() => parseRunFlags(["op.ts", "--leader-elect-renew-deadline=5s"])).toThrow(
      "--leader-elect-renew-deadline needs --leader-elect",
    );
    expect(() => parseRunFlags(["op.ts", "--watch-not-live-after=5s"])).toThrow(
      "--watch-not-live-after (5000 ms) must be greater than --watch-not-ready-after (10000 ms)",
    );
  });

  it("reads controller-runtime's metrics and probe flags, and refuses bad or contradicting ones", () => {
    expect(
      parseRunFlags([
        "op.ts",
        "--health-probe-bind-address",
        ":8081",
        "--metrics-bind-address=:8443",
        "--metrics-secure",
        "--metrics-cert-dir",
        "/certs",
      ]),
    ).toMatchObject({
      healthProbeBindAddress: ":8081",
      metricsBindAddress: ":8443",
      metricsSecure: true,
      metricsCertDir: "/certs",
    });
    expect(
      parseRunFlags(["op.ts", "--metrics-bind-address", "127.0.0.1:8080", "--metrics-secure=false"]),
    ).toMatchObject({ metricsBindAddress: "127.0.0.1:8080", metricsSecure: false });
    const plain = parseRunFlags(["op.ts", "--metrics-bind-address", "[::1]:8080"]);
    expect(plain !== "help" && plain.metricsSecure).toBeUndefined(); // the manager decides: true only in a pod
    expect(() => parseRunFlags(["op.ts", "--metrics-bind-address", "8080"])).toThrow(
      '--metrics-bind-address "8080" is not a bind address (no port); write ":8080", "127.0.0.1:8080", "[::1]:8080" or "0"',
    );
    expect(() => parseRunFlags(["op.ts", "--health-probe-bind-address", ":99999"])).toThrow(
      '--health-probe-bind-address ":99999" is not a bind address (the port must be an integer from 0 to 65535)',
    );
    expect(() => parseRunFlags(["op.ts", "--metrics-bind-address", ":8443", "--metrics-secure=yes"])).toThrow(
      '--metrics-secure must be true or false, got "yes"',
    );
    expect(() => parseRunFlags(["op.ts", "--metrics-secure"])).toThrow(
      "--metrics-secure needs metrics to be served: give --metrics-bind-address (or --metrics-port)",
    );
    expect(() => parseRunFlags(["op.ts", "--metrics-bind-address", "0", "--metrics-cert-dir", "/c"])).toThrow(
      "--metrics-cert-dir needs metrics to be served",
    );
    expect(() =>
      parseRunFlags(["op.ts", "--metrics-bind-address", ":8080", "--metrics-secure=false", "--metrics-cert-dir", "/c"]),
    ).toThrow("--metrics-cert-dir needs HTTPS: it cannot go with --metrics-secure=false");
    expect(() => parseRunFlags(["op.ts", "--metrics-port", "8080", "--metrics-bind-address", ":8080"])).toThrow(
      "--metrics-port and --metrics-bind-address exclude each other",
    );
    expect(() => parseRunFlags(["op.ts", "--health-port", "8081", "--health-probe-bind-address", ":8081"])).toThrow(
      "--health-port and --health-probe-bind-address exclude each other",
    );
  });

  it("reads --max-concurrent-reconciles as a positive integer, absent by default", () => {
    expect(parseRunFlags(["op.ts", "--max-concurrent-reconciles", "16"])).toMatchObject({
      maxConcurrentReconciles: 16,
    });
    expect(parseRunFlags(["op.ts"])).toMatchObject({ maxConcurrentReconciles: undefined });
    for (const bad of ["0", "-1", "2.5", "many", ""]) {
      expect(() => parseRunFlags(["op.ts", `--max-concurrent-reconciles=${bad}`])).toThrow(
        `--max-concurrent-reconciles must be an integer of at least 1, got "${bad}"`,
      );
    }
  });

  it("reads the webhook server's flags and managed webhooks, refusing a plain-HTTP URL or a CA without URL", () => {
    expect(
      parseRunFlags([
        "op.ts",
        "--webhook-port",
        "9444",
        "--webhook-host",
        "127.0.0.1",
        "--webhook-cert-dir",
        "/certs",
        "--managed-webhooks-url",
        "https://127.0.0.1:{port}",
        "--managed-webhooks-ca",
        "/certs/ca.crt",
      ]),
    ).toMatchObject({
      webhookPort: 9444,
      webhookHost: "127.0.0.1",
      webhookCertDir: "/certs",
      managedWebhooksUrl: "https://127.0.0.1:{port}",
      managedWebhooksCa: "/certs/ca.crt",
    });
    expect(() => parseRunFlags(["op.ts", "--managed-webhooks-url", "http://127.0.0.1:9443"])).toThrow(
      '--managed-webhooks-url must be an https:// URL (the API server calls webhooks over TLS), got "http://127.0.0.1:9443"',
    );
    expect(() => parseRunFlags(["op.ts", "--managed-webhooks-ca", "ca.crt"])).toThrow(
      "--managed-webhooks-ca needs --managed-webhooks-url",
    );
    expect(() => parseRunFlags(["op.ts", "--webhook-port", "99999"])).toThrow(
      '--webhook-port must be an integer from 0 to 65535, got "99999"',
    );
  });

  it("refuses a bad port, namespace or log format, naming it", () => {
    expect(() => parseRunFlags(["op.ts", "--metrics-port", "http"])).toThrow(
      '--metrics-port must be an integer from 0 to 65535, got "http"',
    );
    expect(() => parseRunFlags(["op.ts", "--namespace", "Shop"])).toThrow(
      '--namespace "Shop" is not a valid namespace name',
    );
    expect(() => parseRunFlags(["op.ts", "--log-format", "xml"])).toThrow(
      '--log-format must be one of json, pretty, got "xml"',
    );
  });
});
