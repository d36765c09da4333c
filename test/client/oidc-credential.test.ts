import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { delimiter, join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { ConfigError, loadClientConfig } from "../../packages/capstan/src/client/config.ts";
import { KubeClient } from "../../packages/capstan/src/client/resource-client.ts";
import { ConfigMapKind } from "./support/client.ts";
import { jwt, tempDir } from "./support/kubeconfig.ts";
import {
  json,
  type RecordingHttpsServer,
  startRecordingHttpsServer,
  status,
} from "./support/recording-https-server.ts";

/** A fake OpenID provider: discovery and a refresh-token grant that rotates the refresh token. */
interface Issuer {
  url: string;
  /** The refresh token it accepts now. */
  refreshToken: string;
  /** Requests to the token endpoint, with their form fields and authorization header. */
  tokenRequests: { form: URLSearchParams; authorization: string | undefined }[];
  discoveryRequests: number;
  /** Refuse HTTP basic client authentication (wants client_id/client_secret in the form). */
  formOnly: boolean;
  /** The id-token handed out by the last refresh. */
  lastIdToken: string | undefined;
  close(): Promise<void>;
}

const clientId = "capstan";
const clientSecret = "s3cret!";

function issuerHandler(issuer: Issuer) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const send = (code: number, body: unknown) => {
        res.writeHead(code, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      };
      if (req.method === "GET" && req.url === "/.well-known/openid-configuration") {
        issuer.discoveryRequests++;
        send(200, { issuer: issuer.url, token_endpoint: `${issuer.url}/token` });
        return;
      }
      if (req.method !== "POST" || req.url !== "/token") return send(404, { error: "not_found" });
      const form = new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
      issuer.tokenRequests.push({ form, authorization: req.headers.authorization });
      const basic = `Basic ${Buffer.from(`${clientId}:${encodeURIComponent(clientSecret).replace("!", "%21")}`).toString("base64")}`;
      const clientOk = issuer.formOnly
        ? form.get("client_id") === clientId && form.get("client_secret") === clientSecret
        : req.headers.authorization === basic;
      if (!clientOk) return send(401, { error: "invalid_client" });
      if (form.get("grant_type") !== "refresh_token" || form.get("refresh_token") !== issuer.refreshToken) {
        return send(400, { error: "invalid_grant", error_description: "Token is not active" });
      }
      const n = issuer.tokenRequests.length;
      issuer.refreshToken = `refresh-${n}`;
      issuer.lastIdToken = jwt({ sub: "alice", exp: Math.floor(Date.now() / 1000) + 3600, n });
      send(200, {
        access_token: `access-${n}`,
        token_type: "Bearer",
        expires_in: 3600,
        id_token: issuer.lastIdToken,
        refresh_token: issuer.refreshToken,
      });
    });
  };
}

async function startIssuer(tls?: { cert: string; key: string }): Promise<Issuer> {
  const issuer: Issuer = {
    url: "",
    refreshToken: "refresh-0",
    tokenRequests: [],
    discoveryRequests: 0,
    formOnly: false,
    lastIdToken: undefined,
    close: async () => {},
  };
  const handler = issuerHandler(issuer);
  const server: Server = tls ? createHttpsServer(tls, handler) : createHttpServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  issuer.url = `${tls ? "https" : "http"}://127.0.0.1:${port}`;
  issuer.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return issuer;
}

let api: RecordingHttpsServer;
let issuer: Issuer;
let tmp: ReturnType<typeof tempDir>;
const clients: KubeClient[] = [];

beforeAll(async () => {
  api = await startRecordingHttpsServer();
  // The API server accepts exactly the id-token the issuer handed out last.
  api.on("GET", "/api/v1/namespaces/ns1/configmaps/a", (r, res) => {
    if (issuer.lastIdToken && r.headers.authorization === `Bearer ${issuer.lastIdToken}`) {
      json(res, 200, { metadata: { name: "a" } });
    } else json(res, 401, status(401, "Unauthorized", "Unauthorized"));
  });
});
afterAll(async () => {
  await api.close();
});
beforeEach(async () => {
  issuer = await startIssuer();
  tmp = tempDir("capstan-oidc-");
});
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  await issuer.close();
  tmp.remove();
});

const expired = () => jwt({ sub: "alice", exp: Math.floor(Date.now() / 1000) - 60 });

/**
 * Two kubeconfig files as KUBECONFIG merges them: `main` has the context and cluster, `users` defines
 * the oidc user (with comments, which a rewrite must keep). Returns both paths.
 */
function writeSplitKubeconfig(config: Record<string, string>): { main: string; users: string } {
  const main = join(tmp.dir, "main.yaml");
  const users = join(tmp.dir, "users.yaml");
  writeFileSync(
    main,
    `apiVersion: v1
kind: Config
current-context: test
clusters:
- name: c
  cluster:
    server: ${api.url}
    certificate-authority-data: ${Buffer.from(api.pki.caPem).toString("base64")}
contexts:
- name: test
  context: {cluster: c, user: alice, namespace: ns1}
`,
  );
  const lines = Object.entries(config).map(([k, v]) => `        ${k}: ${v}`);
  writeFileSync(
    users,
    `# Managed by hand: keep this comment.
apiVersion: v1
kind: Config
users:
- name: someone-else
  user:
    token: other # not touched
- name: alice
  user:
    auth-provider:
      name: oidc
      config:
${lines.join("\n")}
`,
    { mode: 0o640 },
  );
  return { main, users };
}

function oidcConfig(extra: Record<string, string> = {}): Record<string, string> {
  return {
    "idp-issuer-url": issuer.url,
    "client-id": clientId,
    "client-secret": clientSecret,
    "id-token": expired(),
    "refresh-token": "refresh-0",
    ...extra,
  };
}

function load(paths: { main: string; users: string }): KubeClient {
  const c = new KubeClient(loadClientConfig({ env: { KUBECONFIG: [paths.main, paths.users].join(delimiter) } }), {
    retry: false,
  });
  clients.push(c);
  return c;
}

function aliceConfig(usersFile: string): Record<string, string> {
  const doc = parseYaml(readFileSync(usersFile, "utf8")) as {
    users: { name: string; user: { "auth-provider": { config: Record<string, string> } } }[];
  };
  return doc.users.find((u) => u.name === "alice")!.user["auth-provider"].config;
}

describe("oidc auth-provider", () => {
  it("refreshes an expired id-token once for concurrent requests and writes the new tokens into the file that defines the user", async () => {
    const config = oidcConfig();
    const paths = writeSplitKubeconfig(config);
    const mainBefore = readFileSync(paths.main, "utf8");
    const usersBefore = readFileSync(paths.users, "utf8");
    const cms = load(paths).resource(ConfigMapKind, "ns1");
    await Promise.all([cms.get("a"), cms.get("a"), cms.get("a")]);
    expect(issuer.tokenRequests).toHaveLength(1);
    expect(issuer.tokenRequests[0]!.form.get("grant_type")).toBe("refresh_token");
    expect(api.requests.at(-1)!.headers.authorization).toBe(`Bearer ${issuer.lastIdToken}`);

    // Persisted where the user is defined, as client-go does; the rest of that file is left as it was.
    const text = readFileSync(paths.users, "utf8");
    expect(aliceConfig(paths.users)).toEqual({
      ...config,
      "id-token": issuer.lastIdToken,
      "refresh-token": "refresh-1",
    });
    expect(text).toBe(
      usersBefore
        .replace(config["id-token"]!, issuer.lastIdToken!)
        .replace("refresh-token: refresh-0", "refresh-token: refresh-1"),
    );
    expect(statSync(paths.users).mode & 0o777).toBe(0o640);
    expect(existsSync(`${paths.users}.lock`)).toBe(false);
    expect(readFileSync(paths.main, "utf8")).toBe(mainBefore);

    // The new token is valid for an hour: no more refreshes.
    await cms.get("a");
    expect(issuer.tokenRequests).toHaveLength(1);
  });

  it("sends a valid id-token as is, without asking the issuer, synchronously once cached", async () => {
    const idToken = jwt({ sub: "alice", exp: Math.floor(Date.now() / 1000) + 3600 });
    const paths = writeSplitKubeconfig(oidcConfig({ "id-token": idToken }));
    const config = loadClientConfig({ env: { KUBECONFIG: [paths.main, paths.users].join(delimiter) } });
    expect(config.credentials.headers()).toEqual({ authorization: `Bearer ${idToken}` });
    expect(config.credentials.description).toBe(`oidc id-token of kubeconfig user "alice" (issuer ${issuer.url})`);
    expect(issuer.discoveryRequests + issuer.tokenRequests.length).toBe(0);
  });

  it("sends the client credentials as form fields when the token endpoint refuses basic auth", async () => {
    issuer.formOnly = true;
    const paths = writeSplitKubeconfig(oidcConfig());
    const creds = load(paths).config.credentials;
    await creds.headers();
    expect(issuer.tokenRequests.map((r) => r.authorization !== undefined)).toEqual([true, false]);
    expect(issuer.tokenRequests[1]!.form.get("client_id")).toBe(clientId);
    expect(aliceConfig(paths.users)["refresh-token"]).toBe("refresh-2");
  });

  it("uses a token another process wrote into the file meanwhile instead of refreshing", async () => {
    const config = oidcConfig();
    const paths = writeSplitKubeconfig(config);
    const creds = load(paths).config.credentials;
    const fresh = jwt({ sub: "alice", exp: Math.floor(Date.now() / 1000) + 3600, by: "kubectl" });
    writeFileSync(paths.users, readFileSync(paths.users, "utf8").replace(config["id-token"]!, fresh));
    await expect(creds.headers()).resolves.toEqual({ authorization: `Bearer ${fresh}` });
    expect(issuer.tokenRequests).toHaveLength(0);
  });

  it("names the user, the endpoint and the OAuth error when the refresh is refused", async () => {
    const paths = writeSplitKubeconfig(oidcConfig({ "refresh-token": "retired" }));
    await expect(load(paths).config.credentials.headers()).rejects.toThrow(
      `oidc auth-provider of kubeconfig user "alice": failed to refresh token: ${issuer.url}/token answered 400: invalid_grant: Token is not active`,
    );
  });

  it("says to log in again when the id-token expired and there is no refresh-token", async () => {
    const config = oidcConfig();
    delete config["refresh-token"];
    const paths = writeSplitKubeconfig(config);
    await expect(load(paths).config.credentials.headers()).rejects.toThrow(
      `oidc auth-provider of kubeconfig user "alice": no valid id-token, and cannot refresh without refresh-token (log in to ${issuer.url} again)`,
    );
  });

  it("trusts idp-certificate-authority-data for an https issuer", async () => {
    await issuer.close();
    issuer = await startIssuer({ cert: api.pki.serverCertPem, key: api.pki.serverKeyPem });
    const untrusted = writeSplitKubeconfig(oidcConfig());
    await expect(load(untrusted).config.credentials.headers()).rejects.toThrow(
      /openid-configuration failed: .*certificate/,
    );
    const trusted = writeSplitKubeconfig(
      oidcConfig({ "idp-certificate-authority-data": Buffer.from(api.pki.caPem).toString("base64") }),
    );
    const headers = await load(trusted).config.credentials.headers();
    expect(issuer.lastIdToken).toBeDefined();
    expect(headers).toEqual({ authorization: `Bearer ${issuer.lastIdToken}` });
  });

  it("refuses a config without idp-issuer-url or client-id at load, naming the file, context and user", () => {
    const config = oidcConfig();
    delete config["client-id"];
    const paths = writeSplitKubeconfig(config);
    const load = () => loadClientConfig({ env: { KUBECONFIG: [paths.main, paths.users].join(delimiter) } });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(
      `kubeconfig ${paths.users}, context "test", cluster "c" (${api.url}), user "alice": the oidc auth-provider needs client-id`,
    );
  });
});
