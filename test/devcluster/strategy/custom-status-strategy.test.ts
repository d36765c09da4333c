/**
 * The /status validator of custom resources ratchets nothing, as Kubernetes 1.32's status strategy
 * (apiextensions-apiserver v0.32 status_strategy.go passes no ratcheting option; it came in 1.33): a
 * stored status value the schema or a rule now refuses is reported even when the write leaves it as is.
 */
import { describe, expect, it } from "vitest";
import type {
  JsonObject,
  ServedResource,
} from "../../../packages/capstan-dev/src/devcluster/registry/served-resource.ts";
import { customObjectStatusValidator } from "../../../packages/capstan-dev/src/devcluster/rest/custom-status-strategy.ts";
import { fieldErrorMessage } from "../../../packages/capstan-dev/src/devcluster/validation/field-errors.ts";

const served = {
  group: "st.example.com",
  version: "v1",
  kind: "Gauge",
  plural: "gauges",
  custom: true,
  subresources: { status: true },
  schema: {
    type: "object",
    properties: {
      spec: {
        type: "object",
        properties: { size: { type: "integer" } },
        "x-kubernetes-validations": [{ rule: "self.size < 10", message: "size must be below 10" }],
      },
      status: {
        type: "object",
        properties: { level: { type: "integer", maximum: 5 }, note: { type: "string" } },
      },
    },
  },
} as unknown as ServedResource;

const gauge = (size: number, status: Record<string, unknown>): JsonObject => ({
  apiVersion: "st.example.com/v1",
  kind: "Gauge",
  metadata: { name: "g" },
  spec: { size },
  status,
});

describe("custom resource /status validation", () => {
  const validate = customObjectStatusValidator();

  it("reports an unchanged status value the schema refuses", () => {
    const old = gauge(1, { level: 9 });
    const errs = validate(served, gauge(1, { level: 9, note: "x" }), old).map(fieldErrorMessage);
    expect(errs).toEqual(["status.level: Invalid value: 9: level in body should be less than or equal to 5"]);
  });

  it("reports an unchanged spec a rule refuses", () => {
    const old = gauge(20, {});
    const errs = validate(served, gauge(20, { note: "x" }), old).map(fieldErrorMessage);
    expect(errs).toEqual(['spec: Invalid value: "object": size must be below 10']);
  });
});
