import { describe, expect, it } from "vitest";
import { FieldSet, FieldsV1Error } from "../../../packages/capstan-dev/src/devcluster/apply/field-set.ts";
import {
  comparePathElements,
  type Path,
  parsePathElement,
  pathToString,
  serializePathElement,
} from "../../../packages/capstan-dev/src/devcluster/apply/path-element.ts";

const f = (field: string) => ({ field });
const key = (...kv: [string, string | number][]) => ({ key: kv });

describe("fieldsV1 path elements", () => {
  it("serializes each element kind as the real server writes it", () => {
    expect(serializePathElement(f("data"))).toBe("f:data");
    expect(serializePathElement(key(["containerPort", 80], ["protocol", "TCP"]))).toBe(
      'k:{"containerPort":80,"protocol":"TCP"}',
    );
    expect(serializePathElement({ value: "x<y" })).toBe('v:"x\\u003cy"');
    expect(serializePathElement({ index: 3 })).toBe("i:3");
  });

  it("parses keys back, sorting key fields by name, and rejects malformed ones", () => {
    expect(parsePathElement('k:{"protocol":"TCP","containerPort":80}')).toEqual(
      key(["containerPort", 80], ["protocol", "TCP"]),
    );
    expect(parsePathElement("v:1.5")).toEqual({ value: 1.5 });
    expect(() => parsePathElement("x")).toThrow("key must be 2 characters long:");
    expect(() => parsePathElement("f-a")).toThrow("missing colon: f-a");
  });

  it("orders fields before keys before values before indexes", () => {
    const sorted = [{ index: 0 }, { value: "a" }, key(["name", "a"]), f("z"), f("a")].sort(comparePathElements);
    expect(sorted.map(serializePathElement)).toEqual(["f:a", "f:z", 'k:{"name":"a"}', 'v:"a"', "i:0"]);
  });

  it("prints paths as conflict messages show them", () => {
    const path: Path = [
      f("spec"),
      f("containers"),
      key(["name", "app"]),
      f("ports"),
      key(["containerPort", 80], ["protocol", "TCP"]),
    ];
    expect(pathToString(path)).toBe('.spec.containers[name="app"].ports[containerPort=80,protocol="TCP"]');
    expect(pathToString([f("metadata"), f("finalizers"), { value: "x" }])).toBe('.metadata.finalizers[="x"]');
    expect(pathToString([f("list"), { index: 2 }])).toBe(".list[2]");
  });
});

describe("field sets", () => {
  const doc = {
    "f:metadata": { "f:finalizers": { 'v:"a"': {} }, "f:labels": { ".": {}, "f:app": {} } },
    "f:spec": { "f:containers": { 'k:{"name":"c"}': { ".": {}, "f:image": {} } } },
  };

  it("reads fieldsV1 and writes it back identically, `.` first, keys sorted", () => {
    const set = FieldSet.fromFieldsV1(doc);
    expect(JSON.stringify(set.toFieldsV1())).toBe(JSON.stringify(doc));
    expect(set.has([f("metadata"), f("labels")])).toBe(true);
    expect(set.has([f("metadata")])).toBe(false);
    expect(set.has([f("spec"), f("containers"), key(["name", "c"])])).toBe(true);
  });

  it("iterates members of a level before the paths below it", () => {
    const set = FieldSet.of([f("b")], [f("a"), f("x")], [f("c")]);
    expect(set.paths().map(pathToString)).toEqual([".b", ".c", ".a.x"]);
  });

  it("computes union, intersection, difference and recursive difference", () => {
    const a = FieldSet.of([f("data"), f("a")], [f("data"), f("b")], [f("status")]);
    const b = FieldSet.of([f("data"), f("b")], [f("data"), f("c")]);
    expect(a.union(b).paths().map(pathToString)).toEqual([".status", ".data.a", ".data.b", ".data.c"]);
    expect(a.intersection(b).paths().map(pathToString)).toEqual([".data.b"]);
    expect(a.difference(b).paths().map(pathToString)).toEqual([".status", ".data.a"]);
    expect(
      a
        .difference(FieldSet.of([f("data")]))
        .paths()
        .map(pathToString),
    ).toEqual([".status", ".data.a", ".data.b"]);
    expect(
      a
        .recursiveDifference(FieldSet.of([f("data")]))
        .paths()
        .map(pathToString),
    ).toEqual([".status"]);
    expect(a.difference(a).isEmpty()).toBe(true);
  });

  it("skips unknown element types and rejects documents that are not objects", () => {
    expect(FieldSet.fromFieldsV1({ "z:weird": {}, "f:a": {} }).paths().map(pathToString)).toEqual([".a"]);
    expect(() => FieldSet.fromFieldsV1({ "f:a": 1 })).toThrow(FieldsV1Error);
    expect(() => FieldSet.fromFieldsV1([])).toThrow(FieldsV1Error);
  });
});
