/**
 * Footprint benchmark: what an operator process costs, as a user runs it. One JSON line.
 *
 *   npm run bench:footprint
 *
 * The operator is the reconcile-style BenchItem operator of bench-item-operators.ts (per object one
 * owned ConfigMap, written by server-side apply, and one status patch), plain JavaScript modules
 * importing the built `capstan` by package name, run by the built `capstan run`
 * (packages/capstan/bin/capstan.js), as a production image does.
 * The embedded API server runs in this process, so the operator's figures are its own.
 *
 * - `start_ms`: from spawning `capstan run` to its "Starting workers" line against a running server
 *   (median of BENCH_STARTS, default 5; the CRD already exists after the first).
 * - `idle_rss_mb`: the operator's RSS once started, with nothing to do (after 2 s).
 * - `peak_rss_mb_3000`: the operator's peak RSS (VmHWM) while BENCH_OBJECTS (default 3000) BenchItems
 *   are created, 32 at a time, and reconciled until every one has its status.
 * - `restart_ms`: `capstan dev`, save by rename-over -> restarted operator's "Starting workers"
 *   (median of 10; bench/dev-reload.ts).
 * - BENCH_WORKERS, when set, is passed as `capstan run --max-concurrent-reconciles` (default: Capstan's).
 * - BENCH_OPERATOR_NODE, when set, is the Node.js binary that runs the operator (default: this one),
 *   to measure the operator on the Node.js of its image; BENCH_NODE_FLAGS are node flags for it.
 *   `node` in the line is its version (the `capstan dev` of `restart_ms` runs on this process's).
 * - `new_project_test_s`: a `capstan new` project's `npm test`, the project installed from the packed
 *   packages through a local registry (test/support/packed-project.ts). Needs the npm registry;
 *   BENCH_SKIP_PROJECT=1 leaves it out (null).
 *
 * Goals (issue "Capstan ships"): peak <= 80 MB, idle <= 60 MB, start < 1,000 ms, restart < 1,500 ms,
 * new project test < 20 s.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeClient, type KubeObject, type ResourceKind } from "capstan";
import { loadClientConfig } from "capstan/client";
import { CAPSTAN_BIN } from "capstan/internal";
import { startApiServer } from "capstan-dev";
import { expectSuccess, newProject, packAndServe, runCommand } from "../test/support/packed-project.ts";
import { BENCH_ITEM_MODULE, RECONCILE_MODULE } from "./bench-item-operators.ts";
import { operatorNode } from "./child-processes.ts";
import { measureDevReload } from "./dev-reload.ts";

const OBJECTS = Number(process.env.BENCH_OBJECTS ?? 3000);
const OPERATOR_NODE = operatorNode();
const STARTS = Number(process.env.BENCH_STARTS ?? 5);
const CONCURRENCY = 32;
const repo = new URL("..", import.meta.url).pathname;

type BenchItem = KubeObject & { spec: { size: number }; status?: { observedSize?: number } };
const BenchItemKind: ResourceKind<BenchItem> = {
  group: "bench.capstan.dev",
  version: "v1",
  kind: "BenchItem",
  plural: "benchitems",
  namespaced: true,
};

interface Running {
  child: ChildProcess;
  started: Promise<number>;
  stop(): Promise<void>;
}

/** Spawns `capstan run operator.js`; `started` resolves with ms from spawn to "Starting workers". */
function runOperator(dir: string, kubeconfig: string): Running {
  const t0 = performance.now();
  const workers = process.env.BENCH_WORKERS ? ["--max-concurrent-reconciles", process.env.BENCH_WORKERS] : [];
  const child = spawn(
    OPERATOR_NODE.path,
    [
      ...(process.env.BENCH_NODE_FLAGS ?? "").split(" ").filter(Boolean),
      CAPSTAN_BIN,
      "run",
      "operator.js",
      "--kubeconfig",
      kubeconfig,
      ...workers,
    ],
    {
      cwd: dir,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, NODE_OPTIONS: "" },
    },
  );
  let output = "";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const started = new Promise<number>((resolve, reject) => {
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('"msg":"Starting workers"')) resolve(performance.now() - t0);
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    void exited.then(() => reject(new Error(`capstan run exited before starting:\n${output}`)));
  });
  started.catch(() => undefined);
  return {
    child,
    started,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

/** A field of /proc/<pid>/status in MB (VmRSS, VmHWM). */
function procMb(pid: number, field: "VmRSS" | "VmHWM"): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!m) throw new Error(`no ${field} for ${pid}`);
  return Math.round((Number(m[1]) / 1024) * 10) / 10;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.floor(sorted.length / 2)] ?? 0);
}

async function operatorFigures(): Promise<{ start_ms: number; idle_rss_mb: number; peak_rss_mb_3000: number }> {
  const dir = await mkdtemp(join(tmpdir(), "capstan-footprint-"));
  const server = await startApiServer({ kubeconfigPath: join(dir, "kubeconfig"), kubelet: false });
  try {
    await writeFile(join(dir, "package.json"), '{ "type": "module" }\n');
    await symlink(join(repo, "node_modules"), join(dir, "node_modules"));
    await writeFile(join(dir, "bench-item.js"), BENCH_ITEM_MODULE);
    await writeFile(join(dir, "operator.js"), RECONCILE_MODULE);
    const kubeconfig = join(dir, "kubeconfig");

    const starts: number[] = [];
    for (let i = 0; i < STARTS; i++) {
      const run = runOperator(dir, kubeconfig);
      starts.push(await run.started);
      await run.stop();
    }

    const run = runOperator(dir, kubeconfig);
    await run.started;
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const pid = run.child.pid!;
    const idle = procMb(pid, "VmRSS");

    const client = new KubeClient(loadClientConfig({ kubeconfig }));
    const items = client.resource(BenchItemKind, "default");
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < OBJECTS) {
          const i = next++;
          await items.create({
            apiVersion: "bench.capstan.dev/v1",
            kind: "BenchItem",
            metadata: { name: `item-${i}`, namespace: "default" },
            spec: { size: i },
          });
        }
      }),
    );
    for (;;) {
      const list = await items.list();
      if (list.items.filter((o) => o.status?.observedSize === o.spec.size).length >= OBJECTS) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const peak = procMb(pid, "VmHWM");
    await run.stop();
    await client.close();
    return { start_ms: median(starts), idle_rss_mb: idle, peak_rss_mb_3000: peak };
  } finally {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

async function newProjectTestSeconds(): Promise<number | null> {
  if (process.env.BENCH_SKIP_PROJECT === "1") return null;
  const work = await mkdtemp(join(tmpdir(), "capstan-footprint-project-"));
  const packages = await packAndServe();
  try {
    const { dir } = await newProject(packages, join(work, "home"), "bench-operator");
    // Once to warm caches, as a developer's second run; the figure is the second.
    expectSuccess("npm test", await runCommand("npm", ["test"], dir, packages.env));
    const timed = expectSuccess("npm test", await runCommand("npm", ["test"], dir, packages.env));
    return Math.round(timed.ms / 100) / 10;
  } finally {
    await packages.close();
    await rm(work, { recursive: true, force: true });
  }
}

const operatorResult = await operatorFigures();
const reload = await measureDevReload({ saves: 10 });
const newProjectTest = await newProjectTestSeconds();
process.stdout.write(
  `${JSON.stringify({
    bench: "footprint",
    objects: OBJECTS,
    node: OPERATOR_NODE.version,
    ...operatorResult,
    restart_ms: reload.save_to_workers.median_ms,
    new_project_test_s: newProjectTest,
  })}\n`,
);
