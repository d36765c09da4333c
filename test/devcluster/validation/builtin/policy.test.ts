/**
 * PodDisruptionBudget validation as kube-apiserver 1.32 answers it: minAvailable and maxUnavailable
 * (exclusive, int or percent, not negative, at most 100%), the selector, the unhealthy-pod eviction
 * policy; the spec mutable on update; names held only to the path-segment rule.
 */
import { describe, expect, it } from "vitest";
import { fileFixture } from "../../../support/file-fixture.ts";
import { type Response, startRawHttpCluster } from "../../support/http.ts";

const t = fileFixture(() => startRawHttpCluster({ kubelet: false }));

const PDBS = "/apis/policy/v1/namespaces/default/poddisruptionbudgets";

type Reason = "FieldValueRequired" | "FieldValueInvalid" | "FieldValueNotSupported";
const cause = (reason: Reason, field: string, message: string) => ({ reason, message, field });

function expectInvalid(res: Response, name: string, causes: ReturnType<typeof cause>[]): void {
  const messages = causes.map((c) => `${c.field}: ${c.message}`);
  expect(res.status).toBe(422);
  expect(res.body).toEqual({
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message: `PodDisruptionBudget.policy "${name}" is invalid: ${messages.length === 1 ? messages[0] : `[${messages.join(", ")}]`}`,
    reason: "Invalid",
    details: { name, group: "policy", kind: "PodDisruptionBudget", causes },
    code: 422,
  });
}

function pdb(name: string, spec: Record<string, unknown>): Record<string, unknown> {
  return { metadata: { name }, spec: { selector: { matchLabels: { app: name } }, ...spec } };
}

const PERCENT =
  "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')";

describe("PodDisruptionBudgets", () => {
  it("refuses minAvailable with maxUnavailable, printing the spec as Go's %#v (pointer addresses stand in)", async () => {
    const res = await t.request("POST", PDBS, { body: pdb("both", { minAvailable: 1, maxUnavailable: 1 }) });
    expectInvalid(res, "both", [
      cause(
        "FieldValueInvalid",
        "spec",
        "Invalid value: policy.PodDisruptionBudgetSpec{MinAvailable:(*intstr.IntOrString)(0xc000a1c0e8), Selector:(*v1.LabelSelector)(0xc000b2d180), MaxUnavailable:(*intstr.IntOrString)(0xc000a1c100), UnhealthyPodEvictionPolicy:(*policy.UnhealthyPodEvictionPolicyType)(nil)}: minAvailable and maxUnavailable cannot be both set",
      ),
    ]);
  });

  it("refuses a percent without '%', a negative count and a percent over 100%, printing IntOrString as Go's %#v", async () => {
    const noSign = await t.request("POST", PDBS, { body: pdb("no-sign", { minAvailable: "50" }) });
    expectInvalid(noSign, "no-sign", [
      cause(
        "FieldValueInvalid",
        "spec.minAvailable",
        `Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"50"}: ${PERCENT}`,
      ),
    ]);
    const negative = await t.request("POST", PDBS, { body: pdb("negative", { maxUnavailable: -1 }) });
    expectInvalid(negative, "negative", [
      cause("FieldValueInvalid", "spec.maxUnavailable", "Invalid value: -1: must be greater than or equal to 0"),
    ]);
    const over = await t.request("POST", PDBS, { body: pdb("over", { maxUnavailable: "150%" }) });
    expectInvalid(over, "over", [
      cause(
        "FieldValueInvalid",
        "spec.maxUnavailable",
        'Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"150%"}: must not be greater than 100%',
      ),
    ]);
  });

  it("refuses an invalid selector and an unknown unhealthyPodEvictionPolicy", async () => {
    const res = await t.request("POST", PDBS, {
      body: {
        metadata: { name: "bad-selector" },
        spec: {
          minAvailable: "50%",
          selector: { matchExpressions: [{ key: "app", operator: "In", values: [] }] },
          unhealthyPodEvictionPolicy: "Never",
        },
      },
    });
    expectInvalid(res, "bad-selector", [
      cause(
        "FieldValueRequired",
        "spec.selector.matchExpressions[0].values",
        "Required value: must be specified when `operator` is 'In' or 'NotIn'",
      ),
      cause(
        "FieldValueNotSupported",
        "spec.unhealthyPodEvictionPolicy",
        'Unsupported value: "Never": supported values: "AlwaysAllow", "IfHealthyBudget"',
      ),
    ]);
  });

  it("accepts a valid budget unchanged, named by the path-segment rule only (no ObjectMeta validation in 1.32)", async () => {
    const body = {
      metadata: { name: "Web_Budget" },
      spec: {
        maxUnavailable: "25%",
        selector: { matchLabels: { app: "web" } },
        unhealthyPodEvictionPolicy: "AlwaysAllow",
      },
    };
    const res = await t.request("POST", PDBS, { body });
    expect(res.status).toBe(201);
    expect(res.body.spec).toEqual(body.spec);
  });

  it("lets an update change the spec (mutable since 1.15) and validates the new spec", async () => {
    const created = await t.request("POST", PDBS, { body: pdb("mutable", { minAvailable: 1 }) });
    expect(created.status).toBe(201);
    const changed = await t.request("PUT", `${PDBS}/mutable`, {
      body: { ...created.body, spec: { ...created.body.spec, minAvailable: "50%" } },
    });
    expect(changed.status).toBe(200);
    expect(changed.body.spec.minAvailable).toBe("50%");
    expect(changed.body.metadata.generation).toBe(2);
    const broken = await t.request("PUT", `${PDBS}/mutable`, {
      body: { ...changed.body, spec: { ...changed.body.spec, minAvailable: "half" } },
    });
    expectInvalid(broken, "mutable", [
      cause(
        "FieldValueInvalid",
        "spec.minAvailable",
        `Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"half"}: ${PERCENT}`,
      ),
    ]);
  });
});
