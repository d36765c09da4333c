import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RawHttpCluster, startRawHttpCluster } from "./support/http.ts";

// kubectl's typed commands (create <kind>, run) send protobuf bodies: these tests use the real binary.
let t: RawHttpCluster;
let kubeconfig: string;
beforeAll(async () => {
  kubeconfig = join(mkdtempSync(join(tmpdir(), "capstan-pb-")), "kubeconfig");
  t = await startRawHttpCluster({ kubeconfigPath: kubeconfig });
});
afterAll(async () => {
  await t.stop();
});

function kubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.env.KUBECTL ?? "kubectl",
      ["--kubeconfig", kubeconfig, ...args],
      { timeout: 20_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

describe("protobuf request bodies (kubectl's typed commands)", () => {
  it("creates a namespace, a configmap and a secret from kubectl create", async () => {
    expect((await kubectl("create", "namespace", "pb")).code).toBe(0);
    expect(
      (await kubectl("create", "configmap", "c", "-n", "pb", "--from-literal=a=1", "--from-literal=b=2")).code,
    ).toBe(0);
    expect((await kubectl("create", "secret", "generic", "s", "-n", "pb", "--from-literal=pw=hunter2")).code).toBe(0);
    const ns = await t.request("GET", "/api/v1/namespaces/pb");
    expect(ns.body.status.phase).toBe("Active");
    const cm = await t.request("GET", "/api/v1/namespaces/pb/configmaps/c");
    expect(cm.body.data).toEqual({ a: "1", b: "2" });
    expect(cm.body.metadata.creationTimestamp).toMatch(/Z$/);
    const secret = await t.request("GET", "/api/v1/namespaces/pb/secrets/s");
    expect(Buffer.from(secret.body.data.pw, "base64").toString()).toBe("hunter2");
    expect(secret.body.type).toBe("Opaque");
  });

  it("creates a deployment with its pod template and replicas from kubectl create deployment", async () => {
    const res = await kubectl("create", "deployment", "web", "--image=nginx:1.27", "--replicas=3", "--port=8080");
    expect(res.code, res.stderr).toBe(0);
    const deploy = await t.request("GET", "/apis/apps/v1/namespaces/default/deployments/web");
    expect(deploy.body.spec.replicas).toBe(3);
    expect(deploy.body.spec.selector).toEqual({ matchLabels: { app: "web" } });
    expect(deploy.body.spec.template.spec.containers[0]).toMatchObject({
      name: "nginx",
      image: "nginx:1.27",
      ports: [{ containerPort: 8080, protocol: "TCP" }],
    });
  });

  it("answers a body without the k8s protobuf prefix with 400", async () => {
    const res = await t.request("POST", "/api/v1/namespaces/default/configmaps", {
      raw: Buffer.from([1, 2, 3, 4, 5]),
      contentType: "application/vnd.kubernetes.protobuf",
    });
    expect(res.status).toBe(400);
    expect(res.body.reason).toBe("BadRequest");
  });
});
