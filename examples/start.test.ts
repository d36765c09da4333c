/**
 * `npm start` end to end: the rates server, `capstan dev` with the five example operators, the
 * hints printed once their CRDs are served, the samples those hints name working with the real
 * kubectl, and Ctrl-C leaving nothing running.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";

const exec = promisify(execFile);
const root = new URL("..", import.meta.url).pathname;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until<R>(what: string, probe: () => R | undefined, timeoutMs: number, output: () => string): Promise<R> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; output so far:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("npm start", () => {
  let dir: string | undefined;
  let proc: ChildProcess | undefined;
  afterEach(async () => {
    if (proc && proc.exitCode === null && proc.signalCode === null) process.kill(-(proc.pid as number), "SIGKILL");
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("runs the five examples on the embedded API server, prints what to type, and Ctrl-C stops it all", async () => {
    dir = await mkdtemp(join(tmpdir(), "capstan-start-"));
    const kubeconfig = join(dir, "kubeconfig");
    let out = "";
    // Its own process group, so the test can press Ctrl-C as a terminal does (to the group).
    proc = spawn(process.execPath, ["--import", "tsx", "examples/start.ts", "--kubeconfig", kubeconfig], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    for (const stream of [proc.stdout, proc.stderr]) stream?.on("data", (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((resolve) => proc?.once("exit", (code) => resolve(code)));
    const output = () => out;

    await until(
      "the hints",
      () => (out.includes("The five example operators are running.") ? true : undefined),
      60_000,
      output,
    );
    expect(out).toMatch(/rates server: http:\/\/127\.0\.0\.1:\d+/);
    expect(out).toContain(`export KUBECONFIG=${kubeconfig}`);
    const pids = [...out.matchAll(/\] started \(pid (\d+)\)/g)].map((m) => Number(m[1]));
    expect(pids).toHaveLength(5);

    const kubectl = (...args: string[]) =>
      exec(process.env.KUBECTL ?? "kubectl", ["--kubeconfig", kubeconfig, ...args], { cwd: root });
    await kubectl("apply", "-f", "examples/guitar/stratocaster.yaml", "-f", "examples/exchangerate/usd.yaml");
    await kubectl("wait", "guitar/stratocaster", "--for=jsonpath={.spec.review}=true", "--timeout=30s");
    // Polled rather than `wait --for=create`, which kubectl has only since 1.31.
    let rate = "";
    for (const deadline = Date.now() + 30_000; rate === "" && Date.now() < deadline; ) {
      const res = await kubectl("get", "configmap", "usd", "-o", "jsonpath={.data.rate}").catch(() => ({ stdout: "" }));
      rate = res.stdout;
      if (rate === "") await new Promise((r) => setTimeout(r, 200));
    }
    expect(Number(rate)).toBeGreaterThan(0); // served by the local rates server

    // The useless machine's admission handlers are served and registered by capstan dev.
    const ghostSwitch = join(dir, "ghost-switch.json");
    await writeFile(
      ghostSwitch,
      JSON.stringify({
        apiVersion: "useless.container.training/v1alpha1",
        kind: "Switch",
        metadata: { name: "lonely", namespace: "default", labels: { machine: "ghost" } },
        spec: { position: "down" },
      }),
    );
    const denied = await kubectl("create", "-f", ghostSwitch).then(
      () => "created",
      (err: { stderr: string }) => err.stderr,
    );
    expect(denied).toContain('denied the request: no Machine "ghost" in namespace "default"');

    process.kill(-(proc.pid as number), "SIGINT");
    expect(await exited).toBe(0);
    expect(out).toContain("capstan dev: stopped");
    for (const pid of pids) expect(alive(pid)).toBe(false);
  }, 120_000); // five Node processes start on a shared 2-core machine
});
