/**
 * The real `kubectl`, run against a test cluster: its kubeconfig, its discovery and HTTP caches in
 * the cluster's temporary folder (never the user's `~/.kube`).
 *
 * Guarantees: a non-zero exit is a result, not an error (tests assert on `code` and `stderr`); a
 * missing binary is an error naming it; `stopAll()` kills the commands still running and resolves
 * once they have exited.
 */
import { type ChildProcess, execFile } from "node:child_process";
import { join } from "node:path";
import { type Duration, toMilliseconds } from "capstan";

/** kubectl answers the devcluster in well under a second; one that runs this long is stuck. */
export const DEFAULT_KUBECTL_TIMEOUT: Duration = "20s";

/** What a kubectl command printed and how it exited. */
export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Options of one kubectl command. */
export interface KubectlOptions {
  /** Written to its standard input (`kubectl apply -f -`). */
  stdin?: string;
  /** Killed after this long (default {@link DEFAULT_KUBECTL_TIMEOUT}); the result then has code 1 or the signal's. */
  timeout?: Duration;
  /** Extra environment variables. */
  env?: Record<string, string>;
  /** Working directory (default: this process's); `capstan generate` reads the project found there. */
  cwd?: string;
}

/** Runs commands of one program; `stopAll()` kills those still running. */
export interface CommandRunner {
  run(args: readonly string[], options?: KubectlOptions): Promise<KubectlResult>;
  stopAll(): Promise<void>;
}

/**
 * Runs kubectl commands against one kubeconfig; see the module documentation. A command that says how
 * long it may wait (`kubectl wait --timeout=60s`, `rollout status --timeout 1m`) is given that long
 * plus {@link DEFAULT_KUBECTL_TIMEOUT} unless `options.timeout` says otherwise: kubectl's own timeout,
 * and its message, come first.
 */
export function kubectlRunner(kubeconfigPath: string, cacheDir: string): CommandRunner {
  const runner = commandRunner({
    binary: process.env.KUBECTL ?? "kubectl",
    env: { KUBECONFIG: kubeconfigPath, KUBECACHEDIR: join(cacheDir, "kubectl-cache") },
    timeout: DEFAULT_KUBECTL_TIMEOUT,
  });
  return {
    run: (args, options = {}) => runner.run(args, { ...options, timeout: kubectlProcessTimeout(args, options) }),
    stopAll: () => runner.stopAll(),
  };
}

/**
 * How long a kubectl command may run before it is killed: `options.timeout` when given, else its own
 * `--timeout` plus {@link DEFAULT_KUBECTL_TIMEOUT}, else {@link DEFAULT_KUBECTL_TIMEOUT}.
 */
export function kubectlProcessTimeout(args: readonly string[], options: KubectlOptions = {}): Duration {
  if (options.timeout !== undefined) return options.timeout;
  const own = ownTimeoutMs(args);
  return own === undefined ? DEFAULT_KUBECTL_TIMEOUT : own + toMilliseconds(DEFAULT_KUBECTL_TIMEOUT);
}

/** The `--timeout` a kubectl command was given, in milliseconds; `undefined` when none or not a duration. */
function ownTimeoutMs(args: readonly string[]): number | undefined {
  const at = args.findIndex((a) => a === "--timeout" || a.startsWith("--timeout="));
  if (at < 0) return undefined;
  const arg = args[at] as string;
  const value = arg === "--timeout" ? args[at + 1] : arg.slice("--timeout=".length);
  try {
    return value === undefined ? undefined : toMilliseconds(value);
  } catch {
    return undefined; // kubectl says what is wrong with it
  }
}

/** What {@link commandRunner} runs: `binary ...prefix ...args` with `env` added to the process's. */
export interface CommandSpec {
  binary: string;
  prefix?: readonly string[];
  env: Record<string, string>;
  timeout: Duration;
}

/** Runs one program's commands as child processes: a non-zero exit is a result, a missing binary an error. */
export function commandRunner(spec: CommandSpec): CommandRunner {
  const { binary } = spec;
  const running = new Map<ChildProcess, Promise<void>>();
  const run = (args: readonly string[], options: KubectlOptions = {}): Promise<KubectlResult> =>
    new Promise((resolve, reject) => {
      let settle: () => void = () => undefined;
      const child = execFile(
        binary,
        [...(spec.prefix ?? []), ...args],
        {
          env: { ...process.env, ...spec.env, ...options.env },
          ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
          timeout: toMilliseconds(options.timeout ?? spec.timeout),
          maxBuffer: 64 * 1024 * 1024,
        },
        (err, stdout, stderr) => {
          running.delete(child);
          settle();
          if (err && (err as NodeJS.ErrnoException).code === "ENOENT") {
            reject(new Error(`${binary} not found on PATH${binary === "kubectl" ? " (set KUBECTL to its path)" : ""}`));
            return;
          }
          const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
          resolve({ code, stdout: String(stdout), stderr: String(stderr) });
        },
      );
      running.set(
        child,
        new Promise<void>((done) => {
          settle = done;
        }),
      );
      child.stdin?.on("error", () => undefined); // kubectl may exit before reading all of stdin
      child.stdin?.end(options.stdin ?? "");
    });
  return {
    run,
    async stopAll() {
      const exits = [...running.entries()].map(([child, exited]) => {
        child.kill("SIGKILL");
        return exited;
      });
      await Promise.all(exits);
    },
  };
}
