/**
 * Pods run as a ServiceAccount: one created without `spec.serviceAccountName` gets `default` (the
 * ServiceAccount admission plugin), `spec.serviceAccount` reads back as the same name (core/v1's
 * deprecated alias), and mirror pods are left alone.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RawHttpCluster, startRawHttpCluster } from "../support/http.ts";

let t: RawHttpCluster;
const PODS = "/api/v1/namespaces/default/pods";

const pod = (name: string, spec: Record<string, unknown> = {}, annotations?: Record<string, string>) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, ...(annotations ? { annotations } : {}) },
  spec: { containers: [{ name: "app", image: "nginx:1.27" }], ...spec },
});

beforeAll(async () => {
  t = await startRawHttpCluster({ kubelet: false });
});
afterAll(async () => {
  await t.stop();
});

describe("ServiceAccount admission of pods", () => {
  it("gives a pod without serviceAccountName the default ServiceAccount", async () => {
    const res = await t.request("POST", PODS, { body: pod("plain") });
    expect(res.status, res.text).toBe(201);
    expect(res.body.spec.serviceAccountName).toBe("default");
    expect(res.body.spec.serviceAccount).toBe("default");
  });

  it("keeps a named ServiceAccount and mirrors it into the deprecated serviceAccount field", async () => {
    const res = await t.request("POST", PODS, { body: pod("named", { serviceAccountName: "robot" }) });
    expect(res.status, res.text).toBe(201);
    expect(res.body.spec).toMatchObject({ serviceAccountName: "robot", serviceAccount: "robot" });
  });

  it("reads the deprecated serviceAccount when serviceAccountName is empty", async () => {
    const res = await t.request("POST", PODS, { body: pod("legacy", { serviceAccount: "old-style" }) });
    expect(res.status, res.text).toBe(201);
    expect(res.body.spec).toMatchObject({ serviceAccountName: "old-style", serviceAccount: "old-style" });
  });

  it("leaves mirror pods without a ServiceAccount", async () => {
    const res = await t.request("POST", PODS, {
      // A mirror pod is bound to the node whose kubelet mirrors it (validation requires spec.nodeName).
      body: pod("mirror", { nodeName: "node-1" }, { "kubernetes.io/config.mirror": "abc" }),
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body.spec.serviceAccountName).toBeUndefined();
    expect(res.body.spec.serviceAccount).toBeUndefined();
  });

  it("does not touch other kinds with a spec", async () => {
    const res = await t.request("POST", "/api/v1/namespaces/default/services", {
      body: { apiVersion: "v1", kind: "Service", metadata: { name: "svc" }, spec: { ports: [{ port: 80 }] } },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body.spec.serviceAccountName).toBeUndefined();
  });
});
