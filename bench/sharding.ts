/**
 * Sharding benchmark (issue 28): one operator, several active replicas, each reconciling and caching
 * only its share of the objects, measured while replicas join, leave and die.
 *
 *   BENCH_OBJECTS=2000 npm run bench:sharding
 *
 * (that is `npm run build && node --conditions=capstan-source --import tsx bench/sharding.ts`: the API
 * server is the built `capstan apiserver`, each replica the built `capstan run --sharded --shard-member
 * r<i>`, each a child process on loopback so that it can be killed with SIGKILL.) One JSON line per
 * phase and a last summary line on stdout, progress on stderr; every child process and temporary
 * folder is gone when it exits. docs/runtime.md ("Sharding") says what each field means.
 *
 * The operator is bench:chaos's (bench/chaos-operator.ts): per ChaosItem a child ConfigMap, a
 * finalizer and `status.observedGen`, with start/end marks of every reconcile in one file shared by
 * all replicas (bench/chaos-marks.ts reads them), so a key reconciled by two replicas at once, or a
 * child created twice, shows.
 *
 * Phases, N = BENCH_OBJECTS (default 10,000):
 * - `scale-1`: replica r0 alone; N objects created.
 * - `scale-2`: r1 joins while a third of the objects are updated.
 * - `scale-4`: r2 and r3 join while N/5 more objects are created.
 * - `kill`: r3 is killed with SIGKILL while a third of the first N objects are being deleted (their
 *   finalizer holds them until a replica deletes the child): 3 replicas left.
 * - `scale-2-down`: r2 is stopped (SIGTERM: it drains and releases its Lease) while another third
 *   is updated: 2 replicas left.
 * Each phase ends when every object the driver expects is in its expected state (finalizer, status,
 * child; deleted ones gone) and every live object carries the shard label of the member the hash
 * ring of the live members chooses, without a drain label.
 *
 * Memory: each phase reports every replica's peak RSS during the phase (VmHWM, which includes the
 * burst of a joining replica's initial list and of hand-overs) and, once the phase settled, its
 * current RSS (VmRSS) and its V8 heap in use after a full GC. The latter is what a replica needs for
 * its share: the replicas run with `--expose-gc` and a preload module the benchmark writes (see
 * MEMORY_PRELOAD), which on SIGUSR2 runs `gc()` and writes `process.memoryUsage()` to a file. No
 * product code is involved. BENCH_OPERATOR_NODE_FLAGS given by the caller are kept.
 *
 * Any cluster: with BENCH_KUBECONFIG=<kubeconfig> the replicas (still separate `capstan run --sharded`
 * processes on this machine) and the driver use the cluster it names instead of an embedded server,
 * e.g. a real kube-apiserver with its controller manager (DEVELOPERS.md builds one):
 *
 *   BENCH_KUBECONFIG=/tmp/realcluster/kubeconfig BENCH_OBJECTS=1000 npm run bench:sharding
 *
 * The run works in a namespace of its own (`capstan-sharding-<id>`; the replicas' kubeconfig context
 * names it, so that their Leases are there too, not in `default`), registers
 * the ChaosItem CRD if absent, first waits (up to 2 min) until kube-apiserver's CPU (its /metrics)
 * is near idle, and at the end, also when it fails or is interrupted with SIGINT/SIGTERM, stops the
 * replicas, removes the ChaosItems' finalizer, deletes the namespace and the CRD it registered
 * (bench/chaos-kube-cluster.ts). Everything is checked as on the embedded server; children of
 * deleted objects are deleted by the operator before it lets go of the finalizer, and orphans, if
 * any, by kube-controller-manager's garbage collector, which a phase waits for. The last line's
 * `server` is the server's version. Its user needs to manage the namespace's objects, Leases,
 * ConfigMaps and the CRD, and to read /metrics (the quiet wait is skipped otherwise): the admin of
 * a test cluster.
 *
 * Environment: BENCH_OBJECTS (default 10000), BENCH_TIMEOUT_S (default 900: a phase not converged by
 * then is reported with converged: false and the benchmark exits 1), BENCH_KUBECONFIG (default unset:
 * the embedded server).
 */

import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { pathToFileURL } from "node:url";
import type { ResourceClient } from "capstan";
import { HashRing, shardLabels } from "capstan/runtime";
import { type Operator, type OperatorCluster, startCluster } from "./chaos-cluster.ts";
import { connectCluster } from "./chaos-kube-cluster.ts";
import { readMarks } from "./chaos-marks.ts";
import { type ChaosItemObject, itemNames, type State, Workload } from "./chaos-workload.ts";
import { cleanUpOnSignal, freePort } from "./child-processes.ts";

function positive(name: string, fallback: number, min = 1): number {
  const text = process.env[name];
  const n = text === undefined || text === "" ? fallback : Number(text);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer >= ${min}, got "${text}"`);
  return n;
}

const OBJECTS = positive("BENCH_OBJECTS", 10_000, 10);
const TIMEOUT_MS = positive("BENCH_TIMEOUT_S", 900) * 1000;
const TARGET_KUBECONFIG = process.env["BENCH_KUBECONFIG"] || undefined;
/** How long a run on a BENCH_KUBECONFIG cluster waits for kube-apiserver to be quiet before it starts. */
const QUIET_TIMEOUT_MS = 120_000;
/** The ring: the chaos operator's name (`operator({ name: "chaos" })`). */
const LABELS = shardLabels("chaos");
const POLL_MS = 500;

function log(message: string): void {
  process.stderr.write(`[sharding ${new Date().toISOString().slice(11, 23)}] ${message}\n`);
}

function round(n: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

// --- replicas -----------------------------------------------------------------------------------

interface Replica {
  readonly member: string;
  readonly op: Operator;
  /** Its `--metrics-port`. */
  readonly metricsPort: number;
}

/** A field of /proc/<pid>/status in MB (VmHWM: peak RSS since the last reset; VmRSS: now). */
function statusMb(pid: number, field: "VmHWM" | "VmRSS"): number | null {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, "utf8");
  } catch {
    return null; // the process is gone
  }
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status);
  return m ? round(Number(m[1]) / 1024) : null;
}

/** Resets a process's VmHWM to its current RSS (`echo 5 > /proc/<pid>/clear_refs`), so a phase's peak is its own. */
function resetPeak(pid: number): void {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
  } catch {
    // the process is gone: the phase reports it
  }
}

/**
 * Preloaded into every replica (`--expose-gc --import`): on SIGUSR2, two full GCs (the second
 * collects what the first's finalizers freed), then `process.memoryUsage()` written to
 * `<BENCH_MEMORY_DIR>/<pid>.json` (via a rename, so the benchmark never reads half a file). A
 * signal listener keeps no process alive, and SIGUSR2 is unused by Node and Capstan.
 */
const MEMORY_PRELOAD = `import { renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
const dir = process.env.BENCH_MEMORY_DIR;
if (dir) {
  process.on("SIGUSR2", () => {
    globalThis.gc?.();
    globalThis.gc?.();
    const file = join(dir, process.pid + ".json");
    writeFileSync(file + ".tmp", JSON.stringify(process.memoryUsage()));
    renameSync(file + ".tmp", file);
  });
}
`;

/** Makes every replica started from now on load MEMORY_PRELOAD, writing into `dir`. */
function preloadMemoryProbe(dir: string): void {
  const preload = join(dir, "memory-probe.mjs");
  writeFileSync(preload, MEMORY_PRELOAD);
  // chaos-cluster.ts splits the flags at spaces: a file URL has none (spaces are %20).
  const flags = `--expose-gc --import ${pathToFileURL(preload).href}`;
  process.env["BENCH_OPERATOR_NODE_FLAGS"] = `${process.env["BENCH_OPERATOR_NODE_FLAGS"] ?? ""} ${flags}`.trim();
  process.env["BENCH_MEMORY_DIR"] = dir;
}

/** What a replica holds after a full GC, in MB. */
interface GcMemory {
  heapUsed: number;
  rss: number;
}

/** Asks a replica for its memory after a full GC (SIGUSR2, see MEMORY_PRELOAD); null if it does not answer in 30 s. */
async function gcMemory(pid: number): Promise<GcMemory | null> {
  const file = join(process.env["BENCH_MEMORY_DIR"] ?? "", `${pid}.json`);
  rmSync(file, { force: true });
  try {
    process.kill(pid, "SIGUSR2");
  } catch {
    return null; // the process is gone
  }
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    try {
      const usage = JSON.parse(readFileSync(file, "utf8")) as NodeJS.MemoryUsage;
      return { heapUsed: round(usage.heapUsed / 2 ** 20), rss: round(usage.rss / 2 ** 20) };
    } catch {
      await sleep(100); // not written yet
    }
  }
  return null;
}

/** Replicas the benchmark stops or kills (by pid): any other exit is a failure. */
const meantToExit = new Set<number>();
/** Replicas that exited on their own, with their last output. */
const crashed: string[] = [];

async function startReplica(cluster: OperatorCluster, member: string): Promise<Replica> {
  const metricsPort = await freePort();
  const args = ["--sharded", "--shard-member", member, "--metrics-port", String(metricsPort)];
  const op = await cluster.startOperator({ args });
  op.proc.died(`${member} to keep running`).catch((err: Error) => {
    if (meantToExit.has(op.proc.pid)) return;
    crashed.push(member);
    log(`replica ${member} exited on its own: ${err.message}`);
  });
  return { member, op, metricsPort };
}

/** The samples of `name` in a replica's `/metrics`, as [labels, value]. */
async function samples(replica: Replica, name: string): Promise<[Record<string, string>, number][]> {
  const res = await fetch(`http://127.0.0.1:${replica.metricsPort}/metrics`, { signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  const found: [Record<string, string>, number][] = [];
  for (const m of text.matchAll(new RegExp(`^${name}(?:\\{([^}]*)\\})? (\\S+)$`, "gm"))) {
    const labels = Object.fromEntries([...(m[1] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    found.push([labels as Record<string, string>, Number(m[2])]);
  }
  return found;
}

/** What the replicas' sharding metrics say (docs/runtime.md, "Metrics" of "Sharding"). */
async function shardMetrics(replicas: readonly Replica[]): Promise<{
  handovers: number[];
  coordinator: string | null;
  coordinatorObjects: Record<string, number> | null;
  coordinatorRebalanceMs: number | null;
}> {
  const handovers: number[] = [];
  let coordinator: string | null = null;
  let coordinatorObjects: Record<string, number> | null = null;
  let coordinatorRebalanceMs: number | null = null;
  for (const r of replicas) {
    const handed = await samples(r, "capstan_shard_handovers_total");
    handovers.push(handed.reduce((sum, [, v]) => sum + v, 0));
    const members = await samples(r, "capstan_shard_members");
    if ((members[0]?.[1] ?? 0) === 0) continue; // not the coordinator
    coordinator = r.member;
    coordinatorObjects = Object.fromEntries(
      (await samples(r, "capstan_shard_objects")).map(([labels, v]) => [labels["member"] ?? "", v]),
    );
    const rebalance = await samples(r, "capstan_shard_rebalance_seconds");
    coordinatorRebalanceMs = rebalance[0] === undefined ? null : Math.round(rebalance[0][1] * 1000);
  }
  return { handovers, coordinator, coordinatorObjects, coordinatorRebalanceMs };
}

// --- placement ----------------------------------------------------------------------------------

/** Where the live objects are, judged against the ring of the live members. */
interface Placement {
  /** Objects labelled for each member (the objects its informer selects), by member name. */
  perMember: Map<string, number>;
  /** Objects unassigned, draining, or labelled for another member than the ring's choice. */
  misplaced: number;
}

async function placement(
  items: ResourceClient<ChaosItemObject>,
  namespace: string,
  live: readonly string[],
): Promise<Placement> {
  const ring = new HashRing(live);
  const perMember = new Map(live.map((m) => [m, 0]));
  let misplaced = 0;
  for (const item of (await items.list()).items) {
    const member = item.metadata?.labels?.[LABELS.shard];
    if (member !== undefined) perMember.set(member, (perMember.get(member) ?? 0) + 1);
    const want = ring.memberFor({
      group: "chaos.capstan.dev",
      kind: "ChaosItem",
      namespace,
      name: item.metadata?.name ?? "",
    });
    if (member !== want || item.metadata?.labels?.[LABELS.drain] !== undefined) misplaced++;
  }
  return { perMember, misplaced };
}

/**
 * Polls until every expected object converged and sits on the ring's choice of the live members;
 * resolves with the time (Date.now()) it first saw so (null on timeout), then checks the children too.
 */
async function settle(
  work: Workload,
  items: ResourceClient<ChaosItemObject>,
  namespace: string,
  live: readonly string[],
): Promise<{ at: number | null; state: State; placement: Placement }> {
  const deadline = Date.now() + TIMEOUT_MS;
  let at: number | null = null;
  for (;;) {
    // One list per poll while objects are misplaced: the driver's reads load the server it measures.
    const where = await placement(items, namespace, live);
    const state = where.misplaced === 0 ? await work.state(false) : undefined;
    if (state !== undefined && state.converged === work.expected.size) {
      at ??= Date.now();
      const full = await work.state(true);
      if (full.converged === work.expected.size && full.orphans === 0) return { at, state: full, placement: where };
    } else {
      at = null;
    }
    if (Date.now() > deadline || crashed.length > 0) {
      const last = state ?? (await work.state(false));
      log(`not settled: ${last.converged}/${work.expected.size} converged, ${where.misplaced} misplaced`);
      return { at: null, state: last, placement: where };
    }
    await sleep(POLL_MS);
  }
}

/** An idle replica's memory (r0 before any object exists), the base every "above idle" figure subtracts. */
interface Idle {
  rss_mb: number | null;
  gc_heap_used_mb: number | null;
}

type ByReplicas = { "1": number | null; "2": number | null; "4": number | null };
type Ratios = { "1:2": number | null; "1:4": number | null };

function mean(values: readonly (number | null)[]): number | null {
  if (values.length === 0 || values.some((v) => v === null)) return null;
  return (values as number[]).reduce((a, b) => a + b, 0) / values.length;
}

function ratios(at: ByReplicas): Ratios {
  const ratio = (n: number | null) => (at["1"] === null || n === null || n <= 0 ? null : round(at["1"] / n, 2));
  return { "1:2": ratio(at["2"]), "1:4": ratio(at["4"]) };
}

/**
 * Memory above an idle replica's at 1, 2 and 4 replicas, and how many times smaller it is with 2 and
 * 4 than with 1, next to how many times smaller the share is (`share_ratio`, from the objects each
 * replica caches: scale-4 has N/5 more objects than scale-1).
 * All are of the replicas that joined in the phase (r0 alone; r1; r2 and r3 averaged): a replica
 * whose share shrinks keeps the RSS it had (V8 gives memory back slowly), and r0 is the coordinator,
 * which also holds a metadata-only cache of every object of the ring. `gc_heap_used` is the V8 heap
 * in use after a full GC. `coordinator_gc_heap_extra_mb` is what the coordinator holds beyond the
 * others once it has a share like theirs (its post-GC heap minus the others' mean, at 2 and 4).
 */
function memoryAboveIdle(
  idle: Idle,
  one: PhaseLine,
  two: PhaseLine,
  four: PhaseLine,
): {
  above_idle_mb: Record<"peak_rss" | "settled_rss" | "gc_heap_used", ByReplicas>;
  above_idle_ratio: Record<"peak_rss" | "settled_rss" | "gc_heap_used" | "share", Ratios>;
  coordinator_gc_heap_extra_mb: { "2": number | null; "4": number | null };
} {
  const above = (base: number | null, values: (number | null)[]): number | null => {
    const m = mean(values);
    return base === null || m === null ? null : round(m - base);
  };
  const joined = (field: "peak_rss_mb" | "rss_mb"): ByReplicas => ({
    "1": above(idle.rss_mb, one[field].slice(0, 1)),
    "2": above(idle.rss_mb, two[field].slice(1, 2)),
    "4": above(idle.rss_mb, four[field].slice(2, 4)),
  });
  const heap: ByReplicas = {
    "1": above(idle.gc_heap_used_mb, one.gc_heap_used_mb.slice(0, 1)),
    "2": above(idle.gc_heap_used_mb, two.gc_heap_used_mb.slice(1, 2)),
    "4": above(idle.gc_heap_used_mb, four.gc_heap_used_mb.slice(2, 4)),
  };
  const coordinatorExtra = (line: PhaseLine): number | null => {
    const at = line.coordinator === null ? -1 : line.members.indexOf(line.coordinator);
    if (at < 0) return null;
    const others = line.gc_heap_used_mb.filter((_, i) => i !== at);
    return above(mean(others), [line.gc_heap_used_mb[at] ?? null]);
  };
  const share: ByReplicas = {
    "1": mean(one.cached_objects),
    "2": mean(two.cached_objects),
    "4": mean(four.cached_objects),
  };
  const mb = { peak_rss: joined("peak_rss_mb"), settled_rss: joined("rss_mb"), gc_heap_used: heap };
  return {
    above_idle_mb: mb,
    above_idle_ratio: {
      peak_rss: ratios(mb.peak_rss),
      settled_rss: ratios(mb.settled_rss),
      gc_heap_used: ratios(mb.gc_heap_used),
      share: ratios(share),
    },
    coordinator_gc_heap_extra_mb: { "2": coordinatorExtra(two), "4": coordinatorExtra(four) },
  };
}

// --- the run ------------------------------------------------------------------------------------

interface PhaseLine {
  phase: string;
  replicas: number;
  members: string[];
  cached_objects: number[];
  peak_rss_mb: (number | null)[];
  /** VmRSS once the phase settled (before the GC below). */
  rss_mb: (number | null)[];
  /** V8 heap in use after a full GC, once the phase settled. */
  gc_heap_used_mb: (number | null)[];
  /** RSS right after that GC. */
  gc_rss_mb: (number | null)[];
  handovers: number[];
  coordinator: string | null;
  coordinator_objects: Record<string, number> | null;
  coordinator_rebalance_ms: number | null;
  operations: number;
  objects_per_s: number | null;
  rebalance_ms: number | null;
  converged: boolean;
  load_1m: number;
}

async function run(): Promise<boolean> {
  const cluster =
    TARGET_KUBECONFIG === undefined
      ? await startCluster({ persistent: false })
      : await connectCluster(TARGET_KUBECONFIG, "sharding");
  const server = "version" in cluster ? cluster.version : "capstan apiserver";
  preloadMemoryProbe(cluster.dir);
  const replicas: Replica[] = [];
  // Interrupted, the cluster's cleanup kills the replicas: not a crash to report.
  const interrupted = cleanUpOnSignal(async () => {
    for (const r of replicas) meantToExit.add(r.op.proc.pid);
  });
  try {
    const { namespace } = cluster;
    const work = new Workload(cluster.client, cluster.ChaosItem, namespace);
    const items = cluster.client.resource(cluster.ChaosItem, namespace) as unknown as ResourceClient<ChaosItemObject>;
    const deaths = new Map<number, number>();
    let ok = true;
    const live = () => replicas.map((r) => r.member);

    /** Runs one phase: `change` (membership) and `load` (writes) together, then waits until settled. */
    const phase = async (
      name: string,
      /** Changes membership; resolves with when it took effect, or null for no change. */
      change: () => Promise<number | null>,
      load: () => Promise<number>,
    ): Promise<PhaseLine> => {
      for (const r of replicas) resetPeak(r.op.proc.pid);
      const t0 = Date.now();
      const [changedAt, operations] = await Promise.all([change(), load()]);
      const settled = await settle(work, items, namespace, live());
      const end = settled.at;
      ok &&= end !== null;
      const metrics = await shardMetrics(replicas.filter((r) => !r.op.proc.gone));
      const rssMb = replicas.map((r) => statusMb(r.op.proc.pid, "VmRSS"));
      const gc = await Promise.all(replicas.map((r) => gcMemory(r.op.proc.pid)));
      const line: PhaseLine = {
        phase: name,
        replicas: replicas.length,
        members: live(),
        cached_objects: live().map((m) => settled.placement.perMember.get(m) ?? 0),
        peak_rss_mb: replicas.map((r) => statusMb(r.op.proc.pid, "VmHWM")),
        rss_mb: rssMb,
        gc_heap_used_mb: gc.map((m) => m?.heapUsed ?? null),
        gc_rss_mb: gc.map((m) => m?.rss ?? null),
        handovers: metrics.handovers,
        coordinator: metrics.coordinator,
        coordinator_objects: metrics.coordinatorObjects,
        coordinator_rebalance_ms: metrics.coordinatorRebalanceMs,
        operations,
        objects_per_s: end === null || operations === 0 ? null : round((operations / (end - t0)) * 1000),
        rebalance_ms: end === null || changedAt === null ? null : end - changedAt,
        converged: end !== null,
        load_1m: round(loadavg()[0] ?? 0),
      };
      log(
        `${name}: ${JSON.stringify(line.cached_objects)} objects per member, settled in ${end === null ? "-" : end - t0} ms`,
      );
      if (crashed.length > 0) {
        process.stdout.write(`${JSON.stringify(line)}\n`);
        throw new Error(`replicas exited on their own during ${name}: ${crashed.join(", ")}`);
      }
      return line;
    };
    const emit = (line: object) => process.stdout.write(`${JSON.stringify(line)}\n`);

    const first = itemNames(OBJECTS);
    const more = itemNames(Math.floor(OBJECTS / 5), OBJECTS);
    const third = (k: number) => first.filter((_, i) => i % 3 === k);

    if ("whenQuiet" in cluster) {
      const quiet = await cluster.whenQuiet(QUIET_TIMEOUT_MS);
      log(
        quiet
          ? "kube-apiserver quiet"
          : `kube-apiserver not quiet within ${QUIET_TIMEOUT_MS / 1000} s: starting anyway`,
      );
    }
    // scale-1: r0 alone, measured idle first (no object yet), then N objects created.
    replicas.push(await startReplica(cluster, "r0"));
    const idlePid = replicas[0]?.op.proc.pid ?? 0;
    const idle: Idle = {
      rss_mb: statusMb(idlePid, "VmRSS"),
      gc_heap_used_mb: (await gcMemory(idlePid))?.heapUsed ?? null,
    };
    log(`r0 idle: ${idle.rss_mb} MB RSS, ${idle.gc_heap_used_mb} MB heap used after GC`);
    const one = await phase(
      "scale-1",
      async () => null,
      async () => {
        await work.create(first);
        return first.length;
      },
    );
    emit({ ...one, idle_rss_mb: idle.rss_mb, idle_gc_heap_used_mb: idle.gc_heap_used_mb });

    // scale-2: r1 joins while a third is updated.
    const two = await phase(
      "scale-2",
      async () => {
        replicas.push(await startReplica(cluster, "r1"));
        return Date.now();
      },
      async () => {
        await work.bump(third(0));
        return third(0).length;
      },
    );
    emit(two);

    // scale-4: r2 and r3 join while N/5 more objects are created.
    const four = await phase(
      "scale-4",
      async () => {
        replicas.push(...(await Promise.all([startReplica(cluster, "r2"), startReplica(cluster, "r3")])));
        return Date.now();
      },
      async () => {
        await work.create(more);
        return more.length;
      },
    );
    emit(four);

    // kill: r3 SIGKILLed once a quarter of a third's deletions went through.
    const doomed = third(2);
    emit(
      await phase(
        "kill",
        async () => {
          await work.waitFor((s) => s.gone >= doomed.length / 4, TIMEOUT_MS, POLL_MS);
          const victim = replicas.pop() as Replica;
          meantToExit.add(victim.op.proc.pid);
          const at = await victim.op.proc.kill9();
          deaths.set(victim.op.proc.pid, at);
          log(`kill: ${victim.member} (pid ${victim.op.proc.pid}) killed with SIGKILL, seen dead at ${at}`);
          return at;
        },
        async () => {
          await work.delete(doomed);
          return doomed.length;
        },
      ),
    );

    // scale-2-down: r2 stopped gracefully while another third is updated.
    emit(
      await phase(
        "scale-2-down",
        async () => {
          const leaving = replicas.pop() as Replica;
          meantToExit.add(leaving.op.proc.pid);
          const at = Date.now();
          await leaving.op.proc.stop();
          return at;
        },
        async () => {
          await work.bump(third(1));
          return third(1).length;
        },
      ),
    );

    const final = await work.state(true);
    const marks = readMarks(cluster.marks, deaths);
    const clean =
      ok && final.lost === 0 && final.pendingFinalizers === 0 && final.orphans === 0 && marks.maxConcurrentPerKey <= 1;
    emit({
      scenario: "sharding",
      server,
      total: work.expected.size,
      converged: ok,
      lost: final.lost,
      duplicates: marks.duplicateChildren,
      leaked_finalizers: final.pendingFinalizers,
      orphans: final.orphans,
      max_concurrent_per_key: marks.maxConcurrentPerKey,
      reconciles: marks.reconciles,
      reconcile_errors: marks.errors,
      ...memoryAboveIdle(idle, one, two, four),
      load_1m: round(loadavg()[0] ?? 0),
    });
    return clean && marks.duplicateChildren === 0;
  } finally {
    interrupted();
    for (const r of replicas) meantToExit.add(r.op.proc.pid);
    await cluster.stop();
  }
}

const started = performance.now();
try {
  log(`BENCH_OBJECTS=${OBJECTS}`);
  if (!(await run())) process.exitCode = 1;
  log(`done in ${Math.round((performance.now() - started) / 1000)} s`);
} catch (err) {
  log(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
}
