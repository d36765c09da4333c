import { startTestCluster, waitUntil } from "capstan-dev/testing";
import { describe, expect, it } from "vitest";
import { definitionName } from "../../../packages/capstan-dev/src/devcluster/endpoints/openapi.ts";
import { fileFixture } from "../../support/file-fixture.ts";
import { exchangeRateCrd, http } from "./support/cluster.ts";

const cluster = fileFixture(() => startTestCluster());

type Discovery = { paths: Record<string, { serverRelativeURL: string }> };
type Operation = {
  parameters?: { name: string; in: string }[];
  "x-kubernetes-group-version-kind"?: Record<string, string>;
  "x-kubernetes-action"?: string;
};
type Doc = {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Record<string, unknown>> };
};

async function groupVersionDoc(key: string): Promise<Doc> {
  const index = (await http(cluster, "GET", "/openapi/v3")).body as Discovery;
  const entry = index.paths[key];
  expect(entry, `${key} in /openapi/v3`).toBeDefined();
  const res = await http(cluster, "GET", entry!.serverRelativeURL);
  expect(res.status).toBe(200);
  return res.body as Doc;
}

describe("OpenAPI v3 documents kubectl validates against", () => {
  it("indexes every served group-version with a content hash", async () => {
    const index = (await http(cluster, "GET", "/openapi/v3")).body as Discovery;
    expect(Object.keys(index.paths)).toEqual(
      expect.arrayContaining(["api/v1", "apis/apps/v1", "apis/apiextensions.k8s.io/v1", "apis/coordination.k8s.io/v1"]),
    );
    expect(index.paths["api/v1"]?.serverRelativeURL).toMatch(/^\/openapi\/v3\/api\/v1\?hash=[0-9A-F]{128}$/);
  });

  it("declares fieldValidation on the PATCH of each kind, tagged with its group-version-kind (kubectl's server-side validation check)", async () => {
    const doc = await groupVersionDoc("api/v1");
    expect(doc.openapi).toBe("3.0.0");
    for (const [path, kind] of [
      ["/api/v1/namespaces/{namespace}/configmaps/{name}", "ConfigMap"],
      ["/api/v1/namespaces/{name}", "Namespace"],
    ] as const) {
      const patch = doc.paths[path]?.["patch"];
      expect(patch?.["x-kubernetes-group-version-kind"]).toEqual({ group: "", version: "v1", kind });
      expect(patch?.["x-kubernetes-action"]).toBe("patch");
      expect(patch?.parameters).toContainEqual(expect.objectContaining({ name: "fieldValidation", in: "query" }));
    }
    expect(doc.paths["/api/v1/namespaces/{namespace}/pods/{name}/status"]?.["put"]).toBeDefined();
    // Not advertised, so that client-side apply takes its strategic-merge metadata from kubectl's own types.
    const patch = doc.paths["/api/v1/namespaces/{namespace}/configmaps/{name}"]?.["patch"] as
      | { requestBody: { content: object } }
      | undefined;
    const content = patch?.requestBody.content ?? {};
    expect(Object.keys(content).sort()).toEqual([
      "application/apply-patch+yaml",
      "application/json-patch+json",
      "application/merge-patch+json",
    ]);
    expect(doc.components.schemas["io.k8s.api.core.v1.ConfigMap"]?.["x-kubernetes-group-version-kind"]).toEqual([
      { group: "", version: "v1", kind: "ConfigMap" },
    ]);
  });

  it("describes built-in kinds with their field tree, recursive types as references", async () => {
    const core = await groupVersionDoc("api/v1");
    const pod = core.components.schemas["io.k8s.api.core.v1.Pod"] as {
      properties: Record<string, Record<string, unknown>>;
    };
    expect(pod.properties["spec"]).toEqual({ $ref: "#/components/schemas/V1PodSpec" });
    expect(pod.properties["metadata"]).toEqual({
      default: {},
      allOf: [{ $ref: "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" }],
    });
    const spec = core.components.schemas["V1PodSpec"] as { properties: Record<string, unknown> };
    expect(spec.properties["containers"]).toEqual({
      type: "array",
      items: { $ref: "#/components/schemas/V1Container" },
    });
    const port = core.components.schemas["V1ContainerPort"] as { properties: Record<string, unknown> };
    expect(port.properties["containerPort"]).toEqual({ type: "integer", format: "int32" });
    const cm = core.components.schemas["io.k8s.api.core.v1.ConfigMap"] as { properties: Record<string, unknown> };
    expect(cm.properties["data"]).toEqual({ type: "object", additionalProperties: { type: "string" } });

    const ext = await groupVersionDoc("apis/apiextensions.k8s.io/v1");
    const props = ext.components.schemas["V1JSONSchemaProps"] as { properties: Record<string, unknown> };
    expect(props.properties["properties"]).toEqual({
      type: "object",
      additionalProperties: { $ref: "#/components/schemas/V1JSONSchemaProps" },
    });
  });

  it("types Time and MicroTime fields as date-time strings", async () => {
    const coordination = await groupVersionDoc("apis/coordination.k8s.io/v1");
    const lease = coordination.components.schemas["V1LeaseSpec"] as { properties: Record<string, unknown> };
    expect(lease.properties["renewTime"]).toEqual({ type: "string", format: "date-time" });
    const core = await groupVersionDoc("api/v1");
    const event = core.components.schemas["io.k8s.api.core.v1.Event"] as { properties: Record<string, unknown> };
    expect(event.properties["eventTime"]).toEqual({ type: "string", format: "date-time" });
    expect(event.properties["firstTimestamp"]).toEqual({ type: "string", format: "date-time" });
  });

  it("publishes a CRD's schema under its reversed-group name once it is served, and drops it when the CRD goes", async () => {
    const before = (await http(cluster, "GET", "/openapi/v3")).body as Discovery;
    expect(before.paths["apis/operators.example.com/v1"]).toBeUndefined();
    expect(
      (await http(cluster, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", exchangeRateCrd()))
        .status,
    ).toBe(201);
    const doc = await waitUntil(async () => {
      const index = (await http(cluster, "GET", "/openapi/v3")).body as Discovery;
      return index.paths["apis/operators.example.com/v1"]
        ? groupVersionDoc("apis/operators.example.com/v1")
        : undefined;
    });
    const name = definitionName("operators.example.com", "v1", "ExchangeRate");
    expect(name).toBe("com.example.operators.v1.ExchangeRate");
    const schema = doc.components.schemas[name] as { properties: Record<string, Record<string, unknown>> };
    expect(schema.properties["spec"]).toEqual({
      type: "object",
      properties: { currency: { type: "string", enum: ["CAD", "USD"] } },
    });
    expect(schema.properties["metadata"]).toEqual({
      description: "Standard object's metadata.",
      allOf: [{ $ref: "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" }],
    });
    const patch = doc.paths["/apis/operators.example.com/v1/namespaces/{namespace}/exchangerates/{name}"]?.["patch"];
    expect(patch?.parameters).toContainEqual(expect.objectContaining({ name: "fieldValidation" }));
    expect(
      doc.paths["/apis/operators.example.com/v1/namespaces/{namespace}/exchangerates/{name}/status"],
    ).toBeDefined();

    // A schema change republishes that group-version under a new hash; other group-versions keep theirs.
    const indexBefore = (await http(cluster, "GET", "/openapi/v3")).body as Discovery;
    const patched = await http(
      cluster,
      "PATCH",
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/exchangerates.operators.example.com",
      [
        {
          op: "add",
          path: "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/note",
          value: { type: "string" },
        },
      ],
      "application/json-patch+json",
    );
    expect(patched.status, patched.text).toBe(200);
    const indexAfter = await waitUntil(async () => {
      const index = (await http(cluster, "GET", "/openapi/v3")).body as Discovery;
      const before = indexBefore.paths["apis/operators.example.com/v1"]?.serverRelativeURL;
      return index.paths["apis/operators.example.com/v1"]?.serverRelativeURL !== before ? index : undefined;
    });
    expect(indexAfter.paths["api/v1"]).toEqual(indexBefore.paths["api/v1"]);
    const changed = await groupVersionDoc("apis/operators.example.com/v1");
    const changedSchema = changed.components.schemas[name] as { properties: Record<string, { properties?: object }> };
    expect(Object.keys(changedSchema.properties["spec"]?.properties ?? {})).toEqual(["currency", "note"]);

    await http(
      cluster,
      "DELETE",
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/exchangerates.operators.example.com",
    );
    await waitUntil(async () => {
      const index = (await http(cluster, "GET", "/openapi/v3")).body as Discovery;
      return index.paths["apis/operators.example.com/v1"] === undefined;
    });
  });
});

describe("definition names", () => {
  it("names built-in, apiextensions and custom kinds as the apiserver does", () => {
    expect(definitionName("", "v1", "Pod")).toBe("io.k8s.api.core.v1.Pod");
    expect(definitionName("apps", "v1", "Deployment")).toBe("io.k8s.api.apps.v1.Deployment");
    expect(definitionName("rbac.authorization.k8s.io", "v1", "Role")).toBe("io.k8s.api.rbac.v1.Role");
    expect(definitionName("apiextensions.k8s.io", "v1", "CustomResourceDefinition")).toBe(
      "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition",
    );
  });
});
