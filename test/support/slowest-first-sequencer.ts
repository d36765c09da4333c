import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * The test files that took longest in a full run (seconds, `npx vitest run` on a 2-core machine),
 * slowest first. Kept by hand: a file missing here only starts where vitest would start it.
 */
export const SLOWEST_TEST_FILES: readonly string[] = [
  "test/packaging/new-project.test.ts", // 120 s: packs, three npm installs, a project's npm ci/test/build, an image
  "test/cli/dev-reload.test.ts", // 24 s
  "test/cli/dev.test.ts", // 24 s
  "test/runtime/sharding.e2e.test.ts", // 19 s
  "test/operator/rbac.e2e.test.ts", // 17 s
  "test/compat/python-client.e2e.test.ts", // 17 s
  "test/dashboard/browser-writes.test.ts", // 16 s
  "test/cli/startup-errors.test.ts", // 16 s
  "test/testing/envtest-backend.test.ts", // 13 s
  "test/runtime/watch-health.e2e.test.ts", // 13 s
  "test/cli/generate.test.ts", // 12 s
  "test/devcluster/kubectl/stored-kinds.test.ts", // 10 s
];

/**
 * Starts the known-slowest test files first, then the rest in vitest's own order. Vitest orders by
 * the durations of the last run, which a fresh clone (CI) has none of: it falls back to file size,
 * and the slowest file (small, but installing whole projects) would start among the last, leaving
 * the other workers idle while it runs alone.
 */
export default class SlowestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification): number => {
      const index = SLOWEST_TEST_FILES.indexOf(relative(spec.project.config.root, spec.moduleId));
      return index === -1 ? SLOWEST_TEST_FILES.length : index;
    };
    // Array.prototype.sort is stable: files of equal rank keep vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
