/**
 * `capstan dev` hot reload benchmark: how long from saving an operator file to the restarted
 * operator's "Starting workers" log line, and where that time goes. One JSON line.
 *
 *   npm run build && node --conditions=capstan-source --import tsx bench/dev-reload.ts
 *
 * It runs the built `capstan dev` (packages/capstan/bin/capstan.js, as a user does) on the gadget
 * operator of test/cli/fixtures in a temporary project, waits for its first "Starting workers", then
 * saves the operator BENCH_RUNS times (default 10) by rename-over (a temporary file in the same folder
 * renamed over it, as vim, `sed -i` and JetBrains' safe write do), each time with a new version, and
 * waits for the restarted operator's "Starting workers", and BENCH_PAUSE_MS (default 3000: someone
 * reading the result) before the next save.
 *
 * `save_to_workers` is the figure; its phases (each a median and a maximum) are measured in this
 * process as `capstan dev`'s output lines arrive:
 * - `detect`: save -> `changed: ...: restarting` (file watcher and debounce),
 * - `stop`: -> `stopped (...)` (the old child's graceful stop),
 * - `spawn`: -> `started (pid N)` (telling the standby, or spawning a child),
 * - `load`: -> "starting operator" (loading the operator through tsx, and Capstan unless a standby
 *   had it loaded; reading the kubeconfig),
 * - `sync`: -> "Starting workers" (registering the CRD, syncing caches).
 *
 * {@link measureDevReload} is exported for other benchmarks (bench/footprint.ts).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, mkdtemp, rename, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { pathToFileURL } from "node:url";
import { gadgetOperatorSource } from "../test/cli/fixtures/gadget-operator-source.ts";

export interface DevReloadOptions {
  /** How many saves are measured (default 10). */
  saves?: number;
  /** How each save is written (default `rename`: a temporary file renamed over the operator). */
  how?: "rename" | "write";
  /** The repository whose built capstan runs (default: this one). */
  repo?: string;
  /**
   * How long to wait after a restart's "Starting workers" before the next save (default 3 s): a
   * person reads the result before saving again, and `capstan dev` spawns its standby meanwhile.
   * 0 measures saves back to back, each paying for the standby still loading.
   */
  pauseMs?: number;
  /** How long one restart may take before the benchmark gives up (default 30 s). */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Median and maximum of one measured span, in milliseconds (rounded to 0.1 ms). */
export interface Spread {
  median_ms: number;
  max_ms: number;
}

export interface DevReloadResult {
  scenario: "dev_reload";
  saves: number;
  how: "rename" | "write";
  pause_ms: number;
  /** Save -> the restarted operator's "Starting workers", per save. */
  samples_ms: number[];
  save_to_workers: Spread;
  detect: Spread;
  stop: Spread;
  spawn: Spread;
  load: Spread;
  sync: Spread;
  /** `capstan dev` start -> the first operator's "Starting workers". */
  first_start_ms: number;
}

const DEFAULT_REPO = new URL("..", import.meta.url).pathname;

/** Runs `capstan dev` on a temporary operator project and measures save-to-restart; see the module doc. */
export async function measureDevReload(options: DevReloadOptions = {}): Promise<DevReloadResult> {
  const saves = options.saves ?? 10;
  const how = options.how ?? "rename";
  const repo = options.repo ?? DEFAULT_REPO;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const pauseMs = options.pauseMs ?? 3_000;
  const dir = await mkdtemp(join(tmpdir(), "capstan-dev-reload-"));
  let dev: ChildProcess | undefined;
  try {
    await writeFile(join(dir, "package.json"), '{ "type": "module" }\n');
    await symlink(join(repo, "node_modules"), join(dir, "node_modules"));
    await mkdir(join(dir, "gadgets"));
    const file = join(dir, "gadgets", "operator.ts");
    await writeFile(file, gadgetOperatorSource(repo, "0"));

    const lines: { at: number; text: string }[] = [];
    const waiters = new Set<() => void>();
    const t0 = performance.now();
    dev = spawn(
      process.execPath,
      [
        join(repo, "packages/capstan/bin/capstan.js"),
        "dev",
        "gadgets/operator.ts",
        "--log-format",
        "json",
        "--no-dashboard",
      ],
      { cwd: dir, stdio: ["ignore", "pipe", "pipe"] },
    );
    let partial = "";
    const onData = (chunk: Buffer) => {
      const at = performance.now();
      const parts = (partial + chunk.toString()).split("\n");
      partial = parts.pop() ?? "";
      for (const text of parts) lines.push({ at, text });
      for (const wake of waiters) wake();
    };
    dev.stdout?.on("data", onData);
    dev.stderr?.on("data", onData);
    const exited = new Promise<void>((resolve) => dev?.once("exit", () => resolve()));

    /** The first line from index `from` on matching `pattern`. */
    const next = async (from: number, pattern: RegExp): Promise<{ index: number; at: number }> => {
      const deadline = performance.now() + timeoutMs;
      for (;;) {
        options.signal?.throwIfAborted();
        const index = lines.findIndex((l, i) => i >= from && pattern.test(l.text));
        if (index >= 0) return { index, at: (lines[index] as { at: number }).at };
        if (dev?.exitCode !== null || dev?.signalCode !== null) throw new Error(`capstan dev exited:\n${texts()}`);
        if (performance.now() > deadline)
          throw new Error(`no line matching ${pattern} in ${timeoutMs} ms:\n${texts()}`);
        await new Promise<void>((resolve) => {
          const wake = () => {
            waiters.delete(wake);
            clearTimeout(timer);
            resolve();
          };
          const timer = setTimeout(wake, 100);
          waiters.add(wake);
        });
      }
    };
    const texts = () => lines.map((l) => l.text).join("\n");
    const WORKERS = /"msg":"Starting workers"/;

    const first = await next(0, WORKERS);
    const firstStart = first.at - t0;
    const samples: number[] = [];
    const phases = {
      detect: [] as number[],
      stop: [] as number[],
      spawn: [] as number[],
      load: [] as number[],
      sync: [] as number[],
    };
    let from = first.index + 1;
    for (let i = 1; i <= saves; i++) {
      await sleep(pauseMs, undefined, { signal: options.signal });
      const source = gadgetOperatorSource(repo, String(i));
      const saved = performance.now();
      if (how === "rename") {
        const temp = join(dir, "gadgets", `.operator.ts.${i}.tmp`);
        await writeFile(temp, source);
        await rename(temp, file);
      } else {
        await writeFile(file, source);
      }
      const restarting = await next(from, /changed: .*: restarting/);
      const stopped = await next(restarting.index, /\] stopped \(/);
      const started = await next(stopped.index, /\] started \(pid \d+\)/);
      const loaded = await next(started.index, /"msg":"starting operator"/);
      const workers = await next(loaded.index, WORKERS);
      from = workers.index + 1;
      samples.push(workers.at - saved);
      phases.detect.push(restarting.at - saved);
      phases.stop.push(stopped.at - restarting.at);
      phases.spawn.push(started.at - stopped.at);
      phases.load.push(loaded.at - started.at);
      phases.sync.push(workers.at - loaded.at);
    }
    dev.kill("SIGINT");
    await exited;
    return {
      scenario: "dev_reload",
      saves,
      how,
      pause_ms: pauseMs,
      samples_ms: samples.map(round),
      save_to_workers: spread(samples),
      detect: spread(phases.detect),
      stop: spread(phases.stop),
      spawn: spread(phases.spawn),
      load: spread(phases.load),
      sync: spread(phases.sync),
      first_start_ms: round(firstStart),
    };
  } finally {
    if (dev && dev.exitCode === null && dev.signalCode === null) {
      const gone = new Promise((resolve) => dev?.once("exit", resolve));
      dev.kill("SIGKILL");
      await gone;
    }
    await rm(dir, { recursive: true, force: true });
  }
}

function round(n: number): number {
  return Math.round(n * 10) / 10;
}

function spread(values: number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  return { median_ms: round(sorted[Math.floor(sorted.length / 2)] ?? 0), max_ms: round(sorted.at(-1) ?? 0) };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const how = process.env.BENCH_SAVE === "write" ? "write" : "rename";
  const pauseMs = process.env.BENCH_PAUSE_MS === undefined ? undefined : Number(process.env.BENCH_PAUSE_MS);
  console.log(JSON.stringify(await measureDevReload({ saves: Number(process.env.BENCH_RUNS ?? 10), how, pauseMs })));
}
