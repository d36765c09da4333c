import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { tuneOperatorHeap } from "../../packages/capstan/src/cli/heap-tuning.ts";

const module = new URL("../../packages/capstan/src/cli/heap-tuning.ts", import.meta.url).href;

/** The young generation's size after a burst of short-lived allocation, in a fresh process. */
async function youngGenerationAfterBurst(env: NodeJS.ProcessEnv): Promise<number> {
  const script = `
    import { getHeapSpaceStatistics } from "node:v8";
    const { tuneOperatorHeap } = await import(${JSON.stringify(module)});
    tuneOperatorHeap();
    let keep = [];
    for (let round = 0; round < 200; round++) {
      keep = Array.from({ length: 20_000 }, (_, i) => ({ i, s: "x" + i, round }));
    }
    const space = getHeapSpaceStatistics().find((s) => s.space_name === "new_space");
    console.log(space.space_size, keep.length);`;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--import", "tsx", "--input-type=module", "-e", script],
    {
      env: { ...process.env, NODE_OPTIONS: "", ...env },
    },
  );
  return Number(stdout.split(" ")[0]);
}

/** The old generation's peak committed size while objects that survive promotion keep dying, in a fresh process. */
async function oldGenerationPeakUnderChurn(env: NodeJS.ProcessEnv): Promise<number> {
  const script = `
    import { getHeapStatistics } from "node:v8";
    const { tuneOperatorHeap } = await import(${JSON.stringify(module)});
    tuneOperatorHeap();
    let peak = 0;
    const live = [];
    for (let round = 0; round < 60; round++) {
      live.push(Array.from({ length: 20_000 }, (_, i) => ({ i, s: "x" + i + round })));
      if (live.length > 8) live.shift();
      peak = Math.max(peak, getHeapStatistics().total_heap_size);
    }
    console.log(peak);`;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--import", "tsx", "--input-type=module", "-e", script],
    { env: { ...process.env, NODE_OPTIONS: "", ...env } },
  );
  return Number(stdout.trim());
}

describe("capstan run's heap settings", () => {
  it("leaves a generation's setting to a choice made on the command line or in NODE_OPTIONS, and both to CAPSTAN_V8_DEFAULT_HEAP", () => {
    const both = ["--semi-space-growth-factor=1", "--heap-growing-percent=50"];
    expect(tuneOperatorHeap({}, [])).toEqual(both);
    expect(tuneOperatorHeap({}, ["--max-semi-space-size=8"])).toEqual(["--heap-growing-percent=50"]);
    expect(tuneOperatorHeap({ NODE_OPTIONS: "--enable-source-maps --semi-space-growth-factor=4" }, [])).toEqual([
      "--heap-growing-percent=50",
    ]);
    expect(tuneOperatorHeap({ NODE_OPTIONS: "--min-semi-space-size=2 --heap-growing-percent=20" }, [])).toEqual([]);
    expect(tuneOperatorHeap({}, ["--optimize-for-size"])).toEqual(["--semi-space-growth-factor=1"]);
    // A cap on the old generation is not a choice of its growth.
    expect(tuneOperatorHeap({ NODE_OPTIONS: "--max-old-space-size=256" }, [])).toEqual(both);
    expect(tuneOperatorHeap({ CAPSTAN_V8_DEFAULT_HEAP: "1" }, [])).toEqual([]);
  });

  it("keeps the young generation from growing under a burst of allocation, which it does by default", async () => {
    const [tuned, untouched] = await Promise.all([
      youngGenerationAfterBurst({}),
      youngGenerationAfterBurst({ CAPSTAN_V8_DEFAULT_HEAP: "1" }),
    ]);
    expect(untouched).toBeGreaterThan(tuned * 2);
  });

  it("keeps the old generation from growing far past what survives, which it does by default under churn", async () => {
    const [tuned, untouched] = await Promise.all([
      oldGenerationPeakUnderChurn({}),
      oldGenerationPeakUnderChurn({ CAPSTAN_V8_DEFAULT_HEAP: "1" }),
    ]);
    // Measured: ~31 MB against ~70 MB.
    expect(untouched).toBeGreaterThan(tuned * 1.5);
  });
});
