/**
 * metadata.generation of workloads, as kube-apiserver's strategies move it
 * (pkg/registry/apps/deployment/strategy.go, daemonset/strategy.go): a Deployment's rises on spec or
 * annotation changes of the main resource only, and its controller records the revision annotation
 * with UpdateStatus, which moves neither; a DaemonSet's template generation (its
 * `deprecated.daemonset.template.generation` annotation) rises with template changes only.
 */
import { waitUntil } from "capstan-dev/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RawHttpCluster, startRawHttpCluster } from "../support/http.ts";

let t: RawHttpCluster;
beforeAll(async () => {
  t = await startRawHttpCluster();
});
afterAll(async () => {
  await t?.stop();
});

const DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments";
const DAEMONSETS = "/apis/apps/v1/namespaces/default/daemonsets";
const REVISION = "deployment.kubernetes.io/revision";
const TEMPLATE_GENERATION = "deprecated.daemonset.template.generation";

const labels = { app: "gen" };
const template = (image: string) => ({ metadata: { labels }, spec: { containers: [{ name: "app", image }] } });

/** The Deployment once its controller has recorded `revision` and observed its current generation. */
async function deploymentAt(name: string, revision: string) {
  return waitUntil(async () => {
    const d = (await t.request("GET", `${DEPLOYMENTS}/${name}`)).body;
    const settled =
      d.metadata.annotations?.[REVISION] === revision && d.status?.observedGeneration === d.metadata.generation;
    return settled ? d : undefined;
  });
}

async function mergePatch(path: string, patch: unknown) {
  const res = await t.request("PATCH", path, { body: patch, contentType: "application/merge-patch+json" });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

describe("a Deployment's generation", () => {
  it("moves with spec and annotation writes, not with the controller's revision or labels", async () => {
    const created = await t.request("POST", DEPLOYMENTS, {
      body: {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "gen" },
        spec: { replicas: 1, selector: { matchLabels: labels }, template: template("nginx:1") },
      },
    });
    expect(created.status, created.text).toBe(201);
    expect((await deploymentAt("gen", "1")).metadata.generation).toBe(1);

    await mergePatch(`${DEPLOYMENTS}/gen`, {
      spec: { template: { spec: { containers: [{ name: "app", image: "nginx:2" }] } } },
    });
    const rolled = await deploymentAt("gen", "2");
    expect(rolled.metadata.generation).toBe(2);

    // The same object put back changes nothing. The controller may still write the status (the
    // simulated pods becoming ready) between the read and the put: read again on a 409.
    const unchanged = await waitUntil(async () => {
      const current = (await t.request("GET", `${DEPLOYMENTS}/gen`)).body;
      const res = await t.request("PUT", `${DEPLOYMENTS}/gen`, { body: current });
      return res.status === 409 ? undefined : res;
    });
    expect(unchanged.status, unchanged.text).toBe(200);
    expect(unchanged.body.metadata.generation).toBe(2);

    expect(
      (await mergePatch(`${DEPLOYMENTS}/gen`, { metadata: { annotations: { note: "x" } } })).metadata.generation,
    ).toBe(3);
    expect(
      (await mergePatch(`${DEPLOYMENTS}/gen`, { metadata: { labels: { tier: "web" } } })).metadata.generation,
    ).toBe(3);
    const scaled = await t.request("PATCH", `${DEPLOYMENTS}/gen/scale`, {
      body: { spec: { replicas: 2 } },
      contentType: "application/merge-patch+json",
    });
    expect(scaled.status, scaled.text).toBe(200);
    const final = (await t.request("GET", `${DEPLOYMENTS}/gen`)).body;
    expect(final.metadata.generation).toBe(4);
    expect(final.metadata.annotations).toMatchObject({ [REVISION]: "2", note: "x" });
  });

  it("keeps a /status write's annotations but not its labels or spec", async () => {
    const created = await t.request("POST", DEPLOYMENTS, {
      body: {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "status-meta", labels: { keep: "me" } },
        spec: { replicas: 0, selector: { matchLabels: labels }, template: template("nginx:1") },
      },
    });
    expect(created.status, created.text).toBe(201);
    const current = await deploymentAt("status-meta", "1");
    const res = await t.request("PUT", `${DEPLOYMENTS}/status-meta/status`, {
      body: {
        ...current,
        metadata: {
          ...current.metadata,
          labels: { other: "x" },
          annotations: { ...current.metadata.annotations, via: "status" },
        },
        spec: { ...current.spec, replicas: 5 },
      },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.metadata).toMatchObject({ labels: { keep: "me" }, annotations: { via: "status" }, generation: 1 });
    expect(res.body.spec.replicas).toBe(0);
  });
});

describe("a DaemonSet's template generation", () => {
  it("rises with template changes only, whatever the client writes into its annotation", async () => {
    const created = await t.request("POST", DAEMONSETS, {
      body: {
        apiVersion: "apps/v1",
        kind: "DaemonSet",
        metadata: { name: "gen" },
        spec: { selector: { matchLabels: labels }, template: template("nginx:1") },
      },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body.metadata).toMatchObject({ generation: 1, annotations: { [TEMPLATE_GENERATION]: "1" } });

    const forged = await mergePatch(`${DAEMONSETS}/gen`, { metadata: { annotations: { [TEMPLATE_GENERATION]: "7" } } });
    expect(forged.metadata).toMatchObject({ generation: 1, annotations: { [TEMPLATE_GENERATION]: "1" } });

    const rolled = await mergePatch(`${DAEMONSETS}/gen`, {
      spec: { template: { spec: { containers: [{ name: "app", image: "nginx:2" }] } } },
    });
    expect(rolled.metadata).toMatchObject({ generation: 2, annotations: { [TEMPLATE_GENERATION]: "2" } });

    const outside = await mergePatch(`${DAEMONSETS}/gen`, { spec: { minReadySeconds: 5 } });
    expect(outside.metadata).toMatchObject({ generation: 3, annotations: { [TEMPLATE_GENERATION]: "2" } });
  });
});
