/**
 * What `capstan run` says when it cannot start because of the user's setup: one log record naming the
 * kubeconfig, context and server, without Capstan's stack unless --log-level debug; and what it says
 * when the operator's own code throws (the stack stays: that is a bug to find).
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { createServingCertificates } from "../../packages/capstan-dev/src/devcluster/tls.ts";
import { startTestCluster, type TestCluster } from "../../packages/capstan-dev/src/testing/index.ts";

const repo = new URL("../..", import.meta.url).pathname;
const bin = join(repo, "packages/capstan/bin/capstan.js");

/** A record line of the pretty format: `12:00:01.123 ERROR message fields`. */
const PRETTY_ERROR = /^\d\d:\d\d:\d\d\.\d{3} ERROR /;
/** A line of a JavaScript stack trace, as Node prints them (indented further by the pretty format). */
const STACK_LINE = /^\s+at /m;

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

function lines(text: string): string[] {
  return text.split("\n").filter((l) => l !== "");
}

/** A port with nothing listening on it right now (the kernel's pick, released again). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe("capstan run that cannot start", () => {
  let dir: string;
  let cluster: TestCluster;
  /** Accepts TCP connections and never answers, not even the TLS handshake. */
  let silent: Server;
  const silentSockets = new Set<Socket>();

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "capstan-startup-"));
    await writeFile(join(dir, "package.json"), '{ "type": "module" }\n');
    await symlink(join(repo, "node_modules"), join(dir, "node_modules"));
    // JavaScript, so that no TypeScript loader slows each start down.
    await writeFile(
      join(dir, "operator.mjs"),
      'import { operator } from "capstan";\nexport default operator({ name: "empty" });\n',
    );
    await writeFile(
      join(dir, "throws.mjs"),
      'import { operator } from "capstan";\nconst op = operator({ name: "broken" });\nop.on.create(undefined, async () => {});\nexport default op;\n',
    );
    cluster = await startTestCluster({ kubelet: false });
    silent = createServer((socket) => {
      silentSockets.add(socket);
      socket.once("close", () => silentSockets.delete(socket));
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  });
  afterAll(async () => {
    for (const socket of silentSockets) socket.destroy();
    await new Promise((resolve) => silent?.close(resolve));
    await cluster?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  function capstan(args: string[]): Promise<Outcome> {
    return new Promise((resolve) => {
      execFile(process.execPath, [bin, ...args], { cwd: dir, timeout: 60_000 }, (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === "number" ? err.code : null) : 0, stdout, stderr }),
      );
    });
  }

  /** Writes a kubeconfig `name` (context "test-context", user "test-user") for `server`. */
  async function kubeconfig(name: string, server: string, user: Record<string, unknown>, ca?: string): Promise<string> {
    const cluster: Record<string, unknown> = { server };
    if (ca !== undefined) cluster["certificate-authority-data"] = Buffer.from(ca).toString("base64");
    const config = {
      apiVersion: "v1",
      kind: "Config",
      "current-context": "test-context",
      clusters: [{ name: "test-cluster", cluster }],
      users: [{ name: "test-user", user }],
      contexts: [{ name: "test-context", context: { cluster: "test-cluster", user: "test-user" } }],
    };
    await writeFile(join(dir, name), stringifyYaml(config));
    return name;
  }

  /** Runs the operator with `kubeconfig` and expects exit 1 with exactly one pretty error record, and nothing on stderr. */
  async function failsWithOneLine(kubeconfigFile: string, extra: string[] = []): Promise<string> {
    const run = await capstan([
      "run",
      "operator.mjs",
      "--kubeconfig",
      kubeconfigFile,
      "--log-format",
      "pretty",
      ...extra,
    ]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe("");
    const out = lines(run.stdout);
    expect(out).toHaveLength(1);
    expect(out[0]).toMatch(PRETTY_ERROR);
    expect(run.stdout).not.toMatch(STACK_LINE);
    return out[0]!;
  }

  it("names a missing kubeconfig file in one line, in both log formats", async () => {
    const line = await failsWithOneLine("absent-kubeconfig");
    expect(line).toContain("cannot start: no usable cluster configuration");
    expect(line).toContain("kubeconfig file absent-kubeconfig does not exist");

    const json = await capstan(["run", "operator.mjs", "--kubeconfig", "absent-kubeconfig", "--log-format", "json"]);
    expect(json.code).toBe(1);
    expect(lines(json.stdout)).toHaveLength(1);
    const record = JSON.parse(json.stdout) as {
      level: number;
      msg: string;
      err: { type: string; message: string; stack?: string };
    };
    expect(record).toMatchObject({ level: 50, msg: "cannot start: no usable cluster configuration" });
    expect(record.err).toEqual({
      type: "ConfigError",
      name: "ConfigError",
      message: "kubeconfig file absent-kubeconfig does not exist",
    });
  }, 60_000);

  it("shows the stack of a configuration error with --log-level debug, in both log formats", async () => {
    const pretty = await capstan([
      "run",
      "operator.mjs",
      "--kubeconfig",
      "absent-kubeconfig",
      "--log-format",
      "pretty",
      "--log-level",
      "debug",
    ]);
    expect(pretty.code).toBe(1);
    expect(lines(pretty.stdout)[0]).toMatch(PRETTY_ERROR);
    expect(pretty.stdout).toMatch(/^ {4}ConfigError: kubeconfig file absent-kubeconfig does not exist$/m);
    expect(pretty.stdout).toMatch(STACK_LINE);

    const json = await capstan([
      "run",
      "operator.mjs",
      "--kubeconfig",
      "absent-kubeconfig",
      "--log-format",
      "json",
      "--log-level",
      "debug",
    ]);
    const record = JSON.parse(lines(json.stdout).at(-1)!) as { err: { stack?: string } };
    expect(record.err.stack).toMatch(/^ConfigError: kubeconfig file absent-kubeconfig does not exist\n\s+at /);
  }, 60_000);

  it("names a kubeconfig that is not valid YAML", async () => {
    await writeFile(join(dir, "broken-kubeconfig"), "clusters: [a\n");
    const line = await failsWithOneLine("broken-kubeconfig");
    expect(line).toContain("kubeconfig file broken-kubeconfig is not valid YAML");
  }, 60_000);

  it("names an unknown context and the kubeconfig file", async () => {
    const file = await kubeconfig("context-kubeconfig", cluster.url, { token: "x" });
    const line = await failsWithOneLine(file, ["--context", "staging"]);
    expect(line).toContain("cannot start: no usable cluster configuration");
    expect(line).toMatch(/context .*staging.* not found in kubeconfig context-kubeconfig/);
  }, 60_000);

  it("says the API server refused a wrong token, naming the server, the kubeconfig and its context", async () => {
    // The embedded server answers 401 to a bearer token it did not issue, as kube-apiserver does (even on /version).
    const admin = parseYaml(cluster.kubeconfig) as {
      clusters: { cluster: { "certificate-authority-data": string } }[];
    };
    const ca = Buffer.from(admin.clusters[0]!.cluster["certificate-authority-data"], "base64").toString();
    const file = await kubeconfig("wrong-token-kubeconfig", cluster.url, { token: "not-the-token" }, ca);
    const line = await failsWithOneLine(file);
    expect(line).toContain("cannot start: the API server refused the credentials");
    expect(line).toContain(`cluster=${cluster.url}`);
    expect(line).toContain('source="kubeconfig wrong-token-kubeconfig context test-context"');
  }, 60_000);

  it("says the connection was refused, naming the server", async () => {
    const server = `https://127.0.0.1:${await freePort()}`;
    const file = await kubeconfig("refused-kubeconfig", server, { token: "x" });
    const line = await failsWithOneLine(file);
    expect(line).toContain(
      `cannot start: cannot reach the API server err="cannot connect to ${server}: connection refused`,
    );
    expect(line).toContain('source="kubeconfig refused-kubeconfig context test-context"');
  }, 60_000);

  it("says the server's host name does not resolve", async () => {
    // .invalid never resolves (RFC 6761); without a resolver at all it is a temporary failure: both say so.
    const file = await kubeconfig("dns-kubeconfig", "https://capstan-test.invalid:6443", { token: "x" });
    const line = await failsWithOneLine(file);
    expect(line).toContain(
      'cannot start: cannot reach the API server err="cannot connect to https://capstan-test.invalid:6443: host name \\"capstan-test.invalid\\"',
    );
  }, 60_000);

  it("says the server's certificate does not verify with the kubeconfig's CA", async () => {
    const otherCa = (await createServingCertificates()).caPem;
    const file = await kubeconfig("wrong-ca-kubeconfig", cluster.url, { token: "x" }, otherCa);
    const line = await failsWithOneLine(file);
    expect(line).toContain(`err="cannot connect to ${cluster.url}: its TLS certificate does not verify`);
    expect(line).toContain("certificate-authority");
  }, 60_000);

  it("says the server did not answer in time", async () => {
    const server = `https://127.0.0.1:${(silent.address() as { port: number }).port}`;
    const file = await kubeconfig("silent-kubeconfig", server, { token: "x" });
    const line = await failsWithOneLine(file);
    expect(line).toContain(`err="cannot connect to ${server}: timed out`);
  }, 60_000); // undici's connect timeout is 10 s

  it("keeps the stack of an exception thrown by the operator module's own code", async () => {
    const file = await kubeconfig("ok-kubeconfig", cluster.url, { token: "x" });
    const run = await capstan(["run", "throws.mjs", "--kubeconfig", file, "--log-format", "pretty"]);
    expect(run.code).toBe(1);
    expect(lines(run.stdout)[0]).toMatch(PRETTY_ERROR);
    expect(lines(run.stdout)[0]).toContain("cannot start: the operator module cannot be used");
    expect(run.stdout).toMatch(/^\s+at .*throws\.mjs:3:/m);
  }, 60_000);
});
