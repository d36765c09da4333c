/**
 * What a client is told when a mutating webhook answers something kube-apiserver cannot use, in its
 * words: a body the webhook client cannot decode (client-go's Result.Into with the recognizing
 * JSON/YAML decoder: `failed to call webhook: couldn't get version/kind; json parse error: ...`), a
 * patch that does not decode (a failed call, `received undecodable patch in webhook response`,
 * which failurePolicy Ignore skips), and a patch that does not apply (mutating/dispatcher.go:
 * apierrors.NewInternalError of json-patch's error, nothing added).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { configMap, type RawHttpCluster, startRawHttpCluster } from "../support/http.ts";
import { type RecordingWebhooks, startRecordingWebhooks } from "./support/recording-webhooks.ts";

let t: RawHttpCluster;
let hooks: RecordingWebhooks;
beforeAll(async () => {
  [t, hooks] = await Promise.all([startRawHttpCluster(), startRecordingWebhooks()]);
});
afterAll(async () => {
  await hooks?.stop();
  await t?.stop();
});
beforeEach(() => hooks.reset());

let seq = 0;

/** A namespace of its own whose ConfigMap creates go to the mutating webhook at /mutate; returns it and the webhook's name. */
async function namespaceWithMutatingWebhook(failurePolicy: "Fail" | "Ignore"): Promise<{ ns: string; hook: string }> {
  const ns = `answers-${++seq}`;
  const hook = `mutate.${ns}.capstan.test`;
  expect((await t.request("POST", "/api/v1/namespaces", { body: { metadata: { name: ns } } })).status).toBe(201);
  const res = await t.request("POST", "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations", {
    body: {
      metadata: { name: ns },
      webhooks: [
        {
          name: hook,
          admissionReviewVersions: ["v1"],
          sideEffects: "None",
          failurePolicy,
          clientConfig: { url: `${hooks.url}/mutate`, caBundle: hooks.caBundle },
          rules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["configmaps"] }],
          namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": ns } },
        },
      ],
    },
  });
  expect(res.status, res.text).toBe(201);
  return { ns, hook };
}

const FIND_KIND =
  'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }';

describe("a webhook answer kube-apiserver cannot decode", () => {
  it("is a failed call worded as the webhook client's decoder words it, JSON or YAML", async () => {
    const { ns, hook } = await namespaceWithMutatingWebhook("Fail");
    const cases: [{ body: string; contentType?: string }, string][] = [
      // Not starting with `{`: read as YAML, where this is a string, then unmarshalled into apiVersion/kind.
      [
        { body: "this is not json", contentType: "text/plain" },
        `couldn't get version/kind; json parse error: json: cannot unmarshal string into Go value of type ${FIND_KIND}`,
      ],
      [
        { body: "[1, 2]", contentType: "application/json" },
        `couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type ${FIND_KIND}`,
      ],
      // Starting with `{`: read as JSON, with encoding/json's syntax errors.
      [
        { body: "{not json", contentType: "application/json" },
        "couldn't get version/kind; json parse error: invalid character 'n' looking for beginning of object key string",
      ],
      [
        { body: '  {"apiVersion": 1}', contentType: "application/json" },
        "couldn't get version/kind; json parse error: json: cannot unmarshal number into Go struct field .apiVersion of type string",
      ],
      [{ body: "" }, "0-length response with status code: 200 and content type: application/json"],
    ];
    for (const [raw, why] of cases) {
      hooks.answer("/mutate", () => ({ raw }));
      const res = await t.request("POST", `/api/v1/namespaces/${ns}/configmaps`, { body: configMap(`cm-${seq++}`) });
      expect(res.status, raw.body).toBe(500);
      expect(res.body).toMatchObject({
        reason: "InternalError",
        message: `Internal error occurred: failed calling webhook "${hook}": failed to call webhook: ${why}`,
      });
    }
  });
});

describe("a mutating webhook's patch", () => {
  it("that does not apply fails the write with json-patch's error and nothing before it", async () => {
    const { ns } = await namespaceWithMutatingWebhook("Ignore");
    hooks.answer("/mutate", () => ({ patch: [{ op: "remove", path: "/data/nothere" }] }));
    const res = await t.request("POST", `/api/v1/namespaces/${ns}/configmaps`, { body: configMap("cm") });
    expect(res.status).toBe(500);
    const why = "error in remove for path: '/data/nothere': Unable to remove nonexistent key: nothere: missing value";
    expect(res.body).toMatchObject({
      reason: "InternalError",
      message: `Internal error occurred: ${why}`,
      details: { causes: [{ message: why }] },
    });
  });

  it("that does not decode is a failed call: an internal error under Fail, skipped under Ignore", async () => {
    const failing = await namespaceWithMutatingWebhook("Fail");
    hooks.answer("/mutate", () => ({ rawPatch: "not json" }));
    const refused = await t.request("POST", `/api/v1/namespaces/${failing.ns}/configmaps`, { body: configMap("cm") });
    expect(refused.status).toBe(500);
    expect(refused.body.message).toBe(
      `Internal error occurred: failed calling webhook "${failing.hook}": received undecodable patch in webhook response: invalid character 'o' in literal null (expecting 'u')`,
    );

    const ignoring = await namespaceWithMutatingWebhook("Ignore");
    hooks.answer("/mutate", () => ({ rawPatch: '{"op": "add"}' }));
    const created = await t.request("POST", `/api/v1/namespaces/${ignoring.ns}/configmaps`, {
      body: configMap("cm", { a: "1" }),
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body.data).toEqual({ a: "1" });
  });
});
