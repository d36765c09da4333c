import { describe, expect, it } from "vitest";
import { jsonPatchBetween } from "../../packages/capstan/src/webhooks/json-patch-diff.ts";
import { applyJsonPatch, decodeJsonPatch } from "../../packages/capstan-dev/src/devcluster/patch/json-patch.ts";

/** Applies the patch as the (emulated) API server does, json-patch v4 semantics. */
function applied(before: unknown, after: unknown): unknown {
  const patch = JSON.parse(JSON.stringify(jsonPatchBetween(before, after)));
  return applyJsonPatch(structuredClone(before), decodeJsonPatch(patch));
}

describe("jsonPatchBetween", () => {
  it("is empty for equal values, whatever the key order", () => {
    expect(jsonPatchBetween({ a: 1, b: { c: [1, { d: 2 }] } }, { b: { c: [1, { d: 2 }] }, a: 1 })).toEqual([]);
  });

  it("adds, removes and replaces object members by path, escaping ~ and / in keys", () => {
    const before = { metadata: { labels: { "app.kubernetes.io/name": "x", keep: "1" }, annotations: { "a~b": "1" } } };
    const after = { metadata: { labels: { keep: "2", new: "y" }, annotations: { "a~b": "1", "x/y": "z" } } };
    expect(jsonPatchBetween(before, after)).toEqual([
      { op: "remove", path: "/metadata/labels/app.kubernetes.io~1name" },
      { op: "replace", path: "/metadata/labels/keep", value: "2" },
      { op: "add", path: "/metadata/labels/new", value: "y" },
      { op: "add", path: "/metadata/annotations/x~1y", value: "z" },
    ]);
    expect(applied(before, after)).toEqual(after);
  });

  it("patches arrays of the same length element by element and replaces arrays whose length changed", () => {
    const before = { spec: { containers: [{ name: "a", image: "x:1" }], args: ["--a"] } };
    const after = { spec: { containers: [{ name: "a", image: "x:2" }], args: ["--a", "--b"] } };
    expect(jsonPatchBetween(before, after)).toEqual([
      { op: "replace", path: "/spec/containers/0/image", value: "x:2" },
      { op: "replace", path: "/spec/args", value: ["--a", "--b"] },
    ]);
    expect(applied(before, after)).toEqual(after);
  });

  it("replaces a value whose type changed, null included, and gives exactly the new document", () => {
    const cases: [unknown, unknown][] = [
      [{ a: { b: 1 } }, { a: [1] }],
      [{ a: null }, { a: { b: null } }],
      [{ a: 1 }, { a: "1" }],
      [{ a: [] }, { a: {} }],
      [{ "": { "~": 1 } }, { "": { "~": 2 } }],
    ];
    for (const [before, after] of cases) expect(applied(before, after)).toEqual(after);
  });
});
