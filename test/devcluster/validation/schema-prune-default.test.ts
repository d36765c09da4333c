import { describe, expect, it } from "vitest";
import { applyDefaults } from "../../../packages/capstan-dev/src/devcluster/validation/schema-default.ts";
import {
  pruneNonNullableNulls,
  pruneUnknownFields,
} from "../../../packages/capstan-dev/src/devcluster/validation/schema-prune.ts";
import type { JSONSchemaProps } from "../../../packages/capstan-dev/src/devcluster/validation/schema-types.ts";

const schema: JSONSchemaProps = {
  type: "object",
  properties: {
    spec: {
      type: "object",
      properties: {
        known: { type: "string" },
        list: { type: "array", items: { type: "object", properties: { a: { type: "string" } } } },
        bag: {
          type: "object",
          "x-kubernetes-preserve-unknown-fields": true,
          properties: { typed: { type: "object", properties: { x: {} } } },
        },
        map: { type: "object", additionalProperties: { type: "object", properties: { v: { type: "integer" } } } },
        template: {
          type: "object",
          "x-kubernetes-embedded-resource": true,
          properties: { spec: { type: "object", properties: { keep: { type: "string" } } } },
        },
      },
    },
  },
};

describe("pruneUnknownFields", () => {
  it("removes unknown fields at every level and reports their paths sorted", () => {
    const o = {
      apiVersion: "x.io/v1",
      kind: "K",
      metadata: { name: "a", bogus: 1 },
      extra: true,
      spec: {
        known: "k",
        unknown: 1,
        list: [{ a: "x", b: "y" }],
        map: { one: { v: 1, w: 2 } },
      },
    };
    // The root metadata's unknown fields come first (ObjectMeta round trip), then the pruned ones sorted.
    expect(pruneUnknownFields(schema, o)).toEqual([
      "metadata.bogus",
      "extra",
      "spec.list[0].b",
      "spec.map.one.w",
      "spec.unknown",
    ]);
    expect(o).toEqual({
      apiVersion: "x.io/v1",
      kind: "K",
      metadata: { name: "a" },
      spec: { known: "k", list: [{ a: "x" }], map: { one: { v: 1 } } },
    });
  });

  it("keeps unknown fields under x-kubernetes-preserve-unknown-fields but prunes its specified properties", () => {
    const o = { spec: { bag: { anything: { deep: 1 }, typed: { x: 1, y: 2 } } } };
    expect(pruneUnknownFields(schema, o)).toEqual(["spec.bag.typed.y"]);
    expect(o.spec.bag).toEqual({ anything: { deep: 1 }, typed: { x: 1 } });
  });

  it("keeps apiVersion, kind and metadata of embedded resources", () => {
    const o = {
      spec: {
        template: {
          apiVersion: "v1",
          kind: "Pod",
          metadata: { labels: { a: "b" }, zzz: 1 },
          spec: { keep: "k", drop: 1 },
          other: 1,
        },
      },
    };
    // Embedded metadata's unknown fields come last, as the ObjectMeta coercion runs after pruning.
    expect(pruneUnknownFields(schema, o)).toEqual([
      "spec.template.other",
      "spec.template.spec.drop",
      "spec.template.metadata.zzz",
    ]);
    expect(o.spec.template).toEqual({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { labels: { a: "b" } },
      spec: { keep: "k" },
    });
  });

  it("keeps everything when the root preserves unknown fields", () => {
    const o = { spec: { whatever: 1 }, metadata: { name: "a" } };
    expect(pruneUnknownFields({ type: "object", "x-kubernetes-preserve-unknown-fields": true }, o)).toEqual([]);
    expect(o).toEqual({ spec: { whatever: 1 }, metadata: { name: "a" } });
  });

  it("drops nulls of non-nullable fields without defaults, and keeps nullable or defaulted ones", () => {
    const s: JSONSchemaProps = {
      type: "object",
      properties: { a: { type: "string" }, b: { type: "string", nullable: true }, c: { type: "string", default: "x" } },
    };
    const o: Record<string, unknown> = { a: null, b: null, c: null };
    pruneNonNullableNulls(o, s);
    expect(o).toEqual({ b: null, c: null });
  });
});

describe("applyDefaults", () => {
  const s: JSONSchemaProps = {
    type: "object",
    properties: {
      spec: {
        type: "object",
        default: {},
        properties: {
          replicas: { type: "integer", default: 1 },
          mode: { type: "string", default: "auto", nullable: true },
          strict: { type: "string", default: "on" },
          ports: {
            type: "array",
            items: {
              type: "object",
              default: { port: 80 },
              properties: { protocol: { type: "string", default: "TCP" } },
            },
          },
          env: { type: "object", additionalProperties: { type: "string", default: "unset" } },
        },
      },
    },
  };

  it("fills missing fields, and keeps going inside the default it just set", () => {
    const o: Record<string, unknown> = {};
    applyDefaults(s, o);
    expect(o).toEqual({ spec: { replicas: 1, mode: "auto", strict: "on" } });
  });

  it("replaces non-nullable nulls but keeps nulls where the schema is nullable", () => {
    const o = { spec: { replicas: 3, mode: null, strict: null } };
    applyDefaults(s, o);
    expect(o.spec).toEqual({ replicas: 3, mode: null, strict: "on" });
  });

  it("defaults inside arrays and maps, including null elements", () => {
    const o = { spec: { ports: [{ protocol: "UDP" }, {}, null], env: { A: "a", B: null } } };
    applyDefaults(s, o);
    expect(o.spec.ports).toEqual([{ protocol: "UDP" }, { protocol: "TCP" }, { port: 80, protocol: "TCP" }]);
    expect(o.spec.env).toEqual({ A: "a", B: "unset" });
  });

  it("copies defaults so objects do not share them", () => {
    const a: { spec?: { ports?: unknown[] } } = { spec: { ports: [null] } };
    const b: { spec?: { ports?: unknown[] } } = { spec: { ports: [null] } };
    applyDefaults(s, a);
    applyDefaults(s, b);
    expect(a.spec!.ports![0]).not.toBe(b.spec!.ports![0]);
    expect((s.properties!.spec!.properties!.ports!.items as JSONSchemaProps).default).toEqual({ port: 80 });
  });
});
