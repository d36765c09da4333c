/**
 * Chaos benchmark (issue 18): what the runtime survives, measured so that anyone can rerun it.
 *
 *   npm run bench:chaos [-- --scenario <name>] [-- --objects N]
 *
 * (that is `npm run build && node --conditions=capstan-source --import tsx bench/chaos.ts`: the
 * operator is the built `capstan run`, the API server the built `capstan apiserver`, each a child
 * process on loopback so that it can be killed with SIGKILL.) One JSON line per scenario on stdout,
 * progress on stderr; every child process and temporary folder is gone when it exits, also on
 * failure or Ctrl-C. docs/chaos.md says what each scenario does and what each field means.
 *
 * The operator (bench/chaos-operator.ts) keeps per ChaosItem a child ConfigMap, a finalizer and
 * `status.observedGen`, and writes start/end marks of every reconcile (bench/chaos-marks.ts reads
 * them) so that a key reconciled twice at once, or a child created twice, shows.
 *
 * Scenarios (default: all, in this order): faults, operator-kill, apiserver-kill, leader-handover,
 * apiserver-down, and throttling (after faults), which compares the two Retry-After policies of the
 * operator's reconciles.
 */

import { loadavg } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { type Cluster, NAMESPACE, readyzStatus, startCluster } from "./chaos-cluster.ts";
import { type MarksSummary, readMarks } from "./chaos-marks.ts";
import { DRIVER_CONCURRENCY, forEach, itemNames, type State, Workload } from "./chaos-workload.ts";

const SCENARIOS = [
  "faults",
  "throttling",
  "operator-kill",
  "apiserver-kill",
  "leader-handover",
  "apiserver-down",
] as const;
type Scenario = (typeof SCENARIOS)[number];
const POLICIES = ["requeue", "wait"] as const;
type Policy = (typeof POLICIES)[number];

/** Objects of the throttling scenario at most: enough for a rate, and the `wait` policy is slow. */
const THROTTLING_OBJECTS = 1000;

/**
 * Workers of the throttling scenario's operator: 4, as when the issue measured 170 -> 17 objects/s.
 * With more workers than the machine's CPUs can keep busy, workers asleep in a Retry-After cost
 * little on this loopback server, whose latency is CPU time; on a real cluster a request's latency
 * is network and server time, and every sleeping worker is throughput lost.
 */
const THROTTLING_WORKERS = 4;

/** How long any convergence may take before the scenario reports converged: false. */
const CONVERGE_TIMEOUT_MS = 180_000;

function log(message: string): void {
  process.stderr.write(`[chaos] ${message}\n`);
}

function parse(): { scenarios: Scenario[]; objects: number } {
  const usage = `usage: bench/chaos.ts [--scenario ${SCENARIOS.join("|")}]... [--objects N]`;
  let values: { scenario?: string[]; objects?: string };
  try {
    ({ values } = parseArgs({
      options: { scenario: { type: "string", multiple: true }, objects: { type: "string" } },
      strict: true,
    }));
  } catch (err) {
    throw new Error(`${(err as Error).message}\n${usage}`);
  }
  const scenarios = (values.scenario ?? [...SCENARIOS]).map((s) => {
    if (!(SCENARIOS as readonly string[]).includes(s)) throw new Error(`unknown scenario "${s}"\n${usage}`);
    return s as Scenario;
  });
  const objects = Number(values.objects ?? 3000);
  if (!Number.isInteger(objects) || objects < 10)
    throw new Error(`--objects must be an integer >= 10, got "${values.objects}"`);
  return { scenarios, objects };
}

/** The fields every line carries. */
interface Line {
  scenario: Scenario;
  total: number;
  converged: boolean;
  lost: number;
  duplicates: number;
  leaked_finalizers: number;
  orphans: number;
  max_concurrent_per_key: number;
  [field: string]: unknown;
}

/** The common fields from the final state and the marks. */
function verdict(scenario: Scenario, total: number, state: State, met: boolean, marks: MarksSummary): Line {
  return {
    scenario,
    total,
    converged: met && state.lost === 0 && state.pendingFinalizers === 0 && state.orphans === 0,
    lost: state.lost,
    duplicates: marks.duplicateChildren,
    leaked_finalizers: state.pendingFinalizers,
    orphans: state.orphans,
    max_concurrent_per_key: marks.maxConcurrentPerKey,
    reconciles: marks.reconciles,
    reconcile_errors: marks.errors,
    ...(met ? {} : { not_converged: state.notConverged }),
  };
}

async function within<T>(cluster: Cluster, fn: (c: Cluster) => Promise<T>): Promise<T> {
  try {
    return await fn(cluster);
  } finally {
    await cluster.stop();
  }
}

function since(t0: number): number {
  return Math.round(performance.now() - t0);
}

// --- faults -----------------------------------------------------------------------------------

/**
 * Watches dropped every second, 5% 500 and 5% 429 (Retry-After: 1) on every resource request,
 * the history compacted every 10 s, while N objects are created, then a third updated and a third
 * deleted.
 */
async function faults(objects: number): Promise<Line> {
  const policy: Policy = "requeue";
  return within(await startCluster({ persistent: false }), async (cluster) => {
    await cluster.startOperator();
    const work = new Workload(cluster.client, cluster.ChaosItem);
    await cluster.faults({ action: "seed", seed: 18 });
    await cluster.faults({ action: "fail", fraction: 0.05, code: 500 });
    // 5% of what the first rule let through: 5% of all requests in total.
    await cluster.faults({ action: "fail", fraction: 0.05 / 0.95, code: 429, retryAfterSeconds: 1 });
    await cluster.faults({ action: "dropWatchesEvery", intervalMs: 1000 });
    const compaction = setInterval(() => {
      cluster.faults({ action: "compact" }).catch((err: unknown) => log(`compact: ${(err as Error).message}`));
    }, 10_000);
    try {
      const names = itemNames(objects);
      const t0 = performance.now();
      await work.create(names);
      const createdMs = since(t0);
      const first = await work.waitConverged(CONVERGE_TIMEOUT_MS);
      const convergeMs = since(t0);
      log(`faults/${policy}: ${objects} created in ${createdMs} ms, converged in ${convergeMs} ms`);
      const t1 = performance.now();
      const updated = names.filter((_, i) => i % 3 === 1);
      const deleted = names.filter((_, i) => i % 3 === 2);
      await Promise.all([work.bump(updated), work.delete(deleted)]);
      const second = await work.waitConverged(CONVERGE_TIMEOUT_MS);
      const churnMs = since(t1);
      log(`faults/${policy}: ${updated.length} updated and ${deleted.length} deleted, converged in ${churnMs} ms`);
      const injected = await cluster.client.request<{ counts?: Record<string, number> }>("GET", "/capstan/faults");
      await cluster.faults({ action: "reset" });
      const marks = readMarks(cluster.marks);
      return {
        ...verdict("faults", objects, second.state, first.met && second.met, marks),
        retry_after_policy: policy,
        objects_per_s: Math.round((objects / convergeMs) * 1000 * 10) / 10,
        create_ms: createdMs,
        converge_ms: convergeMs,
        update_delete_converge_ms: churnMs,
        injected: injected.counts ?? null,
      };
    } finally {
      clearInterval(compaction);
    }
  });
}

// --- throttling -------------------------------------------------------------------------------

/**
 * The 429 question (issue 18): a backlog of changed objects worked off while 10% of the operator's
 * writes are answered 429 with Retry-After: 1, once per Retry-After policy of its reconciles. The
 * objects are created and converged first; for each policy the operator is stopped, every object's
 * `spec.gen` raised, the 429s armed (writes only, so the driver's polling lists are not slowed), and
 * the operator started again: `objects_per_s` counts from its "Starting workers" to the last object
 * converged.
 */
async function throttling(objects: number): Promise<Line[]> {
  return within(await startCluster({ persistent: false }), async (cluster) => {
    const work = new Workload(cluster.client, cluster.ChaosItem);
    const names = itemNames(objects);
    let operator = await cluster.startOperator();
    await work.create(names);
    await work.waitConverged(CONVERGE_TIMEOUT_MS);
    const lines: Line[] = [];
    for (const policy of POLICIES) {
      await operator.proc.stop();
      await work.bump(names);
      const marksBefore = readMarks(cluster.marks);
      await cluster.faults({ action: "seed", seed: 18 });
      await cluster.faults({
        action: "fail",
        fraction: 0.1,
        code: 429,
        retryAfterSeconds: 1,
        verbs: ["create", "update", "patch", "delete"],
      });
      operator = await cluster.startOperator({ workers: THROTTLING_WORKERS, env: { CHAOS_RETRY_AFTER: policy } });
      const t0 = performance.now();
      const done = await work.waitFor((s) => s.converged === objects, CONVERGE_TIMEOUT_MS, 250);
      const ms = since(t0);
      const injected = await cluster.client.request<{ counts?: Record<string, number> }>("GET", "/capstan/faults");
      await cluster.faults({ action: "reset" });
      const final = await work.waitConverged(CONVERGE_TIMEOUT_MS);
      const marks = readMarks(cluster.marks);
      log(`throttling/${policy}: ${objects} objects converged in ${ms} ms`);
      lines.push({
        ...verdict("throttling", objects, final.state, done.met && final.met, marks),
        reconciles: marks.reconciles - marksBefore.reconciles,
        reconcile_errors: marks.errors - marksBefore.errors,
        retry_after_policy: policy,
        workers: THROTTLING_WORKERS,
        objects_per_s: Math.round((objects / ms) * 1000 * 10) / 10,
        converge_ms: ms,
        injected_429: injected.counts?.["failed429"] ?? null,
      });
    }
    return lines;
  });
}

// --- operator-kill ----------------------------------------------------------------------------

/**
 * The operator killed with SIGKILL once half the objects have converged, and restarted; then
 * every object deleted and the operator killed again once half of them are gone, and restarted.
 */
async function operatorKill(objects: number): Promise<Line> {
  return within(await startCluster({ persistent: false }), async (cluster) => {
    const deaths = new Map<number, number>();
    let operator = await cluster.startOperator();
    const work = new Workload(cluster.client, cluster.ChaosItem);
    const names = itemNames(objects);
    const t0 = performance.now();
    const creating = work.create(names);
    await work.waitFor((s) => s.converged >= objects / 2, CONVERGE_TIMEOUT_MS, 250);
    deaths.set(operator.proc.pid, await operator.proc.kill9());
    const killMs = since(t0);
    await creating;
    const t1 = performance.now();
    operator = await cluster.startOperator();
    const created = await work.waitConverged(CONVERGE_TIMEOUT_MS);
    const restartConvergeMs = since(t1);
    log(`operator-kill: killed at ${killMs} ms, converged ${restartConvergeMs} ms after the restart`);

    const t2 = performance.now();
    const deleting = work.delete(names);
    await work.waitFor((s) => s.gone >= objects / 2, CONVERGE_TIMEOUT_MS, 250);
    deaths.set(operator.proc.pid, await operator.proc.kill9());
    const deleteKillMs = since(t2);
    await deleting;
    const t3 = performance.now();
    await cluster.startOperator();
    const deletedState = await work.waitConverged(CONVERGE_TIMEOUT_MS);
    const deleteRestartMs = since(t3);
    log(`operator-kill: killed mid-deletion at ${deleteKillMs} ms, all gone ${deleteRestartMs} ms after the restart`);
    const marks = readMarks(cluster.marks, deaths);
    return {
      ...verdict("operator-kill", objects, deletedState.state, created.met && deletedState.met, marks),
      lost: created.state.lost,
      kill_at_ms: killMs,
      restart_converge_ms: restartConvergeMs,
      delete_kill_at_ms: deleteKillMs,
      delete_restart_converge_ms: deleteRestartMs,
    };
  });
}

// --- apiserver-kill ---------------------------------------------------------------------------

/**
 * 32 writers create the N objects and then keep raising their `spec.gen`, each write recorded once
 * the API server acknowledged it, while the operator reconciles; the API server (`--data-dir`) is
 * killed with SIGKILL mid-write and restarted. Every acknowledged write must be there afterwards,
 * and the operator must converge on the last generations.
 */
async function apiserverKill(objects: number): Promise<Line> {
  return within(await startCluster({ persistent: true }), async (cluster) => {
    await cluster.startOperator();
    const work = new Workload(cluster.client, cluster.ChaosItem);
    const items = cluster.client.resource(cluster.ChaosItem, NAMESPACE);
    const names = itemNames(objects);
    const acked = new Map<string, number>(); // name -> highest gen the server acknowledged
    let writes = 0;
    let stopWriting = false;
    // Writing goes on for 10 s and until every object has been updated at least once (30 s at most),
    // so that both creates and updates are in flight when the server dies.
    const minWriteMs = 10_000;
    const maxWriteMs = 30_000;
    const t0 = performance.now();
    const writers = forEach(
      Array.from({ length: DRIVER_CONCURRENCY }, (_, w) => w),
      DRIVER_CONCURRENCY,
      async (w) => {
        const mine = names.filter((_, i) => i % DRIVER_CONCURRENCY === w);
        for (let round = 1; !stopWriting; round++) {
          for (const name of mine) {
            if (stopWriting) return;
            try {
              if (round === 1) {
                await items.create({
                  apiVersion: cluster.ChaosItem.apiVersion,
                  kind: cluster.ChaosItem.kind,
                  metadata: { name },
                  spec: { gen: 1 },
                });
              } else {
                await items.patch(name, { spec: { gen: round } }, { type: "merge" });
              }
              acked.set(name, round);
              writes++;
            } catch {
              return; // the server is gone: this writer stops
            }
          }
        }
      },
    );
    let updatedAll = false;
    while (since(t0) < maxWriteMs && !(since(t0) >= minWriteMs && updatedAll)) {
      await sleep(100);
      updatedAll = acked.size === names.length && [...acked.values()].every((gen) => gen >= 2);
    }
    const writeMs = since(t0);
    const killedAt = await cluster.killApiServer();
    stopWriting = true;
    await writers;
    log(`apiserver-kill: ${writes} writes acknowledged in ${since(t0)} ms, then SIGKILL`);
    const t1 = performance.now();
    await cluster.restartApiServer();
    const restartMs = since(t1);
    const stored = await items.list();
    let lost = 0;
    const storedGen = new Map(
      stored.items.map((o) => [o.metadata?.name ?? "", (o as { spec: { gen: number } }).spec.gen]),
    );
    for (const [name, gen] of acked) {
      const have = storedGen.get(name);
      // Writes of one object: its create (gen 1) and one update per later gen.
      if (have === undefined) lost += gen;
      else if (have < gen) lost += gen - have;
    }
    // The operator converges on what the server holds now (writes that were not acknowledged may be there too).
    for (const [name, gen] of storedGen) work.expected.set(name, gen);
    const t2 = performance.now();
    const final = await work.waitConverged(CONVERGE_TIMEOUT_MS);
    const convergeMs = since(t2);
    log(
      `apiserver-kill: restarted in ${restartMs} ms, ${lost} acknowledged writes lost, operator converged in ${convergeMs} ms`,
    );
    const marks = readMarks(cluster.marks, new Map(), killedAt);
    return {
      ...verdict("apiserver-kill", writes, final.state, final.met, marks),
      lost,
      objects: storedGen.size,
      write_ms: writeMs,
      restart_ms: restartMs,
      operator_converge_ms: convergeMs,
    };
  });
}

// --- leader-handover --------------------------------------------------------------------------

/** Two replicas with leader election; the leader killed with SIGKILL once half the objects converged. */
async function leaderHandover(objects: number): Promise<Line> {
  return within(await startCluster({ persistent: false }), async (cluster) => {
    const a = await cluster.startOperator({ leaderElect: true });
    const b = await cluster.startOperator({ leaderElect: true });
    const work = new Workload(cluster.client, cluster.ChaosItem);
    const names = itemNames(objects);
    const t0 = performance.now();
    const creating = work.create(names);
    await work.waitFor((s) => s.converged >= objects / 2, CONVERGE_TIMEOUT_MS, 250);
    // The leader is the replica that has reconciled.
    const before = readMarks(cluster.marks);
    const [leader, standby] = before.firstStart.has(a.proc.pid) ? [a, b] : [b, a];
    const becameLeader = standby.proc
      .line((l) => l.includes('"msg":"became leader"'), '"became leader"', 120_000)
      .then(() => Date.now());
    const killedAt = await leader.proc.kill9();
    const killMs = since(t0);
    await creating;
    const handoverAt = await becameLeader;
    const final = await work.waitConverged(CONVERGE_TIMEOUT_MS);
    const deaths = new Map([[leader.proc.pid, killedAt]]);
    const marks = readMarks(cluster.marks, deaths);
    const firstAct = marks.firstStart.get(standby.proc.pid);
    log(`leader-handover: leader killed at ${killMs} ms, standby led ${handoverAt - killedAt} ms later`);
    return {
      ...verdict("leader-handover", objects, final.state, final.met, marks),
      handover_ms: handoverAt - killedAt,
      first_reconcile_after_kill_ms: firstAct === undefined ? null : firstAct - killedAt,
      overlapping_actors: marks.overlappingActors,
      kill_at_ms: killMs,
      converge_after_kill_ms: Date.now() - killedAt,
    };
  });
}

// --- apiserver-down ---------------------------------------------------------------------------

/**
 * The API server (`--data-dir`) killed and kept down 30 s while /readyz is polled every 100 ms,
 * then started again: how long until the operator says it is not ready, and how long after the
 * server is back until it is ready again and reconciles an object created then.
 */
async function apiserverDown(objects: number): Promise<Line> {
  const downMs = 30_000;
  return within(await startCluster({ persistent: true }), async (cluster) => {
    const operator = await cluster.startOperator();
    const work = new Workload(cluster.client, cluster.ChaosItem);
    const warmup = itemNames(Math.min(objects, 100));
    await work.create(warmup);
    await work.waitConverged(CONVERGE_TIMEOUT_MS);
    const polls: { at: number; status: number }[] = [];
    const polling = new AbortController();
    const poller = (async () => {
      while (!polling.signal.aborted) {
        polls.push({ at: Date.now(), status: await readyzStatus(operator.readyzUrl) });
        await sleep(100).catch(() => undefined);
      }
    })();
    try {
      const killedAt = await cluster.killApiServer();
      await sleep(downMs);
      await cluster.restartApiServer();
      const backAt = Date.now();
      const fresh = itemNames(1, objects + 1);
      await work.create(fresh);
      const ready = await work.waitFor(
        (s) => s.converged === work.expected.size && polls.at(-1)?.status === 200,
        CONVERGE_TIMEOUT_MS,
        100,
      );
      const recoveredAt = Date.now();
      const final = await work.waitConverged(CONVERGE_TIMEOUT_MS);
      const notReady = polls.find((p) => p.at >= killedAt && p.at < backAt && p.status !== 200);
      const downPolls = polls.filter((p) => p.at >= killedAt && p.at < backAt);
      const marks = readMarks(cluster.marks);
      log(
        `apiserver-down: /readyz ${notReady ? `not ready ${notReady.at - killedAt} ms` : "never not ready"} after the kill; ` +
          `recovered ${recoveredAt - backAt} ms after the restart`,
      );
      return {
        ...verdict("apiserver-down", work.expected.size, final.state, ready.met && final.met, marks),
        down_ms: downMs,
        not_ready_ms: notReady === undefined ? null : notReady.at - killedAt,
        readyz_polls_while_down: downPolls.length,
        readyz_not_200_while_down: downPolls.filter((p) => p.status !== 200).length,
        recover_ms: recoveredAt - backAt,
      };
    } finally {
      polling.abort();
      await poller;
    }
  });
}

// --- main -------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const { scenarios, objects } = parse();
  const started = performance.now();
  for (const scenario of scenarios) {
    const lines: Line[] = [];
    log(`${scenario}: --objects ${objects}`);
    if (scenario === "faults") lines.push(await faults(objects));
    else if (scenario === "throttling") lines.push(...(await throttling(Math.min(objects, THROTTLING_OBJECTS))));
    else if (scenario === "operator-kill") lines.push(await operatorKill(objects));
    else if (scenario === "apiserver-kill") lines.push(await apiserverKill(objects));
    else if (scenario === "leader-handover") lines.push(await leaderHandover(objects));
    else lines.push(await apiserverDown(objects));
    // The machine's 1-minute load average when the scenario ended: timings on a shared machine
    // mean little without it.
    const load = Math.round((loadavg()[0] ?? 0) * 10) / 10;
    for (const line of lines) process.stdout.write(`${JSON.stringify({ ...line, load_1m: load })}\n`);
  }
  log(`done in ${Math.round((performance.now() - started) / 1000)} s`);
}

try {
  await main();
} catch (err) {
  log(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
}
