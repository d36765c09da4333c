/**
 * Exec credential plugins (`users[].user.exec` in a kubeconfig: `aws eks get-token`,
 * `gke-gcloud-auth-plugin`, `kubelogin`, ...), run the way client-go's
 * `plugin/pkg/client/auth/exec` runs them, for apiVersion `client.authentication.k8s.io/v1` and `v1beta1`.
 *
 * Expected flow: the first `headers()` runs the command with the kubeconfig's `args` and `env` on top of
 * our environment, plus `KUBERNETES_EXEC_INFO`: an `ExecCredential` whose `spec.interactive` is false and,
 * with `provideClusterInfo`, whose `spec.cluster` holds the server, CA data, TLS server name, insecure
 * flag, proxy URL and the cluster's `client.authentication.k8s.io/exec` extension as `config`. The plugin
 * prints an `ExecCredential` whose `status` holds a `token`, or `clientCertificateData` and
 * `clientKeyData`, and optionally an `expirationTimestamp`.
 *
 * Guarantees:
 * - The credential is reused until its `expirationTimestamp` (without one: until a 401), exactly as
 *   client-go caches it; `invalidate()` (after a 401) makes the next `headers()` run the plugin again.
 * - Requests that find the cache stale at the same moment share one run.
 * - A run that takes longer than `execTimeoutMs` is killed and fails.
 * - A failure names the kubeconfig user and the command, with the plugin's stderr (trimmed, on one
 *   line); a missing command says so, with the kubeconfig's `installHint`.
 *
 * Assumptions: no terminal. An operator has no one to type into a plugin's prompt, so `interactiveMode:
 * IfAvailable` runs it without stdin (as client-go does when stdin is not a terminal) and `Always` is
 * refused at load time (`execConfigProblems`).
 *
 * Caveats: the plugin's stderr is captured for the error message, not passed through. client-go's plugin
 * policy (allowlist) is not implemented: Capstan runs the plugin the kubeconfig names, as kubectl does by
 * default.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { basename } from "node:path";
import { describeClientCertificate } from "./client-certificate.ts";
import { CredentialError } from "./credential-error.ts";
import type { ClientCertificate, Credentials, HeaderRecord } from "./credentials.ts";

/** The ExecCredential versions client-go still accepts (v1alpha1 is gone). */
export const execApiVersions: readonly string[] = [
  "client.authentication.k8s.io/v1",
  "client.authentication.k8s.io/v1beta1",
];

/** A kubeconfig user's `exec` section (relative commands already resolved against the kubeconfig's folder). */
export interface ExecConfig {
  apiVersion?: string;
  command?: string;
  args: string[];
  env: { name: string; value: string }[];
  installHint?: string;
  /** `Never`, `IfAvailable` or `Always`; client-go defaults it to `IfAvailable` for v1beta1 only. */
  interactiveMode?: string;
  provideClusterInfo: boolean;
}

/** `spec.cluster` of `KUBERNETES_EXEC_INFO` (client.authentication.k8s.io `Cluster`, JSON names). */
export interface ExecClusterInfo {
  server: string;
  "tls-server-name"?: string;
  "insecure-skip-tls-verify"?: boolean;
  /** Base64 of the CA bundle's PEM, as Go encodes a `[]byte`. */
  "certificate-authority-data"?: string;
  "proxy-url"?: string;
  "disable-compression"?: boolean;
  /** The cluster's `client.authentication.k8s.io/exec` extension. */
  config?: unknown;
}

/**
 * What client-go's kubeconfig validation would refuse in `exec` (one message per problem), plus
 * `interactiveMode: Always`, which needs a terminal an operator does not have. Empty when usable.
 */
export function execConfigProblems(exec: ExecConfig): string[] {
  const problems: string[] = [];
  if (!exec.command) problems.push("exec.command must be specified to use an exec credential plugin");
  if (!exec.apiVersion) problems.push("exec.apiVersion must be specified to use an exec credential plugin");
  else if (!execApiVersions.includes(exec.apiVersion)) {
    problems.push(`exec.apiVersion "${exec.apiVersion}" is not supported (use one of ${execApiVersions.join(", ")})`);
  }
  if (exec.env.some((e) => !e.name)) problems.push("exec.env entries must have a name");
  const mode = interactiveModeOf(exec);
  if (mode === "") problems.push("exec.interactiveMode must be specified (Never, IfAvailable or Always)");
  else if (mode === "Always") {
    problems.push(
      "exec.interactiveMode is Always, but an operator has no terminal for the plugin to prompt on: log in beforehand or make the plugin non-interactive (interactiveMode: Never)",
    );
  } else if (mode !== "Never" && mode !== "IfAvailable") {
    problems.push(`exec.interactiveMode "${mode}" is invalid (Never, IfAvailable or Always)`);
  }
  return problems;
}

/** client-go's defaulting: v1beta1 (and the old v1alpha1) default to IfAvailable, v1 must say. */
function interactiveModeOf(exec: ExecConfig): string {
  if (exec.interactiveMode) return exec.interactiveMode;
  return exec.apiVersion?.endsWith("/v1beta1") || exec.apiVersion?.endsWith("/v1alpha1") ? "IfAvailable" : "";
}

/**
 * How long one plugin run may take before it is killed. Cloud CLIs answer in one to a few seconds, even
 * when they first fetch a token over the network; one minute (the API server's own request timeout) is
 * long past that, so a run still going is waiting for something that will not come (a browser login, a
 * prompt), and every request behind it would wait with it.
 */
export const execTimeoutMs = 60_000;

/** At most this much of stderr is kept for the error message (its end, where the reason usually is). */
const maxStderrChars = 2048;

/** Options of `ExecCredentials`. */
export interface ExecCredentialsOptions {
  /** Kubeconfig user name, for messages. */
  user: string;
  exec: ExecConfig;
  /** `spec.cluster` of KUBERNETES_EXEC_INFO; sent only when `exec.provideClusterInfo` is set. */
  cluster?: ExecClusterInfo;
  /** More headers to send with the credential (impersonation). */
  extra?: HeaderRecord;
  /** For messages; `exec plugin <command name> of kubeconfig user "<user>"` by default. */
  description?: string;
  /** Override of `execTimeoutMs`. */
  timeoutMs?: number;
  /** The environment the plugin inherits (before the kubeconfig's `env`); `process.env` by default. */
  env?: NodeJS.ProcessEnv;
}

interface Cached {
  headers: HeaderRecord;
  certificate: ClientCertificate | undefined;
  /** Epoch ms of `expirationTimestamp`; undefined: valid until a 401. */
  expiresAt: number | undefined;
}

/** Credentials from an exec credential plugin (see the module comment). */
export class ExecCredentials implements Credentials {
  readonly description: string;
  readonly #opts: ExecCredentialsOptions;
  readonly #command: string;
  /** `exec plugin "<command>" of kubeconfig user "<user>"`: how errors start. */
  readonly #who: string;
  #cached: Cached | undefined;
  #stale = false;
  #pending: Promise<HeaderRecord> | undefined;

  constructor(opts: ExecCredentialsOptions) {
    this.#opts = opts;
    this.#command = opts.exec.command ?? "";
    this.description = opts.description ?? `exec plugin ${basename(this.#command)} of kubeconfig user "${opts.user}"`;
    this.#who = `exec plugin ${this.#command} of kubeconfig user "${opts.user}"`;
  }

  headers(): HeaderRecord | Promise<HeaderRecord> {
    const c = this.#cached;
    // client-go: expired once the clock is past expirationTimestamp, no leeway.
    if (c && !this.#stale && (c.expiresAt === undefined || Date.now() <= c.expiresAt)) return c.headers;
    // One plugin run for all the requests that find the cache stale at once.
    this.#pending ??= this.#refresh().finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  invalidate(): boolean {
    // A run under way already brings a fresh credential; the 401 was for an older one.
    if (this.#pending === undefined) this.#stale = true;
    return true;
  }

  clientCertificate(): ClientCertificate | undefined {
    return this.#cached?.certificate;
  }

  async #refresh(): Promise<HeaderRecord> {
    const stdout = await this.#run();
    const status = this.#decode(stdout);
    const headers: HeaderRecord = { ...this.#opts.extra };
    if (status.token) headers.authorization = `Bearer ${status.token}`;
    let certificate: ClientCertificate | undefined;
    if (status.clientCertificateData && status.clientKeyData) {
      certificate = { cert: status.clientCertificateData, key: status.clientKeyData };
      try {
        describeClientCertificate(certificate.cert, certificate.key);
      } catch (err) {
        throw new CredentialError(`${this.#who} returned an unusable client certificate: ${(err as Error).message}`, {
          cause: err,
        });
      }
    }
    this.#cached = { headers, certificate, expiresAt: status.expiresAt };
    this.#stale = false;
    return headers;
  }

  /** The ExecCredential client-go writes to KUBERNETES_EXEC_INFO. */
  #execInfo(): string {
    const { exec, cluster } = this.#opts;
    const spec: { cluster?: ExecClusterInfo; interactive: boolean } = { interactive: false };
    if (exec.provideClusterInfo && cluster) spec.cluster = cluster;
    return JSON.stringify({ kind: "ExecCredential", apiVersion: exec.apiVersion, spec });
  }

  /** Runs the plugin; resolves with its stdout, rejects with a message naming user, command and stderr. */
  #run(): Promise<string> {
    const { exec } = this.#opts;
    const env: NodeJS.ProcessEnv = { ...(this.#opts.env ?? process.env) };
    for (const e of exec.env) env[e.name] = e.value;
    env.KUBERNETES_EXEC_INFO = this.#execInfo();
    const timeoutMs = this.#opts.timeoutMs ?? execTimeoutMs;
    return new Promise<string>((resolve, reject) => {
      let settled = false;
      const out: Buffer[] = [];
      let err = "";
      let child: ChildProcess | undefined;
      const finish = (error: Error | undefined) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (error) reject(error);
        else resolve(Buffer.concat(out).toString("utf8"));
      };
      const timer = setTimeout(() => {
        child?.kill("SIGKILL");
        // Do not wait for "close": a grandchild the plugin started may hold its stdout open for good.
        child?.stdout?.destroy();
        child?.stderr?.destroy();
        finish(
          new CredentialError(
            `${this.#who} did not finish within ${timeoutMs / 1000} s and was killed${stderrPart(err)}`,
          ),
        );
      }, timeoutMs);
      try {
        child = spawn(this.#command, exec.args, { env, stdio: ["ignore", "pipe", "pipe"], windowsHide: true });
      } catch (e) {
        finish(this.#spawnError(e as NodeJS.ErrnoException));
        return;
      }
      child.stdout?.on("data", (chunk: Buffer) => out.push(chunk));
      child.stderr?.setEncoding("utf8");
      child.stderr?.on("data", (chunk: string) => {
        err = (err + chunk).slice(-4 * maxStderrChars);
      });
      child.on("error", (e: NodeJS.ErrnoException) => finish(this.#spawnError(e)));
      child.on("close", (code, signal) => {
        if (code === 0) finish(undefined);
        else if (signal) finish(new CredentialError(`${this.#who} was killed by ${signal}${stderrPart(err)}`));
        else finish(new CredentialError(`${this.#who} failed with exit code ${code}${stderrPart(err)}`));
      });
    });
  }

  #spawnError(e: NodeJS.ErrnoException): Error {
    if (e.code === "ENOENT") {
      // client-go: "exec: executable %s not found", then the kubeconfig's installHint.
      const hint = oneLine(this.#opts.exec.installHint ?? "");
      return new CredentialError(
        `${this.#who}: executable ${this.#command} not found; ${
          hint || "it looks like a client-go credential plugin that is not installed"
        }`,
        { cause: e },
      );
    }
    return new CredentialError(`${this.#who} could not be started: ${e.message}`, { cause: e });
  }

  /** Checks the plugin's output as client-go does and returns its status. */
  #decode(stdout: string): {
    token?: string;
    clientCertificateData?: string;
    clientKeyData?: string;
    expiresAt?: number;
  } {
    let cred: unknown;
    try {
      cred = JSON.parse(stdout);
    } catch (e) {
      throw new CredentialError(`${this.#who} printed no ExecCredential: decoding stdout: ${(e as Error).message}`);
    }
    const obj = (typeof cred === "object" && cred !== null ? cred : {}) as Record<string, unknown>;
    if (obj.kind !== "ExecCredential") {
      throw new CredentialError(`${this.#who} printed no ExecCredential: kind is ${JSON.stringify(obj.kind ?? null)}`);
    }
    if (obj.apiVersion !== this.#opts.exec.apiVersion) {
      throw new CredentialError(
        `${this.#who} is configured to use API version ${this.#opts.exec.apiVersion}, plugin returned version ${String(obj.apiVersion)}`,
      );
    }
    const status = obj.status as Record<string, unknown> | undefined | null;
    if (typeof status !== "object" || status === null)
      throw new CredentialError(`${this.#who} didn't return a status field`);
    const str = (field: string): string | undefined => {
      const v = status[field];
      if (v === undefined || v === null || v === "") return undefined;
      if (typeof v !== "string")
        throw new CredentialError(`${this.#who} returned a status.${field} that is not a string`);
      return v;
    };
    const token = str("token");
    const clientCertificateData = str("clientCertificateData");
    const clientKeyData = str("clientKeyData");
    if (!token && !clientCertificateData && !clientKeyData) {
      throw new CredentialError(`${this.#who} didn't return a token or cert/key pair`);
    }
    if (!clientCertificateData !== !clientKeyData) {
      throw new CredentialError(`${this.#who} returned only certificate or key, not both`);
    }
    const expiration = str("expirationTimestamp");
    let expiresAt: number | undefined;
    if (expiration !== undefined) {
      expiresAt = Date.parse(expiration);
      if (Number.isNaN(expiresAt)) {
        throw new CredentialError(`${this.#who} returned an expirationTimestamp that is not RFC 3339: ${expiration}`);
      }
    }
    return { token, clientCertificateData, clientKeyData, expiresAt };
  }
}

/** `: <stderr>` trimmed and on one line (its end when long), or nothing when the plugin printed none. */
function stderrPart(stderr: string): string {
  let text = oneLine(stderr);
  if (text.length > maxStderrChars) text = `…${text.slice(-maxStderrChars)}`;
  return text === "" ? "" : `: ${text}`;
}

function oneLine(text: string): string {
  return text.trim().replace(/\s*\n\s*/g, " | ");
}
