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

describe("capstan run's heap setting", () => {
  it("leaves a young-generation choice made on the command line, in NODE_OPTIONS or by CAPSTAN_V8_DEFAULT_HEAP alone", () => {
    expect(tuneOperatorHeap({}, ["--max-semi-space-size=8"])).toBe(false);
    expect(tuneOperatorHeap({ NODE_OPTIONS: "--enable-source-maps --semi-space-growth-factor=4" }, [])).toBe(false);
    expect(tuneOperatorHeap({ NODE_OPTIONS: "--min-semi-space-size=2" }, [])).toBe(false);
    expect(tuneOperatorHeap({ CAPSTAN_V8_DEFAULT_HEAP: "1" }, [])).toBe(false);
  });

  it("keeps the young generation from growing under a burst of allocation, which it does by default", async () => {
    const [tuned, untouched] = await Promise.all([
      youngGenerationAfterBurst({}),
      youngGenerationAfterBurst({ CAPSTAN_V8_DEFAULT_HEAP: "1" }),
    ]);
    expect(untouched).toBeGreaterThan(tuned * 2);
  });
});
