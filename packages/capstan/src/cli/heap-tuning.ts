/**
 * The V8 heap settings `capstan run` applies to its own process:
 *
 * - the young generation stays at V8's initial size instead of growing to 16 MB per semi-space
 *   under an allocation burst (`--semi-space-growth-factor=1`);
 * - the old generation may grow by half of what survived its last full collection before the next
 *   one (`--heap-growing-percent=50`) instead of V8's dynamic factor, which reaches 4x for a small
 *   heap under a high allocation rate.
 *
 * Why: an operator allocates in bursts (a relist decodes every object at once, each reconcile builds
 * request bodies) and almost all of it dies young, or soon after promotion. Measured with `npm run
 * bench:footprint` (3,000 objects, one owned ConfigMap and a status patch each):
 * - young generation, one reconcile at a time: peak RSS 105.8 and 105.6 MB with V8's default, 78.5
 *   and 76.9 MB with the first setting; CPU time and time to converge the same.
 * - old generation, 16 reconciles at a time (the default since issue 14, so several times the
 *   allocation rate): 98-103 MB with the first setting alone, 78.3-78.7 MB with both. In `npm run
 *   bench:throughput` at N = 3,000 the operator's peak went from 100-106 to 80-85 MB with its CPU
 *   time unchanged within noise (3.32-4.25 s against 3.30-4.60 s); `--optimize-for-size` reached
 *   the same memory for 15% more CPU.
 *
 * `--semi-space-growth-factor` and `--heap-growing-percent` are read at every resize, so they take
 * effect when set at run time (`--max-semi-space-size` is fixed when the heap is created). An explicit
 * choice wins: a setting is left alone when NODE_OPTIONS or the node command line already set a flag
 * of its generation, and CAPSTAN_V8_DEFAULT_HEAP=1 leaves both.
 */
import { setFlagsFromString } from "node:v8";

const SETTINGS = [
  {
    flag: "--semi-space-growth-factor=1",
    given: /^--(max-semi-space-size|min-semi-space-size|semi-space-growth-factor)\b/,
  },
  { flag: "--heap-growing-percent=50", given: /^--(heap-growing-percent|optimize-for-size)\b/ },
];

/** Applies the settings the process was not started with a choice of its own for; returns those applied. */
export function tuneOperatorHeap(
  env: NodeJS.ProcessEnv = process.env,
  execArgv: readonly string[] = process.execArgv,
): string[] {
  if (env.CAPSTAN_V8_DEFAULT_HEAP === "1") return [];
  const given = [...execArgv, ...(env.NODE_OPTIONS ?? "").split(/\s+/)];
  const applied: string[] = [];
  for (const { flag, given: pattern } of SETTINGS) {
    if (given.some((arg) => pattern.test(arg))) continue;
    setFlagsFromString(flag);
    applied.push(flag);
  }
  return applied;
}
