/**
 * One control-plane binary (etcd, kube-apiserver, kube-controller-manager) run as a child process,
 * as controller-runtime's envtest runs each (pkg/internal/testing/process/process.go): started, polled
 * until a health endpoint answers 200, and stopped with SIGTERM, then SIGKILL past a bound.
 *
 * ## Expected flow
 * 1. {@link startProcess} spawns the binary and polls its readiness probe every
 *    {@link READY_POLL_INTERVAL_MS} until it answers, the process exits, or the start timeout passes.
 * 2. {@link ControlPlaneProcess.stop} once the process is no longer needed.
 *
 * ## Guarantees
 * - `startProcess` resolves only once the probe succeeded. When it rejects, the process is gone:
 *   it exited by itself (the error gives its exit code and last log lines) or, past the start
 *   timeout, it was stopped as `stop` stops it (the error gives the last probe answer and its last
 *   log lines). Envtest only sends SIGTERM there; a process that ignores it would outlive the test.
 * - `stop` resolves once the process has exited: SIGTERM, and SIGKILL when it is still running
 *   after the stop timeout. No timer or listener of it remains afterwards.
 * - A process still running when Node exits (a test runner killed mid-run, a `stop` never called)
 *   gets a SIGKILL from an `exit` listener installed while any process runs.
 *
 * ## Caveats
 * - Only the last {@link LOG_TAIL_LINES} lines of its output are kept, for error messages.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * How often readiness is polled: envtest's default (`HealthCheck.PollInterval`). A start of one to a
 * few seconds is then seen within a tenth of a second, with a few dozen requests.
 */
export const READY_POLL_INTERVAL_MS = 100;

/**
 * How long one probe request may take: a process that accepts the connection but does not answer
 * within a second is not ready; the next poll tries again.
 */
const PROBE_REQUEST_TIMEOUT_MS = 1_000;

/** Log lines kept per process: enough to hold a Go program's fatal error and the lines that led to it. */
export const LOG_TAIL_LINES = 30;

/** What a readiness probe saw: ready, or why not (shown when the process never becomes ready). */
export interface ProbeResult {
  readonly ok: boolean;
  readonly detail: string;
}

/** How to start one control-plane process. */
export interface ProcessSpec {
  /** The component's name in messages: `etcd`, `kube-apiserver`, `kube-controller-manager`. */
  readonly name: string;
  readonly path: string;
  readonly args: readonly string[];
  /** One readiness check; polled until `ok`. */
  readonly probe: () => Promise<ProbeResult>;
  readonly startTimeoutMs: number;
  /** How long `stop` waits after SIGTERM before SIGKILL; also used when the start times out. */
  readonly stopTimeoutMs: number;
}

/** A control-plane process that became ready. */
export interface ControlPlaneProcess {
  readonly name: string;
  readonly pid: number;
  readonly args: readonly string[];
  /** The last lines it wrote to stdout and stderr. */
  logTail(): string[];
  /** SIGTERM, then SIGKILL after the stop timeout; resolves once it has exited. Idempotent. */
  stop(): Promise<void>;
}

/** A control-plane process that could not be started, exited early or never became ready. */
export class ControlPlaneError extends Error {
  override readonly name = "ControlPlaneError";
  constructor(
    readonly component: string,
    message: string,
    readonly logTail: readonly string[],
  ) {
    super(`${message}${formatTail(logTail)}`);
  }
}

function formatTail(lines: readonly string[]): string {
  if (lines.length === 0) return "; it wrote nothing";
  return `; its last log lines:\n${lines.map((l) => `  ${l}`).join("\n")}`;
}

/** Starts `spec` and waits until it is ready; see the module documentation. */
export async function startProcess(spec: ProcessSpec): Promise<ControlPlaneProcess> {
  const tail = new LogTail(LOG_TAIL_LINES);
  const child = spawn(spec.path, spec.args, { stdio: ["ignore", "pipe", "pipe"] });
  child.stdout?.on("data", (chunk: Buffer) => tail.push(chunk));
  child.stderr?.on("data", (chunk: Buffer) => tail.push(chunk));
  const exit = watchExit(child);
  if (child.pid !== undefined) track(child);

  const stop = async (): Promise<void> => {
    if (exit.state === undefined) {
      child.kill("SIGTERM");
      const ac = new AbortController();
      const timedOut = await Promise.race([
        exit.done.then(() => false),
        sleep(spec.stopTimeoutMs, true, { signal: ac.signal }).catch(() => false),
      ]);
      ac.abort();
      if (timedOut) child.kill("SIGKILL");
    }
    await exit.done;
    untrack(child);
  };

  try {
    await waitReady(spec, exit, tail);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    name: spec.name,
    pid: child.pid as number,
    args: spec.args,
    logTail: () => tail.lines(),
    stop,
  };
}

interface ExitWatch {
  /** How it ended, once it did. */
  state: string | undefined;
  /** Resolves once it has ended (or could not be spawned). */
  readonly done: Promise<void>;
}

/**
 * After its exit, how long to wait for the rest of its output: the pipes close at once unless a
 * process it started still holds them, which must not hold up a stop.
 */
const OUTPUT_DRAIN_MS = 1_000;

function watchExit(child: ChildProcess): ExitWatch {
  const watch: { state: string | undefined; done: Promise<void> } = { state: undefined, done: Promise.resolve() };
  watch.done = new Promise<void>((resolve) => {
    // "close" comes once its output is read too: the last log lines, which the errors show.
    child.once("close", () => resolve());
    child.once("exit", (code, signal) => {
      watch.state = signal === null ? `exited with code ${code}` : `was killed by ${signal}`;
      const drained = setTimeout(resolve, OUTPUT_DRAIN_MS);
      child.once("close", () => clearTimeout(drained));
    });
    // ENOENT, EACCES: no process was made, so there is no exit event to wait for.
    child.once("error", (err) => {
      if (child.pid === undefined) {
        watch.state = `could not be started: ${err.message}`;
        resolve();
      }
    });
  });
  return watch;
}

async function waitReady(spec: ProcessSpec, exit: ExitWatch, tail: LogTail): Promise<void> {
  const deadline = Date.now() + spec.startTimeoutMs;
  let last = "it has not answered yet";
  for (;;) {
    if (exit.state !== undefined) {
      throw new ControlPlaneError(
        spec.name,
        `${spec.name} (${spec.path}) ${exit.state} before it was ready`,
        tail.lines(),
      );
    }
    const result = await Promise.race([spec.probe(), exit.done.then(() => undefined)]);
    if (result?.ok === true) return;
    if (result !== undefined) last = result.detail;
    if (exit.state !== undefined) continue;
    const remaining = deadline - Date.now();
    if (remaining <= 0) {
      throw new ControlPlaneError(
        spec.name,
        `${spec.name} (${spec.path}) did not become ready within ${spec.startTimeoutMs} ms (last check: ${last}), ` +
          "so it was stopped (a larger startTimeout, or KUBEBUILDER_CONTROLPLANE_START_TIMEOUT, gives it longer)",
        tail.lines(),
      );
    }
    const ac = new AbortController();
    await Promise.race([
      sleep(Math.min(READY_POLL_INTERVAL_MS, remaining), undefined, { signal: ac.signal }).catch(() => undefined),
      exit.done,
    ]);
    ac.abort();
  }
}

/** A GET answered 200: what envtest's poller asks of `/health`, `/healthz` and `/readyz`. */
export function httpProbe(
  url: string,
  options: { ca?: string; token?: string; insecure?: boolean } = {},
): () => Promise<ProbeResult> {
  const target = new URL(url);
  const request = target.protocol === "https:" ? httpsRequest : httpRequest;
  return () =>
    new Promise<ProbeResult>((resolve) => {
      const req = request(
        target,
        {
          method: "GET",
          // No keep-alive: a pooled socket would outlive the start.
          agent: false,
          timeout: PROBE_REQUEST_TIMEOUT_MS,
          headers: options.token === undefined ? {} : { authorization: `Bearer ${options.token}` },
          ...(target.protocol === "https:" ? { ca: options.ca, rejectUnauthorized: options.insecure !== true } : {}),
        },
        (res) => {
          let body = "";
          res.setEncoding("utf8");
          res.on("data", (d: string) => {
            if (body.length < 2_000) body += d;
          });
          res.on("end", () =>
            resolve({
              ok: res.statusCode === 200,
              detail: `GET ${target.pathname} answered ${res.statusCode}${body === "" ? "" : `: ${oneLine(body)}`}`,
            }),
          );
          res.on("error", (err) => resolve({ ok: false, detail: `GET ${target.pathname}: ${err.message}` }));
        },
      );
      req.on("timeout", () => req.destroy(new Error(`no answer within ${PROBE_REQUEST_TIMEOUT_MS} ms`)));
      req.on("error", (err) => resolve({ ok: false, detail: `GET ${target.href}: ${err.message}` }));
      req.end();
    });
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 300 ? `${flat.slice(0, 300)}...` : flat;
}

/** The last lines of a process's output. */
class LogTail {
  readonly #max: number;
  readonly #lines: string[] = [];
  #partial = "";
  constructor(max: number) {
    this.#max = max;
  }
  push(chunk: Buffer): void {
    const parts = (this.#partial + chunk.toString("utf8")).split("\n");
    this.#partial = parts.pop() ?? "";
    for (const line of parts) if (line.trim() !== "") this.#lines.push(line);
    if (this.#lines.length > this.#max) this.#lines.splice(0, this.#lines.length - this.#max);
  }
  lines(): string[] {
    const all = this.#partial.trim() === "" ? [...this.#lines] : [...this.#lines, this.#partial];
    return all.slice(-this.#max);
  }
}

// Processes still running, killed if Node exits before their `stop` (see Guarantees).
const running = new Set<ChildProcess>();
const killRunning = () => {
  for (const child of running) child.kill("SIGKILL");
};

function track(child: ChildProcess): void {
  if (running.size === 0) process.on("exit", killRunning);
  running.add(child);
}

function untrack(child: ChildProcess): void {
  if (!running.delete(child)) return;
  if (running.size === 0) process.off("exit", killRunning);
}
