/**
 * `capstan-dev/testing` benchmark: what an operator's end-to-end test pays for its cluster. One JSON
 * line per scenario.
 *
 *   node --import tsx bench/test-cluster.ts
 *
 * - `start_stop`: `startTestCluster()` then `stop()`, BENCH_RUNS times (default 10): median and
 *   max of each (the first run includes loading modules; it is reported apart as `first_start_ms`).
 * - `run_ready`: `cluster.run(op)` for an operator with one CRD, until the CRD is served.
 * - `create_to_child`: create a custom object, then `waitFor` the ConfigMap its controller makes.
 */
import { ConfigMap } from "../packages/capstan/src/resources/builtins.ts";
import { startTestCluster } from "../packages/capstan-dev/src/testing/index.ts";
import op, { Widget } from "../test/cli/fixtures/widget-operator.ts";

const RUNS = Number(process.env.BENCH_RUNS ?? 10);

function summary(values: number[]): { median_ms: number; max_ms: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const round = (n: number) => Math.round(n * 10) / 10;
  return { median_ms: round(sorted[Math.floor(sorted.length / 2)] ?? 0), max_ms: round(sorted.at(-1) ?? 0) };
}

async function main(): Promise<void> {
  const starts: number[] = [];
  const stops: number[] = [];
  let first = 0;
  for (let i = 0; i <= RUNS; i++) {
    const t0 = performance.now();
    const cluster = await startTestCluster();
    const t1 = performance.now();
    await cluster.stop();
    const t2 = performance.now();
    if (i === 0) {
      first = t1 - t0;
      continue;
    }
    starts.push(t1 - t0);
    stops.push(t2 - t1);
  }
  console.log(
    JSON.stringify({
      scenario: "start_stop",
      runs: RUNS,
      first_start_ms: Math.round(first),
      start: summary(starts),
      stop: summary(stops),
    }),
  );

  const cluster = await startTestCluster();
  try {
    const t0 = performance.now();
    const running = await cluster.run(op);
    const t1 = performance.now();
    console.log(JSON.stringify({ scenario: "run_ready", ms: Math.round(t1 - t0) }));
    await cluster.client
      .resource(Widget)
      .create(Widget.make({ metadata: { name: "bench", namespace: "default" }, spec: { color: "blue" } }));
    await cluster.waitFor(ConfigMap, "default/bench-color", (cm) => cm.data?.color === "blue");
    console.log(JSON.stringify({ scenario: "create_to_child", ms: Math.round(performance.now() - t1) }));
    await running.stop();
  } finally {
    await cluster.stop();
  }
}

await main();
