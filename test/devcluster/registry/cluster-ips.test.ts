/** The Service cluster-IP allocation of the built-in `services` resource (pkg/registry/core/service/storage/alloc.go). */
import { describe, expect, it } from "vitest";
import { isApiError } from "../../../packages/capstan-dev/src/devcluster/machinery/status.ts";
import { builtinResources } from "../../../packages/capstan-dev/src/devcluster/registry/builtins.ts";

function servicesWith(inUse: string[]) {
  const services = builtinResources({ serviceIpsInUse: () => inUse }).find((r) => r.plural === "services");
  return (svc: Record<string, unknown>) => {
    services!.defaultOnCreate!(svc);
    return svc;
  };
}

describe("cluster IP allocation", () => {
  it("hands out the next free address, skipping the ones Services hold", () => {
    const create = servicesWith(["10.96.0.2"]);
    expect((create({ metadata: { name: "a" }, spec: {} })["spec"] as Record<string, unknown>)["clusterIP"]).toBe(
      "10.96.0.3",
    );
  });

  it("refuses a requested address a Service holds with alloc.go's 422 on spec.clusterIPs", () => {
    const create = servicesWith(["10.96.0.9"]);
    let caught: unknown;
    try {
      create({ metadata: { name: "dup" }, spec: { clusterIP: "10.96.0.9" } });
    } catch (err) {
      caught = err;
    }
    expect(isApiError(caught, 422)).toBe(true);
    expect((caught as { status: { message: string } }).status.message).toBe(
      // The bad value as 1.32's ErrorBody prints a []string (%#v).
      'Service "dup" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.0.9"}: failed to allocate IP 10.96.0.9: provided IP is already allocated',
    );
  });

  it("answers a full range with the allocation's 500 InternalError", () => {
    const all: string[] = [];
    for (let n = 1; n <= 0xfffe; n++) all.push(`10.96.${(n >> 8) & 0xff}.${n & 0xff}`);
    const create = servicesWith(all);
    let caught: unknown;
    try {
      create({ metadata: { name: "full" }, spec: {} });
    } catch (err) {
      caught = err;
    }
    expect(isApiError(caught, 500)).toBe(true);
    expect((caught as { status: unknown }).status).toMatchObject({
      reason: "InternalError",
      message: "Internal error occurred: failed to allocate a serviceIP: range is full",
    });
  });
});
