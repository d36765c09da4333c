/**
 * The two 404s of kube-apiserver. Inside a group version go-restful serves (every built-in one, and
 * anything under /api, where the legacy discovery web service sits) an unknown path is a JSON NotFound
 * Status. Everywhere else the request falls through the aggregator, the CRD handler and the core mux
 * to Go's http.NotFound: `404 page not found` in plain text. The CRD handler delegates on (to that text
 * 404) for unknown resources of a custom group and for a custom resource asked in the wrong scope; an
 * unknown subresource of a custom resource is a NotFound naming the object.
 */
import { waitUntil } from "capstan-dev/testing";
import { describe, expect, it } from "vitest";
import { fileFixture } from "../../support/file-fixture.ts";
import { exchangeRateCrd } from "../kubectl/support/cluster.ts";
import { type Response, startRawHttpCluster } from "../support/http.ts";

const GROUP = "notfound.example.com";
const t = fileFixture(async () => {
  const raw = await startRawHttpCluster();
  await raw.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
    body: exchangeRateCrd({ group: GROUP }),
  });
  await waitUntil(async () => (await raw.request("GET", `/apis/${GROUP}/v1/exchangerates`)).status === 200);
  return raw;
});

function expectTextNotFound(res: Response, path: string): void {
  expect(res.status, path).toBe(404);
  expect(res.text, path).toBe("404 page not found\n");
  expect(res.headers["content-type"], path).toBe("text/plain; charset=utf-8");
  expect(res.headers["x-content-type-options"], path).toBe("nosniff");
}

function expectStatusNotFound(res: Response, path: string): void {
  expect(res.status, path).toBe(404);
  expect(res.headers["content-type"], path).toBe("application/json");
  expect(res.body, path).toEqual({
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message: "the server could not find the requested resource",
    reason: "NotFound",
    details: {},
    code: 404,
  });
}

describe("paths no API group serves: Go's text 404", () => {
  it.each([
    "/foo",
    "/apis/nope.example.com/v1/things",
    "/apis/nope.example.com/v1/namespaces/default/things/x",
    "/apis/nope.example.com/v1",
    "/apis/nope.example.com",
    "/apis/apps/v2/deployments",
    "/apis/apps/v2",
    "/apis/v1/namespaces/default/pods",
  ])("GET %s", async (path) => {
    expectTextNotFound(await t.request("GET", path), path);
  });

  it("answers any method so", async () => {
    expectTextNotFound(await t.request("POST", "/apis/nope.example.com/v1/things", { body: {} }), "POST");
    expectTextNotFound(await t.request("DELETE", "/foo"), "DELETE");
  });
});

describe("unknown paths inside a served group version: the JSON NotFound Status", () => {
  it.each([
    "/api/v1/namespaces/default/widgets",
    "/api/v1/widgets",
    "/api/v2/pods",
    "/api/v2",
    "/apis/apps/v1/widgets",
    "/apis/apps/v1/namespaces/default/widgets/x",
    "/api/v1/namespaces/default/configmaps/x/bogus",
  ])("GET %s", async (path) => {
    expectStatusNotFound(await t.request("GET", path), path);
  });
});

describe("custom resources: the CRD handler's 404s", () => {
  it("passes unknown resources of a custom group on to the text 404", async () => {
    const path = `/apis/${GROUP}/v1/namespaces/default/unknowns`;
    expectTextNotFound(await t.request("GET", path), path);
  });

  it("passes a namespaced custom resource asked without a namespace on, but lists across namespaces", async () => {
    const path = `/apis/${GROUP}/v1/exchangerates/x`;
    expectTextNotFound(await t.request("GET", path), path);
    expectTextNotFound(await t.request("DELETE", `/apis/${GROUP}/v1/exchangerates`), "deletecollection");
    expect((await t.request("GET", `/apis/${GROUP}/v1/exchangerates`)).status).toBe(200);
  });

  it("names the object for an unknown subresource", async () => {
    const res = await t.request("GET", `/apis/${GROUP}/v1/namespaces/default/exchangerates/x/bogus`);
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({
      reason: "NotFound",
      message: `exchangerates.${GROUP} "x" not found`,
      details: { name: "x", group: GROUP, kind: "exchangerates" },
    });
  });
});
