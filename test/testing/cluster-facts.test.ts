/**
 * What a test asks of its cluster before it relies on it: whether pods run (`runningPods`, detected
 * from the Nodes on an existing cluster), whether an API is served (`missingApi`), who the admin is
 * on every Kubernetes version (`whoami`), and how long garbage collection may take (`timeouts`).
 */
import "../client/support/reflect-metadata.ts";
import { webcrypto } from "node:crypto";
import * as x509 from "@peculiar/x509";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { KubeClient } from "../../packages/capstan/src/client/resource-client.ts";
import { detectRunningPods } from "../../packages/capstan-dev/src/testing/backends/running-pods.ts";
import { ServedApis } from "../../packages/capstan-dev/src/testing/backends/served-apis.ts";
import { whoami } from "../../packages/capstan-dev/src/testing/backends/whoami.ts";
import {
  capabilitiesOf,
  missingCapability,
  REAL_CLUSTER_GARBAGE_COLLECTION_TIMEOUT,
  startTestCluster,
  type TestCluster,
} from "../../packages/capstan-dev/src/testing/index.ts";
import { kubectlProcessTimeout } from "../../packages/capstan-dev/src/testing/kubectl.ts";

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

let cluster: TestCluster;
beforeAll(async () => {
  cluster = await startTestCluster({ backend: "embedded" });
});
afterAll(() => cluster.stop());

describe("runningPods", () => {
  it("is there on the embedded backend, whose simulated kubelet runs pods", () => {
    expect(cluster.capabilities.runningPods).toBe(true);
    expect(missingCapability("runningPods", cluster.capabilities)).toBeUndefined();
    expect(missingCapability("runningPods", "embedded")).toBeUndefined();
  });

  it("is missing on the embedded backend started without its kubelet, saying so", async () => {
    const bare = await startTestCluster({ backend: "embedded", kubelet: false });
    try {
      expect(bare.capabilities.runningPods).toBe(false);
      expect(missingCapability("runningPods", bare.capabilities)).toBe(
        "needs running pods (pods scheduled to a Ready Node and their containers started), which the embedded backend lacks: the cluster was started with kubelet: false",
      );
    } finally {
      await bare.stop();
    }
  });

  it("is missing on the envtest backend, which runs no scheduler and no kubelet", () => {
    expect(capabilitiesOf("envtest", { controllerManager: true }).runningPods).toBe(false);
    expect(missingCapability("runningPods", "envtest")).toBe(
      "needs running pods (pods scheduled to a Ready Node and their containers started), which the envtest backend lacks: its control plane runs no scheduler and no kubelet, so pods stay Pending",
    );
  });

  it("is asked of a started cluster on the kubeconfig backend, not guessed from the backend's name", () => {
    expect(() => missingCapability("runningPods", "kubeconfig")).toThrow(
      'whether the kubeconfig backend has running pods (pods scheduled to a Ready Node and their containers started) is asked of the cluster when it starts: read cluster.capabilities.runningPods, or missingCapability("runningPods", cluster.capabilities)',
    );
    expect(() => capabilitiesOf("kubeconfig")).toThrow("is asked of the cluster when it starts");
    // What is not detected is still known by name.
    expect(missingCapability("faults", "kubeconfig")).toContain("which the kubeconfig backend lacks");
  });

  it("is detected from the Nodes: one Ready and schedulable runs pods", async () => {
    expect(await detectRunningPods(cluster.client)).toEqual({ runningPods: true });
  });

  it("names the Nodes when none is Ready and schedulable, and says when there is no Node", async () => {
    const nodes = (items: unknown[]) => ({ request: async () => ({ items }) }) as unknown as KubeClient;
    const node = (name: string, ready: string, unschedulable?: boolean) => ({
      metadata: { name },
      spec: unschedulable === undefined ? {} : { unschedulable },
      status: { conditions: [{ type: "Ready", status: ready }] },
    });
    expect(await detectRunningPods(nodes([]))).toEqual({
      runningPods: false,
      runningPodsReason: "the cluster has no Node, so pods stay Pending",
    });
    expect(await detectRunningPods(nodes([node("a", "False"), node("b", "True", true), node("c", "Unknown")]))).toEqual(
      {
        runningPods: false,
        runningPodsReason:
          "no Node is Ready and schedulable (a not Ready, b cordoned, c not Ready), so pods stay Pending",
      },
    );
    expect(await detectRunningPods(nodes([node("a", "False"), node("b", "True")]))).toEqual({ runningPods: true });
  });

  it("counts pods as not running when the user may not list Nodes, and says it cannot tell", async () => {
    const sa = await cluster.serviceAccount("default/no-nodes");
    const fact = await detectRunningPods(sa.client);
    expect(fact.runningPods).toBe(false);
    expect(fact.runningPodsReason).toMatch(
      /^whether pods run cannot be told, as the kubeconfig's user may not list Nodes \(nodes is forbidden: User "system:serviceaccount:default:no-nodes" cannot list resource "nodes"/,
    );
  });
});

describe("ownCluster", () => {
  it("is missing only on the kubeconfig backend, whose TestClusters share one cluster", () => {
    expect(cluster.capabilities.ownCluster).toBe(true);
    expect(missingCapability("ownCluster", "envtest")).toBeUndefined();
    expect(missingCapability("ownCluster", "kubeconfig")).toBe(
      "needs a cluster of its own for each TestCluster (a new one holds no other run's CRDs or objects), which the kubeconfig backend lacks: every TestCluster is a namespace on the one existing cluster, shared with other runs",
    );
  });
});

describe("missingApi and serves", () => {
  it("says an API is served, and names the API, the backend and the server's version when it is not", async () => {
    expect(await cluster.serves("v1", "configmaps")).toBe(true);
    expect(await cluster.serves("v1", "pods/status")).toBe(true);
    expect(await cluster.missingApi("apps/v1", "deployments")).toBeUndefined();
    const version = (await cluster.client.request<{ gitVersion: string }>("GET", "/version")).gitVersion;
    expect(await cluster.missingApi("apps/v1", "gadgets")).toBe(
      `needs the API gadgets in apps/v1, which the embedded backend lacks: its API server (Kubernetes ${version}) does not serve it`,
    );
    // A group-version the server does not serve at all is a 404: served nothing.
    expect(await cluster.serves("nowhere.capstan.test/v1", "things")).toBe(false);
  });

  it("asks again after a miss: a CRD registered meanwhile is served", async () => {
    const apis = new ServedApis(cluster.client, "embedded");
    expect(await apis.serves("facts.capstan.test/v1", "widgets")).toBe(false);
    await cluster.client.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
      body: {
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        metadata: { name: "widgets.facts.capstan.test" },
        spec: {
          group: "facts.capstan.test",
          scope: "Namespaced",
          names: { plural: "widgets", singular: "widget", kind: "Widget" },
          versions: [
            {
              name: "v1",
              served: true,
              storage: true,
              schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
            },
          ],
        },
      },
    });
    await vi.waitFor(async () => expect(await apis.serves("facts.capstan.test/v1", "widgets")).toBe(true), {
      timeout: 5_000,
    });
  });
});

describe("whoami", () => {
  it("asks SelfSubjectReview where the server serves it", async () => {
    expect(await cluster.serves("authentication.k8s.io/v1", "selfsubjectreviews")).toBe(true);
    const admin = await cluster.whoami();
    expect(admin.username).toBe("capstan-admin");
    expect(admin.groups).toContain("system:masters");
    const kubectl = await cluster.kubectl(["auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"]);
    expect(kubectl.stdout).toBe(admin.username);
  });

  it("reviews the client's bearer token where SelfSubjectReview is not served (Kubernetes 1.26)", async () => {
    const none = { serves: async () => false } as unknown as ServedApis;
    expect(await whoami(cluster.client, none)).toMatchObject({
      username: "capstan-admin",
      groups: expect.arrayContaining(["system:masters", "system:authenticated"]),
    });
    const sa = await cluster.serviceAccount("default/reviewed");
    // The admin reviews the ServiceAccount's token: whoami's own client must be allowed to.
    const asSa = {
      config: sa.client.config,
      request: (method: string, path: string, opts: object) => cluster.client.request(method, path, opts),
    } as unknown as KubeClient;
    expect((await whoami(asSa, none)).username).toBe("system:serviceaccount:default:reviewed");
  });

  it("reads a client certificate's subject when there is no token: CN the user, each O a group", async () => {
    const alg = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;
    const keys = (await webcrypto.subtle.generateKey(alg, true, ["sign", "verify"])) as webcrypto.CryptoKeyPair;
    const cert = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: "01",
      name: "O=system:masters, O=devs, CN=alice",
      notBefore: new Date(Date.now() - 60_000),
      notAfter: new Date(Date.now() + 3_600_000),
      keys,
      signingAlgorithm: alg,
    });
    const client = {
      config: { credentials: { headers: () => ({}) }, tls: { cert: cert.toString("pem") } },
    } as unknown as KubeClient;
    const none = { serves: async () => false } as unknown as ServedApis;
    expect(await whoami(client, none)).toEqual({
      username: "alice",
      groups: ["system:masters", "devs", "system:authenticated"],
    });
  });
});

describe("timeouts", () => {
  it("gives garbage collection the default wait on the embedded backend, and a minute on a real cluster", () => {
    expect(cluster.timeouts).toEqual({ wait: "10000ms", garbageCollection: "10s" });
    expect(REAL_CLUSTER_GARBAGE_COLLECTION_TIMEOUT).toBe("60s");
  });
});

describe("kubectl's process timeout", () => {
  it("outlasts a command's own --timeout, so kubectl's message is what the test sees", () => {
    expect(kubectlProcessTimeout(["get", "pods"])).toBe("20s");
    expect(kubectlProcessTimeout(["wait", "--for=delete", "--timeout=60s", "pod/x"])).toBe(80_000);
    expect(kubectlProcessTimeout(["rollout", "status", "deploy/x", "--timeout", "1m30s"])).toBe(110_000);
    expect(kubectlProcessTimeout(["wait", "--timeout=60000ms", "pod/x"])).toBe(80_000);
    // kubectl names a bad duration itself; a timeout given to the runner wins.
    expect(kubectlProcessTimeout(["wait", "--timeout=soon", "pod/x"])).toBe("20s");
    expect(kubectlProcessTimeout(["wait", "--timeout=60s", "pod/x"], { timeout: "5s" })).toBe("5s");
  });
});
