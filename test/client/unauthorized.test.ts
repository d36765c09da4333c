/**
 * A 401 names the refused credential and the server that refused it; end to end, the embedded API server
 * accepts what the exec plugin and impersonation send, and refuses what it should.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startTestCluster, type TestCluster } from "capstan-dev/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadClientConfig } from "../../packages/capstan/src/client/config.ts";
import { ApiError, isForbidden, isUnauthorized } from "../../packages/capstan/src/client/errors.ts";
import { KubeClient } from "../../packages/capstan/src/client/resource-client.ts";
import type { ResourceKind } from "../../packages/capstan/src/client/types.ts";
import { ConfigMapKind } from "./support/client.ts";
import { execPlugin, printCredential, tempDir, writeKubeconfig } from "./support/kubeconfig.ts";
import {
  json,
  type RecordingHttpsServer,
  startRecordingHttpsServer,
  status,
} from "./support/recording-https-server.ts";

let tmp: ReturnType<typeof tempDir>;
const clients: KubeClient[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  tmp?.remove();
});

function track(c: KubeClient): KubeClient {
  clients.push(c);
  return c;
}

describe("a 401 says which credential which server refused", () => {
  let server: RecordingHttpsServer;
  beforeAll(async () => {
    server = await startRecordingHttpsServer();
    server.on("GET", "/api/v1/namespaces/ns1/configmaps/a", (_r, res) =>
      json(res, 401, status(401, "Unauthorized", "Unauthorized")),
    );
  });
  afterAll(async () => {
    await server.close();
  });

  it("for a kubeconfig token file, keeping the ApiError's code, reason and Status as the server sent them", async () => {
    tmp = tempDir();
    writeFileSync(join(tmp.dir, "token"), "stale");
    const path = writeKubeconfig(tmp.dir, {
      server: server.url,
      caPem: server.pki.caPem,
      userName: "alice",
      user: { tokenFile: "token" },
    });
    const client = track(new KubeClient(loadClientConfig({ kubeconfig: path, env: {} }), { retry: false }));
    const err = await client
      .resource(ConfigMapKind, "ns1")
      .get("a")
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).message).toBe(
      `${server.url} refused the bearer token of kubeconfig user "alice" (tokenFile ${join(tmp.dir, "token")}): Unauthorized`,
    );
    expect(isUnauthorized(err)).toBe(true);
    expect((err as ApiError).code).toBe(401);
    expect((err as ApiError).reason).toBe("Unauthorized");
    expect((err as ApiError).status.message).toBe("Unauthorized");
  });
});

type ApiServer = TestCluster["server"];

const NamespaceKind: ResourceKind = {
  group: "",
  version: "v1",
  kind: "Namespace",
  plural: "namespaces",
  namespaced: false,
};

describe("against the embedded API server", () => {
  let cluster: TestCluster;
  let api: ApiServer;
  beforeAll(async () => {
    cluster = await startTestCluster({ kubelet: false });
    api = cluster.server;
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it("authenticates with the token an exec plugin prints, and names the plugin when the server refuses its token", async () => {
    tmp = tempDir();
    const good = writeKubeconfig(
      tmp.dir,
      {
        server: api.url,
        caPem: api.caPem,
        user: { exec: execPlugin(tmp.dir, "good", printCredential({ token: api.token })) },
      },
      "good",
    );
    const client = track(await KubeClient.load({ kubeconfig: good, env: {} }));
    const list = await client.resource(NamespaceKind).list();
    expect(list.items.map((n) => n.metadata?.name)).toContain("kube-system");

    const bad = writeKubeconfig(
      tmp.dir,
      {
        server: api.url,
        caPem: api.caPem,
        userName: "eks",
        user: { exec: execPlugin(tmp.dir, "bad", printCredential({ token: "not-the-token" })) },
      },
      "bad",
    );
    const refused = track(await KubeClient.load({ kubeconfig: bad, env: {} }));
    const err = await refused
      .resource(NamespaceKind)
      .list()
      .catch((e: unknown) => e);
    expect(isUnauthorized(err)).toBe(true);
    expect((err as Error).message).toMatch(
      new RegExp(`^${api.url.replaceAll(".", "\\.")} refused the exec plugin \\S+ of kubeconfig user "eks": `),
    );
  });

  it("acts as the impersonated user and groups: forbidden alone, allowed through a group's binding", async () => {
    tmp = tempDir();
    const admin = track(new KubeClient(loadClientConfig({ kubeconfig: writeAdmin(api, tmp.dir), env: {} })));
    const roles = admin.resource({
      group: "rbac.authorization.k8s.io",
      version: "v1",
      kind: "ClusterRole",
      plural: "clusterroles",
      namespaced: false,
    });
    const bindings = admin.resource({
      group: "rbac.authorization.k8s.io",
      version: "v1",
      kind: "ClusterRoleBinding",
      plural: "clusterrolebindings",
      namespaced: false,
    });
    await roles.create({
      metadata: { name: "capstan-test-namespace-reader" },
      rules: [{ apiGroups: [""], resources: ["namespaces"], verbs: ["list"] }],
    } as never);
    await bindings.create({
      metadata: { name: "capstan-test-readers" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "capstan-test-namespace-reader" },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "readers" }],
    } as never);

    const as = (user: Record<string, unknown>, name: string) =>
      track(
        new KubeClient(
          loadClientConfig({
            kubeconfig: writeKubeconfig(
              tmp.dir,
              { server: api.url, caPem: api.caPem, user: { token: api.token, ...user } },
              name,
            ),
            env: {},
          }),
        ),
      );
    const alone = await as({ as: "alice" }, "alone")
      .resource(NamespaceKind)
      .list()
      .catch((e: unknown) => e);
    expect(isForbidden(alone)).toBe(true);
    expect((alone as Error).message).toContain('User "alice" cannot list resource "namespaces"');

    const reader = as({ as: "alice", "as-groups": ["staff", "readers"] }, "reader");
    await expect(reader.resource(NamespaceKind).list()).resolves.toMatchObject({ kind: "NamespaceList" });
    await expect(reader.resource(ConfigMapKind, "default").list()).rejects.toThrow(/User "alice" cannot list/);
  });
});

function writeAdmin(api: ApiServer, d: string): string {
  return writeKubeconfig(d, { server: api.url, caPem: api.caPem, user: { token: api.token } }, "admin");
}
