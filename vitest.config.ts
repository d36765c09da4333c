import { defineConfig } from "vitest/config";

// Inside the workspace, `capstan` and `capstan-dev` resolve to their TypeScript sources (the packages'
// "capstan-source" export condition); processes the tests spawn run the built dist, as users do.
// The rest is Vite's default server conditions, which an explicit list replaces.
const conditions = ["capstan-source", "module", "node", "development|production"];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: ["capstan-source"] } },
  test: {
    include: ["test/**/*.test.ts", "examples/**/*.test.ts"],
    // End-to-end tests start real HTTPS servers and real kubectl processes; give them room on a 2-core machine.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    reporters: ["default", "./test/support/summary-reporter.ts"],
  },
});
