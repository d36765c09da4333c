/**
 * The child processes of the benchmarks that run servers and operators as processes (bench/chaos.ts,
 * bench/throughput.ts), and the guarantee that none outlives the benchmark: every child and
 * temporary folder is registered here and killed/removed when this process exits, whether it
 * finished, failed, or was interrupted (SIGINT/SIGTERM; cleanUpOnSignal adds asynchronous work,
 * e.g. on a real cluster, to the interrupted case).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { basename } from "node:path";

const live = new Set<ChildProcess>();
const tempDirs = new Set<string>();
const signalCleanups = new Set<() => Promise<void>>();
/** How long the cleanups of an interrupted benchmark may take before it exits anyway. */
const SIGNAL_CLEANUP_MS = 180_000;
process.on("exit", () => {
  for (const child of live) child.kill("SIGKILL");
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    const name = basename(process.argv[1] ?? "bench", ".ts");
    const exit = () => process.exit(signal === "SIGINT" ? 130 : 143);
    if (signalCleanups.size === 0) {
      process.stderr.write(`[${name}] ${signal}: stopping\n`);
      exit();
    }
    // `once`: a second signal is not caught, so it ends the process at once.
    process.stderr.write(`[${name}] ${signal}: cleaning up (again to stop at once)\n`);
    const timer = setTimeout(exit, SIGNAL_CLEANUP_MS);
    void Promise.allSettled([...signalCleanups].map((cleanup) => cleanup())).then(() => {
      clearTimeout(timer);
      exit();
    });
  });
}

/**
 * Runs `cleanup` if the benchmark is interrupted (SIGINT/SIGTERM) before it unregisters it, and exits
 * only after (at most SIGNAL_CLEANUP_MS): for what an exit handler cannot do, being synchronous, such
 * as the requests that leave a shared cluster clean. Returns the function that unregisters it.
 */
export function cleanUpOnSignal(cleanup: () => Promise<void>): () => void {
  signalCleanups.add(cleanup);
  return () => signalCleanups.delete(cleanup);
}

/** Removes `dir` when this process exits, if nothing removed it before. */
export function removeAtExit(dir: string): void {
  tempDirs.add(dir);
}

/** A running child process. */
export interface Proc {
  readonly name: string;
  readonly child: ChildProcess;
  readonly pid: number;
  /** Resolves when the process has exited. */
  readonly exited: Promise<void>;
  /** Whether it has exited. */
  readonly gone: boolean;
  /** The first output line (stdout or stderr) `match` accepts; rejects if it exits first or after `ms`. */
  line(match: (line: string) => boolean, what: string, ms: number): Promise<string>;
  /** The first IPC message of this `type` (with `ipc: true`); rejects if it exits first. */
  message<M extends { type: string }>(type: M["type"]): Promise<M>;
  /** A rejection once the process exits (for racing against what it should do first). */
  died(what: string): Promise<never>;
  /** SIGKILL; resolves with the time (Date.now()) the process was seen dead. */
  kill9(): Promise<number>;
  /** SIGTERM, then SIGKILL after 15 s. */
  stop(): Promise<void>;
}

/**
 * Starts `node <args>` (or `options.command <args>`, e.g. a Go binary) with piped output (and an IPC
 * channel with `ipc`); its last lines are kept for error messages.
 */
export function launch(
  name: string,
  args: string[],
  options: { cwd?: string; ipc?: boolean; env?: Record<string, string>; command?: string } = {},
): Proc {
  const command = options.command ?? process.execPath;
  const child = spawn(command, args, {
    cwd: options.cwd,
    stdio: options.ipc ? ["ignore", "pipe", "pipe", "ipc"] : ["ignore", "pipe", "pipe"],
    env: { ...process.env, NODE_OPTIONS: "", ...options.env },
  });
  if (child.pid === undefined) throw new Error(`${name}: could not spawn ${command}`);
  const pid = child.pid;
  live.add(child);
  let gone = false;
  const exited = new Promise<void>((resolve) => {
    child.once("exit", () => {
      gone = true;
      live.delete(child);
      resolve();
    });
  });
  const recent: string[] = [];
  const listeners = new Set<(line: string) => void>();
  for (const stream of [child.stdout, child.stderr]) {
    let partial = "";
    stream?.setEncoding("utf8");
    stream?.on("data", (chunk: string) => {
      const lines = (partial + chunk).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) {
        recent.push(line);
        if (recent.length > 30) recent.shift();
        for (const listener of listeners) listener(line);
      }
    });
  }
  const describe = () =>
    `${name} (pid ${pid}${gone ? `, exited ${child.exitCode ?? child.signalCode}` : ""}); last output:\n${recent.join("\n")}`;
  const died = (what: string): Promise<never> =>
    exited.then(() => {
      throw new Error(`exited while waiting for ${what}: ${describe()}`);
    });
  return {
    name,
    child,
    pid,
    exited,
    get gone() {
      return gone;
    },
    died,
    line(match, what, ms) {
      return new Promise<string>((resolve, reject) => {
        let done = false;
        const finish = (err: Error | undefined, line = "") => {
          if (done) return;
          done = true;
          clearTimeout(timer);
          listeners.delete(listener);
          if (err) reject(err);
          else resolve(line);
        };
        const listener = (line: string) => {
          if (match(line)) finish(undefined, line);
        };
        const timer = setTimeout(() => finish(new Error(`no ${what} within ${ms / 1000} s from ${describe()}`)), ms);
        listeners.add(listener);
        died(what).catch((err: Error) => finish(err));
      });
    },
    message<M extends { type: string }>(type: M["type"]) {
      const received = new Promise<M>((resolve) => {
        const onMessage = (m: unknown) => {
          if ((m as { type?: unknown })?.type !== type) return;
          child.off("message", onMessage);
          resolve(m as M);
        };
        child.on("message", onMessage);
      });
      return Promise.race([received, died(`message ${type}`)]);
    },
    async kill9() {
      child.kill("SIGKILL");
      await exited;
      return Date.now();
    },
    async stop() {
      if (gone) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** A TCP port free on the loopback interface now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * The Node.js that runs the operators under measurement: BENCH_OPERATOR_NODE (a path), else this
 * process's, with its version, so that Node versions can be compared on one machine.
 */
export function operatorNode(): { path: string; version: string } {
  const path = process.env.BENCH_OPERATOR_NODE || process.execPath;
  try {
    return { path, version: execFileSync(path, ["--version"], { encoding: "utf8" }).trim() };
  } catch (err) {
    throw new Error(`BENCH_OPERATOR_NODE: cannot run "${path} --version": ${(err as Error).message}`);
  }
}
