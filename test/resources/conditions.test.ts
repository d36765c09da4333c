/**
 * Status conditions: the schema is controller-gen's for `metav1.Condition`, and the helpers follow
 * apimachinery's `meta.SetStatusCondition` & co (k8s.io/apimachinery/pkg/api/meta/conditions.go).
 */
import { describe, expect, it } from "vitest";
import {
  type Condition,
  Conditions,
  findCondition,
  isConditionFalse,
  isConditionTrue,
  removeCondition,
  setCondition,
} from "../../packages/capstan/src/resources/conditions.ts";
import type { KubeSchema } from "../../packages/capstan/src/resources/kube-schema.ts";
import { translateSchema } from "../../packages/capstan/src/resources/schema-translate.ts";

/** What controller-gen writes for `[]metav1.Condition` with `+listType=map +listMapKey=type`, descriptions left out. */
const CONTROLLER_GEN_CONDITIONS = {
  type: "array",
  "x-kubernetes-list-type": "map",
  "x-kubernetes-list-map-keys": ["type"],
  items: {
    type: "object",
    required: ["lastTransitionTime", "message", "reason", "status", "type"],
    properties: {
      lastTransitionTime: { type: "string", format: "date-time" },
      message: { type: "string", maxLength: 32768 },
      observedGeneration: { type: "integer", format: "int64", minimum: 0 },
      reason: {
        type: "string",
        maxLength: 1024,
        minLength: 1,
        pattern: "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$",
      },
      status: { type: "string", enum: ["True", "False", "Unknown"] },
      type: {
        type: "string",
        maxLength: 316,
        pattern:
          "^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$",
      },
    },
  },
};

/** `schema` without its descriptions, `required` sorted (controller-gen sorts it). */
function comparable(schema: KubeSchema): unknown {
  return JSON.parse(JSON.stringify(schema), (key, value) => {
    if (key === "description") return undefined;
    if (key === "required" && Array.isArray(value)) return [...value].sort();
    return value;
  });
}

const T0 = new Date("2030-01-01T10:00:00.700Z");
const T1 = new Date("2030-01-01T11:00:00Z");

describe("the Conditions schema", () => {
  it("translates to the CRD schema controller-gen writes for []metav1.Condition", () => {
    const translated = translateSchema(Conditions, "status.conditions", "Thing");
    expect(comparable(translated)).toEqual(CONTROLLER_GEN_CONDITIONS);
    expect(translated.items?.description).toBeTruthy();
  });
});

describe("setCondition (meta.SetStatusCondition)", () => {
  it("appends a new condition with lastTransitionTime = now, to the second, and an empty message", () => {
    const { conditions, changed } = setCondition(undefined, { type: "Ready", status: "True", reason: "Up" }, T0);
    expect(changed).toBe(true);
    expect(conditions).toEqual([
      { type: "Ready", status: "True", reason: "Up", message: "", lastTransitionTime: "2030-01-01T10:00:00Z" },
    ]);
  });

  it("keeps lastTransitionTime when only reason, message or observedGeneration change, and says it changed", () => {
    const first = setCondition([], { type: "Ready", status: "True", reason: "Up", observedGeneration: 1 }, T0);
    const second = setCondition(
      first.conditions,
      { type: "Ready", status: "True", reason: "StillUp", message: "fine", observedGeneration: 2 },
      T1,
    );
    expect(second.changed).toBe(true);
    expect(second.conditions).toEqual([
      {
        type: "Ready",
        status: "True",
        reason: "StillUp",
        message: "fine",
        observedGeneration: 2,
        lastTransitionTime: "2030-01-01T10:00:00Z",
      },
    ]);
  });

  it("moves lastTransitionTime to now when the status changes", () => {
    const first = setCondition([], { type: "Ready", status: "True", reason: "Up" }, T0);
    const second = setCondition(first.conditions, { type: "Ready", status: "False", reason: "Up" }, T1);
    expect(second.changed).toBe(true);
    expect(findCondition(second.conditions, "Ready")).toMatchObject({
      status: "False",
      lastTransitionTime: "2030-01-01T11:00:00Z",
    });
  });

  it("takes an explicit lastTransitionTime over now, for a new condition or a status change", () => {
    const given = "2029-12-31T00:00:00Z";
    const added = setCondition([], { type: "A", status: "True", reason: "R", lastTransitionTime: given }, T0);
    expect(added.conditions[0]?.lastTransitionTime).toBe(given);
    const flipped = setCondition(
      setCondition([], { type: "A", status: "True", reason: "R" }, T0).conditions,
      { type: "A", status: "False", reason: "R", lastTransitionTime: given },
      T1,
    );
    expect(flipped.conditions[0]?.lastTransitionTime).toBe(given);
  });

  it("reports no change for the same condition at a later time, and keeps its time", () => {
    const cond = { type: "Ready", status: "True", reason: "Up", message: "m", observedGeneration: 3 } as const;
    const first = setCondition([], cond, T0);
    const again = setCondition(first.conditions, cond, T1);
    expect(again.changed).toBe(false);
    expect(again.conditions).toEqual(first.conditions);
  });

  it("treats an absent observedGeneration as 0, as metav1.Condition's omitempty does", () => {
    const first = setCondition([], { type: "A", status: "True", reason: "R", observedGeneration: 0 }, T0);
    expect(first.conditions[0]).not.toHaveProperty("observedGeneration");
    expect(setCondition(first.conditions, { type: "A", status: "True", reason: "R" }, T1).changed).toBe(false);
    const dropped = setCondition(
      setCondition([], { type: "A", status: "True", reason: "R", observedGeneration: 4 }, T0).conditions,
      { type: "A", status: "True", reason: "R" },
      T1,
    );
    expect(dropped.changed).toBe(true);
    expect(dropped.conditions[0]).not.toHaveProperty("observedGeneration");
  });

  it("leaves the other conditions and their order alone, and never modifies the array it is given", () => {
    const given: Condition[] = [
      { type: "A", status: "True", reason: "R", message: "", lastTransitionTime: "2030-01-01T00:00:00Z" },
      { type: "B", status: "True", reason: "R", message: "", lastTransitionTime: "2030-01-01T00:00:00Z" },
    ];
    const frozen = structuredClone(given);
    const { conditions } = setCondition(given, { type: "A", status: "False", reason: "Down" }, T1);
    expect(given).toEqual(frozen);
    expect(conditions.map((c) => [c.type, c.status])).toEqual([
      ["A", "False"],
      ["B", "True"],
    ]);
    expect(conditions[1]).toBe(given[1]);
  });
});

describe("findCondition, removeCondition, isConditionTrue, isConditionFalse", () => {
  const conditions = [
    setCondition([], { type: "Ready", status: "True", reason: "Up" }, T0).conditions[0] as Condition,
    setCondition([], { type: "Degraded", status: "False", reason: "Fine" }, T0).conditions[0] as Condition,
    setCondition([], { type: "Synced", status: "Unknown", reason: "Starting" }, T0).conditions[0] as Condition,
  ];

  it("find the condition of a type, or nothing", () => {
    expect(findCondition(conditions, "Degraded")?.reason).toBe("Fine");
    expect(findCondition(conditions, "Missing")).toBeUndefined();
    expect(findCondition(undefined, "Ready")).toBeUndefined();
  });

  it("tell True and False apart from Unknown and absent", () => {
    expect([isConditionTrue(conditions, "Ready"), isConditionFalse(conditions, "Ready")]).toEqual([true, false]);
    expect([isConditionTrue(conditions, "Degraded"), isConditionFalse(conditions, "Degraded")]).toEqual([false, true]);
    expect([isConditionTrue(conditions, "Synced"), isConditionFalse(conditions, "Synced")]).toEqual([false, false]);
    expect([isConditionTrue(conditions, "Missing"), isConditionFalse(conditions, "Missing")]).toEqual([false, false]);
  });

  it("remove a present condition (changed) and report an absent one unchanged", () => {
    const removed = removeCondition(conditions, "Degraded");
    expect(removed.changed).toBe(true);
    expect(removed.conditions.map((c) => c.type)).toEqual(["Ready", "Synced"]);
    expect(conditions).toHaveLength(3);
    expect(removeCondition(conditions, "Missing")).toEqual({ conditions, changed: false });
    expect(removeCondition(undefined, "Ready")).toEqual({ conditions: [], changed: false });
  });
});
