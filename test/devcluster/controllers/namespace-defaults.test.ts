/**
 * With `namespaceDefaults: true`, every namespace gets the `default` ServiceAccount (serviceaccounts controller) and the
 * `kube-root-ca.crt` ConfigMap holding the devcluster's CA (root CA publisher): the namespaces that
 * exist at start, new ones, and again after someone deletes or edits them.
 */
import { startTestCluster, waitUntil } from "capstan-dev/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RawHttpCluster, startRawHttpCluster } from "../support/http.ts";

let t: RawHttpCluster;

const DESCRIPTION =
  "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.";

// biome-ignore lint/suspicious/noExplicitAny: test assertions read arbitrary JSON
async function found(path: string, accept: (body: any) => boolean = () => true): Promise<any> {
  const res = await t.request("GET", path);
  return res.status === 200 && accept(res.body) ? res.body : undefined;
}

const sa = (ns: string) => `/api/v1/namespaces/${ns}/serviceaccounts/default`;
const rootCa = (ns: string) => `/api/v1/namespaces/${ns}/configmaps/kube-root-ca.crt`;

beforeAll(async () => {
  t = await startRawHttpCluster({ kubelet: false, namespaceDefaults: true });
});
afterAll(async () => {
  await t.stop();
});

describe("namespace defaults", () => {
  it("gives the namespaces a server starts with a default ServiceAccount and the root CA ConfigMap", async () => {
    for (const ns of ["default", "kube-system", "kube-public", "kube-node-lease"]) {
      const account = await waitUntil(() => found(sa(ns)), { what: `${ns}/default` });
      expect(account).toMatchObject({
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name: "default", namespace: ns },
      });
      expect(Object.keys(account.metadata).sort()).toEqual(
        ["creationTimestamp", "name", "namespace", "resourceVersion", "uid"].sort(),
      );
      const cm = await waitUntil(() => found(rootCa(ns)), { what: `${ns}/kube-root-ca.crt` });
      expect(cm.data).toEqual({ "ca.crt": t.server.caPem });
      expect(cm.metadata.annotations).toEqual({ "kubernetes.io/description": DESCRIPTION });
    }
  });

  it("gives a new namespace both", async () => {
    expect((await t.request("POST", "/api/v1/namespaces", { body: { metadata: { name: "fresh" } } })).status).toBe(201);
    await waitUntil(() => found(sa("fresh")), { what: "fresh/default" });
    const cm = await waitUntil(() => found(rootCa("fresh")), { what: "fresh/kube-root-ca.crt" });
    expect(cm.data["ca.crt"]).toBe(t.server.caPem);
  });

  it("re-creates a deleted default ServiceAccount and root CA ConfigMap", async () => {
    const before = await waitUntil(() => found(sa("default")), { what: "default/default" });
    expect((await t.request("DELETE", sa("default"))).status).toBe(200);
    const after = await waitUntil(() => found(sa("default"), (b) => b.metadata.uid !== before.metadata.uid), {
      what: "a new default/default",
    });
    expect(after.metadata.name).toBe("default");
    const cm = await waitUntil(() => found(rootCa("default")), { what: "default/kube-root-ca.crt" });
    expect((await t.request("DELETE", rootCa("default"))).status).toBe(200);
    await waitUntil(() => found(rootCa("default"), (b) => b.metadata.uid !== cm.metadata.uid), {
      what: "a new default/kube-root-ca.crt",
    });
  });

  it("puts back the CA data and description someone edited, keeping their other annotations", async () => {
    await waitUntil(() => found(rootCa("kube-public")), { what: "kube-public/kube-root-ca.crt" });
    const patched = await t.request("PATCH", rootCa("kube-public"), {
      body: {
        data: { "ca.crt": "forged", extra: "x" },
        metadata: { annotations: { "kubernetes.io/description": null, mine: "kept" } },
      },
      contentType: "application/merge-patch+json",
    });
    expect(patched.status, patched.text).toBe(200);
    const restored = await waitUntil(() => found(rootCa("kube-public"), (b) => b.data["ca.crt"] === t.server.caPem), {
      what: "the CA to be restored",
    });
    expect(restored.data).toEqual({ "ca.crt": t.server.caPem });
    expect(restored.metadata.annotations).toEqual({ mine: "kept", "kubernetes.io/description": DESCRIPTION });
  });

  it("lets a namespace be deleted without re-creating its content while it terminates", async () => {
    expect((await t.request("POST", "/api/v1/namespaces", { body: { metadata: { name: "doomed" } } })).status).toBe(
      201,
    );
    await waitUntil(() => found(sa("doomed")), { what: "doomed/default" });
    await waitUntil(() => found(rootCa("doomed")), { what: "doomed/kube-root-ca.crt" });
    expect((await t.request("DELETE", "/api/v1/namespaces/doomed")).status).toBe(200);
    await waitUntil(
      async () => ((await t.request("GET", "/api/v1/namespaces/doomed")).status === 404 ? true : undefined),
      { what: "the namespace to go" },
    );
    expect((await t.request("GET", sa("doomed"))).status).toBe(404);
    expect((await t.request("GET", rootCa("doomed"))).status).toBe(404);
  });
});

describe("namespace defaults with RBAC", () => {
  it("kubectl create token default works in a namespace created a moment before", async () => {
    const cluster = await startTestCluster({ kubelet: false, namespaceDefaults: true });
    const kubectl = (...args: string[]) => cluster.kubectl(args);
    try {
      expect((await kubectl("create", "namespace", "team")).code).toBe(0);
      // The namespace's default ServiceAccount comes a moment after the namespace.
      const token = await waitUntil(
        async () => {
          const created = await kubectl("create", "token", "default", "-n", "team");
          return created.code === 0 ? created : undefined;
        },
        { what: "a token for team/default" },
      );
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
      await cluster.stop();
    }
  });
});
