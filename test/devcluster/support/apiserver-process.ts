/**
 * `capstan apiserver` as a child process, for the tests of that command itself (its flags, its
 * admin endpoint, a SIGKILL amid writes), and as the "existing cluster" of the kubeconfig backend's
 * tests (test/testing/kubeconfig-backend.test.ts): the places where a cluster is not started
 * in-process with `capstan-dev/testing`, because a separate process is what those tests need.
 */
import { type ChildProcess, spawn } from "node:child_process";

/** A started `capstan apiserver`: the caller stops it (SIGTERM, or SIGKILL for a crash test). */
export interface ApiserverProcess {
  child: ChildProcess;
  /** The URL of its `ready <url>` line. */
  url: string;
  /** Settles when the process has exited. */
  exited: Promise<void>;
}

/**
 * Runs `capstan apiserver --port 0 --no-kubelet --kubeconfig <kubeconfig> ...args` from the
 * repository's root and resolves once it printed `ready <url>`; rejects with its stderr if it exits
 * before. `onSpawn` gets the child at once, so a test's clean-up can kill one that never got ready.
 */
export async function startApiserverProcess(
  kubeconfig: string,
  args: readonly string[] = [],
  onSpawn: (child: ChildProcess) => void = () => undefined,
): Promise<ApiserverProcess> {
  const child = spawn(
    process.execPath,
    [
      "packages/capstan/bin/capstan.js",
      "apiserver",
      "--port",
      "0",
      "--no-kubelet",
      "--kubeconfig",
      kubeconfig,
      ...args,
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  onSpawn(child);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /^ready (\S+) /m.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once("exit", (code) => reject(new Error(`apiserver exited with ${code}: ${stderr}`)));
  });
  return { child, url, exited };
}

/** Stops a `capstan apiserver` child still running (SIGTERM, its graceful stop) and waits for its exit. */
export async function stopApiserverProcess(child: ChildProcess | undefined): Promise<void> {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}
