import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { watchSources } from "../../packages/capstan-dev/src/cli/source-watcher.ts";

describe("watchSources", () => {
  let dir: string;
  let close: (() => void) | undefined;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "capstan-watch-"));
    await mkdir(join(dir, "lib"));
    await mkdir(join(dir, ".capstan"));
  });
  afterEach(async () => {
    close?.();
    await rm(dir, { recursive: true, force: true });
  });

  it("reports a burst of source changes once, subfolders included, and ignores .capstan, test and non-source files", async () => {
    const reports: { folder: string; files: string[] }[] = [];
    const reported = new Promise<void>((resolve) => {
      const watcher = watchSources([dir], (folder, files) => {
        reports.push({ folder, files });
        resolve();
      });
      close = () => watcher.close();
    });
    await writeFile(join(dir, ".capstan", "kubeconfig"), "written by capstan dev");
    await writeFile(join(dir, "notes.txt"), "not a source file");
    await writeFile(join(dir, "operator.test.ts"), "a test file the operator never imports");
    await writeFile(join(dir, "operator.ts"), "export {};");
    await writeFile(join(dir, "lib", "resources.ts"), "export {};");
    await writeFile(join(dir, "operator.ts"), "export {}; // saved again");
    await reported;
    expect(reports).toEqual([{ folder: dir, files: ["lib/resources.ts", "operator.ts"] }]);
  });
});
