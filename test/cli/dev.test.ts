import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadClientConfig } from "../../packages/capstan/src/client/config.ts";
import { KubeClient } from "../../packages/capstan/src/client/resource-client.ts";
import {
  ConfigMap,
  MutatingWebhookConfiguration,
  Secret,
  ValidatingWebhookConfiguration,
} from "../../packages/capstan/src/resources/builtins.ts";
import { CRD_KIND } from "../../packages/capstan/src/runtime/crd-registration.ts";
import {
  DEFAULT_DEV_DASHBOARD_PORT,
  outputLabels,
  parseDevFlags,
  teeOperatorOutput,
} from "../../packages/capstan-dev/src/cli/dev.ts";
import { LogFeed } from "../../packages/capstan-dev/src/dashboard/index.ts";
import { isEstablished, waitFor } from "../../packages/capstan-dev/src/testing/index.ts";
import { alive, childrenOf } from "./child-processes.ts";
import { GadgetKind, gadget, gadgetOperatorSource } from "./fixtures/gadget-operator-source.ts";

const repo = new URL("../..", import.meta.url).pathname;
const bin = join(repo, "packages/capstan/bin/capstan.js");

/** The dashboard's address as `capstan dev` prints it: [1] without the token, [2] the token. */
const DASHBOARD_LINE = / {2}Dashboard: (http:\/\/127\.0\.0\.1:\d+\/)\?token=([A-Za-z0-9_-]{43})\n/;

/** Resolves once `output()` matches `pattern`; fails after `timeoutMs` showing the output so far. */
async function outputMatching(output: () => string, pattern: RegExp, timeoutMs = 20_000): Promise<RegExpMatchArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = output().match(pattern);
    if (match) return match;
    if (Date.now() > deadline) throw new Error(`no output matching ${pattern} within ${timeoutMs} ms:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("capstan dev's output labels", () => {
  it("labels an operator by its file name, or by folder and file name when names repeat", () => {
    expect(outputLabels(["a/operator.ts", "b/operator.ts", "c/main.ts"])).toEqual([
      "a/operator.ts",
      "b/operator.ts",
      "main.ts",
    ]);
  });
});

describe("capstan dev's dashboard flags", () => {
  it("serves the dashboard by default on its fixed port (with fallback), on an exact port when given, or not at all", () => {
    expect(parseDevFlags([])).toMatchObject({ dashboard: true, dashboardPort: undefined });
    expect(DEFAULT_DEV_DASHBOARD_PORT).toBeGreaterThan(1024);
    expect(parseDevFlags(["--dashboard-port", "0"])).toMatchObject({ dashboard: true, dashboardPort: 0 });
    expect(parseDevFlags(["--dashboard-port", "8123"])).toMatchObject({ dashboardPort: 8123 });
    expect(parseDevFlags(["--no-dashboard"])).toMatchObject({ dashboard: false });
    expect(parseDevFlags([])).toMatchObject({ readOnly: false });
    expect(parseDevFlags(["--read-only"])).toMatchObject({ dashboard: true, readOnly: true });
    expect(() => parseDevFlags(["--dashboard-port", "http"])).toThrow(/--dashboard-port must be an integer/);
    expect(() => parseDevFlags(["--dashboard-port", "70000"])).toThrow(/--dashboard-port/);
  });

  it("keeps the cluster in data beside the kubeconfig unless --data-dir says where; --fresh empties it first", () => {
    expect(parseDevFlags([])).toMatchObject({ dataDir: ".capstan/data", fresh: false, port: undefined });
    expect(parseDevFlags(["--port", "0"])).toMatchObject({ port: 0 }); // a free one, whatever the last run's was
    expect(parseDevFlags(["--kubeconfig", "tmp/kc"])).toMatchObject({ dataDir: "tmp/data" });
    expect(parseDevFlags(["--data-dir", "/var/tmp/d", "--fresh"])).toMatchObject({
      dataDir: "/var/tmp/d",
      fresh: true,
    });
    expect(() => parseDevFlags(["--data-dir", ""])).toThrow(/--data-dir must name a directory/);
  });

  it("tees an operator's JSON log line to the dashboard as a record and to the terminal as a readable line", () => {
    const logs = new LogFeed();
    const printed: string[] = [];
    const print = teeOperatorOutput("gadgets/operator.ts", true, logs, (line) => printed.push(line));
    const record = { level: 40, time: Date.UTC(2026, 0, 1, 12), namespace: "default", name: "g1", msg: "slow" };
    print(`[gadgets/operator.ts] ${JSON.stringify(record)}`);
    print("[gadgets/operator.ts] started (pid 42)");
    expect(logs.lines({ namespace: "default", name: "g1" })).toEqual([
      expect.objectContaining({ source: "gadgets/operator.ts", level: "warn", msg: "slow" }),
    ]);
    expect(logs.lines({ source: "gadgets/operator.ts" }).map((l) => l.text)).toEqual([
      JSON.stringify(record),
      "started (pid 42)",
    ]);
    expect(printed).toEqual([
      "[gadgets/operator.ts] 12:00:00.000 WARN  slow namespace=default name=g1",
      "[gadgets/operator.ts] started (pid 42)",
    ]);
    const json: string[] = [];
    teeOperatorOutput("op.ts", false, logs, (line) => json.push(line))(`[op.ts] ${JSON.stringify(record)}`);
    expect(json).toEqual([`[op.ts] ${JSON.stringify(record)}`]);
  });
});

describe("capstan dev", () => {
  let dir: string;
  let dev: ChildProcess | undefined;
  let client: KubeClient | undefined;
  const pids: number[] = [];

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "capstan-dev-"));
    await writeFile(join(dir, "package.json"), '{ "type": "module" }\n');
    await symlink(join(repo, "node_modules"), join(dir, "node_modules"));
    await mkdir(join(dir, "gadgets"));
    await writeFile(join(dir, "gadgets", "operator.ts"), gadgetOperatorSource(repo, "1"));
  });
  afterEach(async () => {
    await client?.close();
    client = undefined;
    if (dev && dev.exitCode === null && dev.signalCode === null) {
      const exited = new Promise((resolve) => dev?.once("exit", resolve));
      dev.kill("SIGKILL");
      await exited;
    }
    for (const pid of pids.splice(0)) if (alive(pid)) process.kill(pid, "SIGKILL");
    await rm(dir, { recursive: true, force: true });
  });

  it("runs the operator against its own API server, restarts it on a file change, and stops everything on Ctrl-C", async () => {
    let out = "";
    const proc = spawn(process.execPath, [bin, "dev", "gadgets/operator.ts", "--log-format", "json"], {
      cwd: dir,
      stdio: ["ignore", "pipe", "pipe"],
      // Its own process group, so that the test can press Ctrl-C as a terminal does (to the group).
      detached: true,
    });
    dev = proc;
    proc.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    proc.stderr?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
    const output = () => out;

    await outputMatching(output, /API server ready at https:\/\/127\.0\.0\.1:\d+, kubeconfig \.capstan\/kubeconfig/);
    await outputMatching(output, /kubectl --kubeconfig \.capstan\/kubeconfig get crds/);
    const first = await outputMatching(output, /\[operator\.ts\] started \(pid (\d+)\)/);
    pids.push(Number(first[1]));
    client = new KubeClient(loadClientConfig({ kubeconfig: join(dir, ".capstan/kubeconfig") }));

    // RBAC is on, as on a real cluster: the kubeconfig's admin may do anything, a ServiceAccount with
    // nothing bound may not create ConfigMaps (an AlwaysAllow server does not even serve the review).
    const review = await client.request<{ status: { allowed: boolean } }>(
      "POST",
      "/apis/authorization.k8s.io/v1/subjectaccessreviews",
      {
        body: {
          apiVersion: "authorization.k8s.io/v1",
          kind: "SubjectAccessReview",
          spec: {
            user: "system:serviceaccount:default:nobody",
            groups: ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"],
            resourceAttributes: { verb: "create", resource: "configmaps", namespace: "default" },
          },
        },
      },
    );
    expect(review.status.allowed).toBe(false);

    await waitFor(client, CRD_KIND, "gadgets.gadgets.capstan.test", isEstablished, { timeout: "20s" });
    await client.resource(GadgetKind).create(gadget("g1", 3));
    await waitFor(client, ConfigMap, "default/g1-size", (cm) => cm.data?.version === "1", { timeout: "20s" });

    // The dashboard it prints shows the operator's kind and object, and the operator's log lines.
    const printed = await outputMatching(output, DASHBOARD_LINE);
    const dashboardUrl = printed[1] as string;
    const auth = { headers: { authorization: `Bearer ${printed[2]}` } };
    let keys: string[] = [];
    for (const deadline = Date.now() + 10_000; !keys.includes("default/g1") && Date.now() < deadline; ) {
      const res = await fetch(new URL("/api/objects?kind=gadgets.capstan.test/v1/gadgets", dashboardUrl), auth);
      if (res.ok) keys = ((await res.json()) as { rows: { key: string }[] }).rows.map((r) => r.key);
      else await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(keys).toContain("default/g1");
    const logs = (await (await fetch(new URL("/api/logs?source=operator.ts", dashboardUrl), auth)).json()) as {
      lines: { level?: string; text: string }[];
    };
    expect(logs.lines.some((l) => l.level !== undefined)).toBe(true); // records, parsed from the child's JSON
    expect(logs.lines.map((l) => l.text)).toContainEqual(expect.stringMatching(/^started \(pid \d+\)$/));

    // A new version of the operator: the restarted process reconciles existing Gadgets with it.
    await writeFile(join(dir, "gadgets", "operator.ts"), gadgetOperatorSource(repo, "2"));
    await outputMatching(output, /\[operator\.ts\] changed: operator\.ts: restarting/);
    const second = await outputMatching(output, /started \(pid \d+\)[\s\S]*started \(pid (\d+)\)/);
    pids.push(Number(second[1]));
    expect(second[1]).not.toBe(first[1]);
    await waitFor(client, ConfigMap, "default/g1-size", (cm) => cm.data?.version === "2", { timeout: "20s" });
    expect(alive(Number(first[1]))).toBe(false);

    await client.close();
    client = undefined;
    pids.push(...childrenOf(proc.pid as number)); // the operator and its standby
    // Ctrl-C: the terminal signals the foreground process group.
    process.kill(-(proc.pid as number), "SIGINT");
    expect(await exited).toBe(0);
    expect(out).toContain("capstan dev: stopped");
    // The operator stopped gracefully (one signal, from capstan dev), not at once on a second one.
    expect(out).toMatch(/\[operator\.ts\] \{[^\n]*"msg":"operator stopped"/);
    expect(out).toMatch(/\[operator\.ts\] stopped \(code 0\)\n[\s\S]*capstan dev: stopped/);
    await expect(fetch(dashboardUrl)).rejects.toThrow(); // the dashboard stopped with it
    for (const pid of pids) expect(alive(pid)).toBe(false);
    expect(existsSync(join(dir, ".capstan/kubeconfig"))).toBe(true);
  }, 90_000); // three process start-ups (dev, operator twice) on a shared 2-core machine

  it("exits with code 1, saying why, when the dashboard port it is given is busy", async () => {
    const { createServer } = await import("node:net");
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", resolve));
    const port = (busy.address() as { port: number }).port;
    try {
      let out = "";
      const proc = spawn(process.execPath, [bin, "dev", "--dashboard-port", String(port)], {
        cwd: dir,
        stdio: ["ignore", "pipe", "pipe"],
      });
      dev = proc;
      for (const stream of [proc.stdout, proc.stderr]) {
        stream?.on("data", (chunk: Buffer) => {
          out += chunk.toString();
        });
      }
      const code = await new Promise<number | null>((resolve) => proc.once("exit", (c) => resolve(c)));
      expect(code).toBe(1);
      expect(out).toMatch(/the dashboard cannot start: .*EADDRINUSE/);
    } finally {
      await new Promise((resolve) => busy.close(resolve));
    }
  }, 60_000);

  it("serves the dashboard on another free port when its default port is busy", async () => {
    const { createServer } = await import("node:net");
    const busy = createServer();
    // Busy either way: held here, or already held by another process (then listen fails).
    await new Promise<void>((resolve) => {
      busy.once("error", () => resolve());
      busy.listen(DEFAULT_DEV_DASHBOARD_PORT, "127.0.0.1", resolve);
    });
    try {
      let out = "";
      const proc = spawn(process.execPath, [bin, "dev"], { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
      dev = proc;
      proc.stdout?.on("data", (chunk: Buffer) => {
        out += chunk.toString();
      });
      const exited = new Promise<number | null>((resolve) => proc.once("exit", (c) => resolve(c)));
      const url = await outputMatching(() => out, DASHBOARD_LINE);
      expect(Number(new URL(url[1] as string).port)).not.toBe(DEFAULT_DEV_DASHBOARD_PORT);
      const auth = { headers: { authorization: `Bearer ${url[2]}` } };
      expect((await fetch(new URL("/api/kinds", url[1] as string), auth)).status).toBe(200);
      proc.kill("SIGINT");
      expect(await exited).toBe(0);
    } finally {
      if (busy.listening) await new Promise((resolve) => busy.close(resolve));
    }
  }, 60_000);

  it("its operators stop when capstan dev is killed with SIGKILL, which it cannot pass on", async () => {
    let out = "";
    const proc = spawn(
      process.execPath,
      [bin, "dev", "gadgets/operator.ts", "--log-format", "json", "--no-dashboard"],
      {
        cwd: dir,
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    dev = proc;
    proc.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    const started = await outputMatching(() => out, /\[operator\.ts\] started \(pid (\d+)\)/);
    const pid = Number(started[1]);
    pids.push(pid);
    client = new KubeClient(loadClientConfig({ kubeconfig: join(dir, ".capstan/kubeconfig") }));
    await waitFor(client, CRD_KIND, "gadgets.gadgets.capstan.test", isEstablished, { timeout: "20s" });
    expect(alive(pid)).toBe(true);
    expect(out).not.toContain("Dashboard:"); // --no-dashboard
    const children = childrenOf(proc.pid as number); // the operator, and its standby once spawned
    pids.push(...children);

    const exited = new Promise((resolve) => proc.once("exit", resolve));
    proc.kill("SIGKILL");
    await exited;
    const deadline = Date.now() + 20_000;
    const running = () => [pid, ...children].filter(alive);
    while (running().length > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(running()).toEqual([]);
  }, 90_000);
});

describe("capstan dev's state", () => {
  let dir: string;
  const running: ChildProcess[] = [];
  const clients: KubeClient[] = [];

  /** `capstan dev` with `args` in the test's folder (no operator): its output, and its exit code once it exits. */
  function startDev(args: string[]) {
    let out = "";
    const proc = spawn(process.execPath, [bin, "dev", "--dashboard-port", "0", ...args], {
      cwd: dir,
      stdio: ["ignore", "pipe", "pipe"],
    });
    running.push(proc);
    for (const stream of [proc.stdout, proc.stderr]) {
      stream?.on("data", (chunk: Buffer) => {
        out += chunk.toString();
      });
    }
    const exited = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
    return { proc, exited, output: () => out };
  }

  /** Starts `capstan dev`, waits for its banner; an admin client of it and the dashboard token it printed. */
  async function startReady(args: string[] = []) {
    const dev = startDev(args);
    const token = (await outputMatching(dev.output, DASHBOARD_LINE, 30_000))[2] as string;
    const client = new KubeClient(loadClientConfig({ kubeconfig: join(dir, ".capstan/kubeconfig") }));
    clients.push(client);
    return { ...dev, client, token };
  }

  /** Ctrl-C, and its exit code. */
  async function stop(dev: { proc: ChildProcess; exited: Promise<number | null> }): Promise<number | null> {
    dev.proc.kill("SIGINT");
    return dev.exited;
  }

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "capstan-dev-state-"));
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close();
    for (const proc of running.splice(0)) {
      if (proc.exitCode !== null || proc.signalCode !== null) continue;
      const exited = new Promise((resolve) => proc.once("exit", resolve));
      proc.kill("SIGKILL");
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  });

  it("keeps objects, resourceVersions and the dashboard token across a stop and a start; --fresh starts empty", async () => {
    const first = await startReady();
    expect(first.output()).toContain("Objects are kept in .capstan/data across restarts");
    const created = await first.client
      .resource(ConfigMap, "default")
      .create(ConfigMap.make({ metadata: { name: "kept", namespace: "default" }, data: { a: "1" } }));
    const updated = await first.client
      .resource(ConfigMap, "default")
      .patch("kept", { data: { a: "2" } }, { type: "merge" });
    expect(Number(updated.metadata?.resourceVersion)).toBeGreaterThan(Number(created.metadata?.resourceVersion));
    const firstKubeconfig = await readFile(join(dir, ".capstan/kubeconfig"), "utf8");
    expect(await stop(first)).toBe(0);
    // Owner-only, as the kubeconfig.
    expect((await stat(join(dir, ".capstan/dashboard-token"))).mode & 0o777).toBe(0o600);

    const second = await startReady();
    const kept = await second.client.resource(ConfigMap, "default").get("kept");
    expect(kept.data).toEqual({ a: "2" });
    expect(kept.metadata?.uid).toMatch(/./);
    expect(kept.metadata?.uid).toBe(created.metadata?.uid);
    expect(kept.metadata?.resourceVersion).toBe(updated.metadata?.resourceVersion);
    // The revision counter continues: a write now is newer than any of the last run.
    const after = await second.client
      .resource(ConfigMap, "default")
      .patch("kept", { data: { a: "3" } }, { type: "merge" });
    expect(Number(after.metadata?.resourceVersion)).toBeGreaterThan(Number(updated.metadata?.resourceVersion));
    // A tab opened with the first run's address keeps working: same token. And a client holding the
    // first run's kubeconfig too: same port (free again), CA and admin token, so the same file.
    expect(second.token).toBe(first.token);
    expect(await readFile(join(dir, ".capstan/kubeconfig"), "utf8")).toBe(firstKubeconfig);
    expect(await stop(second)).toBe(0);

    const fresh = await startReady(["--fresh"]);
    await expect(fresh.client.resource(ConfigMap, "default").get("kept")).rejects.toMatchObject({ code: 404 });
    // Still a whole cluster: its namespaces were made again.
    expect((await fresh.client.resource(ConfigMap, "kube-system").list()).items).toBeDefined();
    expect(fresh.token).toBe(first.token);
    expect(await stop(fresh)).toBe(0);
  }, 120_000); // four `capstan dev` start-ups on a shared 2-core machine

  it("removes the webhook configurations the last run's operators left (calling dead loopback ports), and no other", async () => {
    const managed = { "app.kubernetes.io/managed-by": "capstan", "app.kubernetes.io/name": "gone-operator" };
    const webhook = (name: string, resource: string, clientConfig: object) => ({
      name,
      clientConfig,
      rules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: [resource] }],
      failurePolicy: "Fail",
      sideEffects: "None",
      admissionReviewVersions: ["v1"],
    });
    const dead = { url: "https://127.0.0.1:1/validate", caBundle: "" };
    const first = await startReady();
    const validating = first.client.resource(ValidatingWebhookConfiguration);
    const mutating = first.client.resource(MutatingWebhookConfiguration);
    // What an operator of the last run registered (registerWebhookConfigurations' labels, a loopback URL).
    await validating.create({
      metadata: { name: "gone-operator-validating", labels: managed },
      webhooks: [webhook("configmaps.gone.example", "configmaps", dead)],
    } as never);
    await mutating.create({
      metadata: { name: "gone-operator-mutating", labels: managed },
      webhooks: [webhook("default.gone.example", "configmaps", dead)],
    } as never);
    // Not Capstan's (no label), and Capstan's but calling a Service: both stay.
    await validating.create({
      metadata: { name: "by-hand" },
      webhooks: [webhook("secrets.by-hand.example", "secrets", dead)],
    } as never);
    await validating.create({
      metadata: { name: "in-cluster-validating", labels: managed },
      webhooks: [webhook("secrets.in-cluster.example", "secrets", { service: { namespace: "ops", name: "op" } })],
    } as never);
    // The dead webhook refuses every ConfigMap while it is there.
    await expect(
      first.client.resource(ConfigMap, "default").create(ConfigMap.make({ metadata: { name: "refused" } })),
    ).rejects.toThrow(/failed calling webhook "(configmaps|default)\.gone\.example"/);
    expect(await stop(first)).toBe(0);

    const second = await startReady();
    expect(second.output()).toContain(
      "Removed the last run's webhook configurations, which called its operators: ValidatingWebhookConfiguration/gone-operator-validating, MutatingWebhookConfiguration/gone-operator-mutating",
    );
    await second.client.resource(ConfigMap, "default").create(ConfigMap.make({ metadata: { name: "accepted" } }));
    const names = async (api: { list(): Promise<{ items: { metadata?: { name?: string } }[] }> }) =>
      (await api.list()).items.map((c) => c.metadata?.name).sort();
    expect(await names(second.client.resource(ValidatingWebhookConfiguration))).toEqual([
      "by-hand",
      "in-cluster-validating",
    ]);
    expect(await names(second.client.resource(MutatingWebhookConfiguration))).toEqual([]);
    // Secrets are still guarded by the configuration applied by hand.
    await expect(
      second.client.resource(Secret, "default").create({ metadata: { name: "s" } } as never),
    ).rejects.toThrow(/secrets\.by-hand\.example/);
    expect(await stop(second)).toBe(0);
  }, 120_000);

  it("refuses a second capstan dev on the same data dir, naming the first one's pid, and leaves the first intact", async () => {
    const first = await startReady();
    await first.client
      .resource(ConfigMap, "default")
      .create(ConfigMap.make({ metadata: { name: "mine", namespace: "default" }, data: { a: "1" } }));
    const kubeconfig = await readFile(join(dir, ".capstan/kubeconfig"), "utf8");

    for (const args of [[], ["--fresh"]]) {
      const second = startDev(args);
      expect(await second.exited, args.join(" ")).toBe(1);
      expect(second.output()).toContain(
        `capstan dev: the data dir .capstan/data is in use by process ${first.proc.pid} (another capstan dev in this folder?)`,
      );
      expect(second.output()).not.toContain("API server ready");
    }
    // Nothing of the first was touched: its kubeconfig, its objects, its server.
    expect(await readFile(join(dir, ".capstan/kubeconfig"), "utf8")).toBe(kubeconfig);
    expect((await first.client.resource(ConfigMap, "default").get("mine")).data).toEqual({ a: "1" });
    expect(await stop(first)).toBe(0);

    // Elsewhere it may run at the same time: another data dir and kubeconfig.
    const other = startDev(["--data-dir", "other/data", "--kubeconfig", "other/kubeconfig"]);
    await outputMatching(other.output, DASHBOARD_LINE, 30_000);
    expect(await stop(other)).toBe(0);
  }, 120_000);
});
