/**
 * Webhooks matched through another version of the resource written to, as kube-apiserver calls them
 * (admission/plugin/webhook/generic/webhook.go ShouldCallHook, request/admissionreview.go): a rule
 * matching the version the client wrote to calls the webhook for it; otherwise, under
 * `matchPolicy: Equivalent`, for the first equivalent version a rule matches, with the objects
 * converted to it. `kind`/`resource` are the webhook's version, `requestKind`/`requestResource`
 * what the client wrote to; `Exact` webhooks are called only for the latter; a patch made in
 * another version is converted back.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { customServed } from "../support/custom-served.ts";
import { type RawHttpCluster, startRawHttpCluster } from "../support/http.ts";
import { type RecordingWebhooks, startRecordingWebhooks } from "./support/recording-webhooks.ts";

let t: RawHttpCluster;
let hooks: RecordingWebhooks;
beforeAll(async () => {
  [t, hooks] = await Promise.all([startRawHttpCluster(), startRecordingWebhooks()]);
  // A custom kind served in v1 and v2 over one storage (conversion None).
  t.server.internals.registry.add(customServed("equiv.capstan.test", "Gadget"));
  t.server.internals.registry.add(customServed("equiv.capstan.test", "Gadget", { version: "v2" }));
});
afterAll(async () => {
  await hooks?.stop();
  await t?.stop();
});
beforeEach(() => hooks.reset());

let seq = 0;

interface Hook {
  path: string;
  mutating: boolean;
  group: string;
  version: string;
  resource: string;
  matchPolicy?: "Exact" | "Equivalent";
  matchConditions?: { name: string; expression: string }[];
}

/** A namespace of its own with one configuration per hook, each webhook selecting only that namespace. */
async function namespaceWithWebhooks(list: Hook[]): Promise<string> {
  const ns = `equivalent-${++seq}`;
  expect((await t.request("POST", "/api/v1/namespaces", { body: { metadata: { name: ns } } })).status).toBe(201);
  for (const hook of list) {
    const plural = hook.mutating ? "mutatingwebhookconfigurations" : "validatingwebhookconfigurations";
    const res = await t.request("POST", `/apis/admissionregistration.k8s.io/v1/${plural}`, {
      body: {
        metadata: { name: `${ns}${hook.path.replaceAll("/", "-")}` },
        webhooks: [
          {
            name: `${hook.path.slice(1)}.${ns}.capstan.test`,
            admissionReviewVersions: ["v1"],
            sideEffects: "None",
            ...(hook.matchPolicy ? { matchPolicy: hook.matchPolicy } : {}),
            ...(hook.matchConditions ? { matchConditions: hook.matchConditions } : {}),
            clientConfig: { url: `${hooks.url}${hook.path}`, caBundle: hooks.caBundle },
            rules: [
              {
                apiGroups: [hook.group],
                apiVersions: [hook.version],
                operations: ["CREATE"],
                resources: [hook.resource],
              },
            ],
            namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": ns } },
          },
        ],
      },
    });
    expect(res.status, res.text).toBe(201);
  }
  return ns;
}

const gvk = (group: string, version: string, kind: string) => ({ group, version, kind });
const gvr = (group: string, version: string, resource: string) => ({ group, version, resource });

describe("a webhook matched through an equivalent version", () => {
  it("is called for its own version of an autoscaling/v1 create, told the request's, its patch kept", async () => {
    const hpa = (version: string) => ({ group: "autoscaling", version, resource: "horizontalpodautoscalers" });
    const ns = await namespaceWithWebhooks([
      { path: "/v2", mutating: true, ...hpa("v2") },
      { path: "/v2-exact", mutating: true, ...hpa("v2"), matchPolicy: "Exact" },
      { path: "/v1", mutating: false, ...hpa("v1") },
    ]);
    hooks.answer("/v2", () => ({ patch: [{ op: "add", path: "/metadata/labels", value: { seen: "v2" } }] }));
    const res = await t.request("POST", `/apis/autoscaling/v1/namespaces/${ns}/horizontalpodautoscalers`, {
      body: {
        apiVersion: "autoscaling/v1",
        kind: "HorizontalPodAutoscaler",
        metadata: { name: "web" },
        spec: {
          scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "web" },
          maxReplicas: 3,
          targetCPUUtilizationPercentage: 50,
        },
      },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body.metadata.labels).toEqual({ seen: "v2" });

    const [v2] = hooks.requestsTo("/v2");
    expect(v2).toMatchObject({
      kind: gvk("autoscaling", "v2", "HorizontalPodAutoscaler"),
      resource: gvr("autoscaling", "v2", "horizontalpodautoscalers"),
      requestKind: gvk("autoscaling", "v1", "HorizontalPodAutoscaler"),
      requestResource: gvr("autoscaling", "v1", "horizontalpodautoscalers"),
    });
    expect(v2.object.apiVersion).toBe("autoscaling/v2");
    expect(v2.object.spec.metrics).toEqual([
      { type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 50 } } },
    ]);

    expect(hooks.requestsTo("/v2-exact")).toEqual([]);

    const [v1] = hooks.requestsTo("/v1");
    expect(v1).toMatchObject({
      kind: gvk("autoscaling", "v1", "HorizontalPodAutoscaler"),
      requestKind: gvk("autoscaling", "v1", "HorizontalPodAutoscaler"),
      requestResource: gvr("autoscaling", "v1", "horizontalpodautoscalers"),
    });
    expect(v1.object).toMatchObject({ apiVersion: "autoscaling/v1", spec: { targetCPUUtilizationPercentage: 50 } });
    expect(v1.object.metadata.labels).toEqual({ seen: "v2" });
  });

  it("is called for the core Event of an events.k8s.io create, and for events.k8s.io when its rule says so", async () => {
    const ns = await namespaceWithWebhooks([
      { path: "/core", mutating: false, group: "", version: "v1", resource: "events" },
      { path: "/events", mutating: false, group: "events.k8s.io", version: "v1", resource: "events" },
    ]);
    const res = await t.request("POST", `/apis/events.k8s.io/v1/namespaces/${ns}/events`, {
      body: {
        apiVersion: "events.k8s.io/v1",
        kind: "Event",
        metadata: { name: "e" },
        eventTime: "2024-01-01T00:00:00.000000Z",
        reportingController: "example.com/controller",
        reportingInstance: "i",
        action: "Tested",
        reason: "Testing",
        type: "Normal",
        regarding: { kind: "Pod", name: "p", namespace: ns },
        note: "hello",
      },
    });
    expect(res.status, res.text).toBe(201);
    const eventsV1 = {
      requestKind: gvk("events.k8s.io", "v1", "Event"),
      requestResource: gvr("events.k8s.io", "v1", "events"),
    };
    const [core] = hooks.requestsTo("/core");
    expect(core).toMatchObject({ kind: gvk("", "v1", "Event"), resource: gvr("", "v1", "events"), ...eventsV1 });
    expect(core.object).toMatchObject({ apiVersion: "v1", kind: "Event", message: "hello" });
    const [events] = hooks.requestsTo("/events");
    expect(events).toMatchObject({ kind: gvk("events.k8s.io", "v1", "Event"), ...eventsV1 });
    expect(events.object).toMatchObject({ apiVersion: "events.k8s.io/v1", note: "hello" });
  });

  it("names the resource written to when its matchConditions fail to evaluate", async () => {
    const ns = await namespaceWithWebhooks([
      {
        path: "/core-conditions",
        mutating: false,
        group: "",
        version: "v1",
        resource: "events",
        matchConditions: [{ name: "broken", expression: "object.noSuchField == 'x'" }],
      },
    ]);
    const res = await t.request("POST", `/apis/events.k8s.io/v1/namespaces/${ns}/events`, {
      body: {
        apiVersion: "events.k8s.io/v1",
        kind: "Event",
        metadata: { name: "e" },
        eventTime: "2024-01-01T00:00:00.000000Z",
        reportingController: "example.com/controller",
        reportingInstance: "i",
        action: "Tested",
        reason: "Testing",
        type: "Normal",
      },
    });
    expect(res.status).toBe(403);
    expect(res.body.message).toMatch(
      /^events\.events\.k8s\.io "e" is forbidden: expression 'object\.noSuchField == 'x'' resulted in error: /,
    );
    expect(res.body.details).toMatchObject({ name: "e", group: "events.k8s.io", kind: "events" });
  });

  it("gets a custom object of another version with its apiVersion rewritten", async () => {
    const gadgets = (version: string) => ({ group: "equiv.capstan.test", version, resource: "gadgets" });
    const ns = await namespaceWithWebhooks([
      { path: "/g1", mutating: true, ...gadgets("v1") },
      { path: "/g1-exact", mutating: false, ...gadgets("v1"), matchPolicy: "Exact" },
    ]);
    hooks.answer("/g1", () => ({ patch: [{ op: "add", path: "/spec/size", value: "large" }] }));
    const res = await t.request("POST", `/apis/equiv.capstan.test/v2/namespaces/${ns}/gadgets`, {
      body: { apiVersion: "equiv.capstan.test/v2", kind: "Gadget", metadata: { name: "g" }, spec: { color: "red" } },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ apiVersion: "equiv.capstan.test/v2", spec: { color: "red", size: "large" } });
    const [g1] = hooks.requestsTo("/g1");
    expect(g1).toMatchObject({
      kind: gvk("equiv.capstan.test", "v1", "Gadget"),
      resource: gvr("equiv.capstan.test", "v1", "gadgets"),
      requestKind: gvk("equiv.capstan.test", "v2", "Gadget"),
      requestResource: gvr("equiv.capstan.test", "v2", "gadgets"),
    });
    expect(g1.object.apiVersion).toBe("equiv.capstan.test/v1");
    expect(hooks.requestsTo("/g1-exact")).toEqual([]);
  });
});
