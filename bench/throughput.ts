/**
 * Throughput benchmark (issues 14 and 29): the BenchItem workload against the embedded API server
 * (or any cluster: BENCH_KUBECONFIG), with the API server, the operator and the load driver in
 * separate processes (on a 2-core machine an in-process run would have server and operator share
 * one event loop). One JSON line per (N, style, mode) on stdout; progress on stderr.
 *
 *   npm run bench:throughput
 *
 * (that is `npm run build && node --conditions=capstan-source --import tsx bench/throughput.ts`: the
 * operators run the built `capstan run`, packages/capstan/bin/capstan.js, as a production image does).
 *
 * Per BenchItem the work is one owned ConfigMap, written by server-side apply, and one status patch
 * (`status.observedSize = spec.size`). Styles:
 * - `ceiling`: the same three raw calls per object (create the BenchItem, apply the ConfigMap, patch
 *   the status) from a plain client loop, BENCH_CONCURRENCY at a time, no framework. It runs in a
 *   child process of its own (a plain JavaScript module importing the built `capstan`, as the
 *   operators do), so its RSS and CPU are its own and the driver only watches.
 * - `reconcile`: a `capstan run` operator with a level-triggered reconcile, the OPERATOR of
 *   bench/footprint.ts (`ctx.apply` of the ConfigMap, then `ctx.patchStatus` unless already set).
 * - `handlers`: a `capstan run` operator written Kopf-style: `op.on.create(BenchItem, ...)` applies
 *   the owned ConfigMap through `api` and sets `patch.status.observedSize`. It returns nothing, so no
 *   handler result is stored (`storeResult: false` is not needed) and it sets the same status field
 *   as the reconcile style; the engine's own bookkeeping is stored wherever the engine keeps it.
 * - `clientgo` (only with BENCH_CLIENTGO_BIN): the same work done by a typical client-go controller,
 *   a Go binary built outside this repository (DEVELOPERS.md, "A client-go controller to compare
 *   with"): shared informers on BenchItems and ConfigMaps, a rate-limited work queue with `--workers`
 *   goroutines, create-or-update of the owned ConfigMap, a merge patch of the status subresource.
 *   It takes the flags `capstan run` takes here (`--workers` for `--max-concurrent-reconciles`),
 *   logs "Starting workers" and serves `rest_client_requests_total` on `--metrics-port`, so it is
 *   started, awaited and measured exactly as the Capstan operators are.
 * - `clientgo-apply` (only with BENCH_CLIENTGO_BIN, and only when named in BENCH_STYLES): the same
 *   controller with `--apply`: it writes the ConfigMap by server-side apply (field manager "bench",
 *   forced) where it would create or update it, as `ctx.apply` does, so the two are compared doing the
 *   same writes.
 * The ceiling is the framework-free way of doing the work, not a hard limit: an operator style runs
 * the creates (driver) and the work (operator) in two processes at once, so it may exceed it.
 *
 * For each N of BENCH_OBJECTS a fresh API server process (`capstan apiserver --port 0 --no-kubelet`)
 * is started and the BenchItem CRD registered — or, with BENCH_KUBECONFIG, the cluster it names is used
 * (a real kube-apiserver: every run in a namespace of its own, deleted afterwards, and the CRD deleted
 * at the end unless it was there before); then each style runs in a fresh namespace of its own,
 * its operator started with `--namespace <that namespace>` and awaited ("Starting workers") before
 * the first create. Order: the burst runs (ceiling, reconcile, handlers, clientgo), then the paced runs
 * (reconcile, handlers, clientgo), each paced run with a fresh operator and namespace too.
 * - `burst`: N BenchItems created by BENCH_CONCURRENCY concurrent creators in the driver (the
 *   ceiling's loop creates its own), as fast as they go.
 * - `paced`: BENCH_PACED_OBJECTS BenchItems created at BENCH_PACED_RATE per second.
 *
 * Figures of each line:
 * - `items_per_s`: objects / seconds from the first create sent to the moment the driver sees, through
 *   its watch on the namespace's BenchItems, the last object with `status.observedSize == spec.size`.
 * - `ratio_to_ceiling`: items_per_s / the ceiling's items_per_s of the same N, round and server (burst
 *   only; null for paced runs, or without a ceiling run).
 * - `p50_ms`, `p99_ms`: per object, from sending its create to the driver seeing its status (watch).
 *   In a burst this is mostly queueing behind the objects created before; the paced runs measure the
 *   latency of one object.
 * - `writes_per_object`: the operator's write requests (POST, PUT, PATCH, DELETE; every attempt,
 *   whatever its answer) from its `rest_client_requests_total` (`capstan run --metrics-port`), read
 *   after "Starting workers" (so CRD registration is not counted) and again once the count has stopped
 *   moving after convergence (the handler engine's bookkeeping patch follows the status patch), minus
 *   the Event writes, per object. For the ceiling: the loop's own PUT/PATCH/DELETE attempts counted by
 *   its client (its POSTs are the BenchItem creates, the load, not counted).
 * - `event_writes_per_object`: the operator's Event writes per object, told apart from the metrics
 *   (which have no path label) by the Events found in the namespace afterwards: each one is a POST
 *   plus a merge PATCH per repeat, so it counts as its `count` (0 for the ceiling).
 * - `reconciles_per_object`: the operator's reconciles per object, every result, from its
 *   `controller_runtime_reconcile_total` read as the write counts are (null for the ceiling and for
 *   an operator without that metric).
 * - `peak_rss_mb`: the operator's (or the ceiling process's) VmHWM at the end of the run.
 * - `operator_cpu_s`: its user + system CPU (/proc/<pid>/stat) from just before the first create to
 *   the end of the run (start-up excluded); `operator_cpu_ms_per_object` the same per object.
 * - `apiserver_cpu_ms_per_object`: the API server's CPU over the same span, per object: from
 *   /proc/<pid>/stat for the embedded server, from its `process_cpu_seconds_total` (`GET /metrics`)
 *   for a BENCH_KUBECONFIG cluster (kube-apiserver's own process, not etcd's); null where /metrics
 *   cannot be read. The same server also answers the driver's creates and watch, as it does for every
 *   style, so compare styles with each other (the ceiling is the framework-free floor).
 * - `apiserver_busy_cpu_ms_per_object` (BENCH_KUBECONFIG only): the same less the server's idle rate
 *   over as long a time, measured just before the run once the server is quiet again after the run
 *   before (under 10% of a core for 3 s; at most 60 s, or 30 ms per object of the run before, or
 *   10 minutes before an invocation's first run): a slower run on a loaded machine accrues more idle
 *   CPU per object, which is not the cost of its requests. Null when there is no idle rate.
 * - `apiserver_quiet_before` (null without BENCH_KUBECONFIG or /metrics): false when the server was
 *   still busy when the wait gave up, so the run shared it with the aftermath of earlier work (its
 *   items/s and ratios are not comparable).
 * - `apiserver_requests_per_object` (BENCH_KUBECONFIG only, when /metrics can be read): what the
 *   server served over the run, per object, from its `apiserver_request_total` ("VERB resource" or
 *   "VERB resource/subresource", the code added when not 2xx) and `apiserver_watch_events_total` /
 *   `apiserver_watch_events_sizes_sum` ("watch-events <Kind>", "watch-event-bytes <Kind>": events
 *   sent to every watcher, the driver's, the operator's and kube-controller-manager's), with what
 *   the server asked etcd ("etcd OPERATION resource" from `etcd_request_duration_seconds_count`: an
 *   `update` is one transaction, so more updates than writes are retries of a write that started from
 *   a stale cached object; a `get` is a read of etcd itself: a write of an object the watch cache does
 *   not hold, such as an apply that creates, or the re-read before such a retry) and its Go garbage
 *   collections ("go-gc-cycles"): compare a style's with the ceiling's to see which requests, events
 *   and retries it adds.
 * - `apiserver_heap_mb` (BENCH_KUBECONFIG only, when /metrics can be read): kube-apiserver's Go heap
 *   in use (`go_memstats_heap_inuse_bytes`) at the start and at the end of the run.
 * - `n`, `round`: the set (API server) the line belongs to; `objects`: this run's object count (N for a
 *   burst, BENCH_PACED_OBJECTS paced); `rate`: the paced rate (null for a burst).
 * - `workers`: BENCH_WORKERS as passed to `--max-concurrent-reconciles` (and to the client-go
 *   controller's `--workers`; null: each one's default, 16 for both).
 *
 * Environment: BENCH_OBJECTS (default "1000,3000"), BENCH_STYLES (default "ceiling,reconcile,handlers",
 * plus "clientgo" when BENCH_CLIENTGO_BIN is set; naming clientgo or clientgo-apply without it is an
 * error; the runs follow the order given),
 * BENCH_CLIENTGO_BIN (default unset: the client-go controller's binary),
 * BENCH_CONCURRENCY (default 32), BENCH_WORKERS (default unset), BENCH_PACED_RATE (default 50),
 * BENCH_PACED_OBJECTS (default 500; 0 skips the paced runs), BENCH_KUBECONFIG (default unset: an embedded
 * server per set), BENCH_OPERATOR_NODE_FLAGS (default unset: node flags for the Capstan operators,
 * split at spaces, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`; `--cpu-prof` is refused in NODE_OPTIONS),
 * BENCH_OPERATOR_NODE (default: this process's node: the Node.js binary of the Capstan operators and
 * of the ceiling's loop, to compare Node.js versions on one machine; each line names its version),
 * BENCH_ROUNDS (default 1: each round repeats every
 * N with its own server, every line printed), BENCH_TIMEOUT_S (default 300: a run not converged by
 * then fails, naming the objects without status, and the benchmark exits 1),
 * BENCH_WARMUP_OBJECTS (default 0: see below).
 *
 * Warm runs (BENCH_WARMUP_OBJECTS > 0, burst runs only): before its measured burst each actor
 * handles that many BenchItems (`warmup-<i>`, created as the measured ones are, in the same
 * namespace), so what is measured is a process past its start: a JIT-compiled operator (V8
 * compiles its hot path while the first objects go by) against a compiled Go one. The measured
 * burst starts once every warm-up object converged and the server is quiet again; its objects share
 * the caches and the namespace with the warm-up's. Lines say `warmup_objects`.
 *
 * Goals (issue 14, "Throughput"), at N = 3,000: reconcile >= 0.95 of the ceiling, handlers >= 0.85,
 * writes_per_object 2 for both styles, and p99 < 200 ms paced at 50 objects/s.
 */
import { accessSync, constants, readFileSync } from "node:fs";
import { mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { pathToFileURL } from "node:url";
import { type CustomResource, isGone, KubeClient, type KubeObject, type ResourceClient, toCrd } from "capstan";
import { loadClientConfig } from "capstan/client";
import { CustomResourceDefinition, Event, Namespace } from "capstan/core";
import { CAPSTAN_BIN } from "capstan/internal";
import { ensureCrds } from "capstan/runtime";
import { BENCH_ITEM_MODULE, HANDLERS_MODULE, RECONCILE_MODULE } from "./bench-item-operators.ts";
import { apiServerCpuSeconds } from "./chaos-kube-cluster.ts";
import { freePort, launch, operatorNode, type Proc, removeAtExit } from "./child-processes.ts";

const STYLE_NAMES = ["ceiling", "reconcile", "handlers", "clientgo", "clientgo-apply"] as const;
type Style = (typeof STYLE_NAMES)[number];
const isClientGo = (style: Style) => style === "clientgo" || style === "clientgo-apply";
type Mode = "burst" | "paced";

function positive(name: string, fallback: number, min = 1): number {
  const text = process.env[name];
  const n = text === undefined || text === "" ? fallback : Number(text);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer >= ${min}, got "${text}"`);
  return n;
}

const SIZES = (process.env.BENCH_OBJECTS || "1000,3000").split(",").map((s) => {
  const n = Number(s.trim());
  if (!Number.isInteger(n) || n < 1) throw new Error(`BENCH_OBJECTS: "${s}" is not a positive integer`);
  return n;
});
/** The client-go controller's binary (DEVELOPERS.md says how to build it), or undefined. */
const CLIENTGO_BIN = process.env.BENCH_CLIENTGO_BIN || undefined;
const DEFAULT_STYLES = `ceiling,reconcile,handlers${CLIENTGO_BIN === undefined ? "" : ",clientgo"}`;
const STYLES = (process.env.BENCH_STYLES || DEFAULT_STYLES).split(",").map((s) => {
  const style = s.trim();
  if (!(STYLE_NAMES as readonly string[]).includes(style)) {
    throw new Error(`BENCH_STYLES: unknown style "${style}" (${STYLE_NAMES.join(", ")})`);
  }
  return style as Style;
});
if (STYLES.some(isClientGo)) {
  if (CLIENTGO_BIN === undefined) {
    throw new Error(
      "BENCH_STYLES names a client-go style but BENCH_CLIENTGO_BIN is unset: build the client-go controller " +
        '(DEVELOPERS.md, "A client-go controller to compare with") and set BENCH_CLIENTGO_BIN to its binary',
    );
  }
  try {
    accessSync(CLIENTGO_BIN, constants.X_OK);
  } catch {
    throw new Error(`BENCH_CLIENTGO_BIN: ${CLIENTGO_BIN} is not an executable file`);
  }
}
const CONCURRENCY = positive("BENCH_CONCURRENCY", 32);
const WORKERS = process.env.BENCH_WORKERS ? positive("BENCH_WORKERS", 1) : null;
const PACED_RATE = positive("BENCH_PACED_RATE", 50);
const PACED_OBJECTS = positive("BENCH_PACED_OBJECTS", 500, 0);
const ROUNDS = positive("BENCH_ROUNDS", 1);
const TIMEOUT_MS = positive("BENCH_TIMEOUT_S", 300) * 1000;
const WARMUP_OBJECTS = positive("BENCH_WARMUP_OBJECTS", 0, 0);
const TARGET_KUBECONFIG = process.env.BENCH_KUBECONFIG || undefined;
/** Node flags for the Capstan operators' processes (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`; split at spaces). */
const OPERATOR_NODE_FLAGS = (process.env.BENCH_OPERATOR_NODE_FLAGS ?? "").split(" ").filter((flag) => flag !== "");
/** The Node.js binary of the Capstan operators and the ceiling's loop (the client-go controller is Go). */
const { path: OPERATOR_NODE, version: OPERATOR_NODE_VERSION } = operatorNode();
/** "Quiet": under 10% of a core (an idle kube-apiserver with its controller manager uses 2-3%) for 3 samples of 1 s. */
const QUIET_CPU_SHARE = 0.1;
const QUIET_SAMPLE_MS = 1000;
const QUIET_SAMPLES = 3;
/**
 * How long a run's aftermath may keep the server busy before the next run starts anyway. It grows
 * with N: after a run's namespace is gone, kube-controller-manager's garbage collector still looks
 * up each of its ConfigMaps (GET, 404) at its client's rate limit, ~42 per second on kube-apiserver
 * 1.26, a quarter of a core for ~4 minutes after a 10,000-object run (measured).
 */
const quietTimeoutMs = (objects: number) => Math.max(60_000, objects * 30);
/**
 * The quiet wait of an invocation's first run: it may follow an earlier invocation's larger run
 * (alternated sets: a 1,000-object set after a 10,000-object one) that this process knows nothing
 * of. Its 60 s ran out while the server was still deleting the 10,000 objects, and those runs were
 * charged for it (the ceiling's and client-go's items/s 11% and 26% below the set before). A quiet
 * server ends the wait at once, so only a server that never goes quiet waits this long.
 */
const FIRST_QUIET_TIMEOUT_MS = 600_000;
/** Objects of this invocation's previous run, whose aftermath the next run waits out (null: none yet). */
let previousRunObjects: number | null = null;
/** Namespaces of this invocation differ from any earlier one's on a long-lived cluster. */
const RUN_ID = Date.now().toString(36);
/** Names of the measured BenchItems and of a warm run's warm-up ones (`<prefix><i>`), in the driver and the ceiling alike. */
const MEASURED_PREFIX = "item-";
const WARMUP_PREFIX = "warmup-";
const repo = new URL("..", import.meta.url).pathname;

/**
 * The ceiling: create, apply, patch status per object, CONCURRENCY loops. Talks to the driver over
 * IPC: "ready" once loaded, starts on "go", answers "done" with each create's send time and its
 * request counts by method; `{ warmup: n }` runs the same loop on n `warmup-<i>` objects first and
 * answers "warmed" (counts restart); exits when the driver disconnects.
 */
const CEILING_MODULE = `import { KubeClient } from "capstan";
import { loadClientConfig } from "capstan/client";
import { ConfigMap } from "capstan/core";
import { BenchItem } from "./bench-item.js";

const { kubeconfig, namespace, objects, concurrency } = JSON.parse(process.env.BENCH_CEILING);
let requests = {};
const client = new KubeClient(loadClientConfig({ kubeconfig }), {
  onResponse: (method) => { requests[method] = (requests[method] ?? 0) + 1; },
});
const items = client.resource(BenchItem, namespace);
const apiVersion = BenchItem.apiVersion;
const configMaps = client.resource(ConfigMap, namespace);

async function one(prefix, i) {
  const name = prefix + i;
  sent[name] = performance.timeOrigin + performance.now();
  const item = await items.create({ apiVersion, kind: "BenchItem", metadata: { name }, spec: { size: i } });
  const uid = item.metadata.uid;
  const owner = { apiVersion, kind: "BenchItem", name, uid, controller: true, blockOwnerDeletion: true };
  const configMap = ConfigMap.make({ metadata: { name, ownerReferences: [owner] }, data: { size: String(i) } });
  await configMaps.apply(configMap, { fieldManager: "bench", force: true });
  await items.patchStatus(name, { status: { observedSize: i } });
}

let sent = {};
async function loop(prefix, count) {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, async () => {
    for (let i = next++; i < count; i = next++) await one(prefix, i);
  }));
}
process.once("disconnect", () => process.exit(0));
process.on("message", async (message) => {
  if (typeof message === "object" && message?.warmup) {
    await loop(${JSON.stringify(WARMUP_PREFIX)}, message.warmup);
    sent = {};
    requests = {};
    process.send({ type: "warmed" });
    return;
  }
  if (message !== "go") return;
  await loop(${JSON.stringify(MEASURED_PREFIX)}, objects);
  process.send({ type: "done", sent, requests });
});
process.send({ type: "ready" });
`;

type BenchItemObject = KubeObject & { spec: { size: number }; status?: { observedSize?: number } };
type BenchItemKind = CustomResource & { apiVersion: string };

function log(message: string): void {
  process.stderr.write(`[throughput] ${message}\n`);
}

/** Wall-clock milliseconds with sub-millisecond resolution, comparable across processes. */
function now(): number {
  return performance.timeOrigin + performance.now();
}

function round(n: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

/** Nearest-rank percentile of unsorted values. */
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

// --- child processes (bench/child-processes.ts starts them) ----------------------------------

/** VmHWM of a process, in MB. */
function peakRssMb(pid: number): number {
  const m = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!m) throw new Error(`no VmHWM in /proc/${pid}/status`);
  return round(Number(m[1]) / 1024);
}

/** User + system CPU seconds of a process so far (/proc/<pid>/stat fields 14 and 15, in clock ticks of 1/100 s). */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" "); // fields from the 3rd (state) on
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

// --- the operator's request counts ------------------------------------------------------------

const WRITE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** The operator's write attempts so far by "METHOD code", from its rest_client_requests_total. */
async function writeCounts(port: number): Promise<Map<string, number>> {
  let text: string | undefined;
  for (let attempt = 1; text === undefined; attempt++) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      text = await res.text();
    } catch (err) {
      if (attempt >= 20) throw new Error(`operator /metrics on port ${port}: ${(err as Error).message}`);
      await sleep(100);
    }
  }
  const counts = new Map<string, number>();
  for (const m of text.matchAll(/^rest_client_requests_total\{([^}]*)\} (\S+)$/gm)) {
    const labels = Object.fromEntries([...(m[1] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    const method = labels["method"] ?? "";
    if (WRITE_METHODS.has(method)) counts.set(`${method} ${labels["code"]}`, Number(m[2]));
  }
  return counts;
}

/** The operator's reconciles so far (every result), from `controller_runtime_reconcile_total`; null without it. */
async function reconcileCount(port: number): Promise<number | null> {
  const text = await fetch(`http://127.0.0.1:${port}/metrics`)
    .then((res) => (res.ok ? res.text() : ""))
    .catch(() => "");
  let sum: number | null = null;
  for (const m of text.matchAll(/^controller_runtime_reconcile_total\{[^}]*\} (\S+)$/gm))
    sum = (sum ?? 0) + Number(m[1]);
  return sum;
}

function subtract(after: Map<string, number>, before: Map<string, number>): Map<string, number> {
  const delta = new Map<string, number>();
  for (const [key, n] of after) if (n - (before.get(key) ?? 0) > 0) delta.set(key, n - (before.get(key) ?? 0));
  return delta;
}

function total(counts: Map<string, number>): number {
  let sum = 0;
  for (const n of counts.values()) sum += n;
  return sum;
}

/** The write counts once they stopped moving for a second (at most 15 s after convergence). */
async function settledWriteCounts(port: number): Promise<Map<string, number>> {
  let last = await writeCounts(port);
  let stableSince = performance.now();
  const deadline = stableSince + 15_000;
  while (performance.now() - stableSince < 1000 && performance.now() < deadline) {
    await sleep(250);
    const current = await writeCounts(port);
    if (total(current) !== total(last)) stableSince = performance.now();
    last = current;
  }
  return last;
}

/** Writes the Events in the namespace stand for: each one a POST plus a PATCH per repeat. */
async function eventWrites(client: KubeClient, namespace: string): Promise<number> {
  const events = await client.resource(Event, namespace).list();
  const reasons = new Map<string, number>();
  let writes = 0;
  for (const e of events.items) {
    writes += Math.max(1, e.count ?? 1);
    const key = `${e.involvedObject.kind} ${e.type} ${e.reason}`;
    reasons.set(key, (reasons.get(key) ?? 0) + 1);
  }
  if (reasons.size > 0) log(`  events in ${namespace}: ${[...reasons].map(([k, n]) => `${k} x${n}`).join(", ")}`);
  return writes;
}

// --- watching for statuses --------------------------------------------------------------------

interface StatusWatch {
  /** When the driver first saw each object with `status.observedSize == spec.size`. */
  readonly seen: Map<string, number>;
  /** Resolves once `expected` objects have been seen so; rejects if the watch fails. */
  readonly done: Promise<void>;
  stop(): void;
}

/** Watches the namespace's BenchItems named `<prefix><i>` (open before this resolves) for converged statuses. */
async function watchStatuses(
  items: ResourceClient<BenchItemObject>,
  expected: number,
  prefix: string,
): Promise<StatusWatch> {
  const seen = new Map<string, number>();
  const abort = new AbortController();
  let resolveDone!: () => void;
  let rejectDone!: (err: unknown) => void;
  const done = new Promise<void>((resolve, reject) => {
    resolveDone = resolve;
    rejectDone = reject;
  });
  done.catch(() => undefined);
  const note = (item: BenchItemObject) => {
    const name = item.metadata?.name;
    if (name === undefined || !name.startsWith(prefix) || seen.has(name)) return;
    if (item.status?.observedSize !== item.spec.size) return;
    seen.set(name, now());
    if (seen.size >= expected) resolveDone();
  };
  const list = async () => {
    const page = await items.list();
    for (const item of page.items) note(item);
    return page.metadata.resourceVersion;
  };
  const open = (resourceVersion: string | undefined) =>
    items.watch({ resourceVersion, allowWatchBookmarks: true, signal: abort.signal });
  let resourceVersion = await list();
  let events = await open(resourceVersion);
  const loop = async () => {
    for (;;) {
      try {
        for await (const e of events) {
          resourceVersion = e.object.metadata?.resourceVersion ?? resourceVersion;
          if (e.type === "ADDED" || e.type === "MODIFIED") note(e.object);
        }
      } catch (err) {
        if (!isGone(err)) throw err;
        resourceVersion = await list();
      }
      if (abort.signal.aborted || seen.size >= expected) return;
      events = await open(resourceVersion); // the server ended the watch: resume where it stopped
    }
  };
  loop().catch((err: unknown) => {
    if (!abort.signal.aborted) rejectDone(err);
  });
  return { seen, done, stop: () => abort.abort() };
}

// --- one run ----------------------------------------------------------------------------------

interface ServerSet {
  dir: string;
  kubeconfig: string;
  client: KubeClient;
  /** The API server's CPU seconds so far, or null when they cannot be read. */
  apiServerCpu(): Promise<number | null>;
  BenchItem: BenchItemKind;
  n: number;
  round: number;
}

interface Line {
  bench: "throughput";
  n: number;
  round: number;
  style: Style;
  mode: Mode;
  objects: number;
  /** Objects the actor handled before the measured ones (BENCH_WARMUP_OBJECTS; 0 for paced runs). */
  warmup_objects: number;
  rate: number | null;
  workers: number | null;
  /** The Node.js version of the actor (BENCH_OPERATOR_NODE); null for the client-go controller. */
  node: string | null;
  items_per_s: number;
  ratio_to_ceiling: number | null;
  p50_ms: number;
  p99_ms: number;
  writes_per_object: number;
  event_writes_per_object: number;
  reconciles_per_object: number | null;
  peak_rss_mb: number;
  operator_cpu_s: number;
  operator_cpu_ms_per_object: number;
  apiserver_cpu_ms_per_object: number | null;
  apiserver_busy_cpu_ms_per_object: number | null;
  /** Whether the server was quiet before the run (null: the embedded server, or no /metrics). */
  apiserver_quiet_before: boolean | null;
  apiserver_requests_per_object?: Record<string, number>;
  apiserver_heap_mb?: [number | null, number | null];
}

/** Creates `objects` BenchItems from the driver, burst (CONCURRENCY at a time) or paced. */
async function createItems(
  items: ResourceClient<BenchItemObject>,
  apiVersion: string,
  objects: number,
  mode: Mode,
  sent: Map<string, number>,
  prefix = MEASURED_PREFIX,
): Promise<void> {
  const create = async (i: number) => {
    const name = `${prefix}${i}`;
    sent.set(name, now());
    await items.create({ apiVersion, kind: "BenchItem", metadata: { name }, spec: { size: i } });
  };
  if (mode === "burst") {
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(CONCURRENCY, objects) }, async () => {
        for (let i = next++; i < objects; i = next++) await create(i);
      }),
    );
    return;
  }
  const start = performance.now();
  const creates: Promise<void>[] = [];
  for (let i = 0; i < objects; i++) {
    const wait = start + (i * 1000) / PACED_RATE - performance.now();
    if (wait > 0) await sleep(wait);
    creates.push(create(i));
  }
  await Promise.all(creates);
}

/** Fails after TIMEOUT_MS, naming the BenchItems still without their status. */
async function convergenceTimeout(
  items: ResourceClient<BenchItemObject>,
  expected: number,
  signal: AbortSignal,
): Promise<never> {
  await sleep(TIMEOUT_MS, undefined, { signal });
  const missing: string[] = [];
  let found = 0;
  for await (const item of items.listAll()) {
    found++;
    if (item.status?.observedSize !== item.spec.size) missing.push(item.metadata?.name ?? "?");
  }
  throw new Error(
    `not converged within ${TIMEOUT_MS / 1000} s: ${found} of ${expected} BenchItems created, ` +
      `${missing.length} of them without status.observedSize == spec.size` +
      (missing.length > 0 ? `: ${missing.slice(0, 20).join(", ")}${missing.length > 20 ? ", ..." : ""}` : ""),
  );
}

/** What a style's actor (the ceiling process or the operator) gives a run. */
interface Actor {
  proc: Proc;
  /** Handles `objects` warm-up objects; resolves once `converged` has and the counts start again. */
  warmUp(objects: number, converged: Promise<void>): Promise<void>;
  /** Starts the load; resolves once every create was answered (for the ceiling: its whole loop). */
  start(): Promise<unknown>;
  /** The object writes and the Event writes of the run, once converged. */
  writes(): Promise<{ objectWrites: number; eventWrites: number; reconciles: number | null }>;
}

/** The ceiling loop in its own process, loaded and waiting for "go". */
async function startCeiling(
  set: ServerSet,
  namespace: string,
  objects: number,
  sent: Map<string, number>,
  track: (proc: Proc) => void,
): Promise<Actor> {
  const proc = launch("ceiling", ["ceiling.js"], {
    cwd: set.dir,
    command: OPERATOR_NODE,
    ipc: true,
    env: {
      BENCH_CEILING: JSON.stringify({ kubeconfig: set.kubeconfig, namespace, objects, concurrency: CONCURRENCY }),
    },
  });
  track(proc);
  await proc.message("ready");
  type Done = { type: "done"; sent: Record<string, number>; requests: Record<string, number> };
  let finished: Promise<Record<string, number>> | undefined;
  return {
    proc,
    async warmUp(warmup, converged) {
      const warmed = proc.message("warmed");
      proc.child.send({ warmup });
      await Promise.all([warmed, converged]);
    },
    start() {
      finished = proc.message<Done>("done").then((d) => {
        for (const [name, t] of Object.entries(d.sent)) sent.set(name, t);
        return d.requests;
      });
      proc.child.send("go");
      return finished;
    },
    async writes() {
      const requests = (await finished) ?? {};
      log(`  ceiling requests: ${JSON.stringify(requests)}`);
      const objectWrites = (requests["PUT"] ?? 0) + (requests["PATCH"] ?? 0) + (requests["DELETE"] ?? 0);
      return { objectWrites, eventWrites: 0, reconciles: null };
    },
  };
}

/**
 * The operator of a style, started (its "Starting workers" log line), the driver creating:
 * `capstan run <style>.js --namespace <namespace>`, or for the client-go styles the BENCH_CLIENTGO_BIN binary
 * with the same flags (`--workers` for `--max-concurrent-reconciles`; klog's text log).
 */
async function startOperator(
  set: ServerSet,
  style: Style,
  mode: Mode,
  namespace: string,
  objects: number,
  sent: Map<string, number>,
  track: (proc: Proc) => void,
): Promise<Actor> {
  const port = await freePort();
  let proc: Proc;
  if (isClientGo(style)) {
    const args = ["--kubeconfig", set.kubeconfig, "--namespace", namespace, "--metrics-port", String(port)];
    if (WORKERS !== null) args.push("--workers", String(WORKERS));
    if (style === "clientgo-apply") args.push("--apply");
    proc = launch("client-go controller", args, { cwd: set.dir, command: CLIENTGO_BIN });
    track(proc);
    await proc.line((l) => l.includes('"Starting workers"'), '"Starting workers"', 60_000);
  } else {
    const args = [...OPERATOR_NODE_FLAGS, CAPSTAN_BIN, "run", `${style}.js`, "--kubeconfig", set.kubeconfig];
    args.push("--namespace", namespace);
    args.push("--metrics-port", String(port), "--log-format", "json");
    if (WORKERS !== null) args.push("--max-concurrent-reconciles", String(WORKERS));
    proc = launch(`capstan run ${style}.js`, args, { cwd: set.dir, command: OPERATOR_NODE });
    track(proc);
    await proc.line((l) => l.includes('"msg":"Starting workers"'), '"Starting workers"', 60_000);
  }
  let before = await writeCounts(port);
  let reconcilesBefore = await reconcileCount(port);
  const items = set.client.resource(set.BenchItem, namespace) as unknown as ResourceClient<BenchItemObject>;
  return {
    proc,
    async warmUp(warmup, converged) {
      await createItems(items, set.BenchItem.apiVersion, warmup, "burst", new Map(), WARMUP_PREFIX);
      await converged;
      before = await settledWriteCounts(port);
      reconcilesBefore = await reconcileCount(port);
    },
    start: () => createItems(items, set.BenchItem.apiVersion, objects, mode, sent),
    async writes() {
      const delta = subtract(await settledWriteCounts(port), before);
      log(`  operator writes: ${[...delta].map(([k, n]) => `${k} x${n}`).join(", ") || "none"}`);
      const events = await eventWrites(set.client, namespace);
      const reconciles = await reconcileCount(port);
      return {
        objectWrites: total(delta) - events,
        eventWrites: events,
        reconciles: reconciles === null || reconcilesBefore === null ? null : reconciles - reconcilesBefore,
      };
    },
  };
}

async function runOne(set: ServerSet, style: Style, mode: Mode, ceilingRate: number | null): Promise<Line> {
  const objects = mode === "burst" ? set.n : PACED_OBJECTS;
  const namespace = `${style}-${mode}-${set.n}-r${set.round}-${RUN_ID}`;
  log(`N=${set.n} ${style} ${mode}: ${objects} objects in namespace ${namespace}`);
  await set.client.resource(Namespace).create(Namespace.make({ metadata: { name: namespace } }));
  const items = set.client.resource(set.BenchItem, namespace) as unknown as ResourceClient<BenchItemObject>;
  const watch = await watchStatuses(items, objects, MEASURED_PREFIX);
  const sent = new Map<string, number>();
  const timeout = new AbortController();
  let proc: Proc | undefined;
  const track = (p: Proc) => {
    proc = p;
  };
  try {
    const actor =
      style === "ceiling"
        ? await startCeiling(set, namespace, objects, sent, track)
        : await startOperator(set, style, mode, namespace, objects, sent, track);
    const warmup = mode === "burst" ? WARMUP_OBJECTS : 0;
    if (warmup > 0) {
      const warmWatch = await watchStatuses(items, warmup, WARMUP_PREFIX);
      const warmTimeout = new AbortController();
      const warmTimedOut = convergenceTimeout(items, warmup, warmTimeout.signal);
      warmTimedOut.catch(() => undefined);
      try {
        log(`  warm-up: ${warmup} objects`);
        await Promise.race([actor.warmUp(warmup, warmWatch.done), actor.proc.died("warm-up"), warmTimedOut]);
      } finally {
        warmTimeout.abort();
        warmWatch.stop();
      }
    }
    const quietTimeout = previousRunObjects === null ? FIRST_QUIET_TIMEOUT_MS : quietTimeoutMs(previousRunObjects);
    previousRunObjects = objects + warmup; // its namespace, deleted after it, holds both
    const idlePerMs = TARGET_KUBECONFIG !== undefined ? await untilServerQuiet(set, quietTimeout) : null;
    const countsBefore = TARGET_KUBECONFIG !== undefined ? await serverCounts(set.client) : null;
    const cpuStart = cpuSeconds(actor.proc.pid);
    const serverCpuStart = await set.apiServerCpu();
    const serverStartedAt = performance.now();
    const timedOut = convergenceTimeout(items, objects, timeout.signal);
    timedOut.catch(() => undefined);
    await Promise.race([Promise.all([watch.done, actor.start()]), actor.proc.died("convergence"), timedOut]);
    const counted = await actor.writes();
    const peak = peakRssMb(actor.proc.pid);
    const cpu = cpuSeconds(actor.proc.pid) - cpuStart;
    const serverCpuEnd = await set.apiServerCpu();
    const countsAfter = countsBefore === null ? null : await serverCounts(set.client);
    const served =
      countsBefore === null || countsAfter === null
        ? null
        : perObject(countsAfter.counts, countsBefore.counts, objects);
    if (served !== null) log(`  API server per object: ${JSON.stringify(served)}`);
    const serverCpu = serverCpuStart === null || serverCpuEnd === null ? null : serverCpuEnd - serverCpuStart;
    const serverBusyCpu =
      serverCpu === null || idlePerMs === null ? null : serverCpu - idlePerMs * (performance.now() - serverStartedAt);

    const first = Math.min(...sent.values());
    const last = Math.max(...watch.seen.values());
    const latencies: number[] = [];
    for (const [name, seenAt] of watch.seen) {
      const sentAt = sent.get(name);
      if (sentAt === undefined) throw new Error(`saw ${name} converge but never sent its create`);
      latencies.push(seenAt - sentAt);
    }
    const itemsPerS = objects / ((last - first) / 1000);
    return {
      bench: "throughput",
      n: set.n,
      round: set.round,
      style,
      mode,
      objects,
      warmup_objects: warmup,
      rate: mode === "paced" ? PACED_RATE : null,
      workers: WORKERS,
      node: isClientGo(style) ? null : OPERATOR_NODE_VERSION,
      items_per_s: round(itemsPerS),
      ratio_to_ceiling: mode === "burst" && ceilingRate !== null ? round(itemsPerS / ceilingRate, 3) : null,
      p50_ms: round(percentile(latencies, 50)),
      p99_ms: round(percentile(latencies, 99)),
      writes_per_object: round(counted.objectWrites / objects, 3),
      event_writes_per_object: round(counted.eventWrites / objects, 3),
      reconciles_per_object: counted.reconciles === null ? null : round(counted.reconciles / objects, 3),
      peak_rss_mb: peak,
      operator_cpu_s: round(cpu, 2),
      operator_cpu_ms_per_object: round((cpu * 1000) / objects, 2),
      apiserver_cpu_ms_per_object: serverCpu === null ? null : round((serverCpu * 1000) / objects, 2),
      apiserver_busy_cpu_ms_per_object: serverBusyCpu === null ? null : round((serverBusyCpu * 1000) / objects, 2),
      apiserver_quiet_before: TARGET_KUBECONFIG === undefined || serverCpuStart === null ? null : idlePerMs !== null,
      ...(served === null ? {} : { apiserver_requests_per_object: served }),
      ...(countsBefore === null || countsAfter === null
        ? {}
        : { apiserver_heap_mb: [countsBefore.heapMb, countsAfter.heapMb] }),
    };
  } finally {
    timeout.abort();
    watch.stop();
    const running = proc as Proc | undefined;
    if (running?.child.connected) running.child.disconnect();
    await running?.stop();
    if (TARGET_KUBECONFIG !== undefined) await deleteNamespace(set.client, namespace);
  }
}

/**
 * Waits until the API server's CPU is back near idle, and answers that idle rate (CPU seconds per
 * millisecond over the quiet samples; null when the CPU cannot be read). A namespace is gone before
 * the garbage collector has finished with its objects (kube-controller-manager keeps deleting and
 * looking up the children of deleted owners for a while): without this wait that work, caused by
 * the run before, was counted in the next run's API server CPU (measured under issue 29: ~1,000
 * DELETE and GET requests of ConfigMaps after a 1,000-object run). The idle rate is what the server
 * spends whatever the run does (its controllers, lease renewals, the operator's idle watches); a
 * run that takes longer on a loaded machine accrues more of it per object.
 */
async function untilServerQuiet(set: ServerSet, timeoutMs: number): Promise<number | null> {
  const deadline = performance.now() + timeoutMs;
  let last = await set.apiServerCpu();
  let lastAt = performance.now();
  const quiet: number[] = [];
  while (last !== null && quiet.length < QUIET_SAMPLES && performance.now() < deadline) {
    await sleep(QUIET_SAMPLE_MS);
    const now = await set.apiServerCpu();
    const at = performance.now();
    if (now === null) return null;
    const rate = (now - last) / (at - lastAt);
    if (rate * 1000 <= QUIET_CPU_SHARE) quiet.push(rate);
    else quiet.length = 0;
    last = now;
    lastAt = at;
  }
  if (last === null) return null;
  if (quiet.length < QUIET_SAMPLES) {
    log(`  the API server was still busy ${timeoutMs / 1000} s after the last run: no idle rate`);
    return null;
  }
  return quiet.reduce((a, b) => a + b, 0) / quiet.length;
}

/**
 * Waits until the cluster's own controllers watch a newly registered kind as they watch ConfigMaps
 * (kube-controller-manager's garbage collector and quota monitors find new kinds by discovery, every
 * 30 s): as many cluster-wide watches of `plural` as of configmaps, from kube-apiserver's
 * `apiserver_longrunning_requests`. Without it the first run (the ceiling) ran before they watched,
 * so it was spared the watch events every later run paid for (2 more BenchItem events per object,
 * seen in `apiserver_requests_per_object` under issue 29). Gives up after 90 s, saying so.
 */
async function untilClusterWatches(client: KubeClient, plural: string): Promise<void> {
  const watches = async (resource: string): Promise<number | null> => {
    const text = await client.request<string>("GET", "/metrics", { accept: "text/plain" }).catch(() => null);
    if (text === null) return null;
    let n = 0;
    for (const m of text.matchAll(/^apiserver_longrunning_requests\{([^}]*)\} (\S+)$/gm)) {
      const labels = m[1] ?? "";
      if (
        labels.includes(`resource="${resource}"`) &&
        labels.includes('scope="cluster"') &&
        labels.includes('verb="WATCH"')
      ) {
        n += Number(m[2]);
      }
    }
    return n;
  };
  const wanted = await watches("configmaps");
  if (wanted === null || wanted === 0) return;
  const deadline = performance.now() + 90_000;
  while (performance.now() < deadline) {
    if (((await watches(plural)) ?? 0) >= wanted) return;
    await sleep(1000);
  }
  log(
    `  the cluster's controllers did not watch ${plural} within 90 s: the first run may be spared their watch events`,
  );
}

/** Deletes a run's namespace on a shared cluster and waits until it is gone (its objects with it). */
async function deleteNamespace(client: KubeClient, name: string): Promise<void> {
  const namespaces = client.resource(Namespace);
  await namespaces.delete(name).catch(() => undefined);
  const deadline = performance.now() + TIMEOUT_MS;
  while (performance.now() < deadline) {
    if ((await namespaces.get(name).catch(() => undefined)) === undefined) return;
    await sleep(500);
  }
  log(`  namespace ${name} still terminating after ${TIMEOUT_MS / 1000} s; left to the cluster`);
}

/**
 * What kube-apiserver served so far, from its /metrics (null when they cannot be read): requests by
 * "VERB resource[/subresource]" (with the code when it is not 2xx) from `apiserver_request_total`,
 * watch events sent by "watch-events <Kind>" from `apiserver_watch_events_total`, and their bytes
 * as "watch-event-bytes <Kind>". Every client's requests count: the driver's, the operator's and
 * kube-controller-manager's.
 */
async function serverCounts(client: KubeClient): Promise<ServerCounts | null> {
  let text: string;
  try {
    text = await client.request<string>("GET", "/metrics", { accept: "text/plain" });
  } catch {
    return null;
  }
  const counts = new Map<string, number>();
  let heapBytes: number | null = null;
  const add = (key: string, n: number) => counts.set(key, (counts.get(key) ?? 0) + n);
  for (const m of text.matchAll(
    /^(apiserver_request_total|apiserver_watch_events_total|apiserver_watch_events_sizes_sum|etcd_request_duration_seconds_count|go_gc_duration_seconds_count|go_memstats_heap_inuse_bytes)(?:\{([^}]*)\})? (\S+)$/gm,
  )) {
    const labels = Object.fromEntries([...(m[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    const n = Number(m[3]);
    if (m[1] === "apiserver_request_total") {
      const sub = labels["subresource"] ? `/${labels["subresource"]}` : "";
      const code = labels["code"] ?? "";
      add(`${labels["verb"]} ${labels["resource"] || "-"}${sub}${code.startsWith("2") ? "" : ` ${code}`}`, n);
    } else if (m[1] === "apiserver_watch_events_total") add(`watch-events ${labels["kind"]}`, n);
    else if (m[1] === "apiserver_watch_events_sizes_sum") add(`watch-event-bytes ${labels["kind"]}`, n);
    else if (m[1] === "etcd_request_duration_seconds_count") add(`etcd ${labels["operation"]} ${labels["type"]}`, n);
    else if (m[1] === "go_gc_duration_seconds_count") add("go-gc-cycles", n);
    else heapBytes = n;
  }
  return { counts, heapMb: heapBytes === null ? null : round(heapBytes / 2 ** 20, 0) };
}

/** `serverCounts`' reading: the counters, and the Go heap in use (a gauge, MB) at that moment. */
interface ServerCounts {
  counts: Map<string, number>;
  heapMb: number | null;
}

/** The counts that moved between two readings, per object (every request; events from 0.005, bytes from 1 per object). */
function perObject(after: Map<string, number>, before: Map<string, number>, objects: number): Record<string, number> {
  const moved: Record<string, number> = {};
  for (const [key, n] of [...after].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const moves = n - (before.get(key) ?? 0);
    const delta = moves / objects;
    if (key.startsWith("watch-event-bytes")) {
      if (delta >= 1) moved[key] = round(delta, 0);
    } else if (key.startsWith("watch-events") ? delta >= 0.005 : moves >= 1) moved[key] = round(delta, 4);
  }
  return moved;
}

// --- one server, every style ------------------------------------------------------------------

async function runSet(n: number, roundNo: number): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "capstan-throughput-"));
  removeAtExit(dir);
  let server: Proc | undefined;
  let client: KubeClient | undefined;
  let removeCrd: (() => Promise<unknown>) | undefined;
  try {
    await writeFile(join(dir, "package.json"), '{ "type": "module" }\n');
    await symlink(join(repo, "node_modules"), join(dir, "node_modules"));
    await writeFile(join(dir, "bench-item.js"), BENCH_ITEM_MODULE);
    await writeFile(join(dir, "reconcile.js"), RECONCILE_MODULE);
    await writeFile(join(dir, "handlers.js"), HANDLERS_MODULE);
    await writeFile(join(dir, "ceiling.js"), CEILING_MODULE);
    let kubeconfig: string;
    let apiServerCpu: () => Promise<number | null>;
    if (TARGET_KUBECONFIG === undefined) {
      kubeconfig = join(dir, "kubeconfig");
      server = launch("capstan apiserver", [
        CAPSTAN_BIN,
        "apiserver",
        "--port",
        "0",
        "--kubeconfig",
        kubeconfig,
        "--no-kubelet",
      ]);
      const ready = await server.line((l) => l.startsWith("ready "), '"ready" line', 60_000);
      log(`N=${n} round ${roundNo}: API server (pid ${server.pid}) ${ready}`);
      const pid = server.pid;
      apiServerCpu = async () => cpuSeconds(pid);
    } else {
      kubeconfig = TARGET_KUBECONFIG;
      log(`N=${n} round ${roundNo}: the cluster of ${kubeconfig}`);
      apiServerCpu = () => apiServerCpuSeconds(client as KubeClient);
    }
    client = new KubeClient(loadClientConfig({ kubeconfig }));
    // The same module the operators import (its `capstan` is this process's), so the CRD is theirs.
    const { BenchItem } = (await import(pathToFileURL(join(dir, "bench-item.js")).href)) as {
      BenchItem: BenchItemKind;
    };
    const crd = toCrd(BenchItem);
    const crds = client.resource(CustomResourceDefinition);
    const crdName = `${BenchItem.plural}.${BenchItem.group}`;
    // The previous set's CRD may still be going (its objects first): ensureCrds waits, then creates it.
    const existing = await crds.get(crdName).catch(() => undefined);
    const crdExisted = existing !== undefined && existing.metadata?.deletionTimestamp === undefined;
    if (TARGET_KUBECONFIG !== undefined && !crdExisted) removeCrd = () => crds.delete(crdName);
    await ensureCrds(client, [crd], { timeout: quietTimeoutMs(n) });
    if (TARGET_KUBECONFIG !== undefined) await untilClusterWatches(client, BenchItem.plural);
    if ((await apiServerCpu()) === null) log("  the API server's /metrics cannot be read: no API server CPU figures");
    const set: ServerSet = { dir, kubeconfig, client, apiServerCpu, BenchItem, n, round: roundNo };

    let ceilingRate: number | null = null;
    const print = (line: Line) => process.stdout.write(`${JSON.stringify(line)}\n`);
    for (const style of STYLES) {
      const line = await runOne(set, style, "burst", ceilingRate);
      if (style === "ceiling") ceilingRate = line.items_per_s;
      print(line);
    }
    if (PACED_OBJECTS > 0) {
      for (const style of STYLES) if (style !== "ceiling") print(await runOne(set, style, "paced", null));
    }
  } finally {
    await removeCrd?.().catch((err: unknown) => log(`  could not delete the BenchItem CRD: ${String(err)}`));
    await client?.close();
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

try {
  for (let r = 1; r <= ROUNDS; r++) for (const n of SIZES) await runSet(n, r);
} catch (err) {
  log(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
}
