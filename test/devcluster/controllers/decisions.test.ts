import { waitUntil } from "capstan-dev/testing";
import type { CustomResourceDefinition } from "kubernetes-types/apiextensions/v1.d.ts";
import { describe, expect, it } from "vitest";
import {
  type Crd,
  calculateNames,
  defaultCrd,
  servedFromCrd,
  setCondition,
} from "../../../packages/capstan-dev/src/devcluster/controllers/crd-lifecycle.ts";
import {
  desiredConditions,
  mergeConditions,
} from "../../../packages/capstan-dev/src/devcluster/controllers/namespace-lifecycle.ts";
import { ReconcileLoop } from "../../../packages/capstan-dev/src/devcluster/controllers/reconcile-loop.ts";

function crd(
  names: CustomResourceDefinition["spec"]["names"],
  accepted?: CustomResourceDefinition["spec"]["names"],
): Crd {
  return {
    metadata: { name: `${names.plural}.example.com` },
    spec: { group: "example.com", scope: "Namespaced", names, versions: [] },
    ...(accepted ? { status: { acceptedNames: accepted } } : {}),
  } as Crd;
}

describe("CRD naming decisions (naming controller)", () => {
  const taken = crd(
    { plural: "widgets", singular: "widget", kind: "Widget", listKind: "WidgetList", shortNames: ["wd"] },
    { plural: "widgets", singular: "widget", kind: "Widget", listKind: "WidgetList", shortNames: ["wd"] },
  );

  it("accepts fresh names with NoConflicts", () => {
    const result = calculateNames(
      crd({ plural: "gadgets", singular: "gadget", kind: "Gadget", listKind: "GadgetList" }),
      [taken],
    );
    expect(result.condition).toEqual({
      type: "NamesAccepted",
      status: "True",
      reason: "NoConflicts",
      message: "no conflicts found",
    });
    expect(result.acceptedNames).toEqual({
      plural: "gadgets",
      singular: "gadget",
      kind: "Gadget",
      listKind: "GadgetList",
    });
  });

  it.each([
    [
      { plural: "widgets", singular: "w2", kind: "W2", listKind: "W2List" },
      "PluralConflict",
      '"widgets" is already in use',
    ],
    [{ plural: "w2s", singular: "wd", kind: "W2", listKind: "W2List" }, "SingularConflict", '"wd" is already in use'],
    [
      { plural: "w2s", singular: "w2", kind: "W2", listKind: "W2List", shortNames: ["ok", "widget"] },
      "ShortNamesConflict",
      '"widget" is already in use',
    ],
    [
      { plural: "w2s", singular: "w2", kind: "Widget", listKind: "W2List" },
      "KindConflict",
      '"Widget" is already in use',
    ],
    [
      { plural: "w2s", singular: "w2", kind: "W2", listKind: "WidgetList" },
      "ListKindConflict",
      '"WidgetList" is already in use',
    ],
  ])("refuses %j with %s", (names, reason, message) => {
    const result = calculateNames(crd(names), [taken]);
    expect(result.condition).toEqual({ type: "NamesAccepted", status: "False", reason, message });
  });

  it("keeps names it already holds even if another CRD claims them later", () => {
    const holder = crd(
      { plural: "widgets", singular: "widget", kind: "Widget", listKind: "WidgetList" },
      {
        plural: "widgets",
        singular: "widget",
        kind: "Widget",
        listKind: "WidgetList",
      },
    );
    expect(calculateNames(holder, [taken]).condition.status).toBe("True");
  });

  it("moves lastTransitionTime only when a condition's status flips", () => {
    const first = setCondition([], { type: "Established", status: "False", reason: "A", message: "a" }, "t1");
    const same = setCondition(first, { type: "Established", status: "False", reason: "B", message: "b" }, "t2");
    expect(same[0]).toEqual({
      type: "Established",
      status: "False",
      lastTransitionTime: "t1",
      reason: "B",
      message: "b",
    });
    const flipped = setCondition(same, { type: "Established", status: "True", reason: "C", message: "c" }, "t3");
    expect(flipped[0]?.lastTransitionTime).toBe("t3");
  });

  it("defaults singular, listKind and the conversion strategy", () => {
    const obj = { spec: { names: { plural: "gadgets", kind: "Gadget" } } };
    defaultCrd(obj);
    expect(obj.spec).toEqual({
      names: { plural: "gadgets", kind: "Gadget", singular: "gadget", listKind: "GadgetList" },
      conversion: { strategy: "None" },
    });
  });

  it("describes a served version with its scope, subresources, columns and selectable fields", () => {
    const c = crd({
      plural: "gadgets",
      singular: "gadget",
      kind: "Gadget",
      listKind: "GadgetList",
      shortNames: ["gd"],
    });
    c.spec.scope = "Cluster";
    const served = servedFromCrd(c, {
      name: "v2",
      served: true,
      storage: true,
      subresources: {
        status: {},
        scale: { specReplicasPath: ".spec.replicas", statusReplicasPath: ".status.replicas" },
      },
      additionalPrinterColumns: [{ name: "Color", type: "string", jsonPath: ".spec.color" }],
      selectableFields: [{ jsonPath: ".spec.color" }],
      schema: { openAPIV3Schema: { type: "object" } },
    });
    expect(served).toMatchObject({
      group: "example.com",
      version: "v2",
      kind: "Gadget",
      plural: "gadgets",
      namespaced: false,
      shortNames: ["gd"],
      subresources: {
        status: true,
        scale: { specReplicasPath: ".spec.replicas", statusReplicasPath: ".status.replicas" },
      },
      generation: "all-but-metadata-and-status",
      storageBucket: "example.com/gadgets",
      printerColumns: [{ name: "Color", type: "string", jsonPath: ".spec.color" }],
      schema: { type: "object" },
      custom: true,
    });
    expect(served.fieldSelectors?.["spec.color"]?.({ spec: { color: "red" } })).toBe("red");
  });
});

describe("namespace deletion conditions", () => {
  it("reports remaining resources and finalizers sorted, and the ok variants otherwise", () => {
    const desired = desiredConditions({
      resources: new Map([
        ["pods.", 2],
        ["configmaps.", 1],
        ["exchangerates.operators.example.com", 0],
      ]),
      finalizers: new Map([
        ["b.example.com/x", 1],
        ["a.example.com/y", 3],
      ]),
      errors: [],
    });
    expect(desired.get("NamespaceContentRemaining")).toEqual({
      status: "True",
      reason: "SomeResourcesRemain",
      message: "Some resources are remaining: configmaps. has 1 resource instances, pods. has 2 resource instances",
    });
    expect(desired.get("NamespaceFinalizersRemaining")?.message).toBe(
      "Some content in the namespace has finalizers remaining: a.example.com/y in 3 resource instances, b.example.com/x in 1 resource instances",
    );
    expect(desired.get("NamespaceDeletionContentFailure")).toEqual({
      status: "False",
      reason: "ContentDeleted",
      message: "All content successfully deleted, may be waiting on finalization",
    });
  });

  it("reports delete failures as ContentDeletionFailed", () => {
    const desired = desiredConditions({
      resources: new Map(),
      finalizers: new Map(),
      errors: ["b failed", "a failed"],
    });
    expect(desired.get("NamespaceDeletionContentFailure")).toEqual({
      status: "True",
      reason: "ContentDeletionFailed",
      message: "Failed to delete all resource types, 2 remaining: a failed, b failed",
    });
  });

  it("keeps a condition's lastTransitionTime unless its status flips", () => {
    const empty = { resources: new Map<string, number>(), finalizers: new Map<string, number>(), errors: [] };
    const first = mergeConditions([], desiredConditions({ ...empty, resources: new Map([["configmaps.", 1]]) }), "t1");
    expect(first.changed).toBe(true);
    expect(first.conditions.map((c) => c.type)).toEqual([
      "NamespaceDeletionDiscoveryFailure",
      "NamespaceDeletionGroupVersionParsingFailure",
      "NamespaceDeletionContentFailure",
      "NamespaceContentRemaining",
      "NamespaceFinalizersRemaining",
    ]);
    const again = mergeConditions(
      first.conditions,
      desiredConditions({ ...empty, resources: new Map([["configmaps.", 1]]) }),
      "t2",
    );
    expect(again.changed).toBe(false);
    const done = mergeConditions(first.conditions, desiredConditions(empty), "t3");
    const remaining = done.conditions.find((c) => c.type === "NamespaceContentRemaining");
    expect(remaining).toMatchObject({ status: "False", reason: "ContentRemoved", lastTransitionTime: "t3" });
    expect(done.conditions.find((c) => c.type === "NamespaceDeletionDiscoveryFailure")?.lastTransitionTime).toBe("t1");
  });
});

describe("the controllers' work loop", () => {
  it("handles a key once however often it is added while waiting, and once more if added while being handled", async () => {
    const seen: string[] = [];
    let release: () => void = () => {};
    const loop = new ReconcileLoop("test", async (key) => {
      seen.push(key);
      if (seen.length === 1) await new Promise<void>((r) => (release = r));
      return undefined;
    });
    loop.add("a");
    await waitUntil(() => seen.length === 1);
    loop.add("a"); // while being handled
    loop.add("b");
    loop.add("b");
    release();
    await waitUntil(() => seen.length === 3 && loop.idle());
    expect(seen).toEqual(["a", "b", "a"]);
    expect(loop.idle()).toBe(true);
    await loop.stop();
  });

  it("retries a failing key with backoff and stops cleanly", async () => {
    let calls = 0;
    const errors: unknown[] = [];
    const loop = new ReconcileLoop("test", async () => {
      calls++;
      if (calls < 3) throw new Error("conflict");
      return undefined;
    });
    loop.onError = (_key, err) => errors.push(err);
    loop.add("k");
    await waitUntil(() => calls === 3 && loop.idle());
    expect(errors).toHaveLength(2);
    loop.addAfter("k", 60_000);
    expect(loop.idle()).toBe(false);
    await loop.stop();
    expect(loop.idle()).toBe(true);
  });
});
