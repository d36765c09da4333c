import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { type Json, pathToString } from "../../../packages/capstan-dev/src/devcluster/apply/path-element.ts";
import {
  applyOwnership,
  ConflictsError,
  type Managers,
  updateOwnership,
} from "../../../packages/capstan-dev/src/devcluster/apply/updater.ts";
import {
  DEDUCED,
  type MapType,
  SCALAR,
  type TypeNode,
} from "../../../packages/capstan-dev/src/devcluster/patch/patch-meta.ts";

/**
 * Ownership scenarios restated from sigs.k8s.io/structured-merge-diff's merge tests (leaf_test,
 * set_test, multiple_appliers_test, nested_test): a sequence of applies and updates by named managers
 * on one object, then the object and each manager's field set.
 */
class Fixture {
  live: Json = {};
  readonly managers: Managers = new Map();
  constructor(private readonly type: TypeNode) {}

  apply(manager: string, yaml: string, force = false): void {
    const out = applyOwnership(this.live, parse(yaml) as Json, this.type, "v1", this.managers, manager, force);
    if (out.object !== undefined) this.live = out.object;
  }

  update(manager: string, yaml: string): void {
    const next = parse(yaml) as Json;
    updateOwnership(this.live, next, this.type, "v1", this.managers, manager);
    this.live = next;
  }

  owned(manager: string): string[] | undefined {
    return this.managers.get(manager)?.set.paths().map(pathToString);
  }

  conflictsOf(manager: string, yaml: string): string[] {
    try {
      this.apply(manager, yaml);
    } catch (err) {
      if (err instanceof ConflictsError) return err.conflicts.map((c) => `${c.manager} ${pathToString(c.path)}`);
      throw err;
    }
    throw new Error("expected conflicts");
  }
}

const leafFields: MapType = { kind: "map", fields: { numeric: SCALAR, string: SCALAR, bool: SCALAR } };

const nameItem: MapType = { kind: "map", fields: { name: SCALAR, value: SCALAR } };
const associative: MapType = {
  kind: "map",
  fields: { list: { kind: "list", elementType: nameItem, listType: "map", keys: ["name"] } },
};
const sets: MapType = { kind: "map", fields: { list: { kind: "list", elementType: SCALAR, listType: "set" } } };
const atomicList: MapType = {
  kind: "map",
  fields: { list: { kind: "list", elementType: SCALAR, listType: "atomic" } },
};
const structWithScalars: MapType = {
  kind: "map",
  fields: { struct: { kind: "map", fields: { name: SCALAR, scalarField: SCALAR, other: SCALAR } } },
};
const nestedStruct: MapType = {
  kind: "map",
  fields: {
    outer: {
      kind: "map",
      fields: { inner: { kind: "map", fields: { a: SCALAR, b: SCALAR } }, dict: { kind: "map", elementType: SCALAR } },
    },
  },
};

describe("ownership of leaf fields (leaf_test)", () => {
  it("apply_twice: the applier owns exactly its latest configuration", () => {
    const f = new Fixture(leafFields);
    f.apply("default", "numeric: 1\nstring: string");
    f.apply("default", "numeric: 2\nstring: string\nbool: false");
    expect(f.live).toEqual({ numeric: 2, string: "string", bool: false });
    expect(f.owned("default")).toEqual([".bool", ".numeric", ".string"]);
  });

  it("apply_update_apply_no_conflict: an updater's new field is left alone by the applier", () => {
    const f = new Fixture(leafFields);
    f.apply("default", "numeric: 1\nstring: string");
    f.update("controller", "numeric: 1\nstring: string\nbool: true");
    f.apply("default", "numeric: 2\nstring: string");
    expect(f.live).toEqual({ numeric: 2, string: "string", bool: true });
    expect(f.owned("default")).toEqual([".numeric", ".string"]);
    expect(f.owned("controller")).toEqual([".bool"]);
  });

  it("apply_update_apply_with_conflict: changing an updater's field conflicts until forced", () => {
    const f = new Fixture(leafFields);
    f.apply("default", "numeric: 1\nstring: string");
    f.update("controller", "numeric: 1\nstring: controller string\nbool: true");
    expect(f.owned("default")).toEqual([".numeric"]);
    expect(f.conflictsOf("default", "numeric: 2\nstring: user string")).toEqual(["controller .string"]);
    expect(f.live).toEqual({ numeric: 1, string: "controller string", bool: true });
    f.apply("default", "numeric: 2\nstring: user string", true);
    expect(f.live).toEqual({ numeric: 2, string: "user string", bool: true });
    expect(f.owned("default")).toEqual([".numeric", ".string"]);
    expect(f.owned("controller")).toEqual([".bool"]);
  });

  it("setting the value another applier already set is shared ownership, not a conflict", () => {
    const f = new Fixture(leafFields);
    f.apply("a", "numeric: 1");
    f.apply("b", "numeric: 1");
    expect(f.owned("a")).toEqual([".numeric"]);
    expect(f.owned("b")).toEqual([".numeric"]);
    expect(f.conflictsOf("b", "numeric: 2")).toEqual(["a .numeric"]);
  });
});

describe("associative lists (multiple_appliers_test)", () => {
  it("remove_one: an item one applier drops goes; another applier's item stays", () => {
    const f = new Fixture(associative);
    f.apply("apply-one", "list: [{name: a}, {name: b}]");
    f.apply("apply-two", "list: [{name: c}]");
    f.apply("apply-one", "list: [{name: a}]");
    expect(f.live).toEqual({ list: [{ name: "a" }, { name: "c" }] });
    expect(f.owned("apply-one")).toEqual(['.list[name="a"]', '.list[name="a"].name']);
    expect(f.owned("apply-two")).toEqual(['.list[name="c"]', '.list[name="c"].name']);
  });

  it("merges a field into an item another manager created and conflicts when changing its value", () => {
    const f = new Fixture(associative);
    f.apply("one", "list: [{name: a, value: x}]");
    f.apply("two", "list: [{name: a}, {name: b, value: y}]");
    expect(f.live).toEqual({
      list: [
        { name: "a", value: "x" },
        { name: "b", value: "y" },
      ],
    });
    expect(f.conflictsOf("two", "list: [{name: a, value: z}]")).toEqual(['one .list[name="a"].value']);
  });

  it("keeps live-only items and orders applied items as applied (structured-merge-diff's list merge)", () => {
    const f = new Fixture(associative);
    f.update("ctl", "list: [{name: x}, {name: a}, {name: y}, {name: b}]");
    f.apply("app", "list: [{name: b, value: '2'}, {name: a, value: '1'}]");
    // `a` is skipped until `b` (the first shared item in applied order) is reached; y stays before b.
    expect(f.live).toEqual({
      list: [{ name: "x" }, { name: "y" }, { name: "b", value: "2" }, { name: "a", value: "1" }],
    });
  });
});

const listOfLists: MapType = {
  kind: "map",
  fields: {
    listOfLists: {
      kind: "list",
      listType: "map",
      keys: ["name"],
      elementType: {
        kind: "map",
        fields: { name: SCALAR, value: { kind: "list", elementType: SCALAR, listType: "set" } },
      },
    },
  },
};

describe("removing list items with sub-items owned by others (multiple_appliers_test)", () => {
  it("remove_one_keep_one_with_dangling_subitem: an item another applier keeps survives, minus the remover's values", () => {
    const f = new Fixture(listOfLists);
    f.apply("apply-one", "listOfLists: [{name: a}, {name: b, value: [c]}]");
    f.apply("apply-two", "listOfLists: [{name: b, value: [d]}]");
    f.update("controller", "listOfLists: [{name: a}, {name: b, value: [c, d, e]}]");
    f.apply("apply-one", "listOfLists: [{name: a}]");
    expect(f.live).toEqual({ listOfLists: [{ name: "a" }, { name: "b", value: ["d", "e"] }] });
    expect(f.owned("apply-one")).toEqual(['.listOfLists[name="a"]', '.listOfLists[name="a"].name']);
    expect(f.owned("apply-two")).toEqual([
      '.listOfLists[name="b"]',
      '.listOfLists[name="b"].name',
      '.listOfLists[name="b"].value[="d"]',
    ]);
    expect(f.owned("controller")).toEqual(['.listOfLists[name="b"].value[="e"]']);
  });

  it("remove_one_with_managed_subitem_keep_one: removing an item takes an updater's sub-items with it", () => {
    const f = new Fixture(listOfLists);
    f.apply("apply-one", "listOfLists: [{name: a}, {name: b, value: [c]}]");
    f.apply("apply-two", "listOfLists: [{name: a, value: [b]}]");
    f.update("controller", "listOfLists: [{name: a, value: [b]}, {name: b, value: [c, d]}]");
    f.apply("apply-one", "listOfLists: [{name: a}]");
    expect(f.live).toEqual({ listOfLists: [{ name: "a", value: ["b"] }] });
    expect(f.owned("controller")).toBeUndefined();
    expect(f.owned("apply-two")).toEqual([
      '.listOfLists[name="a"]',
      '.listOfLists[name="a"].name',
      '.listOfLists[name="a"].value[="b"]',
    ]);
  });
});

describe("sets (set_test)", () => {
  it("apply_update_apply_with_overlap: both managers own a value they both set", () => {
    const f = new Fixture(sets);
    f.apply("default", "list: [a, c]");
    f.update("controller", "list: [a, b, c, d]");
    f.apply("default", "list: [a, b, c]");
    expect(f.live).toEqual({ list: ["a", "b", "c", "d"] });
    expect(f.owned("default")).toEqual(['.list[="a"]', '.list[="b"]', '.list[="c"]']);
    expect(f.owned("controller")).toEqual(['.list[="b"]', '.list[="d"]']);
  });

  it("apply_twice_reorder and apply_update_apply_reorder: the applier's order wins", () => {
    const twice = new Fixture(sets);
    twice.apply("default", "list: [a, b, c, d]");
    twice.apply("default", "list: [a, d, c, b]");
    expect(twice.live).toEqual({ list: ["a", "d", "c", "b"] });
    const reordered = new Fixture(sets);
    reordered.apply("default", "list: [a, b, c, d]");
    reordered.update("controller", "list: [a, d, c, b]");
    reordered.apply("default", "list: [a, b, c, d]");
    expect(reordered.live).toEqual({ list: ["a", "b", "c", "d"] });
  });

  it("apply_twice_remove: values the applier drops are removed", () => {
    const f = new Fixture(sets);
    f.apply("default", "list: [a, b, c, d]");
    f.apply("default", "list: [a, c, e]");
    expect(f.live).toEqual({ list: ["a", "c", "e"] });
  });
});

describe("atomic lists", () => {
  it("replaces the whole list and owns it as one field", () => {
    const f = new Fixture(atomicList);
    f.update("ctl", "list: [a, b]");
    expect(f.owned("ctl")).toEqual([".list"]);
    expect(f.conflictsOf("app", "list: [c]")).toEqual(["ctl .list"]);
    f.apply("app", "list: [c]", true);
    expect(f.live).toEqual({ list: ["c"] });
    expect(f.owned("ctl")).toBeUndefined();
  });
});

describe("removal of fields the applier stops applying (multiple_appliers_test, nested_test)", () => {
  it("unset_scalar_sole_owner: a field nobody else owns is removed", () => {
    const f = new Fixture(structWithScalars);
    f.apply("applier", "struct: {name: a, scalarField: a}");
    f.apply("applier", "struct: {name: a}");
    expect(f.live).toEqual({ struct: { name: "a" } });
  });

  it("unset_scalar_shared_with_updater: a field an updater also owns is kept", () => {
    const f = new Fixture(structWithScalars);
    f.update("updater", "struct: {name: a, scalarField: a}");
    f.apply("applier", "struct: {name: a, scalarField: a}");
    f.apply("applier", "struct: {name: a}");
    expect(f.live).toEqual({ struct: { name: "a", scalarField: "a" } });
    expect(f.owned("updater")).toEqual([".struct", ".struct.name", ".struct.scalarField"]);
    expect(f.owned("applier")).toEqual([".struct.name"]);
  });

  it("unset_scalar_shared_with_applier: a field another applier also applies is kept", () => {
    const f = new Fixture(structWithScalars);
    f.apply("one", "struct: {name: a, scalarField: a}");
    f.apply("two", "struct: {name: a, scalarField: a}");
    f.apply("one", "struct: {name: a}");
    expect(f.live).toEqual({ struct: { name: "a", scalarField: "a" } });
  });

  it("struct_apply_remove_all: dropping a whole struct removes it", () => {
    const f = new Fixture(nestedStruct);
    f.apply("default", "outer: {inner: {a: '1', b: '2'}, dict: {k: v}}");
    f.apply("default", "{}");
    expect(f.live).toEqual({});
    expect(f.owned("default")).toBeUndefined();
  });

  it("struct_apply_remove_dangling: fields nobody applied (dangling) survive a removal", () => {
    const f = new Fixture(nestedStruct);
    f.apply("default", "outer: {inner: {a: '1'}}");
    f.update("controller", "outer: {inner: {a: '1', b: '2'}}");
    f.apply("default", "{}");
    expect(f.live).toEqual({ outer: { inner: { b: "2" } } });
  });

  it("struct_apply_update_dict_null: applying a null struct drops the applier's fields, keeps the updater's", () => {
    const f = new Fixture({
      kind: "map",
      fields: { struct: { kind: "map", fields: { name: SCALAR, value: SCALAR } } },
    });
    f.apply("default", "struct: {name: a}");
    f.update("controller", "struct: {name: a, value: 1}");
    f.apply("default", "struct:");
    expect(f.live).toEqual({ struct: { value: 1 } });
  });

  it("an updater that only changed a value it shares keeps the rest of an applier's removal intact", () => {
    const f = new Fixture(nestedStruct);
    f.apply("default", "outer: {dict: {a: '1', b: '2'}}");
    f.update("controller", "outer: {dict: {a: '1', b: '3'}}");
    expect(f.owned("default")).toEqual([".outer.dict.a"]);
    expect(f.owned("controller")).toEqual([".outer.dict.b"]);
    f.apply("default", "outer: {dict: {}}");
    expect(f.live).toEqual({ outer: { dict: { b: "3" } } });
  });
});

describe("untyped (deduced) values", () => {
  it("merges maps key by key and treats lists as atomic", () => {
    const f = new Fixture(DEDUCED);
    f.apply("one", "a: {x: 1, l: [1, 2]}");
    f.apply("two", "a: {y: 2}");
    expect(f.live).toEqual({ a: { x: 1, l: [1, 2], y: 2 } });
    expect(f.owned("one")).toEqual([".a", ".a.l", ".a.x"]);
    expect(f.conflictsOf("two", "a: {l: [3]}")).toEqual(["one .a.l"]);
  });
});

describe("updates", () => {
  it("gives the updater what it added or changed and takes changed fields from others", () => {
    const f = new Fixture(leafFields);
    f.update("first", "numeric: 1\nstring: s");
    f.update("second", "numeric: 2\nstring: s");
    expect(f.owned("first")).toEqual([".string"]);
    expect(f.owned("second")).toEqual([".numeric"]);
  });

  it("drops removed fields from every manager and forgets managers left with nothing", () => {
    const f = new Fixture(leafFields);
    f.update("first", "numeric: 1");
    f.update("second", "{}");
    expect(f.managers.size).toBe(0);
  });
});
