/**
 * With `namespaceDefaults: true`, every namespace gets the `default` ServiceAccount (serviceaccounts controller) and the
 * `kube-root-ca.crt` ConfigMap holding the devcluster's CA (root CA publisher): the namespaces that
 * exist at start, new ones, and again after someone deletes or edits them.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiServer } from "../../../packages/capstan-dev/src/devcluster/index.ts";
import { startTestServer, type TestServer } from "../support/http.ts";

let t: TestServer;

/** kubectl starts in ~100 ms; a command that has not finished in 20 s is stuck. */
const KUBECTL_TIMEOUT_MS = 20_000;

const DESCRIPTION =
  "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.";

async function eventually<T>(read: () => Promise<T | undefined>, what: string): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

// biome-ignore lint/suspicious/noExplicitAny: test assertions read arbitrary JSON
async function found(path: string, accept: (body: any) => boolean = () => true): Promise<any> {
  const res = await t.request("GET", path);
  return res.status === 200 && accept(res.body) ? res.body : undefined;
}

const sa = (ns: string) => `/api/v1/namespaces/${ns}/serviceaccounts/default`;
const rootCa = (ns: string) => `/api/v1/namespaces/${ns}/configmaps/kube-root-ca.crt`;

beforeAll(async () => {
  t = await startTestServer({ kubelet: false, namespaceDefaults: true });
});
afterAll(async () => {
  await t.stop();
});

describe("namespace defaults", () => {
  it("gives the namespaces a server starts with a default ServiceAccount and the root CA ConfigMap", async () => {
    for (const ns of ["default", "kube-system", "kube-public", "kube-node-lease"]) {
      const account = await eventually(() => found(sa(ns)), `${ns}/default`);
      expect(account).toMatchObject({
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name: "default", namespace: ns },
      });
      expect(Object.keys(account.metadata).sort()).toEqual(
        ["creationTimestamp", "name", "namespace", "resourceVersion", "uid"].sort(),
      );
      const cm = await eventually(() => found(rootCa(ns)), `${ns}/kube-root-ca.crt`);
      expect(cm.data).toEqual({ "ca.crt": t.server.caPem });
      expect(cm.metadata.annotations).toEqual({ "kubernetes.io/description": DESCRIPTION });
    }
  });

  it("gives a new namespace both", async () => {
    expect((await t.request("POST", "/api/v1/namespaces", { body: { metadata: { name: "fresh" } } })).status).toBe(201);
    await eventually(() => found(sa("fresh")), "fresh/default");
    const cm = await eventually(() => found(rootCa("fresh")), "fresh/kube-root-ca.crt");
    expect(cm.data["ca.crt"]).toBe(t.server.caPem);
  });

  it("re-creates a deleted default ServiceAccount and root CA ConfigMap", async () => {
    const before = await eventually(() => found(sa("default")), "default/default");
    expect((await t.request("DELETE", sa("default"))).status).toBe(200);
    const after = await eventually(
      () => found(sa("default"), (b) => b.metadata.uid !== before.metadata.uid),
      "a new default/default",
    );
    expect(after.metadata.name).toBe("default");
    const cm = await eventually(() => found(rootCa("default")), "default/kube-root-ca.crt");
    expect((await t.request("DELETE", rootCa("default"))).status).toBe(200);
    await eventually(
      () => found(rootCa("default"), (b) => b.metadata.uid !== cm.metadata.uid),
      "a new default/kube-root-ca.crt",
    );
  });

  it("puts back the CA data and description someone edited, keeping their other annotations", async () => {
    await eventually(() => found(rootCa("kube-public")), "kube-public/kube-root-ca.crt");
    const patched = await t.request("PATCH", rootCa("kube-public"), {
      body: {
        data: { "ca.crt": "forged", extra: "x" },
        metadata: { annotations: { "kubernetes.io/description": null, mine: "kept" } },
      },
      contentType: "application/merge-patch+json",
    });
    expect(patched.status, patched.text).toBe(200);
    const restored = await eventually(
      () => found(rootCa("kube-public"), (b) => b.data["ca.crt"] === t.server.caPem),
      "the CA to be restored",
    );
    expect(restored.data).toEqual({ "ca.crt": t.server.caPem });
    expect(restored.metadata.annotations).toEqual({ mine: "kept", "kubernetes.io/description": DESCRIPTION });
  });

  it("lets a namespace be deleted without re-creating its content while it terminates", async () => {
    expect((await t.request("POST", "/api/v1/namespaces", { body: { metadata: { name: "doomed" } } })).status).toBe(
      201,
    );
    await eventually(() => found(sa("doomed")), "doomed/default");
    await eventually(() => found(rootCa("doomed")), "doomed/kube-root-ca.crt");
    expect((await t.request("DELETE", "/api/v1/namespaces/doomed")).status).toBe(200);
    await eventually(
      async () => ((await t.request("GET", "/api/v1/namespaces/doomed")).status === 404 ? true : undefined),
      "the namespace to go",
    );
    expect((await t.request("GET", sa("doomed"))).status).toBe(404);
    expect((await t.request("GET", rootCa("doomed"))).status).toBe(404);
  });
});

describe("namespace defaults with RBAC", () => {
  it("kubectl create token default works in a namespace created a moment before", async () => {
    const dir = await mkdtemp(join(tmpdir(), "capstan-ns-defaults-"));
    const kubeconfigPath = join(dir, "kubeconfig");
    const server = await startApiServer({ kubeconfigPath, rbac: true, kubelet: false, namespaceDefaults: true });
    const env = { ...process.env, KUBECONFIG: kubeconfigPath, KUBECACHEDIR: join(dir, "cache"), HOME: dir };
    const kubectl = (...args: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        execFile("kubectl", args, { env, timeout: KUBECTL_TIMEOUT_MS }, (err, stdout, stderr) =>
          resolve({ code: err ? 1 : 0, stdout, stderr }),
        );
      });
    try {
      expect((await kubectl("create", "namespace", "team")).code).toBe(0);
      let token = await kubectl("create", "token", "default", "-n", "team");
      for (let i = 0; i < 100 && token.code !== 0; i++) {
        await new Promise((r) => setTimeout(r, 25));
        token = await kubectl("create", "token", "default", "-n", "team");
      }
      expect(token.stderr).toBe("");
      expect(token.code).toBe(0);
      const whoami = await kubectl(
        "auth",
        "whoami",
        "--token",
        token.stdout.trim(),
        "-o",
        "jsonpath={.status.userInfo.username}",
      );
      expect(whoami.stderr).toBe("");
      expect(whoami.stdout).toBe("system:serviceaccount:team:default");
    } finally {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
