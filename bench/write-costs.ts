/**
 * What each write style costs the API server (issue 29): kube-apiserver's CPU per request for the
 * writes an operator makes, measured on a cluster of your choice. One JSON line per (style, round)
 * on stdout, then one line per style with the medians; progress on stderr.
 *
 *   BENCH_KUBECONFIG=<kubeconfig> node --conditions=capstan-source --import tsx bench/write-costs.ts
 *
 * (`npm run bench:write-costs`). The kubeconfig's user must be allowed `GET /metrics`: the CPU is
 * the server's `process_cpu_seconds_total` before and after each step (kube-apiserver's own process,
 * not etcd's), less what the server spent idle over as long a time (measured before each round), per
 * request. Every step sends BENCH_WRITES requests, BENCH_CONCURRENCY at a time, in a namespace of its
 * own (deleted at the end, as is the BenchItem CRD unless it was there before). Steps, in order:
 *
 * - `create`: POST of a ConfigMap (`data.size`, a controller ownerReference), `?fieldManager=bench`:
 *   what client-go controllers send for a child they do not find.
 * - `apply-absent`: server-side apply (`application/apply-patch+yaml`, force) of the same ConfigMap
 *   to a name that does not exist: what `ctx.apply` sends for a new child.
 * - `apply-unchanged`: the same apply again (changes nothing: no etcd write, no watch event).
 * - `apply-change`: an apply with a new `data.size`.
 * - `update`: PUT of the created ConfigMaps with a new `data.size` (from the object the create answered).
 * - `merge-patch`, `json-patch`: the same change as a JSON merge patch and as a JSON patch.
 * - `status-merge`: a merge patch of a BenchItem's `/status` (`observedSize`): `ctx.patchStatus`.
 * - `status-apply`: the same status by server-side apply through `/status`.
 * - `status-bookkeeping`: the handler engine's status write of a create handler: `observedSize` and
 *   the engine's entries under `status.capstan.<operator>` (the last handled configuration).
 * - `event`: POST of a core/v1 Event about a BenchItem (what `ctx.event` sends for a first occurrence).
 * - `get`: GET of a ConfigMap (reads cost too; an operator reads its cache instead).
 * - `create-watched`: `create` again with BENCH_WATCHERS more watches open on the namespace's
 *   ConfigMaps: (create-watched - create) / BENCH_WATCHERS is what one more watcher costs per event.
 * - `status-watched`: `status-merge` again with BENCH_WATCHERS more watches open on the namespace's
 *   BenchItems: the same per custom resource event.
 *
 * The BenchItems the status steps write are created first (not measured). Rounds alternate every
 * step (BENCH_ROUNDS, default 3), so a load that comes and goes on a shared machine spreads over
 * all of them; compare the medians.
 *
 * Environment: BENCH_KUBECONFIG (required), BENCH_WRITES (default 1000), BENCH_CONCURRENCY (default
 * 32), BENCH_ROUNDS (default 3), BENCH_WATCHERS (default 4), BENCH_STEPS (default: all, in order).
 */
import { setTimeout as sleep } from "node:timers/promises";
import {
  defineResource,
  KubeClient,
  type KubeObject,
  type ResourceClient,
  type ResourceKind,
  Type,
  toCrd,
} from "capstan";
import { loadClientConfig } from "capstan/client";
import { ConfigMap, CustomResourceDefinition, Event, Namespace } from "capstan/core";
import { ensureCrds } from "capstan/runtime";

const STEPS = [
  "create",
  "apply-absent",
  "apply-unchanged",
  "apply-change",
  "update",
  "merge-patch",
  "json-patch",
  "status-merge",
  "status-apply",
  "status-bookkeeping",
  "event",
  "get",
  "create-watched",
  "status-watched",
] as const;
type Step = (typeof STEPS)[number];

function positive(name: string, fallback: number): number {
  const text = process.env[name];
  const n = text === undefined || text === "" ? fallback : Number(text);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be an integer >= 1, got "${text}"`);
  return n;
}

const KUBECONFIG = process.env.BENCH_KUBECONFIG;
const WRITES = positive("BENCH_WRITES", 1000);
const CONCURRENCY = positive("BENCH_CONCURRENCY", 32);
const ROUNDS = positive("BENCH_ROUNDS", 3);
const WATCHERS = positive("BENCH_WATCHERS", 4);
const SELECTED: Step[] = process.env.BENCH_STEPS
  ? process.env.BENCH_STEPS.split(",").map((s) => {
      const step = s.trim() as Step;
      if (!STEPS.includes(step)) throw new Error(`BENCH_STEPS: unknown step "${s}" (${STEPS.join(", ")})`);
      return step;
    })
  : [...STEPS];
/** How long the idle rate of the server is sampled before each round: long enough for 0.01 s ticks. */
const IDLE_SAMPLE_MS = 5_000;

const BenchItem = defineResource({
  group: "bench.capstan.dev",
  version: "v1",
  kind: "BenchItem",
  scope: "Namespaced",
  spec: Type.Object({ size: Type.Integer() }),
  status: Type.Object({ observedSize: Type.Optional(Type.Integer()) }),
});
type BenchItemObject = KubeObject & { spec: { size: number }; status?: { observedSize?: number } };

function log(message: string): void {
  process.stderr.write(`[write-costs] ${message}\n`);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

async function serverCpuSeconds(client: KubeClient): Promise<number> {
  const text = await client.request<string>("GET", "/metrics", { accept: "text/plain" });
  const m = /^process_cpu_seconds_total (\S+)$/m.exec(text);
  if (!m) throw new Error("no process_cpu_seconds_total in the API server's /metrics");
  return Number(m[1]);
}

/** Runs `one(i)` for i in [0, count), CONCURRENCY at a time. */
async function pool(count: number, one: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(CONCURRENCY, count) }, async () => {
      for (let i = next++; i < count; i = next++) await one(i);
    }),
  );
}

interface RoundContext {
  round: number;
  owner: { apiVersion: string; kind: string; name: string; uid: string; controller: boolean };
  configMaps: ResourceClient<KubeObject & { data?: Record<string, string> }>;
  items: ResourceClient<BenchItemObject>;
  events: ResourceClient<KubeObject>;
  namespace: string;
  /** What `create` answered, for `update`. */
  created: Map<number, KubeObject>;
  openWatchers(resource?: ResourceClient<KubeObject>): Promise<() => void>;
}

function configMap(ctx: RoundContext, name: string, size: number): KubeObject & { data: Record<string, string> } {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, ownerReferences: [{ ...ctx.owner, blockOwnerDeletion: true }] },
    data: { size: String(size) },
  };
}

/** One step's requests; the names of a step never collide with another step's or round's. */
async function runStep(ctx: RoundContext, step: Step): Promise<void> {
  const r = ctx.round;
  const fieldManager = "bench";
  switch (step) {
    case "create":
      return pool(WRITES, async (i) => {
        ctx.created.set(i, await ctx.configMaps.create(configMap(ctx, `c${r}-${i}`, i), { fieldManager }));
      });
    case "apply-absent":
    case "apply-unchanged":
      return pool(WRITES, (i) => ctx.configMaps.apply(configMap(ctx, `a${r}-${i}`, i), { fieldManager, force: true }));
    case "apply-change":
      return pool(WRITES, (i) =>
        ctx.configMaps.apply(configMap(ctx, `a${r}-${i}`, i + 1), { fieldManager, force: true }),
      );
    case "update":
      return pool(WRITES, async (i) => {
        const created = ctx.created.get(i);
        if (created === undefined) throw new Error("update needs the create step first");
        await ctx.configMaps.update({ ...created, data: { size: String(i + 1) } }, { fieldManager });
      });
    case "merge-patch":
      return pool(WRITES, (i) =>
        ctx.configMaps.patch(`c${r}-${i}`, { data: { size: String(i + 2) } }, { type: "merge", fieldManager }),
      );
    case "json-patch":
      return pool(WRITES, (i) =>
        ctx.configMaps.patch(`c${r}-${i}`, [{ op: "replace", path: "/data/size", value: String(i + 3) }], {
          type: "json",
          fieldManager,
        }),
      );
    case "status-merge":
      return pool(WRITES, (i) => ctx.items.patchStatus(`s${r}-${i}`, { status: { observedSize: i } }));
    case "status-apply":
      return pool(WRITES, (i) =>
        ctx.items.patch(
          `t${r}-${i}`,
          {
            apiVersion: BenchItem.apiVersion,
            kind: "BenchItem",
            metadata: { name: `t${r}-${i}` },
            status: { observedSize: i },
          },
          { type: "apply", subresource: "status", fieldManager, force: true },
        ),
      );
    case "status-bookkeeping":
      return pool(WRITES, (i) =>
        ctx.items.patchStatus(`u${r}-${i}`, {
          status: {
            observedSize: i,
            capstan: { bench: { "last-handled-configuration": JSON.stringify({ spec: { size: i } }) } },
          },
        }),
      );
    case "event":
      return pool(WRITES, (i) =>
        ctx.events.create({
          apiVersion: "v1",
          kind: "Event",
          metadata: { name: `e${r}-${i}` },
          involvedObject: {
            apiVersion: BenchItem.apiVersion,
            kind: "BenchItem",
            namespace: ctx.namespace,
            name: `s${r}-${i}`,
          },
          reason: "Synced",
          message: `s${r}-${i} holds size ${i}`,
          type: "Normal",
          source: { component: "bench" },
          count: 1,
          firstTimestamp: new Date().toISOString(),
          lastTimestamp: new Date().toISOString(),
        } as KubeObject),
      );
    case "get":
      return pool(WRITES, (i) => ctx.configMaps.get(`c${r}-${i}`));
    case "create-watched": {
      const close = await ctx.openWatchers();
      try {
        await pool(WRITES, (i) => ctx.configMaps.create(configMap(ctx, `w${r}-${i}`, i), { fieldManager }));
        // The watch events are encoded as the writes commit; give the watchers a moment to drain.
        await sleep(1000);
      } finally {
        close();
      }
      return;
    }
    case "status-watched": {
      const close = await ctx.openWatchers(ctx.items as unknown as ResourceClient<KubeObject>);
      try {
        await pool(WRITES, (i) => ctx.items.patchStatus(`v${r}-${i}`, { status: { observedSize: i } }));
        await sleep(1000);
      } finally {
        close();
      }
      return;
    }
  }
}

/** The BenchItems the status steps write, and the one the ConfigMaps and Events point at. */
async function prepareItems(ctx: RoundContext, steps: Step[]): Promise<void> {
  const prefixes = {
    "status-merge": "s",
    "status-apply": "t",
    "status-bookkeeping": "u",
    "status-watched": "v",
    event: "s",
  } as const;
  const wanted = new Set(steps.flatMap((s) => (s in prefixes ? [prefixes[s as keyof typeof prefixes]] : [])));
  for (const p of wanted) {
    await pool(WRITES, (i) =>
      ctx.items.create({
        apiVersion: BenchItem.apiVersion,
        kind: "BenchItem",
        metadata: { name: `${p}${ctx.round}-${i}` },
        spec: { size: i },
      }),
    );
  }
}

async function main(): Promise<void> {
  if (!KUBECONFIG) throw new Error("BENCH_KUBECONFIG must name the cluster to measure");
  const client = new KubeClient(loadClientConfig({ kubeconfig: KUBECONFIG }));
  const namespace = `write-costs-${Date.now().toString(36)}`;
  const crds = client.resource(CustomResourceDefinition);
  const crdName = `${BenchItem.plural}.${BenchItem.group}`;
  const crdExisted = (await crds.get(crdName).catch(() => undefined)) !== undefined;
  const results = new Map<Step, number[]>();
  try {
    await ensureCrds(client, [toCrd(BenchItem)]);
    await client.resource(Namespace).create({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
    const items = client.resource(BenchItem as ResourceKind<BenchItemObject>, namespace);
    const configMaps = client.resource(ConfigMap, namespace) as RoundContext["configMaps"];
    for (let round = 1; round <= ROUNDS; round++) {
      const ownerItem = await items.create({
        apiVersion: BenchItem.apiVersion,
        kind: "BenchItem",
        metadata: { name: `owner-${round}` },
        spec: { size: 0 },
      });
      const ctx: RoundContext = {
        round,
        owner: {
          apiVersion: BenchItem.apiVersion,
          kind: "BenchItem",
          name: `owner-${round}`,
          uid: ownerItem.metadata?.uid ?? "",
          controller: true,
        },
        configMaps,
        items,
        events: client.resource(Event, namespace) as unknown as ResourceClient<KubeObject>,
        namespace,
        created: new Map(),
        openWatchers: async (watched: ResourceClient<KubeObject> = configMaps) => {
          const abort = new AbortController();
          for (let w = 0; w < WATCHERS; w++) {
            const list = await watched.list({ limit: 1 });
            const events = await watched.watch({
              resourceVersion: list.metadata.resourceVersion,
              signal: abort.signal,
            });
            void (async () => {
              try {
                for await (const _ of events) {
                  // drained: the server's cost is the encoding and sending, which a reader keeps flowing
                }
              } catch {
                // aborted
              }
            })();
          }
          return () => abort.abort();
        },
      };
      await prepareItems(ctx, SELECTED);
      const idleStart = await serverCpuSeconds(client);
      const idleT0 = performance.now();
      await sleep(IDLE_SAMPLE_MS);
      const idlePerMs = ((await serverCpuSeconds(client)) - idleStart) / (performance.now() - idleT0);
      log(`round ${round}: idle ${(idlePerMs * 1e5).toFixed(2)}% of a core`);
      for (const step of SELECTED) {
        const cpu0 = await serverCpuSeconds(client);
        const t0 = performance.now();
        await runStep(ctx, step);
        const elapsed = performance.now() - t0;
        const cpu = (await serverCpuSeconds(client)) - cpu0 - idlePerMs * elapsed;
        const msPerRequest = Math.round((cpu * 1e6) / WRITES) / 1e3;
        (results.get(step) ?? results.set(step, []).get(step))?.push(msPerRequest);
        const line = {
          bench: "write-costs",
          round,
          step,
          requests: WRITES,
          concurrency: CONCURRENCY,
          seconds: Math.round(elapsed) / 1e3,
          apiserver_cpu_ms_per_request: msPerRequest,
        };
        process.stdout.write(`${JSON.stringify(line)}\n`);
      }
    }
    for (const [step, values] of results) {
      const line = {
        bench: "write-costs",
        step,
        rounds: values.length,
        median_apiserver_cpu_ms_per_request: median(values),
      };
      process.stdout.write(`${JSON.stringify(line)}\n`);
    }
  } finally {
    await client
      .resource(Namespace)
      .delete(namespace)
      .catch(() => undefined);
    if (!crdExisted) await crds.delete(crdName).catch(() => undefined);
    await client.close();
  }
}

try {
  await main();
} catch (err) {
  log(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
}
