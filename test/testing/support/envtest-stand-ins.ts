/**
 * Stand-ins for envtest's binaries. CI has no real `etcd`, `kube-apiserver` or
 * `kube-controller-manager`, so these small Node scripts, written into a temporary
 * `KUBEBUILDER_ASSETS` folder under those names (`#!/usr/bin/env node`, mode 0755), play them for the
 * envtest backend's tests. They are not emulations of the binaries: each records the flags it was
 * given (`<records>/<name>.json`) and does just what the backend relies on:
 *
 * - `etcd` lists `--unsafe-no-fsync` in its `--help` and serves `GET /health` on its
 *   `--listen-client-urls`;
 * - `kube-apiserver` refuses to start when `--etcd-servers` does not answer `/health`, reads the admin
 *   token from `--token-auth-file` (it must be in `system:masters`), starts Capstan's embedded API
 *   server (the built dist: `npm run build` first) with that token, and serves it on
 *   `--bind-address:--secure-port` with the certificate the backend wrote to `--cert-dir`
 *   (`apiserver.crt`, `apiserver.key`), passing each TLS connection through;
 * - `kube-controller-manager` serves `GET /healthz` over HTTPS on `--secure-port`.
 *
 * Each exits on SIGTERM, as the real ones do. A behaviour makes one fail the way a real binary can:
 * exit at once with a few log lines, never become ready, answer `/readyz` with 500 for a while, or
 * ignore SIGTERM.
 */
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createServingCertificates } from "../../../packages/capstan-dev/src/devcluster/tls.ts";

const DEVCLUSTER_DIST = pathToFileURL(
  fileURLToPath(new URL("../../../packages/capstan-dev/dist/devcluster/index.js", import.meta.url)),
).href;

/** How a stand-in kube-apiserver behaves. */
export type ApiserverBehaviour =
  | { mode: "serve" }
  /** Writes a few log lines and exits with code 1, as when its port is taken. */
  | { mode: "exit" }
  /** Runs, logs, and never listens. */
  | { mode: "never-ready" }
  /** Listens at once, but answers every connection with a 500 for `readyAfterMs`. */
  | { mode: "slow"; readyAfterMs: number };

export interface StandInOptions {
  apiserver?: ApiserverBehaviour;
  /** Write a stand-in kube-controller-manager too; `"ignore-sigterm"` makes it ignore SIGTERM. */
  controllerManager?: boolean | "ignore-sigterm";
}

/** What a stand-in recorded at its start. */
export interface Recorded {
  pid: number;
  args: string[];
}

export interface StandIns {
  /** The folder to use as `KUBEBUILDER_ASSETS`. */
  readonly assets: string;
  /** What `name` recorded, or `undefined` when it never started. */
  recorded(name: string): Promise<Recorded | undefined>;
  /** How many connections the slow kube-apiserver answered with a 500. */
  notReadyAnswers(): Promise<number>;
}

/** Writes the stand-ins into `<dir>/assets` (records in `<dir>/records`). */
export async function writeStandIns(dir: string, options: StandInOptions = {}): Promise<StandIns> {
  const assets = join(dir, "assets");
  const records = join(dir, "records");
  await mkdir(assets, { recursive: true });
  await mkdir(records, { recursive: true });
  const write = async (name: string, body: string) => {
    const path = join(assets, name);
    await writeFile(path, `#!/usr/bin/env node\n"use strict";\n${prelude(records, name)}\n${body}`);
    await chmod(path, 0o755);
  };
  await write("etcd", ETCD);
  await write("kube-apiserver", apiserver(options.apiserver ?? { mode: "serve" }));
  if (options.controllerManager !== undefined && options.controllerManager !== false) {
    const certs = await createServingCertificates();
    await write("kube-controller-manager", controllerManager(certs, options.controllerManager === "ignore-sigterm"));
  }
  return {
    assets,
    async recorded(name) {
      try {
        return JSON.parse(await readFile(join(records, `${name}.json`), "utf8")) as Recorded;
      } catch {
        return undefined;
      }
    },
    async notReadyAnswers() {
      try {
        return Number(await readFile(join(records, "not-ready-answers"), "utf8"));
      } catch {
        return 0;
      }
    },
  };
}

/** Whether a process with this pid still exists. */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The value of `--<name>=...` among recorded flags. */
export function flag(recorded: Recorded | undefined, name: string): string | undefined {
  const prefix = `--${name}=`;
  return recorded?.args.find((a) => a.startsWith(prefix))?.slice(prefix.length);
}

// CommonJS: the scripts live in a folder with no package.json, where an extensionless file is CommonJS.
function prelude(records: string, name: string): string {
  return `const fs = require("node:fs");
const path = require("node:path");
const RECORDS = ${JSON.stringify(records)};
const args = process.argv.slice(2);
const flag = (n) => { const a = args.find((x) => x.startsWith("--" + n + "=")); return a === undefined ? undefined : a.slice(n.length + 3); };
if (!args.includes("--help")) fs.writeFileSync(path.join(RECORDS, ${JSON.stringify(`${name}.json`)}), JSON.stringify({ pid: process.pid, args }));
`;
}

const ETCD = `
const http = require("node:http");
if (args.includes("--help")) {
  process.stdout.write("Usage:\\n\\n  etcd [flags]\\n\\nMember:\\n  --data-dir 'default.etcd'\\n    Path to the data directory.\\n  --unsafe-no-fsync 'false'\\n    Disables fsync, unsafe, will cause data loss.\\n");
  process.exit(0);
}
const client = new URL(flag("listen-client-urls"));
const server = http.createServer((req, res) => {
  if (req.url === "/health") {
    res.writeHead(200, { "content-type": "application/json" });
    res.end('{"health":"true","reason":""}');
  } else {
    res.writeHead(404);
    res.end();
  }
});
server.listen(Number(client.port), client.hostname, () => {
  console.error(JSON.stringify({ level: "info", msg: "serving client traffic insecurely", address: client.host }));
});
process.on("SIGTERM", () => { server.closeAllConnections(); server.close(() => process.exit(0)); });
`;

function apiserver(behaviour: ApiserverBehaviour): string {
  if (behaviour.mode === "exit") {
    return `
console.error("I0101 00:00:00.000000       1 options.go:228] external host was not specified, using 127.0.0.1");
console.error("I0101 00:00:00.000100       1 server.go:142] Version: v1.30.0");
console.error("E0101 00:00:00.000200       1 run.go:74] \\"command failed\\" err=\\"failed to listen on 127.0.0.1:" + flag("secure-port") + ": address already in use\\"");
process.exit(1);
`;
  }
  if (behaviour.mode === "never-ready") {
    return `
console.error("I0101 00:00:00.000000       1 server.go:142] Version: v1.30.0");
console.error("W0101 00:00:00.000100       1 logging.go:59] [core] grpc: addrConn.createTransport failed to connect to etcd");
setInterval(() => undefined, 60_000);
`;
  }
  const readyAfterMs = behaviour.mode === "slow" ? behaviour.readyAfterMs : 0;
  return `
const http = require("node:http");
const tls = require("node:tls");
const READY_AFTER_MS = ${readyAfterMs};
const NOT_READY = "[-]poststarthook/rbac/bootstrap-roles failed: not finished\\nreadyz check failed\\n";

function etcdHealthy(url) {
  return new Promise((resolve) => {
    http.get(url + "/health", { agent: false }, (res) => { res.resume(); resolve(res.statusCode === 200); })
      .on("error", () => resolve(false));
  });
}

async function main() {
  if (!(await etcdHealthy(flag("etcd-servers")))) {
    console.error("E0101 00:00:00.000000       1 run.go:74] \\"command failed\\" err=\\"etcd at " + flag("etcd-servers") + " is not healthy\\"");
    process.exit(1);
  }
  const [token, , , groups] = fs.readFileSync(flag("token-auth-file"), "utf8").trim().split("\\n")[0].split(",");
  if (!groups.includes("system:masters")) {
    console.error("E0101 the token in --token-auth-file is not in system:masters");
    process.exit(1);
  }
  const { startApiServer } = await import(${JSON.stringify(DEVCLUSTER_DIST)});
  const inner = await startApiServer({ host: "127.0.0.1", port: 0, token, kubelet: false });
  const innerPort = Number(new URL(inner.url).port);
  const certDir = flag("cert-dir");
  const sockets = new Set();
  let startedAt = Date.now();
  let notReady = 0;
  const proxy = tls.createServer(
    { cert: fs.readFileSync(path.join(certDir, "apiserver.crt")), key: fs.readFileSync(path.join(certDir, "apiserver.key")) },
    (socket) => {
      if (Date.now() - startedAt < READY_AFTER_MS) {
        notReady++;
        fs.writeFileSync(path.join(RECORDS, "not-ready-answers"), String(notReady));
        socket.end("HTTP/1.1 500 Internal Server Error\\r\\nContent-Type: text/plain\\r\\nContent-Length: " + Buffer.byteLength(NOT_READY) + "\\r\\nConnection: close\\r\\n\\r\\n" + NOT_READY);
        return;
      }
      const upstream = tls.connect({ host: "127.0.0.1", port: innerPort, rejectUnauthorized: false });
      sockets.add(socket);
      sockets.add(upstream);
      socket.on("close", () => { sockets.delete(socket); upstream.destroy(); });
      upstream.on("close", () => { sockets.delete(upstream); socket.destroy(); });
      socket.on("error", () => upstream.destroy());
      upstream.on("error", () => socket.destroy());
      socket.pipe(upstream).pipe(socket);
    },
  );
  proxy.listen(Number(flag("secure-port")), flag("bind-address"), () => {
    startedAt = Date.now();
    console.error("I0101 00:00:00.000000       1 secure_serving.go:213] Serving securely on " + flag("bind-address") + ":" + flag("secure-port"));
  });
  process.on("SIGTERM", async () => {
    proxy.close();
    for (const s of sockets) s.destroy();
    await inner.stop();
    process.exit(0);
  });
}
main().catch((err) => { console.error("E0101 stand-in kube-apiserver failed: " + err.stack); process.exit(1); });
`;
}

function controllerManager(certs: { certPem: string; keyPem: string }, ignoreSigterm: boolean): string {
  return `
const https = require("node:https");
fs.readFileSync(flag("kubeconfig"));
const server = https.createServer({ cert: ${JSON.stringify(certs.certPem)}, key: ${JSON.stringify(certs.keyPem)} }, (req, res) => {
  res.writeHead(req.url === "/healthz" ? 200 : 404, { "content-type": "text/plain" });
  res.end(req.url === "/healthz" ? "ok" : "");
});
server.listen(Number(flag("secure-port")), flag("bind-address"), () => {
  console.error("I0101 00:00:00.000000       1 secure_serving.go:213] Serving securely on " + flag("bind-address") + ":" + flag("secure-port"));
});
process.on("SIGTERM", ${ignoreSigterm ? `() => console.error("I0101 ignoring SIGTERM")` : `() => { server.closeAllConnections(); server.close(() => process.exit(0)); }`});
`;
}
