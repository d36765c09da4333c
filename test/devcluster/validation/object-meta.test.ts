import { describe, expect, it } from "vitest";
import { fieldErrorMessage } from "../../../packages/capstan-dev/src/devcluster/validation/field-errors.ts";
import {
  prepareObjectMetaForUpdate,
  validateObjectMeta,
  validateObjectMetaUpdate,
  validateObjectMetaUpdateCommon,
} from "../../../packages/capstan-dev/src/devcluster/validation/object-meta.ts";

const msgs = (errs: ReturnType<typeof validateObjectMeta>) => errs.map(fieldErrorMessage);
const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

describe("validateObjectMeta", () => {
  it("requires a name or generateName", () => {
    expect(msgs(validateObjectMeta({ namespace: "default" }, { namespaced: true }))).toEqual([
      "metadata.name: Required value: name or generateName is required",
    ]);
  });

  it("checks the name and generateName with the kind's rule", () => {
    expect(msgs(validateObjectMeta({ name: "Bad_Name", namespace: "default" }, { namespaced: true }))).toEqual([
      `metadata.name: Invalid value: "Bad_Name": ${SUBDOMAIN_MSG}`,
    ]);
    expect(msgs(validateObjectMeta({ name: "a.b" }, { namespaced: false, nameRule: "dns1123label" }))).toEqual([
      'metadata.name: Invalid value: "a.b": must not contain dots',
    ]);
    expect(msgs(validateObjectMeta({ name: "x:y" }, { namespaced: false, nameRule: "pathSegment" }))).toEqual([]);
    expect(msgs(validateObjectMeta({ name: "a/b" }, { namespaced: false, nameRule: "pathSegment" }))).toEqual([
      "metadata.name: Invalid value: \"a/b\": may not contain '/'",
    ]);
    // generateName is checked as "Wa" (trailing dash masked), so the upper case is what fails.
    expect(msgs(validateObjectMeta({ generateName: "Web-", name: "web-x1" }, { namespaced: false }))).toEqual([
      `metadata.generateName: Invalid value: "Web-": ${SUBDOMAIN_MSG}`,
    ]);
    expect(validateObjectMeta({ generateName: "web-", name: "web-x1" }, { namespaced: false })).toEqual([]);
  });

  it("requires a namespace on namespaced kinds and forbids it on cluster-scoped ones", () => {
    expect(msgs(validateObjectMeta({ name: "a" }, { namespaced: true }))).toEqual([
      "metadata.namespace: Required value",
    ]);
    expect(msgs(validateObjectMeta({ name: "a", namespace: "x" }, { namespaced: false }))).toEqual([
      "metadata.namespace: Forbidden: not allowed on this type",
    ]);
    expect(msgs(validateObjectMeta({ name: "a", namespace: "x.y" }, { namespaced: true }))).toEqual([
      'metadata.namespace: Invalid value: "x.y": must not contain dots',
    ]);
  });

  it("checks label keys and values under metadata.labels", () => {
    expect(
      msgs(validateObjectMeta({ name: "a", labels: { "a/b/c": "ok", good: "-bad" } }, { namespaced: false })),
    ).toEqual([
      "metadata.labels: Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
      "metadata.labels: Invalid value: \"-bad\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    ]);
  });

  it("accepts upper-case annotation keys and limits all annotations to 256 KiB together", () => {
    expect(
      msgs(validateObjectMeta({ name: "a", annotations: { "Example.COM/Key": "v" } }, { namespaced: false })),
    ).toEqual([]);
    const big = { a: "x".repeat(128 * 1024), b: "y".repeat(128 * 1024) };
    expect(msgs(validateObjectMeta({ name: "a", annotations: big }, { namespaced: false }))).toEqual([
      "metadata.annotations: Too long: may not be more than 262144 bytes",
    ]);
    const fits = { a: "x".repeat(128 * 1024 - 1), b: "y".repeat(128 * 1024 - 1) };
    expect(validateObjectMeta({ name: "a", annotations: fits }, { namespaced: false })).toEqual([]);
  });

  it("checks finalizers as qualified names and refuses orphan with foregroundDeletion", () => {
    expect(
      msgs(validateObjectMeta({ name: "a", finalizers: ["orphan", "foregroundDeletion"] }, { namespaced: false })),
    ).toEqual([
      'metadata.finalizers: Invalid value: []string{"orphan", "foregroundDeletion"}: finalizer orphan and foregroundDeletion cannot be both set',
    ]);
    expect(msgs(validateObjectMeta({ name: "a", finalizers: ["a/b/c"] }, { namespaced: false }))[0]).toMatch(
      /^metadata\.finalizers: Invalid value: "a\/b\/c": a qualified name/,
    );
  });

  it("requires owner reference fields and allows a single controller", () => {
    const refs = [
      { apiVersion: "apps/v1", kind: "Deployment", name: "d1", uid: "u1", controller: true },
      { apiVersion: "apps/v1", kind: "Deployment", name: "d2", uid: "u2", controller: true },
      { apiVersion: "apps", kind: "", name: "", uid: "" },
    ];
    expect(msgs(validateObjectMeta({ name: "a", ownerReferences: refs }, { namespaced: false }))).toEqual([
      // 1.32 prints the []metav1.OwnerReference with %#v (a set pointer shows an address, made up here).
      'metadata.ownerReferences: Invalid value: []v1.OwnerReference{v1.OwnerReference{APIVersion:"apps/v1", Kind:"Deployment", Name:"d1", UID:"u1", Controller:(*bool)(0xc000000000), BlockOwnerDeletion:(*bool)(nil)}, v1.OwnerReference{APIVersion:"apps/v1", Kind:"Deployment", Name:"d2", UID:"u2", Controller:(*bool)(0xc000000000), BlockOwnerDeletion:(*bool)(nil)}, v1.OwnerReference{APIVersion:"apps", Kind:"", Name:"", UID:"", Controller:(*bool)(nil), BlockOwnerDeletion:(*bool)(nil)}}: Only one reference can have Controller set to true. Found "true" in references for Deployment/d1 and Deployment/d2',
      'metadata.ownerReferences.kind: Invalid value: "": kind must not be empty',
      'metadata.ownerReferences.name: Invalid value: "": name must not be empty',
      'metadata.ownerReferences.uid: Invalid value: "": uid must not be empty',
    ]);
    expect(
      msgs(
        validateObjectMeta(
          { name: "a", ownerReferences: [{ apiVersion: "a/b/c", kind: "K", name: "n", uid: "u" }] },
          { namespaced: false },
        ),
      ),
    ).toEqual(['metadata.ownerReferences.apiVersion: Invalid value: "a/b/c": version must not be empty']);
    expect(
      msgs(
        validateObjectMeta(
          { name: "a", ownerReferences: [{ apiVersion: "v1", kind: "Event", name: "n", uid: "u" }] },
          { namespaced: false },
        ),
      ),
    ).toEqual([
      'metadata.ownerReferences: Invalid value: v1.OwnerReference{APIVersion:"v1", Kind:"Event", Name:"n", UID:"u", Controller:(*bool)(nil), BlockOwnerDeletion:(*bool)(nil)}: /v1, Kind=Event is disallowed from being an owner',
    ]);
  });

  it("refuses a negative generation and unknown managedFields operations", () => {
    expect(
      msgs(
        validateObjectMeta(
          { name: "a", generation: -1, managedFields: [{ manager: "m\u0007", operation: "Patch", fieldsType: "X" }] },
          { namespaced: false },
        ),
      ),
    ).toEqual([
      "metadata.generation: Invalid value: -1: must be greater than or equal to 0",
      'metadata.managedFields[0].operation: Invalid value: "Patch": must be `Apply` or `Update`',
      'metadata.managedFields[0].fieldsType: Invalid value: "X": must be `FieldsV1`',
      'metadata.managedFields[0].manager: Invalid value: "m\\a": invalid character U+0007 (at position 1)',
    ]);
  });

  it("does not crash on metadata of the wrong JSON shape", () => {
    const bad = { name: 5, labels: "x", finalizers: "y", ownerReferences: [null] } as never;
    expect(msgs(validateObjectMeta(bad, { namespaced: false }))[0]).toBe(
      "metadata.name: Required value: name or generateName is required",
    );
  });
});

describe("validateObjectMetaUpdate", () => {
  const old = {
    name: "a",
    namespace: "ns",
    uid: "u1",
    resourceVersion: "5",
    generation: 3,
    creationTimestamp: "2026-01-01T00:00:00Z",
  };

  it("rejects a changed name, namespace or uid as immutable and a missing resourceVersion", () => {
    const next = { ...old, name: "b", namespace: "other", uid: "u2", resourceVersion: "" };
    expect(msgs(validateObjectMetaUpdate(next, old))).toEqual([
      'metadata.resourceVersion: Invalid value: "": must be specified for an update',
      'metadata.name: Invalid value: "b": field is immutable',
      'metadata.namespace: Invalid value: "other": field is immutable',
      'metadata.uid: Invalid value: "u2": field is immutable',
    ]);
  });

  it("resets generation, uid and timestamps instead of rejecting them", () => {
    const next: Record<string, unknown> = {
      name: "a",
      namespace: "ns",
      resourceVersion: "5",
      generation: 1,
      creationTimestamp: "2030-01-01T00:00:00Z",
    };
    prepareObjectMetaForUpdate(next, old);
    expect(next).toMatchObject({ uid: "u1", generation: 3, creationTimestamp: "2026-01-01T00:00:00Z" });
    expect(validateObjectMetaUpdate(next, old)).toEqual([]);
  });

  it("refuses setting deletionTimestamp through an update, printing the time as Go's time.Time.String()", () => {
    expect(msgs(validateObjectMetaUpdate({ ...old, deletionTimestamp: "2026-02-01T00:00:00Z" }, old))).toEqual([
      "metadata.deletionTimestamp: Invalid value: 2026-02-01 00:00:00 +0000 UTC: field is immutable",
    ]);
  });

  it("forbids new finalizers once the object is being deleted", () => {
    const deleting = { ...old, deletionTimestamp: "2026-02-01T00:00:00Z", finalizers: ["a.io/x"] };
    expect(
      msgs(validateObjectMetaUpdate({ ...deleting, finalizers: ["a.io/x", "b.io/z", "a.io/y"] }, deleting)),
    ).toEqual([
      'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"a.io/y", "b.io/z"}',
    ]);
    expect(validateObjectMetaUpdate({ ...deleting, finalizers: [] }, deleting)).toEqual([]);
  });

  it("combines path-segment name checks with the update rules as BeforeUpdate does", () => {
    expect(msgs(validateObjectMetaUpdateCommon({ ...old, name: "a/b" }, old, true))).toEqual([
      "metadata.name: Invalid value: \"a/b\": may not contain '/'",
      'metadata.name: Invalid value: "a/b": field is immutable',
    ]);
  });
});
