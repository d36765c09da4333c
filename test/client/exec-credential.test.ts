import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { waitUntil } from "capstan-dev/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { ConfigError, loadClientConfig } from "../../packages/capstan/src/client/config.ts";
import { ExecCredentials } from "../../packages/capstan/src/client/exec-credential.ts";
import { KubeClient } from "../../packages/capstan/src/client/resource-client.ts";
import { ConfigMapKind } from "./support/client.ts";
import { execPlugin, printCredential, tempDir, writeKubeconfig } from "./support/kubeconfig.ts";
import {
  json,
  type RecordingHttpsServer,
  startRecordingHttpsServer,
  status,
} from "./support/recording-https-server.ts";

let server: RecordingHttpsServer;
let tmp: ReturnType<typeof tempDir>;
const clients: KubeClient[] = [];
/** Bearer tokens the test server accepts on GET configmaps/a. */
let accepted = new Set<string>();

beforeAll(async () => {
  server = await startRecordingHttpsServer();
  server.on("GET", "/api/v1/namespaces/ns1/configmaps/a", (r, res) => {
    const auth = r.headers.authorization ?? "";
    if (accepted.has(auth.replace(/^Bearer /, "")) || r.clientCn) json(res, 200, { metadata: { name: "a" } });
    else json(res, 401, status(401, "Unauthorized", "Unauthorized"));
  });
});
afterAll(async () => {
  await server.close();
});
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  vi.useRealTimers();
  tmp?.remove();
  accepted = new Set();
});

function dir(): string {
  tmp = tempDir("capstan-exec-");
  return tmp.dir;
}

function kubeconfigWith(d: string, exec: Record<string, unknown>, userName = "u", cluster = {}): string {
  return writeKubeconfig(d, { server: server.url, caPem: server.pki.caPem, userName, user: { exec }, cluster });
}

function client(path: string): KubeClient {
  const c = new KubeClient(loadClientConfig({ kubeconfig: path, env: {} }), { retry: false });
  clients.push(c);
  return c;
}

/** Plugin code: counts its runs in $COUNTER and prints token "<prefix><run number>". */
const countingPlugin = (prefix: string, apiVersion?: string) => `
fs.appendFileSync(env.COUNTER, "x");
const n = fs.readFileSync(env.COUNTER, "utf8").length;
process.stdout.write(JSON.stringify({ apiVersion: ${JSON.stringify(apiVersion ?? "client.authentication.k8s.io/v1")}, kind: "ExecCredential", status: { token: "${prefix}" + n } }));`;

describe("exec credential plugins", () => {
  it("runs a v1 plugin once for concurrent requests, reuses its token, and runs it again after a 401", async () => {
    const d = dir();
    const counter = join(d, "runs");
    writeFileSync(counter, "");
    const path = kubeconfigWith(
      d,
      execPlugin(d, "plugin", countingPlugin("exec-"), { env: [{ name: "COUNTER", value: counter }] }),
    );
    accepted.add("exec-1");
    const cms = client(path).resource(ConfigMapKind, "ns1");
    await Promise.all([cms.get("a"), cms.get("a"), cms.get("a"), cms.get("a")]);
    await cms.get("a");
    expect(readFileSync(counter, "utf8")).toBe("x"); // one run for five requests
    expect(server.requests.at(-1)!.headers.authorization).toBe("Bearer exec-1");

    accepted = new Set(["exec-2"]); // the server stops accepting the first token
    await expect(cms.get("a")).resolves.toMatchObject({ metadata: { name: "a" } });
    expect(readFileSync(counter, "utf8")).toBe("xx");
    expect(server.requests.at(-1)!.headers.authorization).toBe("Bearer exec-2");
  });

  it("runs a v1beta1 plugin (interactiveMode defaults to IfAvailable) with its args and env", async () => {
    const d = dir();
    const counter = join(d, "runs");
    writeFileSync(counter, "");
    const exec = execPlugin(d, "beta", countingPlugin("beta-", "client.authentication.k8s.io/v1beta1"), {
      apiVersion: "client.authentication.k8s.io/v1beta1",
      env: [{ name: "COUNTER", value: counter }],
    });
    delete exec.interactiveMode;
    accepted.add("beta-1");
    await client(kubeconfigWith(d, exec)).resource(ConfigMapKind, "ns1").get("a");
    expect(server.requests.at(-1)!.headers.authorization).toBe("Bearer beta-1");
  });

  it("passes KUBERNETES_EXEC_INFO with the cluster (server, CA, TLS name, insecure flag, exec extension) when provideClusterInfo is set", async () => {
    const d = dir();
    const seen = join(d, "seen.json");
    const body = `fs.writeFileSync(${JSON.stringify(seen)}, JSON.stringify({ info: JSON.parse(env.KUBERNETES_EXEC_INFO), args: process.argv.slice(2), greeting: env.GREETING }));
${printCredential({ token: "t" })}`;
    const extension = { apiVersion: "example.com/v1", kind: "PluginConfig", spec: { audience: "capstan" } };
    const withInfo = execPlugin(d, "info", body, {
      provideClusterInfo: true,
      env: [{ name: "GREETING", value: "hello" }],
    });
    (withInfo.args as string[]).push("--region", "eu");
    const path = kubeconfigWith(d, withInfo, "u", {
      "tls-server-name": "localhost",
      extensions: [
        { name: "client.authentication.k8s.io/exec", extension },
        { name: "other", extension: { ignored: true } },
      ],
    });
    await loadClientConfig({ kubeconfig: path, env: {} }).credentials.headers();
    expect(JSON.parse(readFileSync(seen, "utf8"))).toEqual({
      info: {
        kind: "ExecCredential",
        apiVersion: "client.authentication.k8s.io/v1",
        spec: {
          cluster: {
            server: server.url,
            "tls-server-name": "localhost",
            "certificate-authority-data": Buffer.from(server.pki.caPem).toString("base64"),
            config: extension,
          },
          interactive: false,
        },
      },
      args: ["--region", "eu"],
      greeting: "hello",
    });

    const insecure = (provideClusterInfo: boolean) =>
      writeKubeconfig(
        d,
        {
          server: server.url,
          cluster: { "insecure-skip-tls-verify": true },
          user: { exec: execPlugin(d, "info", body, { provideClusterInfo }) },
        },
        "insecure",
      );
    await loadClientConfig({ kubeconfig: insecure(true), env: {} }).credentials.headers();
    expect(JSON.parse(readFileSync(seen, "utf8")).info.spec).toEqual({
      cluster: { server: server.url, "insecure-skip-tls-verify": true },
      interactive: false,
    });
    // Without provideClusterInfo the plugin learns nothing about the cluster.
    await loadClientConfig({ kubeconfig: insecure(false), env: {} }).credentials.headers();
    expect(JSON.parse(readFileSync(seen, "utf8")).info).toEqual({
      kind: "ExecCredential",
      apiVersion: "client.authentication.k8s.io/v1",
      spec: { interactive: false },
    });
  });

  it("presents the client certificate an exec plugin returns (mutual TLS)", async () => {
    const d = dir();
    const exec = execPlugin(
      d,
      "cert",
      printCredential({ clientCertificateData: server.pki.clientCertPem, clientKeyData: server.pki.clientKeyPem }),
    );
    const c = await KubeClient.load({ kubeconfig: kubeconfigWith(d, exec), env: {} });
    clients.push(c);
    await c.resource(ConfigMapKind, "ns1").get("a");
    expect(server.requests.at(-1)!.clientCn).toBe("test-user");
    expect(server.requests.at(-1)!.headers.authorization).toBeUndefined();
  });

  it("runs the plugin again once the credential's expirationTimestamp has passed, not before", async () => {
    const d = dir();
    const counter = join(d, "runs");
    writeFileSync(counter, "");
    vi.useFakeTimers({ toFake: ["Date"] });
    const expires = new Date(Date.now() + 60_000).toISOString();
    const body = `fs.appendFileSync(env.COUNTER, "x");
const n = fs.readFileSync(env.COUNTER, "utf8").length;
process.stdout.write(JSON.stringify({ apiVersion: "client.authentication.k8s.io/v1", kind: "ExecCredential", status: { token: "t" + n, expirationTimestamp: env.EXPIRES } }));`;
    const path = kubeconfigWith(
      d,
      execPlugin(d, "expiring", body, {
        env: [
          { name: "COUNTER", value: counter },
          { name: "EXPIRES", value: expires },
        ],
      }),
    );
    const creds = loadClientConfig({ kubeconfig: path, env: {} }).credentials;
    await expect(creds.headers()).resolves.toEqual({ authorization: "Bearer t1" });
    vi.setSystemTime(Date.now() + 59_000);
    expect(creds.headers()).toEqual({ authorization: "Bearer t1" }); // cached: answered synchronously
    vi.setSystemTime(Date.now() + 2_000);
    await expect(creds.headers()).resolves.toEqual({ authorization: "Bearer t2" });
    expect(readFileSync(counter, "utf8")).toBe("xx");
  });

  it("fails the load naming the user and the command, with the plugin's stderr trimmed onto one line", async () => {
    const d = dir();
    const exec = execPlugin(
      d,
      "failing",
      `process.stderr.write("\\n  token expired\\n  run: login now  \\n"); process.exit(3);`,
    );
    const err = await KubeClient.load({ kubeconfig: kubeconfigWith(d, exec, "robot"), env: {} }).catch((e) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toBe(
      `exec plugin ${process.execPath} of kubeconfig user "robot" failed with exit code 3: token expired | run: login now`,
    );
  });

  it("says the command is not installed, with the kubeconfig's installHint", async () => {
    const d = dir();
    const path = kubeconfigWith(
      d,
      {
        apiVersion: "client.authentication.k8s.io/v1",
        command: "capstan-test-no-such-plugin",
        interactiveMode: "Never",
        installHint: "capstan-test-no-such-plugin is required.\nInstall it with: brew install it",
      },
      "eks",
    );
    await expect(loadClientConfig({ kubeconfig: path, env: {} }).credentials.headers()).rejects.toThrow(
      'exec plugin capstan-test-no-such-plugin of kubeconfig user "eks": executable capstan-test-no-such-plugin not found; capstan-test-no-such-plugin is required. | Install it with: brew install it',
    );
  });

  it("kills a plugin that does not answer within the timeout", async () => {
    const d = dir();
    const pidFile = join(d, "pid");
    // A shell that records its pid and becomes a long sleep: it starts in milliseconds even on a busy machine.
    const creds = new ExecCredentials({
      user: "slow",
      exec: {
        apiVersion: "client.authentication.k8s.io/v1",
        command: "/bin/sh",
        args: ["-c", `echo $$ > ${pidFile}; exec sleep 60`],
        env: [],
        provideClusterInfo: false,
      },
      timeoutMs: 1_000,
    });
    await expect(creds.headers()).rejects.toThrow(
      'exec plugin /bin/sh of kubeconfig user "slow" did not finish within 1 s and was killed',
    );
    const pid = Number(readFileSync(pidFile, "utf8"));
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    await waitUntil(() => !alive(), { what: "the plugin process is gone" });
  });

  it("refuses output of another apiVersion, and a status without token or certificate", async () => {
    const d = dir();
    const beta = execPlugin(d, "beta", printCredential({ token: "x" }, "client.authentication.k8s.io/v1beta1"));
    await expect(
      loadClientConfig({ kubeconfig: kubeconfigWith(d, beta), env: {} }).credentials.headers(),
    ).rejects.toThrow(
      "is configured to use API version client.authentication.k8s.io/v1, plugin returned version client.authentication.k8s.io/v1beta1",
    );
    const empty = execPlugin(d, "empty", printCredential({}));
    await expect(
      loadClientConfig({ kubeconfig: kubeconfigWith(d, empty), env: {} }).credentials.headers(),
    ).rejects.toThrow(`exec plugin ${process.execPath} of kubeconfig user "u" didn't return a token or cert/key pair`);
  });

  it("refuses at load interactiveMode Always (no terminal in an operator) and a v1 plugin without interactiveMode", () => {
    const d = dir();
    const always = kubeconfigWith(
      d,
      execPlugin(d, "p", printCredential({ token: "x" }), { interactiveMode: "Always" }),
    );
    const load = (path: string) => () => loadClientConfig({ kubeconfig: path, env: {} });
    expect(load(always)).toThrow(ConfigError);
    expect(load(always)).toThrow(
      `kubeconfig ${always}, context "test", cluster "c" (${server.url}), user "u": exec.interactiveMode is Always, but an operator has no terminal`,
    );
    const unset = execPlugin(d, "p", printCredential({ token: "x" }));
    delete unset.interactiveMode;
    expect(load(kubeconfigWith(d, unset))).toThrow(
      "exec.interactiveMode must be specified (Never, IfAvailable or Always)",
    );
  });

  it("resolves a relative command against the kubeconfig's folder and describes the credential by the command's name", async () => {
    const d = dir();
    const script = join(d, "bin-plugin.mjs");
    writeFileSync(script, `#!${process.execPath}\n${printCredential({ token: "rel" })}\n`, { mode: 0o755 });
    const path = kubeconfigWith(d, {
      apiVersion: "client.authentication.k8s.io/v1",
      command: "./bin-plugin.mjs",
      interactiveMode: "Never",
    });
    const creds = loadClientConfig({ kubeconfig: path, env: {} }).credentials;
    expect(creds.description).toBe('exec plugin bin-plugin.mjs of kubeconfig user "u"');
    await expect(creds.headers()).resolves.toEqual({ authorization: "Bearer rel" });
  });
});
