/**
 * HorizontalPodAutoscaler validation as kube-apiserver 1.32 answers it, for autoscaling/v2 and v1
 * requests alike (both validate the internal, v2-shaped object, so v1 errors name v2 fields):
 * replicas, the scale target, metric sources and targets (quantities printed as Go prints a
 * resource.Quantity), scaling behavior.
 */
import { describe, expect, it } from "vitest";
import { fileFixture } from "../../../support/file-fixture.ts";
import { type Response, startRawHttpCluster } from "../../support/http.ts";

const t = fileFixture(() => startRawHttpCluster({ kubelet: false }));

const V2 = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers";
const V1 = "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers";

type Reason = "FieldValueRequired" | "FieldValueInvalid" | "FieldValueNotSupported" | "FieldValueForbidden";
const cause = (reason: Reason, field: string, message: string) => ({ reason, message, field });

/** The whole Status: its message is Go's aggregate of the causes (duplicates dropped). */
function expectInvalid(res: Response, name: string, causes: ReturnType<typeof cause>[]): void {
  const messages = [...new Set(causes.map((c) => `${c.field}: ${c.message}`))];
  expect(res.status).toBe(422);
  expect(res.body).toEqual({
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message: `HorizontalPodAutoscaler.autoscaling "${name}" is invalid: ${messages.length === 1 ? messages[0] : `[${messages.join(", ")}]`}`,
    reason: "Invalid",
    details: { name, group: "autoscaling", kind: "HorizontalPodAutoscaler", causes },
    code: 422,
  });
}

const target = { apiVersion: "apps/v1", kind: "Deployment", name: "web" };

function hpa(name: string, spec: Record<string, unknown>): Record<string, unknown> {
  return { metadata: { name }, spec: { scaleTargetRef: target, maxReplicas: 5, ...spec } };
}

describe("HorizontalPodAutoscalers: replicas and target", () => {
  it("refuses minReplicas 0 (scale to zero is alpha), maxReplicas 0 and a target without kind or name", async () => {
    const res = await t.request("POST", V2, {
      body: { metadata: { name: "replicas" }, spec: { scaleTargetRef: {}, minReplicas: 0, maxReplicas: 0 } },
    });
    expectInvalid(res, "replicas", [
      cause("FieldValueInvalid", "spec.minReplicas", "Invalid value: 0: must be greater than or equal to 1"),
      cause("FieldValueInvalid", "spec.maxReplicas", "Invalid value: 0: must be greater than 0"),
      cause("FieldValueRequired", "spec.scaleTargetRef.kind", "Required value"),
      cause("FieldValueRequired", "spec.scaleTargetRef.name", "Required value"),
      // Checked whatever the feature gate: minReplicas 0 needs an Object or External metric.
      cause(
        "FieldValueForbidden",
        "spec.metrics",
        "Forbidden: must specify at least one Object or External metric to support scaling to zero replicas",
      ),
    ]);
  });

  it("refuses maxReplicas below minReplicas and a target name that is no path segment", async () => {
    const res = await t.request("POST", V2, {
      body: hpa("min-max", { minReplicas: 5, maxReplicas: 2, scaleTargetRef: { kind: "Deployment", name: "a/b" } }),
    });
    expectInvalid(res, "min-max", [
      cause(
        "FieldValueInvalid",
        "spec.maxReplicas",
        "Invalid value: 2: must be greater than or equal to `minReplicas`",
      ),
      cause("FieldValueInvalid", "spec.scaleTargetRef.name", `Invalid value: "a/b": may not contain '/'`),
    ]);
  });

  it("names v2 fields for an autoscaling/v1 request, as kube-apiserver validates the internal object", async () => {
    const res = await t.request("POST", V1, {
      body: {
        metadata: { name: "v1-cpu" },
        spec: { scaleTargetRef: target, maxReplicas: 3, targetCPUUtilizationPercentage: 0 },
      },
    });
    expectInvalid(res, "v1-cpu", [
      cause(
        "FieldValueInvalid",
        "spec.metrics[0].resource.target.averageUtilization",
        "Invalid value: 0: must be greater than 0",
      ),
    ]);
  });

  it("accepts valid v2 and v1 autoscalers with the scheme's defaults and nothing else added", async () => {
    const v2 = await t.request("POST", V2, {
      body: hpa("ok-v2", {
        metrics: [
          { type: "Resource", resource: { name: "memory", target: { type: "AverageValue", averageValue: "500Mi" } } },
          {
            type: "External",
            external: { metric: { name: "queue_depth" }, target: { type: "Value", value: "30" } },
          },
        ],
        behavior: {
          scaleDown: { stabilizationWindowSeconds: 60, policies: [{ type: "Pods", value: 1, periodSeconds: 60 }] },
        },
      }),
    });
    expect(v2.status).toBe(201);
    expect(v2.body.spec.minReplicas).toBe(1);
    expect(v2.body.spec.metrics[1]).toEqual({
      type: "External",
      external: { metric: { name: "queue_depth" }, target: { type: "Value", value: "30" } },
    });
    const v1 = await t.request("POST", V1, {
      body: {
        metadata: { name: "ok-v1" },
        spec: { scaleTargetRef: target, maxReplicas: 3, targetCPUUtilizationPercentage: 70 },
      },
    });
    expect(v1.status).toBe(201);
    expect(v1.body.spec).toEqual({
      scaleTargetRef: target,
      minReplicas: 1,
      maxReplicas: 3,
      targetCPUUtilizationPercentage: 70,
    });
  });

  it("validates an update's spec, refusing what create refuses", async () => {
    const created = await t.request("POST", V2, { body: hpa("to-update", {}) });
    expect(created.status).toBe(201);
    const res = await t.request("PUT", `${V2}/to-update`, {
      body: { ...created.body, spec: { ...created.body.spec, maxReplicas: 0 } },
    });
    expectInvalid(res, "to-update", [
      cause("FieldValueInvalid", "spec.maxReplicas", "Invalid value: 0: must be greater than 0"),
      cause(
        "FieldValueInvalid",
        "spec.maxReplicas",
        "Invalid value: 0: must be greater than or equal to `minReplicas`",
      ),
    ]);
  });
});

describe("HorizontalPodAutoscalers: metrics", () => {
  it("refuses a type without its source, an unknown type (reported twice, as Go does) and a second source", async () => {
    const res = await t.request("POST", V2, {
      body: hpa("sources", {
        metrics: [
          { type: "Resource" },
          { type: "Memory" },
          {
            type: "Pods",
            pods: { metric: { name: "rps" }, target: { type: "AverageValue", averageValue: "10" } },
            resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 50 } },
          },
        ],
      }),
    });
    const supported = 'supported values: "ContainerResource", "External", "Object", "Pods", "Resource"';
    expectInvalid(res, "sources", [
      cause(
        "FieldValueRequired",
        "spec.metrics[0].resource",
        "Required value: must populate information for the given metric source",
      ),
      cause("FieldValueNotSupported", "spec.metrics[1].type", `Unsupported value: "Memory": ${supported}`),
      cause("FieldValueNotSupported", "spec.metrics[1].type", `Unsupported value: "Memory": ${supported}`),
      cause("FieldValueForbidden", "spec.metrics[2].resource", "Forbidden: must populate the given metric source only"),
    ]);
  });

  it("refuses quantities that are not positive, printing them as Go prints a resource.Quantity", async () => {
    const res = await t.request("POST", V2, {
      body: hpa("quantities", {
        metrics: [
          { type: "Pods", pods: { metric: { name: "rps" }, target: { type: "AverageValue", averageValue: "-500m" } } },
          { type: "External", external: { metric: { name: "lag" }, target: { type: "Value", value: "0" } } },
          {
            type: "Object",
            object: { describedObject: target, metric: { name: "hits" }, target: { type: "Value", value: "-1.5" } },
          },
        ],
      }),
    });
    expectInvalid(res, "quantities", [
      cause(
        "FieldValueInvalid",
        "spec.metrics[0].pods.target.averageValue",
        'Invalid value: resource.Quantity{i:resource.int64Amount{value:-500, scale:-3}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"-500m", Format:"DecimalSI"}: must be positive',
      ),
      cause(
        "FieldValueInvalid",
        "spec.metrics[1].external.target.value",
        'Invalid value: resource.Quantity{i:resource.int64Amount{value:0, scale:0}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"0", Format:"DecimalSI"}: must be positive',
      ),
      cause(
        "FieldValueInvalid",
        "spec.metrics[2].object.target.value",
        'Invalid value: resource.Quantity{i:resource.int64Amount{value:-15, scale:-1}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"", Format:"DecimalSI"}: must be positive',
      ),
    ]);
  });

  it("refuses a bad target type, both utilization and value, a missing target and a bad metric name", async () => {
    const res = await t.request("POST", V2, {
      body: hpa("targets", {
        metrics: [
          {
            type: "Resource",
            resource: { name: "cpu", target: { type: "Percent", averageUtilization: 50, averageValue: "1" } },
          },
          { type: "Pods", pods: { metric: { name: "a/b" }, target: { type: "Value" } } },
        ],
      }),
    });
    expectInvalid(res, "targets", [
      cause(
        "FieldValueInvalid",
        "spec.metrics[0].resource.target.type",
        'Invalid value: "Percent": must be either Utilization, Value, or AverageValue',
      ),
      cause(
        "FieldValueForbidden",
        "spec.metrics[0].resource.target.averageValue",
        "Forbidden: may not set both a target raw value and a target utilization",
      ),
      cause("FieldValueInvalid", "spec.metrics[1].pods.metric.name", `Invalid value: "a/b": may not contain '/'`),
      cause(
        "FieldValueRequired",
        "spec.metrics[1].pods.target.averageValue",
        "Required value: must specify a positive target averageValue",
      ),
    ]);
  });
});

describe("HorizontalPodAutoscalers: behavior", () => {
  it("refuses empty policies, out-of-range windows and periods, unknown policy kinds", async () => {
    const res = await t.request("POST", V2, {
      body: hpa("behavior", {
        behavior: {
          scaleUp: { stabilizationWindowSeconds: 4000, selectPolicy: "Sometimes", policies: [] },
          scaleDown: { policies: [{ type: "Nodes", value: 0, periodSeconds: 3600 }] },
        },
      }),
    });
    expectInvalid(res, "behavior", [
      cause(
        "FieldValueInvalid",
        "spec.behavior.scaleUp.stabilizationWindowSeconds",
        "Invalid value: 4000: must be less than or equal to 3600",
      ),
      cause(
        "FieldValueNotSupported",
        "spec.behavior.scaleUp.selectPolicy",
        'Unsupported value: "Sometimes": supported values: "Disabled", "Max", "Min"',
      ),
      cause("FieldValueRequired", "spec.behavior.scaleUp.policies", "Required value: must specify at least one Policy"),
      cause(
        "FieldValueNotSupported",
        "spec.behavior.scaleDown.policies[0].type",
        'Unsupported value: "Nodes": supported values: "Percent", "Pods"',
      ),
      cause(
        "FieldValueInvalid",
        "spec.behavior.scaleDown.policies[0].value",
        "Invalid value: 0: must be greater than zero",
      ),
      cause(
        "FieldValueInvalid",
        "spec.behavior.scaleDown.policies[0].periodSeconds",
        "Invalid value: 3600: must be less than or equal to 1800",
      ),
    ]);
  });
});
