import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  builtinPatchMeta,
  type ListType,
  type MapType,
  SCALAR,
  type TypeNode,
} from "../../../packages/capstan-dev/src/devcluster/patch/patch-meta.ts";
import {
  CUSTOM_RESOURCE_PATCH_TYPES,
  StrategicMergePatchError,
  strategicMergePatch,
  UNSUPPORTED_STRATEGIC_MERGE_FORMAT,
  unsupportedPatchTypeMessage,
} from "../../../packages/capstan-dev/src/devcluster/patch/strategic-merge.ts";

/**
 * The `MergeItem` struct of apimachinery's strategicpatch tests, restated as our type tree:
 * mergingList (merge by name), nonMergingList, mergingIntList (merge), nonMergingIntList,
 * mergeItemPtr, simpleMap, replacingItem (patchStrategy=replace), retainKeysMap.
 */
const itemFields: Record<string, TypeNode> = {};
const mergeItem: MapType = { kind: "map", fields: itemFields };
const mergingList: ListType = {
  kind: "list",
  elementType: mergeItem,
  listType: "map",
  keys: ["name"],
  strategicMerge: { mergeKey: "name" },
};
Object.assign(itemFields, {
  name: SCALAR,
  value: SCALAR,
  other: SCALAR,
  mergingList,
  nonMergingList: { kind: "list", elementType: mergeItem, listType: "atomic" },
  mergingIntList: { kind: "list", elementType: SCALAR, listType: "set", strategicMerge: {} },
  nonMergingIntList: { kind: "list", elementType: SCALAR, listType: "atomic" },
  simpleMap: { kind: "map", elementType: SCALAR },
  replacingItem: { kind: "map", replaceOnPatch: true },
  retainKeysMap: {
    kind: "map",
    fields: {
      simpleMap: { kind: "map", elementType: SCALAR },
      mergingIntList: { kind: "list", elementType: SCALAR, listType: "set", strategicMerge: {} },
      mergingList,
    },
  },
  retainKeysMergingList: mergingList,
} satisfies Record<string, TypeNode>);

function smp(original: string, patch: string, meta: TypeNode = mergeItem): unknown {
  return strategicMergePatch(parse(original) ?? {}, parse(patch) ?? {}, meta);
}

function smpError(original: string, patch: string, meta: TypeNode = mergeItem): StrategicMergePatchError {
  try {
    smp(original, patch, meta);
  } catch (err) {
    if (err instanceof StrategicMergePatchError) return err;
    throw err;
  }
  throw new Error("expected the patch to be rejected");
}

// Cases restated from k8s.io/apimachinery/pkg/util/strategicpatch/patch_test.go: the server applies
// the three-way patch kubectl computed to the current object and must produce `result`.
const upstreamCases: { name: string; current: string; patch: string; result: string }[] = [
  {
    name: "adds an item to a merging list of primitives, in $setElementOrder's order, keeping server-only items",
    current: "mergingIntList: [1, 4, 2]",
    patch: "$setElementOrder/mergingIntList: [3, 1, 2]\nmergingIntList: [3]",
    result: "mergingIntList: [3, 1, 4, 2]",
  },
  {
    name: "deletes items of a primitive list with $deleteFromPrimitiveList, duplicates included",
    current: "mergingIntList: [1, 2, 3, 3, 4]",
    patch: "$setElementOrder/mergingIntList: [1, 2]\n$deleteFromPrimitiveList/mergingIntList: [3]",
    result: "mergingIntList: [1, 2, 4]",
  },
  {
    name: "merges lists of maps by name and orders them as $setElementOrder says",
    current: `
mergingList:
  - {name: "1", other: a}
  - {name: "2", value: "2", other: b}`,
    patch: `
$setElementOrder/mergingList: [{name: "4"}, {name: "1"}, {name: "2"}, {name: "3"}]
mergingList:
  - {name: "4", value: "4"}
  - {name: "3", value: "3"}`,
    result: `
mergingList:
  - {name: "4", value: "4"}
  - {name: "1", other: a}
  - {name: "2", value: "2", other: b}
  - {name: "3", value: "3"}`,
  },
  {
    name: "reorders a merging list with server-only items kept next to their live neighbours",
    current: `
mergingList:
  - {name: "1", other: a}
  - {name: "2", value: "2"}
  - {name: "7"}
  - {name: "9"}
  - {name: "8"}
  - {name: "3", value: "3"}
  - {name: "4", value: "4"}`,
    patch: `$setElementOrder/mergingList: [{name: "2"}, {name: "1"}, {name: "4"}, {name: "3"}]`,
    result: `
mergingList:
  - {name: "2", value: "2"}
  - {name: "1", other: a}
  - {name: "7"}
  - {name: "9"}
  - {name: "8"}
  - {name: "4", value: "4"}
  - {name: "3", value: "3"}`,
  },
  {
    name: "reorders a merging list where a server-only item sits in the middle",
    current: `
mergingList:
  - {name: "1", other: a}
  - {name: "2", value: "2"}
  - {name: "9"}
  - {name: "3", value: "3"}
  - {name: "4", value: "4"}`,
    patch: `$setElementOrder/mergingList: [{name: "2"}, {name: "1"}, {name: "4"}, {name: "3"}]`,
    result: `
mergingList:
  - {name: "2", value: "2"}
  - {name: "1", other: a}
  - {name: "9"}
  - {name: "4", value: "4"}
  - {name: "3", value: "3"}`,
  },
  {
    name: "deletes a map from a merging list with $patch: delete",
    current: "mergingList: [{name: '1'}, {name: '2', other: b}]",
    patch: "$setElementOrder/mergingList: [{name: '2'}]\nmergingList: [{name: '1', $patch: delete}]",
    result: "mergingList: [{name: '2', other: b}]",
  },
  {
    name: "adds and deletes items in one patch, ordering server-only items as Go's in-place list edits do",
    current: "mergingList: [{name: '1'}, {name: '2', other: b}, {name: '4', other: c}]",
    patch:
      "$setElementOrder/mergingList: [{name: '2'}, {name: '3'}]\nmergingList: [{name: '3'}, {name: '1', $patch: delete}]",
    result: "mergingList: [{name: '2', other: b}, {name: '4', other: c}, {name: '3'}]",
  },
  {
    name: "adds and deletes items when the server-only item comes first",
    current: "mergingList: [{name: '1', other: a}, {name: '4', other: c}]",
    patch:
      "$setElementOrder/mergingList: [{name: '2'}, {name: '3'}]\nmergingList: [{name: '2'}, {name: '3'}, {name: '1', $patch: delete}]",
    result: "mergingList: [{name: '4', other: c}, {name: '2'}, {name: '3'}]",
  },
  {
    name: "adds an item to a merging list at the position $setElementOrder gives",
    current: "mergingList: [{name: '1', other: a}, {name: '2', value: '2', other: b}]",
    patch:
      "$setElementOrder/mergingList: [{name: '3'}, {name: '1'}, {name: '2'}]\nmergingList: [{name: '3', value: '3'}]",
    result: "mergingList: [{name: '3', value: '3'}, {name: '1', other: a}, {name: '2', value: '2', other: b}]",
  },
  {
    name: "keeps duplicate merge keys together when ordering by $setElementOrder",
    current: "mergingList: [{name: '1'}, {name: '2', value: dup1}, {name: '3'}, {name: '2', value: dup2}, {name: '4'}]",
    patch: "$setElementOrder/mergingList: [{name: '2'}, {name: '1'}, {name: '4'}, {name: '3'}, {name: '2'}]",
    result: "mergingList: [{name: '2', value: dup1}, {name: '2', value: dup2}, {name: '1'}, {name: '4'}, {name: '3'}]",
  },
  {
    name: "clears keys missing from $retainKeys (discriminated union switch)",
    current: "retainKeysMap: {name: type1, value: foo}",
    patch: "retainKeysMap: {$retainKeys: [name, other], name: type2, other: bar}",
    result: "retainKeysMap: {name: type2, other: bar}",
  },
  {
    name: "ignores $deleteFromPrimitiveList for a list the object does not have",
    current: "foo: [bar]",
    patch: "$deleteFromPrimitiveList/mergingIntList: [3]",
    result: "foo: [bar]",
  },
  {
    name: "applies $deleteFromPrimitiveList to a list without merge strategy too",
    current: "nonMergingIntList: [1, 2, 3]",
    patch: "$deleteFromPrimitiveList/nonMergingIntList: [2]",
    result: "nonMergingIntList: [1, 3]",
  },
];

describe("strategic merge patch: upstream cases", () => {
  for (const c of upstreamCases) {
    it(c.name, () => {
      expect(smp(c.current, c.patch)).toEqual(parse(c.result));
    });
  }
});

describe("strategic merge patch: maps, lists and directives", () => {
  it("deletes a key set to null and merges nested maps key by key", () => {
    expect(smp("simpleMap: {a: '1', b: '2'}\nvalue: x", "simpleMap: {a: null, c: '3'}\nvalue: null")).toEqual({
      simpleMap: { b: "2", c: "3" },
    });
  });

  it("replaces lists that have no merge strategy", () => {
    expect(
      smp(
        "nonMergingIntList: [1, 2]\nnonMergingList: [{name: a, value: x}]",
        "nonMergingIntList: [3]\nnonMergingList: [{name: b}]",
      ),
    ).toEqual({
      nonMergingIntList: [3],
      nonMergingList: [{ name: "b" }],
    });
  });

  it("merges primitive lists with merge strategy by value, without duplicates, in live-then-patch order", () => {
    expect(smp("mergingIntList: [1, 2]", "mergingIntList: [2, 3]")).toEqual({ mergingIntList: [1, 2, 3] });
    // Nothing of the patch is in the live list to anchor it: Go's mergeSortedSlice puts patch items first.
    expect(smp("mergingIntList: [1, 2]", "mergingIntList: [3]")).toEqual({ mergingIntList: [3, 1, 2] });
  });

  it("merges list items with the same merge key and appends new ones ahead of server-only items", () => {
    expect(
      smp(
        "mergingList: [{name: a, value: '1'}, {name: b, value: '2'}]",
        "mergingList: [{name: b, other: o}, {name: c}]",
      ),
    ).toEqual({
      mergingList: [{ name: "a", value: "1" }, { name: "b", value: "2", other: "o" }, { name: "c" }],
    });
  });

  it("replaces a map wholesale with $patch: replace and empties it with $patch: delete", () => {
    expect(
      smp(
        "simpleMap: {a: '1'}\nmergeItemPtr: {name: x, value: y}",
        "simpleMap: {$patch: replace, b: '2'}\nmergeItemPtr: {$patch: delete}",
      ),
    ).toEqual({
      simpleMap: { b: "2" },
      mergeItemPtr: {},
    });
  });

  it("replaces a merging list with the patch's items when one element says $patch: replace", () => {
    expect(smp("mergingList: [{name: a}, {name: b}]", "mergingList: [{$patch: replace}, {name: c, value: v}]")).toEqual(
      {
        mergingList: [{ name: "c", value: "v" }],
      },
    );
  });

  it("replaces fields with patchStrategy=replace instead of merging them", () => {
    expect(smp("replacingItem: {a: 1, b: 2}", "replacingItem: {c: 3}")).toEqual({ replacingItem: { c: 3 } });
  });

  it("drops directives and nulls from values the original did not have", () => {
    expect(
      smp("{}", "mergingList: [{name: a, value: null}, {name: b, $patch: delete}]\nsimpleMap: {x: null, y: '1'}"),
    ).toEqual({ mergingList: [{ name: "a" }], simpleMap: { y: "1" } });
  });

  it("does not mutate its inputs", () => {
    const original = { mergingList: [{ name: "a", value: "1" }] };
    const patch = { mergingList: [{ name: "a", value: "2" }, { name: "b" }] };
    const before = JSON.stringify([original, patch]);
    strategicMergePatch(original, patch, mergeItem);
    expect(JSON.stringify([original, patch])).toBe(before);
  });
});

describe("strategic merge patch: errors as kube-apiserver reports them", () => {
  it("rejects a list item without its merge key (500, the library's message)", () => {
    const err = smpError("mergingList: [{name: '1', value: a}]", "mergingList: [{value: b}]");
    expect(err.message).toBe("map: map[value:b] does not contain declared merge key: name");
    expect(err.code).toBe(500);
  });

  it("rejects a patch list whose order disagrees with $setElementOrder", () => {
    const err = smpError(
      "mergingList: [{name: '1'}, {name: '3'}, {name: '2'}]",
      "$setElementOrder/mergingList: [{name: '1'}, {name: '2'}, {name: '3'}]\nmergingList: [{name: '3', value: '3'}, {name: '1', value: '1'}]",
    );
    expect(err.message).toBe(
      "The order in patch list:\n[map[name:3 value:3] map[name:1 value:1]]\n doesn't match $setElementOrder list:\n[map[name:1] map[name:2] map[name:3]]\n",
    );
  });

  it("answers an unknown $patch directive with the library's message", () => {
    expect(smpError("simpleMap: {a: '1'}", "simpleMap: {$patch: bogus, a: '2'}").message).toBe(
      "unknown patch type: bogus in map: map[$patch:bogus a:2]",
    );
    expect(smpError("mergingList: [{name: a}]", "mergingList: [{name: a, $patch: merge}]").message).toBe(
      "merging lists cannot yet be specified in the patch",
    );
  });

  it("refuses keys outside $retainKeys with 400 invalid patch format of retainKeys", () => {
    const err = smpError("retainKeysMap: {name: a}", "retainKeysMap: {$retainKeys: [name], value: v}");
    expect([err.code, err.message]).toEqual([400, "invalid patch format of retainKeys"]);
  });

  it("refuses lists of lists with 422", () => {
    const err = smpError("mergingIntList: [[1]]", "mergingIntList: [[2]]");
    expect([err.code, err.message]).toEqual([422, "lists of lists are not supported"]);
  });

  it("refuses a malformed parallel list key with 400", () => {
    const err = smpError("{}", "$setElementOrder: [1]");
    expect([err.code, err.message]).toEqual([400, "invalid patch format of setElementOrder list"]);
  });

  it("refuses a body that is not a JSON object with 400", () => {
    expect(() => strategicMergePatch({}, [1], mergeItem)).toThrow(
      "json: cannot unmarshal array into Go value of type map[string]interface {}",
    );
  });

  it("has no metadata for custom resources: strategic merge is not supported and the 415 lists what is", () => {
    const err = (() => {
      try {
        strategicMergePatch({}, {}, builtinPatchMeta("example.com", "Widget"));
      } catch (e) {
        return e as StrategicMergePatchError;
      }
      throw new Error("expected an error");
    })();
    expect([err.code, err.message]).toEqual([400, UNSUPPORTED_STRATEGIC_MERGE_FORMAT]);
    expect(unsupportedPatchTypeMessage(CUSTOM_RESOURCE_PATCH_TYPES)).toBe(
      "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
    );
  });
});
