import { mkdir, mkdtemp, rename, rm, unlink, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { digestOf, readDigest } from "../../packages/capstan-dev/src/cli/content-digest.ts";
import { SourceWatcher } from "../../packages/capstan-dev/src/cli/source-watcher.ts";

interface Report {
  owner: string;
  files: string[];
}

/** A watcher whose reports are collected, and a way to wait for the next one. */
function collecting(signal: AbortSignal) {
  const reports: Report[] = [];
  const waiting: (() => void)[] = [];
  const watcher = new SourceWatcher<string>({
    signal,
    onChange: (owner, files) => {
      reports.push({ owner, files });
      for (const wake of waiting.splice(0)) wake();
    },
  });
  /** Resolves once there are `count` reports; fails after 10 s showing those there are. */
  const reportsUntil = async (count: number): Promise<Report[]> => {
    const deadline = Date.now() + 10_000;
    while (reports.length < count) {
      if (Date.now() > deadline) throw new Error(`${reports.length} reports, not ${count}: ${JSON.stringify(reports)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 100);
        waiting.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return reports;
  };
  return { watcher, reports, reportsUntil };
}

describe("SourceWatcher", () => {
  let dir: string;
  let stop: AbortController;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "capstan-watch-"));
    await mkdir(join(dir, "lib"));
    stop = new AbortController();
  });
  afterEach(async () => {
    stop.abort();
    await rm(dir, { recursive: true, force: true });
  });

  /** Writes `file` and tracks it for `owner` as loaded with that content. */
  async function loaded(watcher: SourceWatcher<string>, owner: string, file: string, text: string): Promise<void> {
    await writeFile(file, text);
    watcher.track(owner, file, digestOf(text));
  }

  async function renameOver(file: string, text: string, n: number): Promise<void> {
    const temp = join(dir, `.save-${n}.tmp`);
    await writeFile(temp, text);
    await rename(temp, file);
  }

  it("sees every save made by renaming a new file over the old one, not only the first", async () => {
    const { watcher, reportsUntil } = collecting(stop.signal);
    const file = join(dir, "operator.ts");
    await loaded(watcher, "op", file, "export const v = 0;");
    for (let n = 1; n <= 4; n++) {
      await renameOver(file, `export const v = ${n};`, n);
      expect((await reportsUntil(n))[n - 1]).toEqual({ owner: "op", files: [file] });
    }
  });

  it("sees a file deleted and created again, and one written in place", async () => {
    const { watcher, reportsUntil } = collecting(stop.signal);
    const file = join(dir, "lib", "resources.ts");
    await loaded(watcher, "op", file, "export const a = 1;");
    await unlink(file);
    await writeFile(file, "export const a = 2;");
    expect(await reportsUntil(1)).toEqual([{ owner: "op", files: [file] }]);
    await writeFile(file, "export const a = 3;");
    expect(await reportsUntil(2)).toEqual([
      { owner: "op", files: [file] },
      { owner: "op", files: [file] },
    ]);
  });

  it("ignores a touch, and a save that writes the bytes the operator loaded", async () => {
    const { watcher, reports, reportsUntil } = collecting(stop.signal);
    const touched = join(dir, "touched.ts");
    const rewritten = join(dir, "rewritten.ts");
    const changed = join(dir, "changed.ts");
    await loaded(watcher, "op", touched, "export const t = 1;");
    await loaded(watcher, "op", rewritten, "export const r = 1;");
    await loaded(watcher, "op", changed, "export const c = 1;");
    await utimes(touched, new Date(), new Date(Date.now() + 60_000));
    await renameOver(rewritten, "export const r = 1;", 1);
    await writeFile(changed, "export const c = 2;"); // the one change, so that the test knows when to look
    await reportsUntil(1);
    expect(reports).toEqual([{ owner: "op", files: [changed] }]);
  });

  it("reports a change to the owners that loaded the file, and to no other", async () => {
    const { watcher, reports, reportsUntil } = collecting(stop.signal);
    const shared = join(dir, "lib", "shared.ts");
    const a = join(dir, "a.ts");
    const b = join(dir, "b.ts");
    await loaded(watcher, "a", a, "export {};");
    await loaded(watcher, "b", b, "export {};");
    await loaded(watcher, "a", shared, "export const s = 1;");
    watcher.track("b", shared, digestOf("export const s = 1;"));
    await writeFile(join(dir, "unrelated.ts"), "export {};"); // in a watched folder, loaded by nobody

    await renameOver(a, "export const a = 1;", 1);
    expect(await reportsUntil(1)).toEqual([{ owner: "a", files: [a] }]);
    await writeFile(shared, "export const s = 2;");
    await reportsUntil(3);
    expect(reports.slice(1).sort((x, y) => x.owner.localeCompare(y.owner))).toEqual([
      { owner: "a", files: [shared] },
      { owner: "b", files: [shared] },
    ]);

    // After a reset, b depends on its module alone: the shared file is no longer its.
    watcher.reset("b", [[b, readDigest(b)]]);
    await writeFile(shared, "export const s = 3;");
    expect((await reportsUntil(4))[3]).toEqual({ owner: "a", files: [shared] });
    expect(watcher.filesOf("b")).toEqual([b]);
  });

  it("reports a file saved between the operator loading it and tracking it, and a missing file once it exists", async () => {
    const { watcher, reportsUntil } = collecting(stop.signal);
    const file = join(dir, "operator.ts");
    await writeFile(file, "export const v = 2;");
    watcher.track("op", file, digestOf("export const v = 1;")); // the child read version 1
    expect(await reportsUntil(1)).toEqual([{ owner: "op", files: [file] }]);

    const missing = join(dir, "lib", "not-yet.ts");
    watcher.track("op", missing, null);
    await writeFile(missing, "export {};");
    expect((await reportsUntil(2))[1]).toEqual({ owner: "op", files: [missing] });
  });

  it("closes every folder watch once its signal is aborted", async () => {
    const folderWatches = () => process.getActiveResourcesInfo().filter((r) => r === "FSEventWrap").length;
    const before = folderWatches();
    const { watcher } = collecting(stop.signal);
    const file = join(dir, "operator.ts");
    await loaded(watcher, "op", file, "export {};");
    await loaded(watcher, "op", join(dir, "lib", "resources.ts"), "export {};");
    expect(folderWatches()).toBe(before + 2);
    stop.abort();
    // A closed handle is gone once the event loop ran its close callback.
    for (let i = 0; i < 100 && folderWatches() > before; i++) await new Promise((resolve) => setTimeout(resolve, 1));
    expect(folderWatches()).toBe(before);
  });
});
