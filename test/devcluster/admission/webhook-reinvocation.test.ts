/**
 * `reinvocationPolicy: IfNeeded` on the embedded API server, as kube-apiserver's mutating
 * dispatcher and reinvocation context decide it: a mutating webhook that asked for it is called once
 * more when a later webhook changed the object, never more than once more, and in order.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { MutatingReinvocation } from "../../../packages/capstan-dev/src/devcluster/admission/webhook-reinvocation.ts";
import { configMap, type RawHttpCluster, startRawHttpCluster } from "../support/http.ts";
import {
  type AdmissionRequestJson,
  type RecordingWebhooks,
  startRecordingWebhooks,
} from "./support/recording-webhooks.ts";

const MUTATING = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations";

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
 * Stores one mutating configuration for a namespace of its own, its webhooks in the order given
 * (`[path, reinvocationPolicy]`); returns the namespace.
 */
async function mutatingWebhooks(webhooks: [string, "Never" | "IfNeeded"][]): Promise<string> {
  const ns = `reinvoke-${++seq}`;
  expect((await t.request("POST", "/api/v1/namespaces", { body: { metadata: { name: ns } } })).status).toBe(201);
  const config = {
    metadata: { name: ns },
    webhooks: webhooks.map(([path, reinvocationPolicy]) => ({
      name: `${path.slice(1)}.capstan.test`,
      admissionReviewVersions: ["v1"],
      sideEffects: "None",
      reinvocationPolicy,
      clientConfig: { url: `${hooks.url}${path}`, caBundle: hooks.caBundle },
      rules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["configmaps"] }],
      namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": ns } },
    })),
  };
  const res = await t.request("POST", MUTATING, { body: config });
  expect(res.status, res.text).toBe(201);
  return ns;
}

/** A webhook that sets data[key] to "set" when it is not (so its second call changes nothing). */
const setsOnce = (key: string) => (request: AdmissionRequestJson) =>
  request.object.data?.[key] === "set" ? {} : { patch: [{ op: "add", path: `/data/${key}`, value: "set" }] };

/** A webhook that changes the object on every call: data[key] counts its calls. */
const counts = (key: string) => (request: AdmissionRequestJson) => ({
  patch: [{ op: "add", path: `/data/${key}`, value: String(Number(request.object.data?.[key] ?? "0") + 1) }],
});

async function create(ns: string) {
  const res = await t.request("POST", `/api/v1/namespaces/${ns}/configmaps`, { body: configMap("c", { k: "v" }) });
  expect(res.status, res.text).toBe(201);
  return res.body.data as Record<string, string>;
}

const callOrder = () => hooks.calls.map((c) => c.path);

describe("reinvocationPolicy IfNeeded", () => {
  it("calls an IfNeeded webhook again after a later webhook changed the object, with the changed object", async () => {
    const ns = await mutatingWebhooks([
      ["/first", "IfNeeded"],
      ["/second", "Never"],
    ]);
    hooks.answer("/first", setsOnce("first"));
    hooks.answer("/second", setsOnce("second"));
    expect(await create(ns)).toEqual({ k: "v", first: "set", second: "set" });
    expect(callOrder()).toEqual(["/first", "/second", "/first"]);
    expect(hooks.requestsTo("/first")[1].object.data).toEqual({ k: "v", first: "set", second: "set" });
  });

  it("calls a webhook once under Never, and an IfNeeded one once when nothing changed after it", async () => {
    const never = await mutatingWebhooks([
      ["/first", "Never"],
      ["/second", "Never"],
    ]);
    hooks.answer("/first", setsOnce("first"));
    hooks.answer("/second", setsOnce("second"));
    await create(never);
    expect(callOrder()).toEqual(["/first", "/second"]);

    hooks.reset();
    const last = await mutatingWebhooks([
      ["/changes", "Never"],
      ["/last", "IfNeeded"],
      ["/quiet", "Never"],
    ]);
    hooks.answer("/changes", setsOnce("changes"));
    hooks.answer("/last", setsOnce("last"));
    await create(last);
    expect(callOrder()).toEqual(["/changes", "/last", "/quiet"]);
  });

  it("reinvokes at most once, in order, even when every call changes the object", async () => {
    const ns = await mutatingWebhooks([
      ["/a", "IfNeeded"],
      ["/b", "IfNeeded"],
    ]);
    hooks.answer("/a", counts("a"));
    hooks.answer("/b", counts("b"));
    expect(await create(ns)).toEqual({ k: "v", a: "2", b: "2" });
    expect(callOrder()).toEqual(["/a", "/b", "/a", "/b"]);
  });
});

describe("MutatingReinvocation", () => {
  it("marks the IfNeeded webhooks called before a change, not the one that changed, and has one second round", () => {
    const state = new MutatingReinvocation();
    state.called("a", true, true); // a's own change does not mark a
    state.called("b", false, true);
    state.called("c", false, false);
    expect(state.secondRound()).toBe(false);
    state.called("d", true, false); // marks a and b
    expect(state.secondRound()).toBe(true);
    expect(["a", "b", "c", "d"].filter((w) => state.shouldCall(w))).toEqual(["a", "b"]);
    state.called("a", true, true);
    expect(state.secondRound()).toBe(false);
  });
});
