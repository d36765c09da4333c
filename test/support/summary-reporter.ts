import type { Reporter, TestModule } from "vitest/node";

/**
 * Prints one closing line, "N passed, N failed, N skipped", that CI reads to know how many
 * tests ran. Vitest's own summary is kept; this only adds the plain line.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    for (const mod of testModules) {
      for (const test of mod.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") counts.passed++;
        else if (state === "failed") counts.failed++;
        else counts.skipped++;
      }
      // A file that failed outside its tests (its import, a beforeAll) leaves them skipped: count it.
      const testFailed = [...mod.children.allTests()].some((t) => t.result().state === "failed");
      if (mod.state() === "failed" && !testFailed) counts.failed++;
    }
    process.stdout.write(`\n${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
  }
}
