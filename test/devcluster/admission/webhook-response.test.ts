import { describe, expect, it } from "vitest";
import {
  callFailure,
  InvalidWebhookResponse,
  rejection,
  verifyAdmissionResponse,
} from "../../../packages/capstan-dev/src/devcluster/admission/webhook-response.ts";

const v1 = (response: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  apiVersion: "admission.k8s.io/v1",
  kind: "AdmissionReview",
  response: { uid: "u1", ...response },
  ...extra,
});
const patch = Buffer.from('[{"op":"add","path":"/metadata/labels","value":{"a":"b"}}]').toString("base64");

describe("verifying a webhook's answer as kube-apiserver does", () => {
  it("takes allowed, status, warnings and a JSON Patch from a v1 answer", () => {
    const ok = verifyAdmissionResponse(
      "admission.k8s.io/v1",
      "u1",
      true,
      v1({ allowed: true, patch, patchType: "JSONPatch", warnings: ["w"] }),
    );
    expect(ok.allowed).toBe(true);
    expect(ok.patchType).toBe("JSONPatch");
    expect(JSON.parse(ok.patch?.toString("utf8") ?? "")).toEqual([
      { op: "add", path: "/metadata/labels", value: { a: "b" } },
    ]);
    expect(ok.warnings).toEqual(["w"]);
  });

  it("refuses v1 answers kube-apiserver refuses, with its messages", () => {
    const cases: [boolean, unknown, string][] = [
      [false, { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview" }, "webhook response was absent"],
      [false, v1({ uid: "other", allowed: true }), 'expected response.uid="u1", got "other"'],
      [
        false,
        v1({ allowed: true }, { apiVersion: "admission.k8s.io/v1beta1" }),
        "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got admission.k8s.io/v1beta1, Kind=AdmissionReview",
      ],
      [false, v1({ allowed: true, patch }), "validating webhook may not return response.patch"],
      [false, v1({ allowed: true, patchType: "JSONPatch" }), "validating webhook may not return response.patchType"],
      [true, v1({ allowed: true, patch }), "webhook returned response.patch but not response.patchType"],
      [
        true,
        v1({ allowed: true, patchType: "JSONPatch" }),
        "webhook returned response.patchType but not response.patch",
      ],
      [true, v1({ allowed: true, patch, patchType: "" }), 'webhook returned invalid response.patchType of ""'],
    ];
    for (const [mutating, review, message] of cases) {
      expect(() => verifyAdmissionResponse("admission.k8s.io/v1", "u1", mutating, review)).toThrow(
        new InvalidWebhookResponse(message),
      );
    }
  });

  it("checks a v1beta1 answer for a response only, its patch taken as a JSON Patch", () => {
    const beta = verifyAdmissionResponse("admission.k8s.io/v1beta1", "u1", true, {
      apiVersion: "admission.k8s.io/v1beta1",
      kind: "AdmissionReview",
      response: { uid: "anything", allowed: true, patch },
    });
    expect(beta.patchType).toBe("JSONPatch");
  });
});

describe("what the API server answers its client", () => {
  it("prefixes a denial with the webhook's name, keeps its code (at least 400) and reason", () => {
    const denied = rejection("position.machines.useless.capstan.dev", {
      code: 403,
      reason: "Forbidden",
      message: 'switchPosition must be up or down, not "sideways"',
    });
    expect(denied.status).toMatchObject({
      kind: "Status",
      status: "Failure",
      code: 403,
      reason: "Forbidden",
      message:
        'admission webhook "position.machines.useless.capstan.dev" denied the request: switchPosition must be up or down, not "sideways"',
    });
    expect(rejection("w", { code: 200, reason: "NotGood" }).status).toMatchObject({
      code: 400,
      message: 'admission webhook "w" denied the request: NotGood',
    });
    expect(rejection("w", undefined).status.message).toBe(
      'admission webhook "w" denied the request without explanation',
    );
  });

  it("fails a request whose webhook could not be called with an internal error naming it", () => {
    const failed = callFailure(
      "w.example.com",
      'failed to call webhook: Post "https://127.0.0.1:9443/v": connection refused',
    );
    expect(failed.status).toMatchObject({
      code: 500,
      reason: "InternalError",
      message:
        'Internal error occurred: failed calling webhook "w.example.com": failed to call webhook: Post "https://127.0.0.1:9443/v": connection refused',
    });
  });
});
