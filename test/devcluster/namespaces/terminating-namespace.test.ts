/**
 * Creates into a namespace the namespace controller is emptying: the NamespaceLifecycle admission
 * plugin's 403 (admission.NewForbidden plus its NamespaceTerminating cause), named as the object was
 * sent (its generateName when it has no name yet), before the object is validated; once the namespace
 * is gone, the namespace's 404.
 */
import { waitUntil } from "capstan-dev/testing";
import { describe, expect, it } from "vitest";
import { fileFixture } from "../../support/file-fixture.ts";
import { configMap, startRawHttpCluster } from "../support/http.ts";

const t = fileFixture(() => startRawHttpCluster());
const NS = "/api/v1/namespaces";

function terminating(name: string, namespace: string) {
  return {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message: `configmaps "${name}" is forbidden: unable to create new content in namespace ${namespace} because it is being terminated`,
    reason: "Forbidden",
    details: {
      name,
      kind: "configmaps",
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
});
