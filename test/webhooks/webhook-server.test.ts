import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitUntil } from "capstan-dev/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KubeObject } from "../../packages/capstan/src/client/types.ts";
import { AdmissionDenied } from "../../packages/capstan/src/webhooks/admission.ts";
import { WebhookServer } from "../../packages/capstan/src/webhooks/webhook-server.ts";
import { applyJsonPatch, decodeJsonPatch } from "../../packages/capstan-dev/src/devcluster/patch/json-patch.ts";
import { createServingCertificates, type ServingCertificates } from "../../packages/capstan-dev/src/devcluster/tls.ts";

interface Answer {
  status: number;
  text: string;
  json?: { apiVersion: string; kind: string; response: Record<string, unknown> };
}

function post(port: number, ca: string, path: string, body: string, contentType = "application/json"): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      // No agent: a fresh TLS handshake each time (a resumed session would skip the certificate check).
      { host: "127.0.0.1", port, path, method: "POST", ca, agent: false, headers: { "content-type": contentType } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          const json = res.headers["content-type"]?.startsWith("application/json") ? JSON.parse(text) : undefined;
          resolve({ status: res.statusCode ?? 0, text, json });
        });
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const machine = (switchPosition: string): KubeObject & { spec: { switchPosition: string } } => ({
  apiVersion: "useless.capstan.test/v1alpha1",
  kind: "Machine",
  metadata: { name: "m", namespace: "ns", labels: { app: "x" } },
  spec: { switchPosition },
});

function review(
  object: KubeObject | undefined,
  extra: Record<string, unknown> = {},
  apiVersion = "admission.k8s.io/v1",
) {
  return JSON.stringify({
    apiVersion,
    kind: "AdmissionReview",
    request: {
      uid: "0f1e2d3c",
      kind: { group: "useless.capstan.test", version: "v1alpha1", kind: "Machine" },
      resource: { group: "useless.capstan.test", version: "v1alpha1", resource: "machines" },
      name: "m",
      namespace: "ns",
      operation: "CREATE",
      userInfo: { username: "alice", groups: ["system:authenticated"] },
      object: object ?? null,
      oldObject: null,
      dryRun: false,
      ...extra,
    },
  });
}

let certs: ServingCertificates;
let server: WebhookServer;
beforeAll(async () => {
  certs = await createServingCertificates();
  server = new WebhookServer({ port: 0, host: "127.0.0.1", tls: { cert: certs.certPem, key: certs.keyPem } });
  server.register("/validate", {
    name: "switch-position",
    type: "validating",
    fn: ({ obj, warn, userInfo }) => {
      warn(`checked for ${userInfo.username}`);
      const position = (obj as ReturnType<typeof machine>).spec.switchPosition;
      if (position !== "up" && position !== "down")
        throw new AdmissionDenied(`switchPosition "${position}" is neither up nor down`);
    },
  });
  server.register("/mutate", {
    name: "created-by",
    type: "mutating",
    fn: ({ obj, userInfo }) => {
      obj.metadata = {
        ...obj.metadata,
        annotations: { "useless.container.training/created-by": userInfo.username ?? "" },
      };
    },
  });
  server.register("/mutate-returning", {
    name: "returning",
    type: "mutating",
    fn: ({ obj }) => ({ ...obj, spec: { switchPosition: "down" } }),
  });
  server.register("/broken", {
    name: "broken",
    type: "validating",
    fn: () => {
      throw new TypeError("cannot read properties of undefined");
    },
  });
  server.register("/slow", { name: "slow", type: "validating", timeoutMs: 50, fn: () => new Promise(() => {}) });
  await server.start();
});
afterAll(async () => {
  await server.stop();
});

describe("admission over HTTPS", () => {
  it("allows, echoing the uid and the request's version, with the handler's warnings", async () => {
    const answer = await post(server.port, certs.caPem, "/validate", review(machine("up")));
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      response: { uid: "0f1e2d3c", allowed: true, warnings: ["checked for alice"] },
    });
    const beta = await post(
      server.port,
      certs.caPem,
      "/validate",
      review(machine("up"), {}, "admission.k8s.io/v1beta1"),
    );
    expect(beta.json?.apiVersion).toBe("admission.k8s.io/v1beta1");
  });

  it("denies with the handler's message and 403 Forbidden", async () => {
    const answer = await post(server.port, certs.caPem, "/validate", review(machine("sideways")));
    expect(answer.json?.response).toEqual({
      uid: "0f1e2d3c",
      allowed: false,
      status: { code: 403, reason: "Forbidden", message: 'switchPosition "sideways" is neither up nor down' },
      warnings: ["checked for alice"],
    });
  });

  it("answers a mutation as a JSON Patch that turns the sent object into the handler's", async () => {
    for (const [path, expected] of [
      [
        "/mutate",
        {
          ...machine("up"),
          metadata: { ...machine("up").metadata, annotations: { "useless.container.training/created-by": "alice" } },
        },
      ],
      ["/mutate-returning", machine("down")],
    ] as const) {
      const answer = await post(server.port, certs.caPem, path, review(machine("up")));
      const response = answer.json?.response as { allowed: boolean; patchType: string; patch: string };
      expect(response.allowed).toBe(true);
      expect(response.patchType).toBe("JSONPatch");
      const patch = JSON.parse(Buffer.from(response.patch, "base64").toString("utf8"));
      expect(applyJsonPatch(machine("up"), decodeJsonPatch(patch))).toEqual(expected);
    }
    // Nothing changed (a DELETE has no object to change): no patch.
    const deleted = await post(
      server.port,
      certs.caPem,
      "/mutate",
      review(undefined, { operation: "DELETE", oldObject: machine("up") }),
    );
    expect(deleted.json?.response).toEqual({ uid: "0f1e2d3c", allowed: true });
  });

  it("denies with 500 and the error when a handler throws, and when it does not answer in time", async () => {
    const broken = await post(server.port, certs.caPem, "/broken", review(machine("up")));
    expect(broken.json?.response).toMatchObject({
      allowed: false,
      status: { code: 500, message: "broken failed: cannot read properties of undefined" },
    });
    const slow = await post(server.port, certs.caPem, "/slow", review(machine("up")));
    expect(slow.json?.response).toMatchObject({
      allowed: false,
      status: { code: 500, message: "slow did not answer within 50 ms" },
    });
  });

  it("answers bad requests with the HTTP status and what is wrong", async () => {
    const unknown = await post(server.port, certs.caPem, "/nowhere", review(machine("up")));
    expect([unknown.status, unknown.text]).toEqual([404, "no webhook at /nowhere\n"]);
    const yaml = await post(server.port, certs.caPem, "/validate", "a: b", "application/yaml");
    expect(yaml.status).toBe(415);
    const notJson = await post(server.port, certs.caPem, "/validate", "{", "application/json");
    expect(notJson.status).toBe(400);
    expect(notJson.text).toMatch(/^the body is not JSON/);
    const noUid = await post(server.port, certs.caPem, "/validate", review(machine("up"), { uid: "" }));
    expect([noUid.status, noUid.text]).toEqual([400, "request.uid is missing\n"]);
    const wrongKind = await post(
      server.port,
      certs.caPem,
      "/validate",
      JSON.stringify({ apiVersion: "v1", kind: "Pod" }),
    );
    expect(wrongKind.text).toMatch(/expected an AdmissionReview of admission.k8s.io\/v1 or admission.k8s.io\/v1beta1/);
    const huge = await post(server.port, certs.caPem, "/validate", "x".repeat(8 * 1024 * 1024));
    expect(huge.status).toBe(413);
  });
});

describe("serving certificates from a directory", () => {
  it("says which files are missing, and serves a renewed pair without a restart", async () => {
    const dir = await mkdtemp(join(tmpdir(), "capstan-webhook-certs-"));
    try {
      const missing = new WebhookServer({ port: 0, host: "127.0.0.1", certDir: dir });
      await expect(missing.start()).rejects.toThrow(`cannot read ${join(dir, "tls.crt")} and ${join(dir, "tls.key")}`);

      const first = await createServingCertificates();
      await writeFile(join(dir, "tls.crt"), first.certPem);
      await writeFile(join(dir, "tls.key"), first.keyPem);
      const served = new WebhookServer({ port: 0, host: "127.0.0.1", certDir: dir, certReloadMs: 50 });
      served.register("/validate", { name: "v", type: "validating", fn: () => {} });
      await served.start();
      try {
        expect((await post(served.port, first.caPem, "/validate", review(machine("up")))).status).toBe(200);
        const renewed = await createServingCertificates();
        await writeFile(join(dir, "tls.key"), renewed.keyPem);
        await writeFile(join(dir, "tls.crt"), renewed.certPem);
        await waitUntil(
          async () =>
            (await post(served.port, renewed.caPem, "/validate", review(machine("up"))).catch(() => undefined))
              ?.status === 200,
          { what: "the renewed certificate served" },
        );
        await expect(post(served.port, first.caPem, "/validate", review(machine("up")))).rejects.toThrow();
        expect(await served.startedCheck()).toBe(true);
      } finally {
        await served.stop();
      }
      // What /readyz asks: a stopped server is not ready.
      expect(await served.startedCheck()).toBe(false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
