import { startTestCluster, type TestCluster } from "capstan-dev/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ApiError,
  isAlreadyExists,
  isApiError,
  isConflict,
  isNotFound,
} from "../../packages/capstan/src/client/errors.ts";

/** What the embedded server throws below its HTTP layer, caught in-process: not the client's ApiError. */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error("expected a throw");
}

const configMaps = { group: "", version: "v1", plural: "configmaps" };

describe("the client's error helpers on the embedded server's own errors", () => {
  let cluster: TestCluster;
  let server: TestCluster["server"];
  beforeAll(async () => {
    cluster = await startTestCluster({ kubelet: false });
    server = cluster.server;
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it("isNotFound is true for the 404 the devcluster's store throws in-process for a missing object", () => {
    const err = thrown(() => server.internals.api.get(configMaps, "default", "missing"));
    expect(err).not.toBeInstanceOf(ApiError);
    expect(isNotFound(err)).toBe(true);
    expect(isApiError(err)).toBe(true);
    expect(isConflict(err)).toBe(false);
    expect(isAlreadyExists(err)).toBe(false);
  });

  it("isNotFound is true for the devcluster's 404 of a resource it does not serve, and for it wrapped as a cause", () => {
    const err = thrown(() =>
      server.internals.api.get({ group: "nowhere.example.com", version: "v1", plural: "things" }, "", "x"),
    );
    expect(isNotFound(err)).toBe(true);
    expect(isNotFound(new Error("lookup failed", { cause: err }))).toBe(true);
  });

  it("judges a Status-carrying error by its reason first, then its code, as apimachinery does", () => {
    const status = (code: number, reason?: string) => ({
      status: { kind: "Status", apiVersion: "v1", status: "Failure", code, ...(reason ? { reason } : {}) },
    });
    expect(isNotFound(Object.assign(new Error("x"), status(404)))).toBe(true);
    expect(isNotFound(Object.assign(new Error("x"), status(404, "SomethingNew")))).toBe(true);
    expect(isNotFound(Object.assign(new Error("x"), status(404, "Conflict")))).toBe(false);
    expect(isConflict(Object.assign(new Error("x"), status(404, "Conflict")))).toBe(true);
    // An object with a `status` that is not a Status is not an API error.
    expect(isNotFound({ status: 404, code: 404 })).toBe(false);
    expect(isApiError(new Error("plain"))).toBe(false);
  });
});
