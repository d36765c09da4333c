import { configDefaults, defineConfig } from "vitest/config";
import SlowestFirstSequencer from "./test/support/slowest-first-sequencer.ts";

// Inside the workspace, `capstan` and `capstan-dev` resolve to their TypeScript sources (the packages'
// "capstan-source" export condition); processes the tests spawn run the built dist, as users do.
// The rest is Vite's default server conditions, which an explicit list replaces.
const conditions = ["capstan-source", "module", "node", "development|production"];

const realCluster = (process.env.CAPSTAN_TEST_BACKEND?.trim() || "embedded") !== "embedded";

/**
 * Test files that share one process and its loaded modules instead of each starting a fresh one:
 * vitest's per-file isolation costs ~1 s of imports per file on a 2-core machine, most of the time
 * of a small file. These folders start their own servers and clients in each file and keep no state
 * in modules between files. Not here: operators that are module singletons (the examples'
 * `export default operator(...)`, started once per process), or tests that set process-wide state.
 */
const SHARED_PROCESS = ["test/devcluster/**/*.test.ts", "test/resources/**/*.test.ts", "test/client/**/*.test.ts"];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: ["capstan-source"] } },
  test: {
    // End-to-end tests start real HTTPS servers and real kubectl processes; give them room on a 2-core
    // machine. On a real cluster (CAPSTAN_TEST_BACKEND=envtest|kubeconfig) garbage collection of a new
    // kind may take a minute (cluster.timeouts.garbageCollection) and a control plane starts in seconds.
    testTimeout: realCluster ? 120_000 : 30_000,
    hookTimeout: realCluster ? 120_000 : 30_000,
    reporters: ["default", "./test/support/summary-reporter.ts"],
    // The slowest files first (CI's fresh clone has no durations of a last run to order by).
    sequence: { sequencer: SlowestFirstSequencer },
    projects: [
      { extends: true, test: { name: "shared-process", include: SHARED_PROCESS, isolate: false } },
      {
        extends: true,
        test: {
          name: "isolated",
          include: ["test/**/*.test.ts", "examples/**/*.test.ts"],
          exclude: [...configDefaults.exclude, ...SHARED_PROCESS],
        },
      },
    ],
  },
});
