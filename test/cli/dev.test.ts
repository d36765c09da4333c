import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { outputLabels } from "../../src/cli/dev.ts";
import { loadClientConfig } from "../../src/client/config.ts";
import { KubeClient } from "../../src/client/resource-client.ts";
import { ConfigMap } from "../../src/resources/builtins.ts";
import { CRD_KIND } from "../../src/runtime/crd-registration.ts";
import { waitFor } from "../../src/testing/index.ts";
import { GadgetKind, gadget, gadgetOperatorSource, isEstablished } from "./fixtures/gadget-operator-source.ts";

const repo = new URL("../..", import.meta.url).pathname;
const bin = join(repo, "bin/capstan.js");

/** Resolves once `output()` matches `pattern`; fails after `timeoutMs` showing the output so far. */
async function outputMatching(output: () => string, pattern: RegExp, timeoutMs = 20_000): Promise<RegExpMatchArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = output().match(pattern);
    if (match) return match;
    if (Date.now() > deadline) throw new Error(`no output matching ${pattern} within ${timeoutMs} ms:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("capstan dev's output labels", () => {
  it("labels an operator by its file name, or by folder and file name when names repeat", () => {
    expect(outputLabels(["a/operator.ts", "b/operator.ts", "c/main.ts"])).toEqual([
      "a/operator.ts",
      "b/operator.ts",
      "main.ts",
    ]);
  });
});

describe("capstan dev", () => {
  let dir: string;
  let dev: ChildProcess | undefined;
  let client: KubeClient | undefined;
  const pids: number[] = [];

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "capstan-dev-"));
    await writeFile(join(dir, "package.json"), '{ "type": "module" }\n');
    await symlink(join(repo, "node_modules"), join(dir, "node_modules"));
    await mkdir(join(dir, "gadgets"));
    await writeFile(join(dir, "gadgets", "operator.ts"), gadgetOperatorSource(repo, "1"));
  });
  afterEach(async () => {
    await client?.close();
    client = undefined;
    if (dev && dev.exitCode === null && dev.signalCode === null) {
      const exited = new Promise((resolve) => dev?.once("exit", resolve));
      dev.kill("SIGKILL");
      await exited;
    }
    for (const pid of pids.splice(0)) if (alive(pid)) process.kill(pid, "SIGKILL");
    await rm(dir, { recursive: true, force: true });
  });

  it("runs the operator against its own API server, restarts it on a file change, and stops everything on Ctrl-C", async () => {
    let out = "";
    const proc = spawn(process.execPath, [bin, "dev", "gadgets/operator.ts", "--log-format", "json"], {
      cwd: dir,
      stdio: ["ignore", "pipe", "pipe"],
      // Its own process group, so that the test can press Ctrl-C as a terminal does (to the group).
      detached: true,
    });
    dev = proc;
    proc.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    proc.stderr?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
    const output = () => out;

    await outputMatching(output, /API server ready at https:\/\/127\.0\.0\.1:\d+, kubeconfig \.capstan\/kubeconfig/);
    await outputMatching(output, /kubectl --kubeconfig \.capstan\/kubeconfig get crds/);
    const first = await outputMatching(output, /\[operator\.ts\] started \(pid (\d+)\)/);
    pids.push(Number(first[1]));
    client = new KubeClient(loadClientConfig({ kubeconfig: join(dir, ".capstan/kubeconfig") }));

    await waitFor(client, CRD_KIND, "gadgets.gadgets.capstan.test", isEstablished, { timeout: "20s" });
    await client.resource(GadgetKind).create(gadget("g1", 3));
    await waitFor(client, ConfigMap, "default/g1-size", (cm) => cm.data?.version === "1", { timeout: "20s" });

    // A new version of the operator: the restarted process reconciles existing Gadgets with it.
    await writeFile(join(dir, "gadgets", "operator.ts"), gadgetOperatorSource(repo, "2"));
    await outputMatching(output, /\[operator\.ts\] changed: operator\.ts: restarting/);
    const second = await outputMatching(output, /started \(pid \d+\)[\s\S]*started \(pid (\d+)\)/);
    pids.push(Number(second[1]));
    expect(second[1]).not.toBe(first[1]);
    await waitFor(client, ConfigMap, "default/g1-size", (cm) => cm.data?.version === "2", { timeout: "20s" });
    expect(alive(Number(first[1]))).toBe(false);

    await client.close();
    client = undefined;
    // Ctrl-C: the terminal signals the foreground process group.
    process.kill(-(proc.pid as number), "SIGINT");
    expect(await exited).toBe(0);
    expect(out).toContain("capstan dev: stopped");
    // The operator stopped gracefully (one signal, from capstan dev), not at once on a second one.
    expect(out).toMatch(/\[operator\.ts\] \{[^\n]*"msg":"operator stopped"/);
    expect(out).toMatch(/\[operator\.ts\] stopped \(code 0\)\n[\s\S]*capstan dev: stopped/);
    for (const pid of pids) expect(alive(pid)).toBe(false);
    expect(existsSync(join(dir, ".capstan/kubeconfig"))).toBe(true);
  }, 90_000); // three process start-ups (dev, operator twice) on a shared 2-core machine

  it("its operators stop when capstan dev is killed with SIGKILL, which it cannot pass on", async () => {
    let out = "";
    const proc = spawn(process.execPath, [bin, "dev", "gadgets/operator.ts", "--log-format", "json"], {
      cwd: dir,
      stdio: ["ignore", "pipe", "pipe"],
    });
    dev = proc;
    proc.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    const started = await outputMatching(() => out, /\[operator\.ts\] started \(pid (\d+)\)/);
    const pid = Number(started[1]);
    pids.push(pid);
    client = new KubeClient(loadClientConfig({ kubeconfig: join(dir, ".capstan/kubeconfig") }));
    await waitFor(client, CRD_KIND, "gadgets.gadgets.capstan.test", isEstablished, { timeout: "20s" });
    expect(alive(pid)).toBe(true);

    const exited = new Promise((resolve) => proc.once("exit", resolve));
    proc.kill("SIGKILL");
    await exited;
    const deadline = Date.now() + 20_000;
    while (alive(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(alive(pid)).toBe(false);
  }, 90_000);
});
