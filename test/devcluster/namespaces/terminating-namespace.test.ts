/**
 * Creates into a namespace the namespace controller is emptying: the NamespaceLifecycle admission
 * plugin's 403 (admission.NewForbidden plus its NamespaceTerminating cause), named as the object was
 * sent (its generateName when it has no name yet), before the object is validated; once the namespace
 * is gone, the namespace's 404. Subresource creates (a TokenRequest) are refused too, before their
 * parent is looked up, and the refusal names the resource the client wrote to.
 */
import { waitUntil } from "capstan-dev/testing";
import { describe, expect, it } from "vitest";
import { fileFixture } from "../../support/file-fixture.ts";
import { configMap, startRawHttpCluster } from "../support/http.ts";

const t = fileFixture(() => startRawHttpCluster());
const NS = "/api/v1/namespaces";

function terminating(name: string, namespace: string, resource = { group: "", resource: "configmaps" }) {
  const qualified = resource.group === "" ? resource.resource : `${resource.resource}.${resource.group}`;
  return {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message: `${qualified} "${name}" is forbidden: unable to create new content in namespace ${namespace} because it is being terminated`,
    reason: "Forbidden",
    details: {
      name,
      ...(resource.group === "" ? {} : { group: resource.group }),
      kind: resource.resource,
      causes: [
        {
          reason: "NamespaceTerminating",
          message: `namespace ${namespace} is being terminated`,
          field: "metadata.namespace",
        },
      ],
    },
    code: 403,
  };
}

describe("a namespace being terminated", () => {
  it("refuses new content while its content is still being deleted, then is gone", async () => {
    await t.request("POST", NS, { body: { metadata: { name: "emptying" } } });
    const cms = `${NS}/emptying/configmaps`;
    // Content held by a finalizer keeps the namespace Terminating while the controller deletes it.
    await t.request("POST", cms, { body: configMap("held", {}, { finalizers: ["example.com/hold"] }) });
    expect((await t.request("DELETE", `${NS}/emptying`)).status).toBe(200);
    await waitUntil(async () => (await t.request("GET", `${cms}/held`)).body.metadata?.deletionTimestamp);
    expect((await t.request("GET", `${NS}/emptying`)).body.status.phase).toBe("Terminating");

    const late = await t.request("POST", cms, { body: configMap("late") });
    expect(late.body).toEqual(terminating("late", "emptying"));
    const generated = await t.request("POST", cms, { body: { metadata: { generateName: "gen-" } } });
    expect(generated.body).toEqual(terminating("gen-", "emptying"));
    // Admission comes before validation: an invalid name is refused as content, not as invalid.
    const invalid = await t.request("POST", cms, { body: configMap("Not_Valid") });
    expect(invalid.body).toEqual(terminating("Not_Valid", "emptying"));
    const unnamed = await t.request("POST", cms, { body: { metadata: {} } });
    expect(unnamed.body).toEqual(terminating("Unknown", "emptying"));

    await t.request("PATCH", `${cms}/held`, {
      body: { metadata: { finalizers: null } },
      contentType: "application/merge-patch+json",
    });
    await waitUntil(async () => (await t.request("GET", `${NS}/emptying`)).status === 404);
    const gone = await t.request("POST", cms, { body: configMap("later") });
    expect([gone.status, gone.body.message, gone.body.details]).toEqual([
      404,
      'namespaces "emptying" not found',
      { name: "emptying", kind: "namespaces" },
    ]);
  });

  it("refuses a TokenRequest and an events.k8s.io Event too, naming what the client wrote to", async () => {
    await t.request("POST", NS, { body: { metadata: { name: "closing" } } });
    const sas = `${NS}/closing/serviceaccounts`;
    // A ServiceAccount held by a finalizer still exists while the namespace is terminating.
    await t.request("POST", sas, { body: { metadata: { name: "held", finalizers: ["example.com/hold"] } } });
    expect((await t.request("DELETE", `${NS}/closing`)).status).toBe(200);
    await waitUntil(async () => (await t.request("GET", `${sas}/held`)).body.metadata?.deletionTimestamp);

    const tokenRequest = { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: {} };
    const token = await t.request("POST", `${sas}/held/token`, { body: tokenRequest });
    expect(token.body).toEqual(terminating("held", "closing", { group: "", resource: "serviceaccounts" }));
    // Admission comes before the ServiceAccount is looked up.
    const gone = await t.request("POST", `${sas}/default/token`, { body: tokenRequest });
    expect(gone.body).toEqual(terminating("default", "closing", { group: "", resource: "serviceaccounts" }));

    const event = await t.request("POST", "/apis/events.k8s.io/v1/namespaces/closing/events", {
      body: {
        metadata: { name: "e" },
        eventTime: "2024-01-01T00:00:00.000000Z",
        action: "a",
        reason: "r",
        type: "Normal",
      },
    });
    expect(event.body).toEqual(terminating("e", "closing", { group: "events.k8s.io", resource: "events" }));

    await t.request("PATCH", `${sas}/held`, {
      body: { metadata: { finalizers: null } },
      contentType: "application/merge-patch+json",
    });
  });
});
