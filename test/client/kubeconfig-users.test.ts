import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, inClusterConfig, loadClientConfig } from "../../packages/capstan/src/client/config.ts";
import { KubeClient } from "../../packages/capstan/src/client/resource-client.ts";
import { ConfigMapKind } from "./support/client.ts";
import { execPlugin, printCredential, tempDir, writeKubeconfig } from "./support/kubeconfig.ts";
import { json, type RecordingHttpsServer, startRecordingHttpsServer } from "./support/recording-https-server.ts";

let server: RecordingHttpsServer;
let tmp: ReturnType<typeof tempDir>;
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
  tmp?.remove();
});

function dir(): string {
  tmp = tempDir("capstan-users-");
  return tmp.dir;
}

/** A kubeconfig for the test server with `user` (as user "u"); returns its path. */
function withUser(user: Record<string, unknown>, cluster: Record<string, unknown> = {}): string {
  return writeKubeconfig(tmp?.dir ?? dir(), { server: server.url, caPem: server.pki.caPem, user, cluster });
}

async function lastRequestWith(path: string) {
  const client = new KubeClient(loadClientConfig({ kubeconfig: path, env: {} }));
  clients.push(client);
  await client.resource(ConfigMapKind, "ns1").get("a");
  return server.requests.at(-1)!;
}

function configError(path: string): string {
  try {
    loadClientConfig({ kubeconfig: path, env: {} });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).not.toContain("\n");
    return (err as Error).message;
  }
  throw new Error("expected a ConfigError");
}

describe("kubeconfig users", () => {
  it("sends impersonation headers: Impersonate-User, -Uid, one Impersonate-Group line per group, escaped Impersonate-Extra-*", async () => {
    dir();
    const seen = await lastRequestWith(
      withUser({
        token: "t",
        as: "alice",
        "as-uid": "1234",
        "as-groups": ["devs", "ops, and more"],
        "as-user-extra": { scopes: ["view", "edit"], "acme.com/team ä": ["blue"] },
      }),
    );
    expect(seen.headers.authorization).toBe("Bearer t");
    expect(seen.headersDistinct["impersonate-user"]).toEqual(["alice"]);
    expect(seen.headersDistinct["impersonate-uid"]).toEqual(["1234"]);
    // Two header lines, not one joined by a comma: a group name may hold a comma. (Node lower-cases the
    // names it receives, escapes included; the API server lower-cases extra keys as well.)
    expect(seen.headersDistinct["impersonate-group"]).toEqual(["devs", "ops, and more"]);
    expect(seen.headersDistinct["impersonate-extra-scopes"]).toEqual(["view", "edit"]);
    expect(seen.headersDistinct["impersonate-extra-acme.com%2fteam%20%c3%a4"]).toEqual(["blue"]);
  });

  it("refuses impersonated groups, uid or extras without a user to impersonate", () => {
    dir();
    expect(configError(withUser({ token: "t", "as-groups": ["devs"] }))).toMatch(
      /user "u": requesting uid, groups or user-extra without impersonating a user \(as\)$/,
    );
  });

  it("sends basic auth for username/password and refuses it together with a token", async () => {
    dir();
    const seen = await lastRequestWith(withUser({ username: "bob", password: "pw:1" }));
    expect(seen.headers.authorization).toBe(`Basic ${Buffer.from("bob:pw:1").toString("base64")}`);
    expect(configError(withUser({ token: "t", username: "bob", password: "pw" }))).toContain(
      "more than one authentication method found (token and basicAuth), only one is allowed",
    );
  });

  it("prefers the user's own token to its exec plugin, as client-go does", async () => {
    const d = dir();
    const exec = execPlugin(d, "unused", `process.exit(1);`);
    const seen = await lastRequestWith(withUser({ token: "mine", exec }));
    expect(seen.headers.authorization).toBe("Bearer mine");
  });

  it("re-reads tokenFile but starts from token when both are given and the file is missing", () => {
    const d = dir();
    const creds = loadClientConfig({
      kubeconfig: withUser({ token: "initial", tokenFile: join(d, "not-yet") }),
      env: {},
    }).credentials;
    expect(creds.headers()).toEqual({ authorization: "Bearer initial" });
    expect(creds.description).toBe(`bearer token of kubeconfig user "u" (tokenFile ${join(d, "not-yet")})`);
  });

  it("sends no credentials to an http:// server, as client-go never does", () => {
    const d = dir();
    const path = writeKubeconfig(d, { server: "http://127.0.0.1:1", user: { token: "secret" } });
    const creds = loadClientConfig({ kubeconfig: path, env: {} }).credentials;
    expect(creds.headers()).toEqual({});
    expect(creds.description).toBe("no credentials (http://127.0.0.1:1 is not https)");
  });

  it("describes each kind of credential for messages, never with the secret", () => {
    const d = dir();
    writeFileSync(join(d, "client.crt"), server.pki.clientCertPem);
    writeFileSync(join(d, "client.key"), server.pki.clientKeyPem);
    writeFileSync(join(d, "token"), "from-file");
    const describe = (user: Record<string, unknown>) =>
      loadClientConfig({ kubeconfig: withUser(user), env: {} }).credentials.description;
    expect(describe({ token: "secret" })).toBe('bearer token of kubeconfig user "u"');
    expect(describe({ tokenFile: "token" })).toBe(
      `bearer token of kubeconfig user "u" (tokenFile ${join(d, "token")})`,
    );
    expect(describe({ username: "bob", password: "secret" })).toBe('basic auth of kubeconfig user "u" (username bob)');
    expect(describe({ "client-certificate": "client.crt", "client-key": "client.key" })).toBe(
      'client certificate (CN=test-user) of kubeconfig user "u"',
    );
    expect(describe({ token: "secret", "client-certificate": "client.crt", "client-key": "client.key" })).toBe(
      'bearer token and client certificate (CN=test-user) of kubeconfig user "u"',
    );
    expect(describe({ exec: execPlugin(d, "aws", printCredential({ token: "x" })) })).toBe(
      `exec plugin ${process.execPath.split("/").pop()} of kubeconfig user "u"`,
    );
    expect(describe({})).toBe('no credentials (kubeconfig user "u" has none)');
    writeFileSync(join(d, "ca.crt"), server.pki.caPem);
    expect(
      inClusterConfig({ KUBERNETES_SERVICE_HOST: "h", KUBERNETES_SERVICE_PORT: "1" }, d).credentials.description,
    ).toBe(`service account token ${join(d, "token")}`);
  });

  it("names the file, context, cluster with its server and user in every configuration error", () => {
    const d = dir();
    writeFileSync(join(d, "client.crt"), server.pki.clientCertPem);
    writeFileSync(join(d, "other.key"), server.pki.serverKeyPem);
    const where = (path: string) => `kubeconfig ${path}, context "test", cluster "c" (${server.url}), user "u": `;
    let path = withUser({ "client-certificate": "client.crt" });
    expect(configError(path)).toBe(
      `${where(path)}client-key-data or client-key must be specified to use the client certificate`,
    );
    path = withUser({ "client-certificate": "client.crt", "client-key": "other.key" });
    expect(configError(path)).toBe(`${where(path)}the client key does not match the client certificate`);
    path = withUser({ token: 42 });
    expect(configError(path)).toBe(`${where(path)}token must be a string`);
    path = withUser({ token: "t" }, { "insecure-skip-tls-verify": true });
    expect(configError(path)).toContain(
      `${where(path)}certificate-authority and insecure-skip-tls-verify exclude each other`,
    );
    path = withUser({ exec: { command: "x", apiVersion: "client.authentication.k8s.io/v1alpha1" } });
    expect(configError(path)).toContain(
      `${where(path)}exec.apiVersion "client.authentication.k8s.io/v1alpha1" is not supported`,
    );
  });

  it("refuses the removed gcp and azure auth-providers, pointing to their exec plugins", () => {
    dir();
    expect(configError(withUser({ "auth-provider": { name: "gcp", config: {} } }))).toContain(
      'the gcp auth-provider has been removed from client-go: use the "gke-gcloud-auth-plugin" exec credential plugin instead',
    );
    expect(configError(withUser({ "auth-provider": { name: "azure", config: {} } }))).toContain(
      "the azure auth-provider has been removed from client-go: use the kubelogin exec credential plugin instead",
    );
    expect(configError(withUser({ "auth-provider": { name: "openstack", config: {} } }))).toContain(
      'no auth-provider found for name "openstack"',
    );
  });
});
