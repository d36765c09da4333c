import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { startApiServer } from "../../packages/capstan-dev/src/devcluster/index.ts";
import { configMap, type RawHttpCluster, startRawHttpCluster } from "./support/http.ts";

let t: RawHttpCluster | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

describe("server skeleton", () => {
  it("serves HTTPS on a free port with a kubeconfig holding its CA and token", async () => {
    const dir = mkdtempSync(join(tmpdir(), "capstan-kc-"));
    const path = join(dir, "nested", "kubeconfig");
    t = await startRawHttpCluster({ kubeconfigPath: path });
    expect(t.server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const kc = parse(readFileSync(path, "utf8"));
    expect(kc.clusters[0].cluster.server).toBe(t.server.url);
    expect(Buffer.from(kc.clusters[0].cluster["certificate-authority-data"], "base64").toString()).toBe(t.server.caPem);
    expect(kc.users[0].user.token).toBe(t.server.token);
    const res = await t.request("GET", "/api/v1/namespaces/default");
    expect(res.status).toBe(200);
    expect(res.body.metadata.name).toBe("default");
  });

  it("answers a bearer token it did not issue with a 401 Unauthorized Status (no token is anonymous: rbac/anonymous.test.ts)", async () => {
    t = await startRawHttpCluster();
    for (const token of ["wrong", "x".repeat(64)]) {
      const res = await t.request("GET", "/api/v1/namespaces", { token });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: "Unauthorized",
        reason: "Unauthorized",
        code: 401,
      });
    }
  });

  it("starts with the default, kube-system and kube-public namespaces, Active with the kubernetes finalizer", async () => {
    t = await startRawHttpCluster();
    const res = await t.request("GET", "/api/v1/namespaces");
    const names = res.body.items.map((n: { metadata: { name: string } }) => n.metadata.name);
    expect(names).toEqual(expect.arrayContaining(["default", "kube-system", "kube-public"]));
    const ns = res.body.items.find((n: { metadata: { name: string } }) => n.metadata.name === "default");
    expect(ns.status.phase).toBe("Active");
    expect(ns.spec.finalizers).toEqual(["kubernetes"]);
  });

  it("stop() ends open watches and frees the port", async () => {
    t = await startRawHttpCluster();
    const watch = await t.watch("/api/v1/namespaces/default/configmaps?watch=true");
    expect(watch.status).toBe(200);
    const { url } = t.server;
    await t.server.stop();
    await watch.ended;
    const port = Number(new URL(url).port);
    const again = await startApiServer({ port });
    expect(again.url).toBe(url);
    await again.stop();
  });

  it("returns 404 with a NotFound Status for resources it does not serve in a served group version", async () => {
    t = await startRawHttpCluster();
    // Paths outside every group are Go's text 404 (negotiation/not-found.test.ts).
    for (const path of ["/api/v1/namespaces/default/widgets", "/apis/apps/v1/things", "/api/v2/pods"]) {
      const res = await t.request("GET", path);
      expect(res.status, path).toBe(404);
      expect(res.body.reason).toBe("NotFound");
      expect(res.body.message).toBe("the server could not find the requested resource");
    }
  });

  it("rejects bodies larger than 3 MiB with 413 and keeps serving", async () => {
    t = await startRawHttpCluster();
    const huge = JSON.stringify(configMap("big", { a: "x".repeat(3 * 1024 * 1024 + 10) }));
    const res = await t.request("POST", "/api/v1/namespaces/default/configmaps", { raw: huge });
    expect(res.status).toBe(413);
    expect(res.body.reason).toBe("RequestEntityTooLarge");
    expect(res.body.message).toBe("Request entity too large: limit is 3145728");
    expect((await t.request("GET", "/api/v1/namespaces/default")).status).toBe(200);
  });

  it("answers malformed JSON with 400 BadRequest and the decoder's message", async () => {
    t = await startRawHttpCluster();
    const res = await t.request("POST", "/api/v1/namespaces/default/configmaps", { raw: '{"metadata": {bad' });
    expect(res.status).toBe(400);
    expect(res.body.reason).toBe("BadRequest");
    expect(res.body.message).toBe(
      // transformDecodeError (handlers/rest.go) names the kind and quotes the body's start.
      `the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: invalid character 'b' looking for beginning of object key string ({"metadata": {bad)`,
    );
  });
});
