import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, mkdtemp, rename, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadClientConfig } from "../../packages/capstan/src/client/config.ts";
import { KubeClient } from "../../packages/capstan/src/client/resource-client.ts";
import { ConfigMap } from "../../packages/capstan/src/resources/builtins.ts";
import { CRD_KIND } from "../../packages/capstan/src/runtime/crd-registration.ts";
import { isEstablished, waitFor } from "../../packages/capstan-dev/src/testing/index.ts";
import { alive, childrenOf } from "./child-processes.ts";
import { GadgetKind, gadget, gadgetOperatorSource } from "./fixtures/gadget-operator-source.ts";

const repo = new URL("../..", import.meta.url).pathname;
const bin = join(repo, "packages/capstan/bin/capstan.js");
const capstanIndex = JSON.stringify(pathToFileURL(join(repo, "packages/capstan/dist/index.js")).href);

/** `capstan dev` with `args` in `cwd`, its output collected. */
function startDev(cwd: string, args: string[]) {
  let out = "";
  const proc = spawn(process.execPath, [bin, "dev", ...args, "--log-format", "json", "--no-dashboard"], {
    cwd,
    stdio: ["ignore", "pipe", "pipe"],
  });
  for (const stream of [proc.stdout, proc.stderr]) {
    stream?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
  }
  const exited = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
  const output = () => out;
  /** Resolves once the output matches `pattern` `count` times; fails after `timeoutMs` showing it. */
  const outputMatching = async (pattern: RegExp, count = 1, timeoutMs = 30_000): Promise<RegExpMatchArray[]> => {
    const global = new RegExp(pattern.source, `${pattern.flags.replace("g", "")}g`);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const matches = [...out.matchAll(global)];
      if (matches.length >= count) return matches;
      if (Date.now() > deadline) {
        throw new Error(`${matches.length} lines matching ${pattern}, not ${count}, within ${timeoutMs} ms:\n${out}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  return { proc, exited, output, outputMatching };
}

/** Saves `file` as vim, `sed -i` and JetBrains do: a new file in the same folder, renamed over it. */
async function saveByRename(file: string, text: string): Promise<void> {
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, text);
  await rename(temp, file);
}

describe("capstan dev's hot reload", () => {
  let dir: string;
  let dev: ChildProcess | undefined;
  let client: KubeClient | undefined;
  const pids: number[] = [];

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "capstan-dev-reload-"));
    await writeFile(join(dir, "package.json"), '{ "type": "module" }\n');
    await symlink(join(repo, "node_modules"), join(dir, "node_modules"));
  });
  afterEach(async () => {
    await client?.close();
    client = undefined;
    if (dev && dev.exitCode === null && dev.signalCode === null) {
      pids.push(...childrenOf(dev.pid as number));
      const exited = new Promise((resolve) => dev?.once("exit", resolve));
      dev.kill("SIGKILL");
      await exited;
    }
    for (const pid of pids.splice(0)) if (alive(pid)) process.kill(pid, "SIGKILL");
    await rm(dir, { recursive: true, force: true });
  });

  it("restarts the operator on each of seven saves, five renamed over it and two in place, each time running the saved code", async () => {
    await mkdir(join(dir, "gadgets"));
    const file = join(dir, "gadgets", "operator.ts");
    await writeFile(file, gadgetOperatorSource(repo, "0"));
    const run = startDev(dir, ["gadgets/operator.ts"]);
    dev = run.proc;
    await run.outputMatching(/\[operator\.ts\] started \(pid \d+\)/);
    client = new KubeClient(loadClientConfig({ kubeconfig: join(dir, ".capstan/kubeconfig") }));
    await waitFor(client, CRD_KIND, "gadgets.gadgets.capstan.test", isEstablished, { timeout: "30s" });
    await client.resource(GadgetKind).create(gadget("g1", 3));
    await waitFor(client, ConfigMap, "default/g1-size", (cm) => cm.data?.version === "0", { timeout: "30s" });

    const saves = ["rename", "rename", "in place", "rename", "rename", "in place", "rename"];
    for (const [i, how] of saves.entries()) {
      const version = String(i + 1);
      if (how === "rename") await saveByRename(file, gadgetOperatorSource(repo, version));
      else await writeFile(file, gadgetOperatorSource(repo, version));
      // The restarted operator, and only it, reconciles the Gadget with the saved code.
      await waitFor(client, ConfigMap, "default/g1-size", (cm) => cm.data?.version === version, { timeout: "30s" });
      const started = await run.outputMatching(/\[operator\.ts\] started \(pid (\d+)\)/, i + 2);
      pids.push(...started.map((m) => Number(m[1])));
    }

    const starts = [...run.output().matchAll(/\[operator\.ts\] started \(pid (\d+)\)/g)].map((m) => Number(m[1]));
    expect(starts).toHaveLength(8); // the first start and seven restarts, none more
    expect(new Set(starts).size).toBe(8);
    // Each old child exited (stopped by capstan dev, gracefully) before the next one started.
    const lifecycle = run
      .output()
      .match(/\[operator\.ts\] (changed: operator\.ts: restarting|stopped \(code 0\)|started)/g);
    expect(lifecycle).toEqual([
      "[operator.ts] started",
      ...saves.flatMap(() => [
        "[operator.ts] changed: operator.ts: restarting",
        "[operator.ts] stopped (code 0)",
        "[operator.ts] started",
      ]),
    ]);
    for (const pid of starts.slice(0, -1)) expect(alive(pid)).toBe(false);

    await client.close();
    client = undefined;
    const children = childrenOf(run.proc.pid as number); // the operator and its standby
    pids.push(...children);
    run.proc.kill("SIGINT");
    expect(await run.exited).toBe(0);
    for (const pid of [...starts, ...children]) expect(alive(pid)).toBe(false);
  }, 180_000); // eight operator starts on a shared 2-core machine

  it("restarts only the operators whose own files changed, and one that crashed once the file it failed on is fixed", async () => {
    await mkdir(join(dir, "ops", "lib"), { recursive: true });
    const operatorSource = (name: string, imports: string[]) => `
import { operator } from ${capstanIndex};
${imports.map((i) => `import { ${i} } from "./${i === "version" ? "lib/version" : i}.ts";`).join("\n")}
console.log(${JSON.stringify(`${name} loaded`)}, ${imports.map((i) => `"${i}=" + ${i}`).join(", ")});
export default operator({ name: ${JSON.stringify(name)} });
`;
    // a imports lib/version.ts and shared.ts, b only shared.ts; both modules are in one folder.
    await writeFile(join(dir, "ops", "a.ts"), operatorSource("a", ["version", "shared"]));
    await writeFile(join(dir, "ops", "b.ts"), operatorSource("b", ["shared"]));
    const version = join(dir, "ops", "lib", "version.ts");
    const shared = join(dir, "ops", "shared.ts");
    await writeFile(version, 'export const version: string = "1";\n');
    await writeFile(shared, 'export const shared: string = "1";\n');
    const run = startDev(dir, ["ops/a.ts", "ops/b.ts"]);
    dev = run.proc;
    await run.outputMatching(/\[a\.ts\] a loaded version=1 shared=1\n/);
    await run.outputMatching(/\[b\.ts\] b loaded shared=1\n/);

    await saveByRename(version, 'export const version: string = "2";\n');
    await run.outputMatching(/\[a\.ts\] a loaded version=2 shared=1\n/);
    await saveByRename(shared, 'export const shared: string = "2";\n');
    await run.outputMatching(/\[a\.ts\] a loaded version=2 shared=2\n/);
    await run.outputMatching(/\[b\.ts\] b loaded shared=2\n/);
    // Files in the operators' folder that neither loaded: no restart (the next save shows when these were seen).
    await writeFile(join(dir, "ops", "notes.ts"), "export {};\n");
    await writeFile(join(dir, "ops", "a.test.ts"), "export {};\n");
    await saveByRename(shared, 'export const shared: string = "2";\n'); // the same bytes again
    await writeFile(version, "export const version: string = ;\n"); // a syntax error: a crashes
    await run.outputMatching(/\[a\.ts\] exited \(code 1\); save a file to start it again/);
    await saveByRename(version, 'export const version: string = "3";\n');
    await run.outputMatching(/\[a\.ts\] a loaded version=3 shared=2\n/);

    const restarts = (label: string) => run.output().match(new RegExp(`\\[${label}\\] changed: [^\\n]*`, "g"));
    expect(restarts("a\\.ts")).toEqual([
      "[a.ts] changed: lib/version.ts: restarting",
      "[a.ts] changed: shared.ts: restarting",
      "[a.ts] changed: lib/version.ts: restarting",
    ]);
    expect(restarts("b\\.ts")).toEqual(["[b.ts] changed: shared.ts: restarting"]);
    expect(run.output().match(/\[a\.ts\] started \(pid \d+\)/g)).toHaveLength(5); // the last after the crash
    expect(run.output().match(/\[b\.ts\] started \(pid \d+\)/g)).toHaveLength(2);

    pids.push(...childrenOf(run.proc.pid as number));
    run.proc.kill("SIGINT");
    expect(await run.exited).toBe(0);
    for (const pid of pids) expect(alive(pid)).toBe(false);
  }, 180_000);
});
