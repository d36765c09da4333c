/**
 * The embedded API server's side of an admission call, against the operator's webhook server over
 * real HTTPS: the AdmissionReview it sends, the answer it reads, and the failures as Go words them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AdmissionDenied } from "../../../packages/capstan/src/webhooks/admission.ts";
import { WebhookServer } from "../../../packages/capstan/src/webhooks/webhook-server.ts";
import {
  type AdmissionAttributes,
  callWebhook,
  WebhookCallError,
} from "../../../packages/capstan-dev/src/devcluster/admission/webhook-call.ts";
import { rejection } from "../../../packages/capstan-dev/src/devcluster/admission/webhook-response.ts";
import {
  createServingCertificates,
  type ServingCertificates,
} from "../../../packages/capstan-dev/src/devcluster/tls.ts";

const attrs = (switchPosition: string): AdmissionAttributes => ({
  kind: { group: "useless.capstan.test", version: "v1alpha1", kind: "Machine" },
  resource: { group: "useless.capstan.test", version: "v1alpha1", resource: "machines" },
  subResource: "",
  name: "m",
  namespace: "ns",
  operation: "CREATE",
  userInfo: { username: "alice", groups: ["system:authenticated"] },
  object: {
    apiVersion: "useless.capstan.test/v1alpha1",
    kind: "Machine",
    metadata: { name: "m" },
    spec: { switchPosition },
  },
  oldObject: null,
  dryRun: false,
  options: { apiVersion: "meta.k8s.io/v1", kind: "CreateOptions" },
});

let certs: ServingCertificates;
let server: WebhookServer;
const seen: unknown[] = [];
beforeAll(async () => {
  certs = await createServingCertificates();
  server = new WebhookServer({ port: 0, host: "127.0.0.1", tls: { cert: certs.certPem, key: certs.keyPem } });
  server.register("/validate", {
    name: "position",
    type: "validating",
    fn: ({ obj, request, warn }) => {
      seen.push(request);
      warn("looked at it");
      const spec = (obj as { spec: { switchPosition: string } }).spec;
      if (spec.switchPosition === "sideways") throw new AdmissionDenied("sideways is not a position");
    },
  });
  server.register("/mutate", {
    name: "created-by",
    type: "mutating",
    fn: ({ obj, userInfo }) => {
      obj.metadata = { ...obj.metadata, annotations: { "created-by": userInfo.username ?? "" } };
    },
  });
  server.register("/slow", {
    name: "slow",
    type: "validating",
    timeoutMs: 5_000,
    fn: () => new Promise((r) => setTimeout(r, 3_000)),
  });
  await server.start();
});
afterAll(async () => {
  await server.stop();
});

const webhook = (path: string, extra: Record<string, unknown> = {}) => ({
  name: "position.machines.useless.capstan.dev",
  clientConfig: {
    url: `https://127.0.0.1:${server.port}${path}`,
    caBundle: Buffer.from(certs.caPem).toString("base64"),
  },
  ...extra,
});

describe("calling an admission webhook from the embedded API server", () => {
  it("sends the request's attributes and reads an allowed answer with its warnings", async () => {
    const answer = await callWebhook(webhook("/validate"), attrs("up"), false);
    expect(answer).toMatchObject({ allowed: true, warnings: ["looked at it"] });
    expect(seen.at(-1)).toMatchObject({
      kind: { kind: "Machine" },
      requestKind: { kind: "Machine" },
      resource: { resource: "machines" },
      operation: "CREATE",
      userInfo: { username: "alice" },
      dryRun: false,
      options: { kind: "CreateOptions" },
      namespace: "ns",
      name: "m",
    });
  });

  it("reads a denial, which the server answers as the webhook's Status with kube-apiserver's prefix", async () => {
    const answer = await callWebhook(webhook("/validate"), attrs("sideways"), false);
    expect(answer.allowed).toBe(false);
    expect(rejection("position.machines.useless.capstan.dev", answer.result).status).toMatchObject({
      code: 403,
      message:
        'admission webhook "position.machines.useless.capstan.dev" denied the request: sideways is not a position',
    });
  });

  it("reads a mutating webhook's JSON Patch", async () => {
    const answer = await callWebhook(webhook("/mutate"), attrs("up"), true);
    expect(answer.patchType).toBe("JSONPatch");
    expect(JSON.parse(answer.patch?.toString("utf8") ?? "")).toEqual([
      { op: "add", path: "/metadata/annotations", value: { "created-by": "alice" } },
    ]);
  });

  it("says why a call failed, as Go words it: refused, unknown authority, deadline, no URL", async () => {
    const stopped = new WebhookServer({ port: 0, host: "127.0.0.1", tls: { cert: certs.certPem, key: certs.keyPem } });
    await stopped.start();
    const port = stopped.port;
    await stopped.stop();
    await expect(
      callWebhook(
        {
          ...webhook("/validate"),
          clientConfig: { ...webhook("/validate").clientConfig, url: `https://127.0.0.1:${port}/validate` },
        },
        attrs("up"),
        false,
      ),
    ).rejects.toThrow(
      new WebhookCallError(
        `failed to call webhook: Post "https://127.0.0.1:${port}/validate?timeout=10s": dial tcp 127.0.0.1:${port}: connect: connection refused`,
      ),
    );
    const other = await createServingCertificates();
    await expect(
      callWebhook(
        {
          ...webhook("/validate"),
          clientConfig: {
            url: webhook("/validate").clientConfig.url,
            caBundle: Buffer.from(other.caPem).toString("base64"),
          },
        },
        attrs("up"),
        false,
      ),
    ).rejects.toThrow(/tls: failed to verify certificate: x509: certificate signed by unknown authority$/);
    await expect(callWebhook(webhook("/slow", { timeoutSeconds: 1 }), attrs("up"), false)).rejects.toThrow(
      /^failed to call webhook: Post "https:\/\/127\.0\.0\.1:\d+\/slow\?timeout=1s": context deadline exceeded$/,
    );
    // A path the webhook server does not serve: client-go's wording of a 404 without a Status body,
    // an answer and not a transport failure, so without `Post "<url>":` (rest/request.go Result.Error).
    await expect(callWebhook(webhook("/nowhere"), attrs("up"), false)).rejects.toThrow(
      /^failed to call webhook: the server could not find the requested resource$/,
    );
    await expect(
      callWebhook({ name: "w", clientConfig: { service: { name: "svc", namespace: "ops" } } }, attrs("up"), false),
    ).rejects.toThrow(/service ops\/svc cannot be reached from the embedded API server/);
    await expect(
      callWebhook(webhook("/validate", { admissionReviewVersions: ["v2"] }), attrs("up"), false),
    ).rejects.toThrow(
      "could not create admission objects: webhook does not accept known AdmissionReview versions (v1, v1beta1)",
    );
  });
});
