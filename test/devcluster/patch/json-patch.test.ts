/**
 * JSON patch as kube-apiserver 1.32 applies it: gopkg.in/evanphx/json-patch.v4 v4.12.0's semantics
 * (patch/json-patch.ts) and patch.go's answers (rest/json-patch-request.ts): 400 for a body that does
 * not decode, 413 past 10000 operations, and for any operation that does not apply one fixed 422.
 */
import { describe, expect, it } from "vitest";
import { applyJsonPatch, decodeJsonPatch } from "../../../packages/capstan-dev/src/devcluster/patch/json-patch.ts";
import { fileFixture } from "../../support/file-fixture.ts";
import { configMap, startRawHttpCluster } from "../support/http.ts";

const apply = (doc: unknown, ops: unknown) => applyJsonPatch(doc, decodeJsonPatch(ops));
const DOC = { a: { b: 1, n: null }, list: ["x", "y", "z"] };

describe("the library's semantics", () => {
  it.each([
    ["replace of a missing member adds it", [{ op: "replace", path: "/a/c", value: 2 }], { b: 1, n: null, c: 2 }],
    ["add without a value adds null", [{ op: "add", path: "/a/c" }], { b: 1, n: null, c: null }],
    [
      "copy from a missing member copies null",
      [{ op: "copy", from: "/a/zz", path: "/a/c" }],
      { b: 1, n: null, c: null },
    ],
    ["the first segment is not read", [{ op: "add", path: "bogus/a", value: 3 }], 3],
    ["move within an object", [{ op: "move", from: "/a/b", path: "/a/m" }], { n: null, m: 1 }],
  ])("%s", (_name, ops, a) => {
    expect((apply(DOC, ops) as { a: unknown }).a).toEqual(a);
  });

  it.each([
    ["appends at -", [{ op: "add", path: "/list/-", value: "w" }], ["x", "y", "z", "w"]],
    ["adds at the length", [{ op: "add", path: "/list/3", value: "w" }], ["x", "y", "z", "w"]],
    ["reads leading zeros and signs as Atoi does", [{ op: "add", path: "/list/01", value: "w" }], ["x", "w", "y", "z"]],
    ["adds at +0", [{ op: "add", path: "/list/+0", value: "w" }], ["w", "x", "y", "z"]],
    [
      "adds at a negative index, counting from the new end",
      [{ op: "add", path: "/list/-1", value: "w" }],
      ["x", "y", "z", "w"],
    ],
    ["removes at a negative index", [{ op: "remove", path: "/list/-1" }], ["x", "y"]],
    ["replaces at a negative index", [{ op: "replace", path: "/list/-3", value: "w" }], ["w", "y", "z"]],
    ["copies an element to the end", [{ op: "copy", from: "/list/0", path: "/list/-" }], ["x", "y", "z", "x"]],
    ["moves an element", [{ op: "move", from: "/list/0", path: "/list/2" }], ["y", "z", "x"]],
  ])("arrays: %s", (_name, ops, list) => {
    expect((apply(DOC, ops) as { list: unknown }).list).toEqual(list);
  });

  it.each([
    ["remove of a missing member", [{ op: "remove", path: "/a/zz" }]],
    ["add into a missing parent", [{ op: "add", path: "/nope/x", value: 1 }]],
    ["add through a null member", [{ op: "add", path: "/a/n/x", value: 1 }]],
    ["add at the root", [{ op: "add", path: "", value: {} }]],
    ["a path without a slash", [{ op: "add", path: "a", value: 1 }]],
    ["add past the end", [{ op: "add", path: "/list/4", value: "w" }]],
    ["add before the start", [{ op: "add", path: "/list/-5", value: "w" }]],
    ["remove past the end", [{ op: "remove", path: "/list/3" }]],
    ["remove at -", [{ op: "remove", path: "/list/-" }]],
    ["replace past the end", [{ op: "replace", path: "/list/3", value: "w" }]],
    ["an index that is not a number", [{ op: "replace", path: "/list/x", value: "w" }]],
    ["a failed test", [{ op: "test", path: "/a/b", value: 2 }]],
    ["a test of a missing member against a value", [{ op: "test", path: "/a/zz", value: 1 }]],
    ["a test without a value", [{ op: "test", path: "/a/b" }]],
    ["an unknown op", [{ op: "frobnicate", path: "/a" }]],
    ["no op", [{ path: "/a" }]],
    ["a null operation", [null]],
    ["no path", [{ op: "remove" }]],
    ["move without from", [{ op: "move", path: "/a/c" }]],
    ["move from a missing member", [{ op: "move", from: "/a/zz", path: "/a/c" }]],
    ["move into its own child", [{ op: "move", from: "/a", path: "/a/b/c" }]],
    ["copy without from", [{ op: "copy", path: "/a/c" }]],
    ["copy to a missing parent", [{ op: "copy", from: "/a/b", path: "/nope/c" }]],
  ])("fails: %s", (_name, ops) => {
    expect(() => apply(DOC, ops)).toThrow();
  });

  it("passes a test of a missing or null member against null, and of the whole document", () => {
    const ops = [
      { op: "test", path: "/a/zz", value: null },
      { op: "test", path: "/a/n", value: null },
      { op: "test", path: "", value: DOC },
    ];
    expect(apply(DOC, ops)).toEqual(DOC);
  });

  it("caps what copies add at 3 MiB", () => {
    const doc = { big: "x".repeat(1024 * 1024 - 10) };
    const copies = (n: number) => Array.from({ length: n }, (_, i) => ({ op: "copy", from: "/big", path: `/c${i}` }));
    expect(() => apply(doc, copies(3))).not.toThrow();
    expect(() => apply(doc, copies(4))).toThrow(/accumulated size increase of copy/);
  });

  it("takes a null body as no operations", () => {
    expect(apply(DOC, null)).toEqual(DOC);
  });
});

const CMS = "/api/v1/namespaces/default/configmaps";
const JSON_PATCH = "application/json-patch+json";
const t = fileFixture(() => startRawHttpCluster());

/** PATCHes configmap `name` (created with data a=1) with `body`. */
async function patch(name: string, body: unknown, query = "") {
  await t.request("POST", CMS, { body: configMap(name, { a: "1" }) });
  return t.request("PATCH", `${CMS}/${name}${query}`, { raw: JSON.stringify(body), contentType: JSON_PATCH });
}

describe("kube-apiserver's answers", () => {
  it.each([
    ["a failed test", [{ op: "test", path: "/data/a", value: "2" }]],
    ["remove of a missing key", [{ op: "remove", path: "/data/zz" }]],
    ["add into a missing parent", [{ op: "add", path: "/spec/x", value: 1 }]],
    ["an unknown op", [{ op: "frobnicate", path: "/data" }]],
  ])("answers %s with the fixed 422 and leaves the object", async (name, body) => {
    const cm = `jp-422-${name.replace(/\W+/g, "-")}`;
    const res = await patch(cm, body);
    expect(res.body).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: "the server rejected our request due to an error in our request",
      reason: "Invalid",
      details: {},
      code: 422,
    });
    expect((await t.request("GET", `${CMS}/${cm}`)).body.data).toEqual({ a: "1" });
  });

  it("applies a replace of a missing key, as v4 does", async () => {
    const res = await patch("jp-replace-missing", [{ op: "replace", path: "/data/b", value: "2" }]);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ a: "1", b: "2" });
  });

  it("answers a body that is not an array with 400, worded by the decoder that refused it", async () => {
    const strict = await patch("jp-object", { op: "add" });
    expect([strict.status, strict.body.reason, strict.body.message]).toEqual([
      400,
      "BadRequest",
      "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp",
    ]);
    const ignored = await patch("jp-object-ignore", "x", "?fieldValidation=Ignore");
    expect([ignored.status, ignored.body.message]).toEqual([
      400,
      "json: cannot unmarshal string into Go value of type jsonpatch.Patch",
    ]);
  });

  it("answers a wrongly typed member with 400 under Strict and Warn, with the 422 under Ignore", async () => {
    const body = [{ op: "add", path: 5, value: 1 }];
    for (const query of ["", "?fieldValidation=Strict", "?fieldValidation=Warn"]) {
      const res = await patch(`jp-typed${query.length}`, body, query);
      expect([res.status, res.body.message], query).toEqual([
        400,
        "error decoding patch: json: cannot unmarshal number into Go struct field jsonPatchOp.path of type string",
      ]);
    }
    const element = await patch("jp-element", ["x"]);
    expect(element.body.message).toBe(
      "error decoding patch: json: cannot unmarshal string into Go value of type handlers.jsonPatchOp",
    );
    expect((await patch("jp-typed-ignore", body, "?fieldValidation=Ignore")).status).toBe(422);
  });

  it("answers more than 10000 operations with 413", async () => {
    const ops = Array.from({ length: 10001 }, () => ({ op: "test", path: "/data/a", value: "1" }));
    const res = await patch("jp-many", ops);
    expect([res.status, res.body.reason, res.body.message]).toEqual([
      413,
      "RequestEntityTooLarge",
      "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001",
    ]);
    expect((await patch("jp-enough", ops.slice(1))).status).toBe(200);
  });
});
