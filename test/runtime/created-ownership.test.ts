/**
 * The fold of a created child's field ownership into its apply (runtime/created-ownership.ts): only
 * the controller's own entries change, and only when its create's entry holds a field the apply
 * does not.
 */
import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../packages/capstan/src/client/types.ts";
import { foldCreatedFields } from "../../packages/capstan/src/runtime/created-ownership.ts";

type Entry = NonNullable<NonNullable<KubeObject["metadata"]>["managedFields"]>[number];

const owner = { 'k:{"uid":"u1"}': { ".": {}, "f:name": {} } };
const created: Entry = {
  manager: "ctl",
  operation: "Update",
  apiVersion: "v1",
  time: "2026-01-01T00:00:00Z",
  fieldsType: "FieldsV1",
  fieldsV1: { "f:data": { ".": {}, "f:a": {}, "f:b": {} }, "f:metadata": { "f:ownerReferences": owner } },
};
const applied: Entry = {
  manager: "ctl",
  operation: "Apply",
  apiVersion: "v1",
  time: "2026-01-01T00:00:05Z",
  fieldsType: "FieldsV1",
  fieldsV1: { "f:data": { "f:a": {} }, "f:metadata": { "f:ownerReferences": owner } },
};
const other: Entry = {
  manager: "someone-else",
  operation: "Apply",
  apiVersion: "v1",
  fieldsType: "FieldsV1",
  fieldsV1: { "f:data": { "f:c": {} } },
};
const child = (...managedFields: Entry[]): KubeObject => ({ metadata: { name: "c", managedFields } });

describe("foldCreatedFields", () => {
  it("folds the create's fields into the apply's entry when the apply dropped one, leaving others' entries", () => {
    const folded = foldCreatedFields(child(other, created, applied), "ctl");
    expect(folded).toEqual([
      other,
      {
        manager: "ctl",
        operation: "Apply",
        apiVersion: "v1",
        time: "2026-01-01T00:00:05Z",
        fieldsType: "FieldsV1",
        fieldsV1: { "f:data": { "f:a": {}, ".": {}, "f:b": {} }, "f:metadata": { "f:ownerReferences": owner } },
      },
    ]);
  });

  it("turns a create's entry into an apply's when the child was never applied", () => {
    expect(foldCreatedFields(child(created), "ctl")).toEqual([{ ...created, operation: "Apply" }]);
  });

  it("leaves the fields alone when the apply holds every field the create set", () => {
    const sameFields: Entry = { ...applied, fieldsV1: created.fieldsV1 };
    expect(foldCreatedFields(child(created, sameFields), "ctl")).toBeUndefined();
    expect(foldCreatedFields(child(applied, other), "ctl")).toBeUndefined();
    expect(foldCreatedFields({ metadata: { name: "c" } }, "ctl")).toBeUndefined();
  });

  it("never touches another manager's, a subresource's or another version's entries", () => {
    expect(foldCreatedFields(child({ ...created, manager: "other" }, applied), "ctl")).toBeUndefined();
    expect(foldCreatedFields(child({ ...created, subresource: "status" }, applied), "ctl")).toBeUndefined();
    expect(foldCreatedFields(child({ ...created, apiVersion: "v2" }, applied), "ctl")).toBeUndefined();
  });
});
