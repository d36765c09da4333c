/**
 * discardDataDir (`capstan dev --fresh`): a data dir emptied for a start from nothing, never one a
 * live process holds, and nothing in it but what a data dir keeps.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DataDirInUseError, discardDataDir } from "../../../packages/capstan-dev/src/devcluster/index.ts";
import { openDataDir } from "../../../packages/capstan-dev/src/devcluster/storage/data-dir.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "capstan-discard-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A data dir with one object, closed: what a stopped `capstan dev` leaves. */
async function filledDataDir(): Promise<{ token: string; caPem: string }> {
  const data = await openDataDir(dir);
  await data.storage.create("configmaps", "default/kept", (rv) =>
    JSON.stringify({ metadata: { name: "kept", resourceVersion: String(rv) } }),
  );
  await data.close();
  return { token: data.token, caPem: data.certs.caPem };
}

describe("discardDataDir", () => {
  it("deletes the objects, certificates and token, so the next open starts from nothing", async () => {
    const before = await filledDataDir();
    await writeFile(join(dir, "notes.txt"), "mine\n");
    await discardDataDir(dir);
    expect((await readdir(dir)).sort()).toEqual(["LOCK", "notes.txt"]); // someone else's file is left alone
    const data = await openDataDir(dir);
    try {
      expect(data.storage.get("configmaps", "default/kept")).toBeUndefined();
      expect(data.storage.currentRevision()).toBe(0);
      expect(data.token).not.toBe(before.token);
      expect(data.certs.caPem).not.toBe(before.caPem);
    } finally {
      await data.close();
    }
  });

  it("refuses while a live process holds the data dir, naming it, and deletes nothing", async () => {
    await filledDataDir();
    const holder = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60_000)"], { stdio: "ignore" });
    try {
      await writeFile(join(dir, "LOCK"), String(holder.pid));
      const names = (await readdir(dir)).sort();
      const refusal = await discardDataDir(dir).catch((err: unknown) => err);
      expect(refusal).toBeInstanceOf(DataDirInUseError);
      expect(refusal).toMatchObject({ pid: holder.pid, message: expect.stringContaining(`process ${holder.pid}`) });
      expect((await readdir(dir)).sort()).toEqual(names);
      expect(await readFile(join(dir, "LOCK"), "utf8")).toBe(String(holder.pid));
    } finally {
      holder.kill("SIGKILL");
    }
  });

  it("leaves a missing directory missing", async () => {
    await discardDataDir(join(dir, "absent"));
    expect(await readdir(dir)).toEqual([]);
  });
});
