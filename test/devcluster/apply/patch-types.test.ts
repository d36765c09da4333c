import { describe, expect, it } from "vitest";
import {
  applyPatchType,
  strategicMergePatchType,
} from "../../../packages/capstan-dev/src/devcluster/apply/patch-types.ts";
import { ApiError } from "../../../packages/capstan-dev/src/devcluster/machinery/status.ts";
import { builtinResources } from "../../../packages/capstan-dev/src/devcluster/registry/builtins.ts";
import type {
  JsonObject,
  ServedResource,
} from "../../../packages/capstan-dev/src/devcluster/registry/served-resource.ts";
import { defaultPatchTypes } from "../../../packages/capstan-dev/src/devcluster/rest/patchers.ts";

// biome-ignore lint/suspicious/noExplicitAny: test assertions read arbitrary JSON
type Doc = any;

const builtins = builtinResources();
const configMaps = builtins.find((s) => s.kind === "ConfigMap")!;
const deployments = builtins.find((s) => s.kind === "Deployment")!;
const widgets: ServedResource = {
  ...configMaps,
  group: "example.com",
  version: "v1",
  kind: "Widget",
  listKind: "WidgetList",
  plural: "widgets",
  singular: "widget",
  custom: true,
  subresources: { status: true },
  schema: {
    type: "object",
    properties: {
      spec: { type: "object", properties: { size: { type: "integer" } } },
      status: { type: "object", properties: { ready: { type: "boolean" } } },
    },
  },
};

function statusOf(fn: () => unknown): Doc {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return err.status;
    throw err;
  }
  throw new Error("expected an ApiError");
}

const query = (q: string) => new URLSearchParams(q);

const liveDeployment: JsonObject = {
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace: "default", uid: "u", resourceVersion: "3" },
  spec: {
    template: {
      spec: {
        containers: [
          { name: "app", image: "nginx:1.25" },
          { name: "sidecar", image: "busybox" },
        ],
      },
    },
  },
};

describe("strategic merge patch content type", () => {
  it("merges containers by name for built-in kinds", () => {
    const out = strategicMergePatchType.patch(
      liveDeployment,
      JSON.stringify({ spec: { template: { spec: { containers: [{ name: "app", image: "nginx:1.27" }] } } } }),
      { served: deployments, query: query("") },
    ) as Doc;
    expect(out.spec.template.spec.containers).toEqual([
      { name: "app", image: "nginx:1.27" },
      { name: "sidecar", image: "busybox" },
    ]);
  });

  it("answers engine errors with kube-apiserver's statuses", () => {
    const bad = statusOf(() =>
      strategicMergePatchType.patch(liveDeployment, '{"metadata":{"$retainKeys":"x"}}', {
        served: deployments,
        query: query(""),
      }),
    );
    expect([bad.code, bad.reason, bad.message]).toEqual([400, "BadRequest", "invalid patch format of retainKeys"]);
    const internal = statusOf(() =>
      strategicMergePatchType.patch(liveDeployment, '{"spec":{"template":{"spec":{"containers":[{"image":"x"}]}}}}', {
        served: deployments,
        query: query(""),
      }),
    );
    expect(internal).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: "map: map[image:x] does not contain declared merge key: name",
      code: 500,
    });
    const syntax = statusOf(() =>
      strategicMergePatchType.patch(liveDeployment, "{", { served: deployments, query: query("") }),
    );
    expect(syntax.code).toBe(400);
  });

  it("is what the server registers by default for built-in kinds", () => {
    const patcher = defaultPatchTypes().resolve("application/strategic-merge-patch+json", deployments);
    const out = patcher(
      liveDeployment,
      JSON.stringify({ spec: { template: { spec: { containers: [{ name: "sidecar", $patch: "delete" }] } } } }),
      { served: deployments, query: query("") },
    ) as Doc;
    expect(out.spec.template.spec.containers.map((c: { name: string }) => c.name)).toEqual(["app"]);
  });

  it("is refused for custom resources with the 415 listing what they accept", () => {
    const types = defaultPatchTypes();
    types.register(strategicMergePatchType);
    types.register(applyPatchType);
    const status = statusOf(() => types.resolve("application/strategic-merge-patch+json", widgets));
    expect([status.code, status.message]).toEqual([
      415,
      "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
    ]);
  });
});

describe("apply content type", () => {
  const liveCm: JsonObject = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "cm", namespace: "default", uid: "u", resourceVersion: "1" },
    data: { a: "1" },
  };

  it("requires fieldManager with the 422 PatchOptions error", () => {
    const status = statusOf(() =>
      applyPatchType.patch(liveCm, "apiVersion: v1\nkind: ConfigMap", { served: configMaps, query: query("") }),
    );
    expect(status).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
      reason: "Invalid",
      details: {
        group: "meta.k8s.io",
        kind: "PatchOptions",
        causes: [
          {
            reason: "FieldValueRequired",
            message: "Required value: is required for apply patch",
            field: "fieldManager",
          },
        ],
      },
      code: 422,
    });
  });

  it("validates fieldManager (length, printable) and refuses force on strategic merge, as ValidatePatchOptions does", () => {
    const long = statusOf(() =>
      applyPatchType.patch(liveCm, "{}", { served: configMaps, query: query(`fieldManager=${"m".repeat(129)}`) }),
    );
    expect(long.message).toBe(
      'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes',
    );
    const bell = statusOf(() =>
      applyPatchType.patch(liveCm, "{}", { served: configMaps, query: query("fieldManager=a%07b") }),
    );
    expect(bell.message).toBe(
      'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Invalid value: "a\\ab": invalid character U+0007 (at position 1)',
    );
    const force = statusOf(() =>
      strategicMergePatchType.patch(liveCm, "{}", { served: configMaps, query: query("force=true") }),
    );
    expect([force.code, force.message]).toEqual([
      422,
      'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch',
    ]);
  });

  it("applies YAML, records the manager, and answers conflicts with the 409 Status", () => {
    const body = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: '2'\n";
    // The stored object has no managedFields: its fields belong to before-first-apply, so changing
    // `a` conflicts with it until forced.
    const untracked = statusOf(() =>
      applyPatchType.patch(liveCm, body, { served: configMaps, query: query("fieldManager=alice") }),
    );
    expect(untracked.message).toBe(
      'Apply failed with 1 conflict: conflict with "before-first-apply" using v1: .data.a',
    );
    const first = applyPatchType.patch(liveCm, body, {
      served: configMaps,
      query: query("fieldManager=alice&force=true"),
    }) as Doc;
    expect(first.data).toEqual({ a: "2" });
    const status = statusOf(() =>
      applyPatchType.patch(first, body.replace("'2'", "'3'"), {
        served: configMaps,
        query: query("fieldManager=bob&force=false"),
      }),
    );
    expect([status.code, status.reason, status.message]).toEqual([
      409,
      "Conflict",
      'Apply failed with 1 conflict: conflict with "alice": .data.a',
    ]);
    // The parameter codec reads any value but 0 and false (any case) as true: the Python client sends True.
    for (const force of ["true", "True", "maybe"]) {
      const forced = applyPatchType.patch(first, body.replace("'2'", "'3'"), {
        served: configMaps,
        query: query(`fieldManager=bob&force=${force}`),
      }) as Doc;
      expect(forced.data).toEqual({ a: "3" });
    }
    const notForced = statusOf(() =>
      applyPatchType.patch(first, body.replace("'2'", "'3'"), {
        served: configMaps,
        query: query("fieldManager=bob&force=FALSE"),
      }),
    );
    expect(notForced.code).toBe(409);
  });

  it("uses the CRD schema for custom resources and never owns status on the main resource", () => {
    const live: JsonObject = {
      apiVersion: "example.com/v1",
      kind: "Widget",
      metadata: { name: "w", namespace: "default", uid: "u" },
    };
    const out = applyPatchType.patch(
      live,
      JSON.stringify({
        apiVersion: "example.com/v1",
        kind: "Widget",
        metadata: { name: "w" },
        spec: { size: 2 },
        status: { ready: true },
      }),
      { served: widgets, query: query("fieldManager=op") },
    ) as Doc;
    const op = out.metadata.managedFields.find((e: Doc) => e.manager === "op");
    expect(op.fieldsV1).toEqual({ "f:spec": { "f:size": {} } });
    const unknown = statusOf(() =>
      applyPatchType.patch(
        out,
        JSON.stringify({
          apiVersion: "example.com/v1",
          kind: "Widget",
          metadata: { name: "w" },
          spec: { colour: "red" },
        }),
        {
          served: widgets,
          query: query("fieldManager=op"),
        },
      ),
    );
    expect([unknown.code, unknown.message]).toEqual([
      500,
      "failed to create typed patch object (/w; example.com/v1, Kind=Widget): .spec.colour: field not declared in schema",
    ]);
  });

  it("refuses bodies that are not objects", () => {
    const list = statusOf(() =>
      applyPatchType.patch(liveCm, "- a\n- b\n", { served: configMaps, query: query("fieldManager=x") }),
    );
    expect([list.code, list.message]).toEqual([
      400,
      "error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type map[string]interface {}",
    ]);
  });
});
