import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FileStorage } from "../../../packages/capstan-dev/src/devcluster/storage/file-storage.ts";

let child: ChildProcess | undefined;
let store: FileStorage | undefined;
const dirs: string[] = [];

afterEach(async () => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  child = undefined;
  await store?.closed();
  store = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("FileStorage under kill -9 while snapshots rotate segments", () => {
  it("loses no acknowledged write when killed amid writes, segment switches and snapshot clean-up", async () => {
    const dir = mkdtempSync(join(tmpdir(), "capstan-snapcrash-"));
    dirs.push(dir);
    const script = new URL("./crash-writer.ts", import.meta.url).pathname;
    child = spawn(process.execPath, ["--import", "tsx", script, dir], { stdio: ["ignore", "pipe", "pipe"] });
    const exited = new Promise<void>((resolve) => child!.once("exit", () => resolve()));
    /** key -> newest acknowledged [rev, value]. */
    const acked = new Map<string, [number, string]>();
    let lines = 0;
    await new Promise<void>((resolve, reject) => {
      let buffer = "";
      child!.stdout!.on("data", (d: Buffer) => {
        buffer += d.toString();
        let nl = buffer.indexOf("\n");
        while (nl >= 0) {
          const [key, rev, value] = buffer.slice(0, nl).split(" ") as [string, string, string];
          buffer = buffer.slice(nl + 1);
          nl = buffer.indexOf("\n");
          const previous = acked.get(key);
          if (!previous || previous[0] < Number(rev)) acked.set(key, [Number(rev), value]);
          // Kill once enough has been written for many snapshots to have come and gone.
          if (++lines === 3000) resolve();
        }
      });
      child!.once("exit", (code) => reject(new Error(`writer exited with ${code}`)));
    });
    child.kill("SIGKILL");
    await exited;

    store = await FileStorage.open(dir, { onWarning: () => {} });
    const missing: string[] = [];
    for (const [key, [rev, value]] of acked) {
      const stored = store.get("/configmaps", key);
      if (!stored || stored.rev < rev) {
        missing.push(`${key}@${rev}`);
        continue;
      }
      if (stored.rev === rev) expect(JSON.parse(stored.data).value).toBe(value);
    }
    expect(missing).toEqual([]);
    expect(store.currentRevision()).toBeGreaterThanOrEqual(Math.max(...[...acked.values()].map(([rev]) => rev)));
    // Old files were retired along the way: at most one snapshot and a few segments remain.
    expect(readdirSync(dir).filter((n) => n.endsWith(".snap")).length).toBeLessThanOrEqual(2);
  }, 60_000);
});
