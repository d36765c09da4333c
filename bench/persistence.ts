/**
 * Cost of `--data-dir`. Run: `npx tsx bench/persistence.ts`. Prints ONE JSON line:
 * creates_per_s in memory and with --data-dir (same method as bench/apiserver.ts: `capstan apiserver` in
 * its own process, 32 concurrent HTTPS keep-alive clients, 10,000 ConfigMaps of ~1 KiB), their ratio,
 * the server's CPU time per create in both, the restart time on a data dir holding those objects (log
 * replay) and the data dir's size. Then the storage alone, in process: writes/s and fsyncs for one
 * sequential writer (one fsync per write: the disk's fsync rate) and for 32 concurrent writers (group commit).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { Pool } from "undici";
import { FileStorage } from "../packages/capstan-dev/src/devcluster/storage/file-storage.ts";

/** The concurrency and volume of bench/apiserver.ts, so the figures compare. */
const CONCURRENCY = 32;
const CREATES = 10_000;
const PAYLOAD = "x".repeat(1000);
/** 100 ticks per second is Linux's USER_HZ (see bench/apiserver.ts). */
const CLOCK_TICKS_PER_S = 100;

interface Remote {
  child: ChildProcess;
  url: string;
  caPem: string;
  token: string;
  readyMs: number;
}

function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_S;
}

async function startRemote(dir: string, dataDir?: string): Promise<Remote> {
  const kubeconfig = join(dir, "kubeconfig");
  const main = fileURLToPath(new URL("../packages/capstan/src/cli/main.ts", import.meta.url));
  const extra = dataDir ? ["--data-dir", dataDir] : [];
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [...process.execArgv, main, "apiserver", "--port", "0", "--no-kubelet", "--kubeconfig", kubeconfig, ...extra],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /^ready (\S+) /m.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once("exit", (code) => reject(new Error(`apiserver exited with ${code}`)));
  });
  const readyMs = performance.now() - started;
  const text = readFileSync(kubeconfig, "utf8");
  return {
    child,
    url,
    token: /token: (\S+)/.exec(text)![1]!,
    caPem: Buffer.from(/certificate-authority-data: (\S+)/.exec(text)![1]!, "base64").toString(),
    readyMs,
  };
}

function stopRemote(remote: Remote): Promise<void> {
  return new Promise((resolve) => {
    remote.child.once("exit", () => resolve());
    remote.child.kill("SIGTERM");
  });
}

async function createMany(remote: Remote): Promise<{ perS: number; cpuUsPerCreate: number }> {
  const pool = new Pool(remote.url, { connections: CONCURRENCY, connect: { ca: remote.caPem }, pipelining: 1 });
  const cpuBefore = cpuMs(remote.child.pid!);
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < CREATES) {
        const i = next++;
        const res = await pool.request({
          method: "POST",
          path: "/api/v1/namespaces/default/configmaps",
          body: JSON.stringify({ metadata: { name: `cm-${i}` }, data: { payload: PAYLOAD } }),
          headers: { authorization: `Bearer ${remote.token}`, "content-type": "application/json" },
        });
        await res.body.text();
        if (res.statusCode !== 201) throw new Error(`create: ${res.statusCode}`);
      }
    }),
  );
  const ms = performance.now() - started;
  const cpu = cpuMs(remote.child.pid!) - cpuBefore;
  await pool.close();
  return { perS: Math.round(CREATES / (ms / 1000)), cpuUsPerCreate: Math.round((cpu * 1000) / CREATES) };
}

function dirBytes(dir: string): number {
  let total = 0;
  for (const name of readdirSync(dir)) {
    const s = statSync(join(dir, name));
    total += s.isDirectory() ? dirBytes(join(dir, name)) : s.size;
  }
  return total;
}

/** Writes `total` objects straight into a FileStorage from `writers` concurrent loops. */
async function storageOnly(dir: string, writers: number, total: number): Promise<Record<string, number>> {
  const store = await FileStorage.open(dir);
  const data = JSON.stringify({ data: { payload: PAYLOAD } });
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: writers }, async () => {
      while (next < total) {
        const i = next++;
        await store.create("/configmaps", `default/cm-${i}`, () => data);
      }
    }),
  );
  const ms = performance.now() - started;
  const syncs = store.syncCount();
  await store.closed();
  return { writes_per_s: Math.round(total / (ms / 1000)), writes_per_fsync: Math.round((total / syncs) * 10) / 10 };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "capstan-bench-persist-"));
  const dataDir = join(dir, "data");
  const result: Record<string, number> = {};
  try {
    const memory = await startRemote(dir);
    const inMemory = await createMany(memory);
    await stopRemote(memory);

    const persistent = await startRemote(dir, dataDir);
    const onDisk = await createMany(persistent);
    await stopRemote(persistent);

    result["creates_per_s_memory"] = inMemory.perS;
    result["creates_per_s_data_dir"] = onDisk.perS;
    result["data_dir_to_memory_ratio"] = Math.round((onDisk.perS / inMemory.perS) * 100) / 100;
    result["server_cpu_us_per_create_memory"] = inMemory.cpuUsPerCreate;
    result["server_cpu_us_per_create_data_dir"] = onDisk.cpuUsPerCreate;
    result["data_dir_bytes"] = dirBytes(dataDir);
    // Restart on 10k objects: everything is in the log (below the snapshot threshold), so this is replay.
    const restarted = await startRemote(dir, dataDir);
    result["restart_ready_ms_10k_log"] = Math.round(restarted.readyMs);
    await stopRemote(restarted);
    const memoryStart = await startRemote(dir);
    result["start_ready_ms_memory"] = Math.round(memoryStart.readyMs);
    await stopRemote(memoryStart);
    for (const [name, writers, total] of [
      ["storage_1_writer", 1, 1000],
      ["storage_32_writers", 32, CREATES],
    ] as const) {
      const figures = await storageOnly(join(dir, name), writers, total);
      for (const [k, v] of Object.entries(figures)) result[`${name}_${k}`] = v;
    }
    result["load_average_1m"] = Math.round(loadavg()[0]! * 100) / 100;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

await main();
