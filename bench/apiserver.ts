/**
 * Benchmark of the embedded API server. Run: `npx tsx bench/apiserver.ts`. Prints ONE JSON line:
 * start_ms, creates_per_s, gets_per_s (32 concurrent HTTPS keep-alive clients), list_10k_ms,
 * watch_p50_ms / watch_p99_ms (create-to-event latency fanned out to 100 watchers),
 * rss_bytes_per_object (100k stored ConfigMaps of ~1 KiB, RSS growth after GC; heap_used_bytes_per_object
 * beside it says how much of that is live JavaScript heap).
 * Goals on a 2-core machine: start < 150 ms, >= 5,000 creates/s, watch p99 < 20 ms, < 2 KiB per object.
 * creates_per_s is the server's steady state: it is measured after WARMUP_CREATES creates that warm both
 * processes' JIT; those are reported beside it as warmup_creates_per_s (a fresh server, cold code), and
 * per chunk of 1,000 as warmup_chunk_creates_per_s / warmup_chunk_server_cpu_us_per_create.
 * Also printed: the server's CPU time per create and per get (independent of other load on the
 * machine) and the 1-minute load average while measuring, to read the wall-clock figures against.
 * A second JSON line (`"bench":"watchers"`) holds the server's RSS with 2,000 concurrent watchers and the
 * fan-out time: from a create's request until every one of the 2,000 watchers has received its event.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { Pool } from "undici";
import { startApiServer } from "../packages/capstan-dev/src/devcluster/index.ts";

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) {
  // RSS per object needs a forced GC: re-run this script with --expose-gc, passing its output through.
  const res = spawnSync(process.execPath, ["--expose-gc", ...process.execArgv, fileURLToPath(import.meta.url)], {
    stdio: "inherit",
  });
  process.exit(res.status ?? 1);
}

/** 32 clients: the concurrency the issue names for creates/gets. */
const CONCURRENCY = 32;
/**
 * Creates before the measured ones. A fresh server and client run their request paths in V8's
 * interpreter and baseline tier first and compile the hot functions on the same two cores; on this
 * machine throughput climbs for the first ~4,000 creates (2,000/s for the first 2,000, 4,000-4,700/s
 * for the next) and is steady from about 5,000 on.
 */
const WARMUP_CREATES = 5_000;
/** The warm-up is timed in chunks of this many creates (printed as arrays, first chunk first). */
const WARMUP_CHUNK = 1_000;
/** Enough requests that start-up effects vanish, few enough to finish in seconds. */
const CREATES = 10_000;
const GETS = 20_000;
const WATCHERS = 100;
/** Creates observed by every watcher; spaced so each measures latency, not queueing behind the previous one. */
const WATCH_EVENTS = 200;
const WATCH_SPACING_MS = 5;
const RSS_OBJECTS = 100_000;
/** The watcher count the issue names for fan-out, each on its own connection as informers have. */
const FANOUT_WATCHERS = 2_000;
/** Creates whose fan-out is timed, one at a time. */
const FANOUT_EVENTS = 20;
/** ~1 KiB of data per ConfigMap (plus ~250 bytes of metadata). */
const PAYLOAD = "x".repeat(1000);

interface Remote {
  url: string;
  caPem: string;
  token: string;
  /** CPU time (user + system) the server process has used so far, in ms. */
  cpuMs(): number;
  /** The server process's resident set size, in bytes. */
  rssBytes(): number;
  stop(): Promise<void>;
}

/**
 * Why CPU time too: on a shared machine wall-clock throughput depends on everyone else's load, while
 * the server's CPU time per request does not. 100 ticks per second is Linux's USER_HZ.
 */
const CLOCK_TICKS_PER_S = 100;

function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // After the command name: state is field 3 of stat(5); utime and stime are fields 14 and 15.
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_S;
  } catch {
    return Number.NaN;
  }
}

/**
 * The server under load runs in its own process (`capstan apiserver`), as it does for `capstan dev`
 * users with kubectl: clients and server would otherwise share one event loop and one core.
 */
async function startRemote(): Promise<Remote> {
  const dir = mkdtempSync(join(tmpdir(), "capstan-bench-"));
  const kubeconfig = join(dir, "kubeconfig");
  const main = fileURLToPath(new URL("../packages/capstan/src/cli/main.ts", import.meta.url));
  const child = spawn(
    process.execPath,
    [...process.execArgv, main, "apiserver", "--port", "0", "--kubeconfig", kubeconfig],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /^ready (\S+) /m.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once("exit", (code) => reject(new Error(`apiserver exited with ${code}`)));
  });
  const text = readFileSync(kubeconfig, "utf8");
  const token = /token: (\S+)/.exec(text)![1]!;
  const caPem = Buffer.from(/certificate-authority-data: (\S+)/.exec(text)![1]!, "base64").toString();
  return {
    url,
    caPem,
    token,
    cpuMs: () => processCpuMs(child.pid ?? -1),
    rssBytes: () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))![1]) * 1024,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

function pool(server: Pick<Remote, "url" | "caPem">): Pool {
  return new Pool(server.url, { connections: CONCURRENCY, connect: { ca: server.caPem }, pipelining: 1 });
}

async function runConcurrently(total: number, work: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < total) await work(next++);
    }),
  );
  return performance.now() - started;
}

async function call(p: Pool, token: string, method: "GET" | "POST", path: string, body?: string): Promise<void> {
  const res = await p.request({
    method,
    path,
    body,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
  });
  await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode}`);
}

async function main(): Promise<void> {
  const result: Record<string, number | number[]> = {};

  // Start-up: a first start pays module JIT; report the second, as a test suite starting many servers sees it.
  await (await startApiServer()).stop();
  let t0 = performance.now();
  const local = await startApiServer();
  result["start_ms"] = round(performance.now() - t0);
  await local.stop();

  const server = await startRemote();

  const p = pool(server);
  const cms = "/api/v1/namespaces/default/configmaps";
  const createConfigMap = (path: string, name: string) =>
    call(p, server.token, "POST", path, JSON.stringify({ metadata: { name }, data: { payload: PAYLOAD } }));
  // Warm up in a namespace of its own, so that the list below still lists exactly CREATES objects.
  await call(p, server.token, "POST", "/api/v1/namespaces", JSON.stringify({ metadata: { name: "warmup" } }));
  // In chunks, so that the line shows the climb (and how cold code costs the server CPU).
  let warmupMs = 0;
  const chunkRates: number[] = [];
  const chunkCpu: number[] = [];
  for (let offset = 0; offset < WARMUP_CREATES; offset += WARMUP_CHUNK) {
    const cpu = server.cpuMs();
    const ms = await runConcurrently(WARMUP_CHUNK, (i) =>
      createConfigMap("/api/v1/namespaces/warmup/configmaps", `cm-${offset + i}`),
    );
    warmupMs += ms;
    chunkRates.push(Math.round(WARMUP_CHUNK / (ms / 1000)));
    chunkCpu.push(Math.round(((server.cpuMs() - cpu) * 1000) / WARMUP_CHUNK));
  }
  result["warmup_creates_per_s"] = Math.round(WARMUP_CREATES / (warmupMs / 1000));
  result["warmup_chunk_creates_per_s"] = chunkRates;
  result["warmup_chunk_server_cpu_us_per_create"] = chunkCpu;
  let cpuBefore = server.cpuMs();
  const createMs = await runConcurrently(CREATES, (i) => createConfigMap(cms, `cm-${i}`));
  result["creates_per_s"] = Math.round(CREATES / (createMs / 1000));
  result["server_cpu_us_per_create"] = Math.round(((server.cpuMs() - cpuBefore) * 1000) / CREATES);
  cpuBefore = server.cpuMs();
  const getMs = await runConcurrently(GETS, (i) => call(p, server.token, "GET", `${cms}/cm-${i % CREATES}`));
  result["gets_per_s"] = Math.round(GETS / (getMs / 1000));
  result["server_cpu_us_per_get"] = Math.round(((server.cpuMs() - cpuBefore) * 1000) / GETS);
  result["load_average_1m"] = Math.round(loadavg()[0]! * 100) / 100;

  t0 = performance.now();
  await call(p, server.token, "GET", cms);
  result["list_10k_ms"] = round(performance.now() - t0);

  // Watch fan-out: 100 watchers of one namespace; each create carries its send time.
  await call(p, server.token, "POST", "/api/v1/namespaces", JSON.stringify({ metadata: { name: "watched" } }));
  const watchPool = new Pool(server.url, { connections: WATCHERS, connect: { ca: server.caPem } });
  const latencies: number[] = [];
  let received = 0;
  let allReceived!: () => void;
  const done = new Promise<void>((r) => {
    allReceived = r;
  });
  const listed = await p.request({
    method: "GET",
    path: "/api/v1/namespaces/watched/configmaps",
    headers: { authorization: `Bearer ${server.token}` },
  });
  const rv = ((await listed.body.json()) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
  const controllers: AbortController[] = [];
  await Promise.all(
    Array.from({ length: WATCHERS }, async () => {
      const ac = new AbortController();
      controllers.push(ac);
      const res = await watchPool.request({
        method: "GET",
        path: `/api/v1/namespaces/watched/configmaps?watch=true&resourceVersion=${rv}`,
        headers: { authorization: `Bearer ${server.token}` },
        signal: ac.signal,
      });
      void (async () => {
        let buffer = "";
        try {
          for await (const chunk of res.body) {
            const now = performance.now();
            buffer += (chunk as Buffer).toString("utf8");
            let nl = buffer.indexOf("\n");
            while (nl >= 0) {
              const event = JSON.parse(buffer.slice(0, nl)) as { object: { data: { sentAt: string } } };
              buffer = buffer.slice(nl + 1);
              latencies.push(now - Number(event.object.data.sentAt));
              if (++received === WATCHERS * WATCH_EVENTS) allReceived();
              nl = buffer.indexOf("\n");
            }
          }
        } catch {
          // aborted at the end
        }
      })();
    }),
  );
  for (let i = 0; i < WATCH_EVENTS; i++) {
    const body = JSON.stringify({ metadata: { name: `w-${i}` }, data: { sentAt: String(performance.now()) } });
    await call(p, server.token, "POST", "/api/v1/namespaces/watched/configmaps", body);
    await new Promise((r) => setTimeout(r, WATCH_SPACING_MS));
  }
  await done;
  for (const ac of controllers) ac.abort();
  latencies.sort((a, b) => a - b);
  result["watch_p50_ms"] = round(latencies[Math.floor(latencies.length * 0.5)]!);
  result["watch_p99_ms"] = round(latencies[Math.floor(latencies.length * 0.99)]!);
  await watchPool.destroy();
  await p.close();
  await server.stop();

  // Memory: a fresh server, 100k ConfigMaps written through the in-process API, RSS growth after GC.
  const memServer = await startApiServer({ builtinPlugins: false });
  const api = memServer.internals.api;
  const ref = { group: "", version: "v1", plural: "configmaps" };
  const before = await settledMemory();
  for (let i = 0; i < RSS_OBJECTS; i++) {
    await api.create(ref, "default", {
      metadata: { name: `mem-${i}`, labels: { app: "bench" } },
      data: { payload: PAYLOAD },
    });
  }
  const after = await settledMemory();
  result["rss_bytes_per_object"] = Math.round((after.rss - before.rss) / RSS_OBJECTS);
  result["heap_used_bytes_per_object"] = Math.round((after.heapUsed - before.heapUsed) / RSS_OBJECTS);
  result["stored_objects"] = memServer.internals.storage.count("/configmaps");
  await memServer.stop();

  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.stdout.write(`${JSON.stringify(await watcherFanout())}\n`);
}

/**
 * 2,000 watchers of one namespace on a fresh server process: its RSS before and with them, and for
 * each of FANOUT_EVENTS creates the time from sending it until all 2,000 watchers have decoded its event
 * (this process reads all 2,000 streams, so its own decoding is part of the figure).
 */
async function watcherFanout(): Promise<Record<string, number | string>> {
  const server = await startRemote();
  const p = pool(server);
  const path = "/api/v1/namespaces/fanout/configmaps";
  await call(p, server.token, "POST", "/api/v1/namespaces", JSON.stringify({ metadata: { name: "fanout" } }));
  const rssBefore = server.rssBytes();
  const watchPool = new Pool(server.url, { connections: FANOUT_WATCHERS, connect: { ca: server.caPem } });
  // received[i]: how many watchers have event `fan-i`; waiting[i] resolves when all have.
  const received = new Array<number>(FANOUT_EVENTS).fill(0);
  const waiting: (() => void)[] = [];
  const controllers: AbortController[] = [];
  const open = async () => {
    const ac = new AbortController();
    controllers.push(ac);
    const res = await watchPool.request({
      method: "GET",
      path: `${path}?watch=true&resourceVersion=1`,
      headers: { authorization: `Bearer ${server.token}` },
      signal: ac.signal,
    });
    void (async () => {
      let buffer = "";
      try {
        for await (const chunk of res.body) {
          buffer += (chunk as Buffer).toString("utf8");
          let nl = buffer.indexOf("\n");
          while (nl >= 0) {
            const event = JSON.parse(buffer.slice(0, nl)) as { object: { metadata: { name: string } } };
            buffer = buffer.slice(nl + 1);
            const i = Number(event.object.metadata.name.slice("fan-".length));
            if (++received[i]! === FANOUT_WATCHERS) waiting[i]?.();
            nl = buffer.indexOf("\n");
          }
        }
      } catch {
        // aborted at the end
      }
    })();
  };
  // Opened 100 at a time: 2,000 TLS handshakes at once would measure the handshake queue.
  for (let i = 0; i < FANOUT_WATCHERS; i += 100) await Promise.all(Array.from({ length: 100 }, open));
  const rssWatching = server.rssBytes();
  const fanout: number[] = [];
  for (let i = 0; i < FANOUT_EVENTS; i++) {
    const all = new Promise<void>((r) => {
      waiting[i] = r;
    });
    const t0 = performance.now();
    await call(p, server.token, "POST", path, JSON.stringify({ metadata: { name: `fan-${i}` }, data: { a: "b" } }));
    await all;
    fanout.push(performance.now() - t0);
  }
  const rssAfter = server.rssBytes();
  for (const ac of controllers) ac.abort();
  await watchPool.destroy();
  await p.close();
  await server.stop();
  const sorted = [...fanout].sort((a, b) => a - b);
  return {
    bench: "watchers",
    watchers: FANOUT_WATCHERS,
    server_rss_bytes_before_watchers: rssBefore,
    server_rss_bytes_with_watchers: rssWatching,
    server_rss_bytes_after_events: rssAfter,
    server_rss_bytes_per_watcher: Math.round((rssWatching - rssBefore) / FANOUT_WATCHERS),
    fanout_p50_ms: round(sorted[Math.floor(sorted.length / 2)]!),
    fanout_max_ms: round(sorted[sorted.length - 1]!),
    fanout_first_ms: round(fanout[0]!),
    load_average_1m: Math.round(loadavg()[0]! * 100) / 100,
  };
}

/**
 * Full collections, each followed by a pause, before reading memory: V8 finishes sweeping and returns
 * pages after `gc()` returns, so one or two quick collections leave RSS depending on timing (runs of the
 * same build differed by ~150 B per object with two collections 50 ms apart; four 150 ms apart agree
 * within ~50 B).
 */
const SETTLE_ROUNDS = 4;
const SETTLE_PAUSE_MS = 150;

async function settledMemory(): Promise<{ rss: number; heapUsed: number }> {
  for (let i = 0; i < SETTLE_ROUNDS; i++) {
    gc!();
    await new Promise((r) => setTimeout(r, SETTLE_PAUSE_MS));
  }
  const { rss, heapUsed } = process.memoryUsage();
  return { rss, heapUsed };
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}

await main();
