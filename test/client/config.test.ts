import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { ConfigError, inClusterConfig, loadClientConfig } from "../../packages/capstan/src/client/config.ts";
import { FileTokenCredentials, jwtExpiry } from "../../packages/capstan/src/client/credentials.ts";
import { KubeClient } from "../../packages/capstan/src/client/resource-client.ts";
import { ConfigMapKind } from "./support/client.ts";
import { json, type RecordingHttpsServer, startRecordingHttpsServer } from "./support/recording-https-server.ts";

let server: RecordingHttpsServer;
let dir: string;
const clients: KubeClient[] = [];

beforeAll(async () => {
  server = await startRecordingHttpsServer();
  server.on("GET", "/api/v1/namespaces/ns1/configmaps/a", (_r, res) => json(res, 200, { metadata: { name: "a" } }));
});
afterAll(async () => {
  await server.close();
});
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  vi.useRealTimers();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function tmp(): string {
  dir = mkdtempSync(join(tmpdir(), "capstan-kubeconfig-"));
  return dir;
}

function kubeconfig(opts: {
  current?: string;
  clusters?: { name: string; server: string; ca?: string }[];
  users?: { name: string; user: Record<string, unknown> }[];
  contexts?: { name: string; cluster: string; user: string; namespace?: string }[];
}): string {
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Config",
    "current-context": opts.current,
    clusters: (opts.clusters ?? []).map((c) => ({
      name: c.name,
      cluster: { server: c.server, ...(c.ca ? { "certificate-authority": c.ca } : {}) },
    })),
    users: opts.users ?? [],
    contexts: (opts.contexts ?? []).map((c) => ({
      name: c.name,
      context: { cluster: c.cluster, user: c.user, ...(c.namespace ? { namespace: c.namespace } : {}) },
    })),
  });
}

async function load(opts: Parameters<typeof KubeClient.load>[0]): Promise<KubeClient> {
  const c = await KubeClient.load({ env: {}, ...opts });
  clients.push(c);
  return c;
}

describe("kubeconfig files", () => {
  it("merges several KUBECONFIG paths: first current-context wins, first definition of a name wins", () => {
    const d = tmp();
    const a = join(d, "a.yaml");
    const b = join(d, "b.yaml");
    writeFileSync(
      a,
      kubeconfig({
        current: "one",
        clusters: [{ name: "c1", server: "https://one.example:6443" }],
        users: [{ name: "u1", user: { token: "t1" } }],
        contexts: [{ name: "one", cluster: "c1", user: "u1", namespace: "team-a" }],
      }),
    );
    writeFileSync(
      b,
      kubeconfig({
        current: "two",
        clusters: [
          { name: "c1", server: "https://shadowed.example" },
          { name: "c2", server: "https://two.example:6443" },
        ],
        users: [{ name: "u2", user: { token: "t2" } }],
        contexts: [{ name: "two", cluster: "c2", user: "u2" }],
      }),
    );
    const env = { KUBECONFIG: [a, join(d, "missing.yaml"), b].join(delimiter) };
    const first = loadClientConfig({ env });
    expect(first.server).toBe("https://one.example:6443");
    expect(first.namespace).toBe("team-a");
    const second = loadClientConfig({ env, context: "two" });
    expect(second.server).toBe("https://two.example:6443");
    expect(second.namespace).toBe("default");
    expect(second.credentials.headers()).toEqual({ authorization: "Bearer t2" });
  });

  it("authenticates with a bearer token and trusts the CA file named relative to the kubeconfig", async () => {
    const d = tmp();
    mkdirSync(join(d, "pki"));
    writeFileSync(join(d, "pki", "ca.crt"), server.pki.caPem);
    const path = join(d, "config");
    writeFileSync(
      path,
      kubeconfig({
        current: "test",
        clusters: [{ name: "c", server: server.url, ca: "pki/ca.crt" }],
        users: [{ name: "u", user: { token: "secret-token" } }],
        contexts: [{ name: "test", cluster: "c", user: "u", namespace: "ns1" }],
      }),
    );
    const client = await load({ kubeconfig: path });
    expect(client.defaultNamespace).toBe("ns1");
    const before = server.requests.length;
    await client.resource(ConfigMapKind, client.defaultNamespace).get("a");
    expect(server.requests[before]!.headers.authorization).toBe("Bearer secret-token");
  });

  it("verifies the server against the CA unless insecure-skip-tls-verify is set, and honours tls-server-name", async () => {
    const d = tmp();
    const write = (name: string, cluster: Record<string, unknown>) => {
      const path = join(d, name);
      writeFileSync(
        path,
        JSON.stringify({
          "current-context": "t",
          clusters: [{ name: "c", cluster: { server: server.url, ...cluster } }],
          users: [{ name: "u", user: { token: "x", as: "alice" } }],
          contexts: [{ name: "t", context: { cluster: "c", user: "u" } }],
        }),
      );
      return path;
    };
    const caData = Buffer.from(server.pki.caPem).toString("base64");
    const untrusted = await load({ kubeconfig: write("untrusted", {}), retry: false });
    await expect(untrusted.resource(ConfigMapKind, "ns1").get("a")).rejects.toThrow(/certificate/);
    const insecure = await load({ kubeconfig: write("insecure", { "insecure-skip-tls-verify": true }) });
    await expect(insecure.resource(ConfigMapKind, "ns1").get("a")).resolves.toBeDefined();
    expect(server.requests.at(-1)!.headers["impersonate-user"]).toBe("alice");
    const wrongName = await load({
      kubeconfig: write("wrong-name", { "certificate-authority-data": caData, "tls-server-name": "wrong.example" }),
      retry: false,
    });
    await expect(wrongName.resource(ConfigMapKind, "ns1").get("a")).rejects.toThrow(/wrong\.example|altnames/i);
    const rightName = await load({
      kubeconfig: write("right-name", { "certificate-authority-data": caData, "tls-server-name": "localhost" }),
    });
    await expect(rightName.resource(ConfigMapKind, "ns1").get("a")).resolves.toBeDefined();
  });

  it("presents the client certificate of the user (mutual TLS)", async () => {
    const d = tmp();
    writeFileSync(join(d, "client.crt"), server.pki.clientCertPem);
    writeFileSync(join(d, "client.key"), server.pki.clientKeyPem);
    const path = join(d, "config");
    writeFileSync(
      path,
      kubeconfig({
        current: "test",
        clusters: [{ name: "c", server: server.url }],
        users: [{ name: "u", user: { "client-certificate": "client.crt", "client-key": "client.key" } }],
        contexts: [{ name: "test", cluster: "c", user: "u" }],
      }).replace(
        `"server":"${server.url}"`,
        `"server":"${server.url}","certificate-authority-data":"${Buffer.from(server.pki.caPem).toString("base64")}"`,
      ),
    );
    const client = await load({ kubeconfig: path });
    const before = server.requests.length;
    await client.resource(ConfigMapKind, "ns1").get("a");
    expect(server.requests[before]!.clientCn).toBe("test-user");
    expect(server.requests[before]!.headers.authorization).toBeUndefined();
  });

  it("re-reads a kubeconfig tokenFile after the refresh period", async () => {
    const d = tmp();
    writeFileSync(join(d, "ca.crt"), server.pki.caPem);
    writeFileSync(join(d, "token"), "first\n");
    const path = join(d, "config");
    writeFileSync(
      path,
      kubeconfig({
        current: "test",
        clusters: [{ name: "c", server: server.url, ca: "ca.crt" }],
        users: [{ name: "u", user: { tokenFile: "token" } }],
        contexts: [{ name: "test", cluster: "c", user: "u" }],
      }),
    );
    vi.useFakeTimers({ toFake: ["Date"] });
    const config = loadClientConfig({ kubeconfig: path, env: {} });
    expect(config.credentials.headers()).toEqual({ authorization: "Bearer first" });
    writeFileSync(join(d, "token"), "second\n");
    expect(config.credentials.headers()).toEqual({ authorization: "Bearer first" });
    vi.setSystemTime(Date.now() + 60_000);
    expect(config.credentials.headers()).toEqual({ authorization: "Bearer second" });
  });
});

describe("broken kubeconfigs give one clear error", () => {
  it("names a missing file", () => {
    expect(() => loadClientConfig({ kubeconfig: "/nonexistent/kubeconfig", env: {} })).toThrow(
      new ConfigError("kubeconfig file /nonexistent/kubeconfig does not exist"),
    );
  });

  it("names the file with invalid YAML", () => {
    const path = join(tmp(), "config");
    writeFileSync(path, "clusters: [\n  - name: x\n  bad: : :");
    expect(() => loadClientConfig({ kubeconfig: path, env: {} })).toThrow(`kubeconfig file ${path} is not valid YAML`);
  });

  it("names an unknown context and lists the known ones", () => {
    const path = join(tmp(), "config");
    writeFileSync(
      path,
      kubeconfig({
        current: "a",
        clusters: [{ name: "c", server: "https://x" }],
        users: [{ name: "u", user: {} }],
        contexts: [
          { name: "a", cluster: "c", user: "u" },
          { name: "b", cluster: "c", user: "u" },
        ],
      }),
    );
    expect(() => loadClientConfig({ kubeconfig: path, context: "prod", env: {} })).toThrow(
      `context "prod" not found in kubeconfig ${path} (contexts: a, b)`,
    );
  });

  it("names a client certificate file that cannot be read, with its user", () => {
    const d = tmp();
    const path = join(d, "config");
    writeFileSync(
      path,
      kubeconfig({
        current: "a",
        clusters: [{ name: "c", server: "https://x" }],
        users: [{ name: "alice", user: { "client-certificate": "gone.crt", "client-key": "gone.key" } }],
        contexts: [{ name: "a", cluster: "c", user: "alice" }],
      }),
    );
    expect(() => loadClientConfig({ kubeconfig: path, env: {} })).toThrow(
      `kubeconfig ${path}, context "a", cluster "c" (https://x), user "alice": client-certificate file ${join(d, "gone.crt")} cannot be read`,
    );
  });

  it("names a context whose cluster is not defined", () => {
    const path = join(tmp(), "config");
    writeFileSync(path, kubeconfig({ current: "a", contexts: [{ name: "a", cluster: "nowhere", user: "" }] }));
    expect(() => loadClientConfig({ kubeconfig: path, env: {} })).toThrow(/refers to cluster "nowhere"/);
  });
});

describe("in-cluster", () => {
  function serviceAccount(): string {
    const d = join(tmp(), "sa");
    mkdirSync(d);
    writeFileSync(join(d, "token"), "sa-token-1");
    writeFileSync(join(d, "ca.crt"), server.pki.caPem);
    writeFileSync(join(d, "namespace"), "ns1\n");
    return d;
  }

  it("uses KUBERNETES_SERVICE_HOST/PORT, the CA file and the namespace file", async () => {
    const sa = serviceAccount();
    const port = new URL(server.url).port;
    const client = await load({
      inCluster: true,
      serviceAccountDir: sa,
      env: { KUBERNETES_SERVICE_HOST: "127.0.0.1", KUBERNETES_SERVICE_PORT: port },
    });
    expect(client.defaultNamespace).toBe("ns1");
    await client.resource(ConfigMapKind, client.defaultNamespace).get("a");
    expect(server.requests.at(-1)!.headers.authorization).toBe("Bearer sa-token-1");
  });

  it("picks up a rotated service-account token within a minute, as client-go does", async () => {
    const sa = serviceAccount();
    const port = new URL(server.url).port;
    vi.useFakeTimers({ toFake: ["Date"] });
    const config = inClusterConfig({ KUBERNETES_SERVICE_HOST: "127.0.0.1", KUBERNETES_SERVICE_PORT: port }, sa);
    const client = new KubeClient(config);
    clients.push(client);
    const cms = client.resource(ConfigMapKind, client.defaultNamespace);
    const seen = () => server.requests.at(-1)!.headers.authorization;
    await cms.get("a");
    expect(seen()).toBe("Bearer sa-token-1");
    writeFileSync(join(sa, "token"), "sa-token-2"); // the kubelet rotated it
    await cms.get("a");
    expect(seen()).toBe("Bearer sa-token-1");
    vi.setSystemTime(Date.now() + 60_000);
    await cms.get("a");
    expect(seen()).toBe("Bearer sa-token-2");
  });

  it("explains what is missing outside a pod", () => {
    expect(() => inClusterConfig({}, "/nonexistent")).toThrow(/KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT/);
  });
});

describe("credentials", () => {
  it("keeps the last good token while a rotation briefly removes the file", () => {
    const d = tmp();
    const path = join(d, "token");
    writeFileSync(path, "t1");
    const creds = new FileTokenCredentials(path, { periodMs: 0 });
    rmSync(path);
    expect(creds.headers()).toEqual({ authorization: "Bearer t1" });
  });

  it("reads the expiry of a JWT and ignores opaque tokens", () => {
    const payload = Buffer.from(JSON.stringify({ exp: 2_000_000_000 })).toString("base64url");
    expect(jwtExpiry(`e30.${payload}.sig`)).toBe(2_000_000_000_000);
    expect(jwtExpiry("k8s-aws-v1.abc")).toBeUndefined();
  });
});
