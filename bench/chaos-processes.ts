/**
 * The child processes of bench/chaos.ts (API servers, operators) and the guarantee that none outlives
 * the benchmark: every child and temporary folder is registered here and killed/removed when this
 * process exits, whether it finished, failed, or was interrupted (SIGINT/SIGTERM).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";

const live = new Set<ChildProcess>();
const tempDirs = new Set<string>();
process.on("exit", () => {
  for (const child of live) child.kill("SIGKILL");
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    process.stderr.write(`[chaos] ${signal}: stopping\n`);
    process.exit(signal === "SIGINT" ? 130 : 143);
  });
}

/** Removes `dir` when this process exits, if nothing removed it before. */
export function removeAtExit(dir: string): void {
  tempDirs.add(dir);
}

/** A running child process. */
export interface Proc {
  readonly name: string;
  readonly pid: number;
  /** Resolves when the process has exited. */
  readonly exited: Promise<void>;
  /** Whether it has exited. */
  readonly gone: boolean;
  /** The first output line `match` accepts; rejects if the process exits first or after `ms`. */
  line(match: (line: string) => boolean, what: string, ms: number): Promise<string>;
  /** SIGKILL; resolves with the time (Date.now()) the process was seen dead. */
  kill9(): Promise<number>;
  /** SIGTERM, then SIGKILL after 15 s. */
  stop(): Promise<void>;
}

/** Starts `node <args>` with piped output; its last lines are kept for error messages. */
export function launch(
  name: string,
  args: string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Proc {
  const child = spawn(process.execPath, args, {
    cwd: options.cwd,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, NODE_OPTIONS: "", ...options.env },
  });
  if (child.pid === undefined) throw new Error(`${name}: could not spawn ${process.execPath}`);
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
  const describe = () => `${name} (pid ${pid}); last output:\n${recent.join("\n")}`;
  return {
    name,
    pid,
    exited,
    get gone() {
      return gone;
    },
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
        void exited.then(() => finish(new Error(`exited while waiting for ${what}: ${describe()}`)));
      });
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
