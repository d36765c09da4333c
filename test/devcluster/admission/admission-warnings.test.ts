/**
 * Admission webhooks' warnings reach the client as kube-apiserver's warning recorder writes them
 * (apiserver endpoints/filters/warning.go, apimachinery util/net NewWarningHeader): one
 * `Warning: 299 - "<text>"` header per text, UTF-8 text sent as is, only `"` and `\` escaped; empty,
 * repeated and control-character texts dropped; long lists cut short. A warning never fails a request.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { configMap, type RawHttpCluster, type Response, startRawHttpCluster } from "../support/http.ts";
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

/**
 * A namespace of its own with a mutating webhook at /mutate and a validating one at /validate on its
 * ConfigMap creates; returns the namespace.
 */
async function namespaceWithWebhooks(): Promise<string> {
  const ns = `warnings-${++seq}`;
  expect((await t.request("POST", "/api/v1/namespaces", { body: { metadata: { name: ns } } })).status).toBe(201);
  const webhook = (path: string) => ({
    name: `${path.slice(1)}.${ns}.capstan.test`,
    admissionReviewVersions: ["v1"],
    sideEffects: "None",
    clientConfig: { url: `${hooks.url}${path}`, caBundle: hooks.caBundle },
    rules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["configmaps"] }],
    namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": ns } },
  });
  for (const [plural, path] of [
    ["mutatingwebhookconfigurations", "/mutate"],
    ["validatingwebhookconfigurations", "/validate"],
  ] as const) {
    const res = await t.request("POST", `/apis/admissionregistration.k8s.io/v1/${plural}`, {
      body: { metadata: { name: ns }, webhooks: [webhook(path)] },
    });
    expect(res.status, res.text).toBe(201);
  }
  return ns;
}

/** The response's Warning headers as the bytes on the wire read as UTF-8 (undici hands them out as latin1). */
function warningHeaders(res: Response): string[] {
  const raw = res.headers["warning"];
  const values = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  return values.map((v) => Buffer.from(v, "latin1").toString("utf8"));
}

describe("admission warnings in Warning headers", () => {
  it("passes a non-ASCII warning on as its UTF-8 text", async () => {
    const ns = await namespaceWithWebhooks();
    hooks.answer("/mutate", () => ({ warnings: ["ünïcödé ✓"] }));
    const res = await t.request("POST", `/api/v1/namespaces/${ns}/configmaps`, { body: configMap("cm") });
    expect(res.status, res.text).toBe(201);
    expect(warningHeaders(res)).toEqual(['299 - "ünïcödé ✓"']);
  });

  it('escapes only " and \\, and drops empty, repeated and control-character warnings', async () => {
    const ns = await namespaceWithWebhooks();
    hooks.answer("/mutate", () => ({ warnings: ['say "hi" \\ bye', "", "again", "two\nlines", "tab\there", "again"] }));
    hooks.answer("/validate", () => ({ warnings: ["again", "del\u007f", "c1\u0085", "fine <&> é"] }));
    const res = await t.request("POST", `/api/v1/namespaces/${ns}/configmaps`, { body: configMap("cm") });
    expect(res.status, res.text).toBe(201);
    expect(warningHeaders(res)).toEqual(['299 - "say \\"hi\\" \\\\ bye"', '299 - "again"', '299 - "fine <&> é"']);
  });

  it("keeps the warnings of a request that a later webhook denies", async () => {
    const ns = await namespaceWithWebhooks();
    hooks.answer("/mutate", () => ({ warnings: ["from the mutating webhook"] }));
    hooks.answer("/validate", () => ({
      allowed: false,
      status: { code: 403, message: "no" },
      warnings: ["from the denying webhook"],
    }));
    const res = await t.request("POST", `/api/v1/namespaces/${ns}/configmaps`, { body: configMap("cm") });
    expect(res.status).toBe(403);
    expect(res.body.message).toBe(`admission webhook "validate.${ns}.capstan.test" denied the request: no`);
    expect(warningHeaders(res)).toEqual(['299 - "from the mutating webhook"', '299 - "from the denying webhook"']);
  });

  it("cuts every warning to 256 characters once they add up to more than 4096, and drops those past it", async () => {
    const ns = await namespaceWithWebhooks();
    // 20 distinct texts of 300 characters: the 14th passes 4096, so all are cut to 256 from then
    // on; after the 16th, 16 × 256 = 4096 characters are written and the rest are dropped.
    const texts = Array.from({ length: 20 }, (_, i) => `${String(i).padStart(2, "0")}${"é".repeat(298)}`);
    hooks.answer("/mutate", () => ({ warnings: texts }));
    const res = await t.request("POST", `/api/v1/namespaces/${ns}/configmaps`, { body: configMap("cm") });
    expect(res.status, res.text).toBe(201);
    expect(warningHeaders(res)).toEqual(texts.slice(0, 16).map((text) => `299 - "${text.slice(0, 256)}"`));
  });
});
