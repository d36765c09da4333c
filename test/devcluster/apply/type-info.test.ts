import { describe, expect, it } from "vitest";
import { ApplyConflictError, ApplyError } from "../../../packages/capstan-dev/src/devcluster/apply/errors.ts";
import { applyConfiguration, type KubeJson } from "../../../packages/capstan-dev/src/devcluster/apply/field-manager.ts";
import { typeFromStructuralSchema } from "../../../packages/capstan-dev/src/devcluster/apply/type-info.ts";

// biome-ignore lint/suspicious/noExplicitAny: test assertions read arbitrary JSON
type Doc = any;

/** A CRD version schema using every list and map type apply distinguishes. */
const schema = {
  type: "object",
  properties: {
    spec: {
      type: "object",
      properties: {
        ports: {
          type: "array",
          "x-kubernetes-list-type": "map",
          "x-kubernetes-list-map-keys": ["port", "protocol"],
          items: {
            type: "object",
            properties: {
              port: { type: "integer" },
              protocol: { type: "string", default: "TCP" },
              name: { type: "string" },
            },
          },
        },
        tags: { type: "array", "x-kubernetes-list-type": "set", items: { type: "string" } },
        args: { type: "array", items: { type: "string" } },
        selector: {
          type: "object",
          "x-kubernetes-map-type": "atomic",
          additionalProperties: { type: "string" },
        },
        labels: { type: "object", additionalProperties: { type: "string" } },
        extra: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
      },
    },
  },
};

const type = typeFromStructuralSchema(schema);
const target = { type, apiVersion: "example.com/v1", kind: "Widget", now: () => new Date("2026-11-22T10:00:00Z") };

function widget(spec: Record<string, unknown>): KubeJson {
  return { apiVersion: "example.com/v1", kind: "Widget", metadata: { name: "w", namespace: "default" }, spec };
}

function fieldsOf(obj: KubeJson, manager: string): unknown {
  return (obj as Doc).metadata.managedFields.find((e: Doc) => e.manager === manager).fieldsV1;
}

describe("apply type information from a CRD's structural schema", () => {
  it("keys list-type map items by their keys (with key defaults) and set items by value", () => {
    const { object } = applyConfiguration(
      undefined,
      widget({ ports: [{ port: 80 }], tags: ["a", "b"], args: ["x"], selector: { app: "w" }, labels: { l: "1" } }),
      { ...target, manager: "alice" },
    );
    expect(fieldsOf(object, "alice")).toEqual({
      "f:spec": {
        "f:args": {},
        "f:labels": { "f:l": {} },
        "f:ports": { 'k:{"port":80,"protocol":"TCP"}': { ".": {}, "f:port": {} } },
        "f:selector": {},
        "f:tags": { 'v:"a"': {}, 'v:"b"': {} },
      },
    });
  });

  it("merges list-type map items from different managers and conflicts per item field", () => {
    let live = applyConfiguration(undefined, widget({ ports: [{ port: 80, name: "http" }] }), {
      ...target,
      manager: "alice",
    }).object;
    live = { ...live, metadata: { ...(live as Doc).metadata, uid: "u1" } };
    live = applyConfiguration(live, widget({ ports: [{ port: 443, name: "https" }] }), {
      ...target,
      manager: "bob",
    }).object;
    expect((live as Doc).spec.ports).toEqual([
      { port: 80, name: "http" },
      { port: 443, name: "https" },
    ]);
    let err: unknown;
    try {
      applyConfiguration(live, widget({ ports: [{ port: 80, name: "web" }] }), { ...target, manager: "bob" });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ApplyConflictError);
    expect((err as ApplyConflictError).message).toBe(
      'Apply failed with 1 conflict: conflict with "alice": .spec.ports[port=80,protocol="TCP"].name',
    );
  });

  it("replaces atomic lists and maps whole, and conflicts on the whole value", () => {
    const live = applyConfiguration(undefined, widget({ args: ["a"], selector: { app: "w" } }), {
      ...target,
      manager: "alice",
    }).object;
    let err: unknown;
    try {
      applyConfiguration(live, widget({ args: ["b"], selector: { tier: "x" } }), { ...target, manager: "bob" });
    } catch (e) {
      err = e;
    }
    expect((err as ApplyConflictError).message).toBe(
      'Apply failed with 2 conflicts: conflicts with "alice":\n- .spec.args\n- .spec.selector',
    );
    const forced = applyConfiguration(live, widget({ args: ["b"], selector: { tier: "x" } }), {
      ...target,
      manager: "bob",
      force: true,
    });
    expect((forced.object as Doc).spec.args).toEqual(["b"]);
    expect((forced.object as Doc).spec.selector).toEqual({ tier: "x" });
  });

  it("refuses fields the schema does not declare, unless it preserves unknown fields", () => {
    let err: unknown;
    try {
      applyConfiguration(undefined, widget({ bogus: 1 }), { ...target, manager: "alice" });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ApplyError);
    expect((err as ApplyError).message).toBe(
      "failed to create typed patch object (default/w; example.com/v1, Kind=Widget): .spec.bogus: field not declared in schema",
    );
    const ok = applyConfiguration(undefined, widget({ extra: { any: { nested: [1] } } }), {
      ...target,
      manager: "alice",
    });
    expect(fieldsOf(ok.object, "alice")).toEqual({ "f:spec": { "f:extra": { "f:any": { ".": {}, "f:nested": {} } } } });
  });
});
