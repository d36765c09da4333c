import { describe, expect, it } from "vitest";
import { ApplyConflictError, ApplyError } from "../../../packages/capstan-dev/src/devcluster/apply/errors.ts";
import {
  type ApplyOptions,
  applyConfiguration,
  apply as applyWithTypeInfo,
  BEFORE_FIRST_APPLY_MANAGER,
  type KubeJson,
  LAST_APPLIED_ANNOTATION,
  managerOrUserAgent,
  statusResetFields,
  trackUpdate,
} from "../../../packages/capstan-dev/src/devcluster/apply/field-manager.ts";
import { builtinPatchMeta } from "../../../packages/capstan-dev/src/devcluster/patch/patch-meta.ts";

// biome-ignore lint/suspicious/noExplicitAny: test assertions read arbitrary JSON
type Doc = any;

const T0 = new Date("2026-11-22T10:00:00.400Z");
const T1 = new Date("2026-11-22T10:05:00Z");
const T2 = new Date("2026-11-22T10:09:00Z");

const configMapType = builtinPatchMeta("", "ConfigMap")!;
const deploymentType = builtinPatchMeta("apps", "Deployment")!;

function cmTarget(now = T0) {
  return { type: configMapType, apiVersion: "v1", kind: "ConfigMap", now: () => now };
}

function cm(data: Record<string, string>, extra: Record<string, unknown> = {}): KubeJson {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cm", namespace: "default", ...extra }, data };
}

/** What the store would hold: the result plus server-set metadata. */
function stored(obj: KubeJson): KubeJson {
  const meta = { uid: "b7c0f5b2-0000-4000-8000-000000000001", resourceVersion: "1", ...(obj.metadata ?? {}) };
  return { ...obj, metadata: meta };
}

function apply(live: KubeJson | undefined, applied: KubeJson, manager: string, extra: Partial<ApplyOptions> = {}) {
  return applyConfiguration(live, applied, { ...cmTarget(), manager, ...extra });
}

function conflictOf(fn: () => unknown): ApplyConflictError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApplyConflictError) return err;
    throw err;
  }
  throw new Error("expected a conflict");
}

function errorOf(fn: () => unknown): ApplyError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApplyError) return err;
    throw err;
  }
  throw new Error("expected an apply error");
}

describe("server-side apply: managedFields on the wire", () => {
  it("creates an object with one Apply entry: sorted fieldsV1, metadata identity stripped, time in seconds", () => {
    const applied = cm({ b: "2", a: "1" }, { labels: { app: "web" } });
    const { object, changed } = apply(undefined, applied, "kubectl");
    expect(changed).toBe(true);
    expect((object as Doc).data).toEqual({ a: "1", b: "2" });
    expect((object as Doc).metadata.managedFields).toEqual([
      {
        manager: "kubectl",
        operation: "Apply",
        apiVersion: "v1",
        time: "2026-11-22T10:00:00Z",
        fieldsType: "FieldsV1",
        fieldsV1: { "f:data": { "f:a": {}, "f:b": {} }, "f:metadata": { "f:labels": { "f:app": {} } } },
      },
    ]);
    expect(JSON.stringify((object as Doc).metadata.managedFields[0].fieldsV1)).toBe(
      '{"f:data":{"f:a":{},"f:b":{}},"f:metadata":{"f:labels":{"f:app":{}}}}',
    );
  });

  it("records a create by Update with `.` for maps the manager created whole (kubectl-client-side-apply)", () => {
    const next = cm({ a: "1" }, { annotations: { [LAST_APPLIED_ANNOTATION]: "{}\n" } });
    const out = trackUpdate(undefined, next, { ...cmTarget(), manager: "kubectl-client-side-apply" }) as Doc;
    expect(out.metadata.managedFields).toEqual([
      {
        manager: "kubectl-client-side-apply",
        operation: "Update",
        apiVersion: "v1",
        time: "2026-11-22T10:00:00Z",
        fieldsType: "FieldsV1",
        fieldsV1: {
          "f:data": { ".": {}, "f:a": {} },
          "f:metadata": { "f:annotations": { ".": {}, [`f:${LAST_APPLIED_ANNOTATION}`]: {} } },
        },
      },
    ]);
  });

  it("keys container and port ownership as the real server does (k: elements, protocol default TCP)", () => {
    const deployment: KubeJson = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "web", namespace: "default" },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: "web" } },
        template: {
          metadata: { labels: { app: "web" } },
          spec: { containers: [{ name: "nginx", image: "nginx:1.27", ports: [{ containerPort: 80 }] }] },
        },
      },
    };
    const { object } = applyConfiguration(undefined, deployment, {
      type: deploymentType,
      apiVersion: "apps/v1",
      kind: "Deployment",
      manager: "kubectl",
      now: () => T0,
    });
    expect((object as Doc).metadata.managedFields[0].fieldsV1).toEqual({
      "f:spec": {
        "f:replicas": {},
        "f:selector": {},
        "f:template": {
          "f:metadata": { "f:labels": { "f:app": {} } },
          "f:spec": {
            "f:containers": {
              'k:{"name":"nginx"}': {
                ".": {},
                "f:image": {},
                "f:name": {},
                "f:ports": { 'k:{"containerPort":80,"protocol":"TCP"}': { ".": {}, "f:containerPort": {} } },
              },
            },
          },
        },
      },
    });
  });
});

describe("apply(live, applied, manager, { force, typeInfo })", () => {
  it("takes apiVersion and kind from the live object and conflicts like applyConfiguration", () => {
    const created = applyWithTypeInfo(undefined, cm({ a: "1" }), "alice", { typeInfo: configMapType }).object;
    const live = stored(created);
    expect(() => applyWithTypeInfo(live, cm({ a: "2" }), "bob", { typeInfo: configMapType })).toThrow(
      'Apply failed with 1 conflict: conflict with "alice": .data.a',
    );
    expect(
      applyWithTypeInfo(live, cm({ a: "2" }), "bob", { typeInfo: configMapType, force: true }).object.data,
    ).toEqual({
      a: "2",
    });
  });
});

describe("server-side apply: conflicts", () => {
  it("answers 409 with the real message and one FieldManagerConflict cause", () => {
    const live = stored(apply(undefined, cm({ a: "1" }), "alice").object);
    const err = conflictOf(() => apply(live, cm({ a: "2" }), "bob"));
    expect(err.code).toBe(409);
    expect(err.status()).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: 'Apply failed with 1 conflict: conflict with "alice": .data.a',
      reason: "Conflict",
      details: { causes: [{ reason: "FieldManagerConflict", message: 'conflict with "alice"', field: ".data.a" }] },
      code: 409,
    });
  });

  it("lists several conflicts grouped by manager, Update managers with their apiVersion", () => {
    let live = stored(apply(undefined, cm({ a: "1", b: "1" }), "alice").object);
    live = stored(trackUpdate(live, cm({ a: "1", b: "1", c: "1" }), { ...cmTarget(T1), manager: "controller" }));
    const err = conflictOf(() => apply(live, cm({ a: "2", b: "2", c: "2" }), "bob"));
    expect(err.message).toBe(
      'Apply failed with 3 conflicts: conflicts with "alice":\n- .data.a\n- .data.b\nconflicts with "controller" using v1:\n- .data.c',
    );
    expect(err.status().details?.causes?.map((c) => [c.message, c.field])).toEqual([
      ['conflict with "alice"', ".data.a"],
      ['conflict with "alice"', ".data.b"],
      ['conflict with "controller" using v1', ".data.c"],
    ]);
  });

  it("takes ownership with force and drops a manager left with nothing", () => {
    const live = stored(apply(undefined, cm({ a: "1" }), "alice").object);
    const { object } = apply(live, cm({ a: "2" }), "bob", { force: true, now: () => T1 });
    const entries = (object as Doc).metadata.managedFields;
    expect(entries.map((e: Doc) => e.manager)).toEqual(["bob"]);
    expect(entries[0].fieldsV1).toEqual({ "f:data": { "f:a": {} } });
    expect((object as Doc).data).toEqual({ a: "2" });
  });

  it("does not conflict when another applier sets the same value: both own it", () => {
    const live = stored(apply(undefined, cm({ a: "1" }), "alice").object);
    const { object } = apply(live, cm({ a: "1" }), "bob");
    // The object did not change, so bob's entry gets no time (managedFieldsUpdater) and sorts first.
    expect((object as Doc).metadata.managedFields.map((e: Doc) => [e.manager, e.time, e.fieldsV1])).toEqual([
      ["bob", undefined, { "f:data": { "f:a": {} } }],
      ["alice", "2026-11-22T10:00:00Z", { "f:data": { "f:a": {} } }],
    ]);
  });

  it("names subresource managers as the real server does", () => {
    const podType = builtinPatchMeta("", "Pod")!;
    const pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "p" }, status: { phase: "Running" } };
    const live = stored(
      trackUpdate({ ...pod, metadata: { name: "p", uid: "u" }, status: {} } as KubeJson, pod, {
        type: podType,
        apiVersion: "v1",
        kind: "Pod",
        manager: "kubelet",
        subresource: "status",
        now: () => T0,
      }),
    );
    expect((live as Doc).metadata.managedFields).toBeUndefined();
    // Tracking starts with a tracked object; build one created through the field manager.
    const created = stored(
      trackUpdate(undefined, { ...pod, status: {} } as KubeJson, {
        type: podType,
        apiVersion: "v1",
        kind: "Pod",
        manager: "kubectl-create",
        now: () => T0,
      }),
    );
    const withStatus = stored(
      trackUpdate(created, pod, {
        type: podType,
        apiVersion: "v1",
        kind: "Pod",
        manager: "kubelet",
        subresource: "status",
        now: () => T1,
      }),
    );
    const err = conflictOf(() =>
      applyConfiguration(
        withStatus,
        { ...pod, status: { phase: "Failed" } },
        {
          type: podType,
          apiVersion: "v1",
          kind: "Pod",
          manager: "tester",
          subresource: "status",
        },
      ),
    );
    expect(err.message).toBe(
      'Apply failed with 1 conflict: conflict with "kubelet" with subresource "status" using v1: .status.phase',
    );
  });
});

describe("server-side apply: removal of fields a manager stops applying", () => {
  it("removes a key only its applier owned", () => {
    const live = stored(apply(undefined, cm({ a: "1", b: "2" }), "alice").object);
    const { object } = apply(live, cm({ a: "1" }), "alice");
    expect((object as Doc).data).toEqual({ a: "1" });
    expect((object as Doc).metadata.managedFields[0].fieldsV1).toEqual({ "f:data": { "f:a": {} } });
  });

  it("keeps a key another applier also applies", () => {
    let live = stored(apply(undefined, cm({ a: "1", b: "2" }), "alice").object);
    live = stored(apply(live, cm({ b: "2" }), "bob").object);
    const { object } = apply(live, cm({ a: "1" }), "alice");
    expect((object as Doc).data).toEqual({ a: "1", b: "2" });
  });

  it("keeps a key an updater took over", () => {
    let live = stored(apply(undefined, cm({ a: "1", b: "2" }), "alice").object);
    live = stored(trackUpdate(live, cm({ a: "1", b: "3" }), { ...cmTarget(T1), manager: "controller" }));
    const { object } = apply(live, cm({ a: "1" }), "alice");
    expect((object as Doc).data).toEqual({ a: "1", b: "3" });
  });
});

describe("managedFields tracking of updates", () => {
  it("moves ownership of changed fields to the updater and later applies conflict with it", () => {
    let live = stored(apply(undefined, cm({ a: "1", b: "1" }), "alice").object);
    live = stored(trackUpdate(live, cm({ a: "9", b: "1" }), { ...cmTarget(T1), manager: "kube-controller" }));
    const entries = (live as Doc).metadata.managedFields;
    expect(entries).toEqual([
      {
        manager: "alice",
        operation: "Apply",
        apiVersion: "v1",
        time: "2026-11-22T10:00:00Z",
        fieldsType: "FieldsV1",
        fieldsV1: { "f:data": { "f:b": {} } },
      },
      {
        manager: "kube-controller",
        operation: "Update",
        apiVersion: "v1",
        time: "2026-11-22T10:05:00Z",
        fieldsType: "FieldsV1",
        fieldsV1: { "f:data": { "f:a": {} } },
      },
    ]);
    expect(conflictOf(() => apply(live, cm({ a: "1", b: "1" }), "alice")).message).toBe(
      'Apply failed with 1 conflict: conflict with "kube-controller" using v1: .data.a',
    );
  });

  it("sorts entries by operation, then time, then manager, and leaves the time of an unchanged manager alone", () => {
    let live = stored(trackUpdate(undefined, cm({ a: "1" }), { ...cmTarget(T2), manager: "zeta" }));
    live = stored(trackUpdate(live, cm({ a: "1", b: "1" }), { ...cmTarget(T1), manager: "alpha" }));
    live = stored(apply(live, cm({ c: "1" }), "applier", { now: () => T2 }).object);
    const entries = (live as Doc).metadata.managedFields;
    expect(entries.map((e: Doc) => [e.manager, e.operation, e.time])).toEqual([
      ["applier", "Apply", "2026-11-22T10:09:00Z"],
      ["alpha", "Update", "2026-11-22T10:05:00Z"],
      ["zeta", "Update", "2026-11-22T10:09:00Z"],
    ]);
  });

  it("does not start tracking an object stored without managedFields", () => {
    const untracked = stored(cm({ a: "1" }));
    const out = trackUpdate(untracked, cm({ a: "2" }), { ...cmTarget(), manager: "kubectl-edit" });
    expect((out as Doc).metadata.managedFields).toBeUndefined();
  });

  it("lets a client clear managedFields with an empty list", () => {
    const live = stored(apply(undefined, cm({ a: "1" }), "alice").object);
    const out = trackUpdate(
      live,
      { ...cm({ a: "1" }), metadata: { name: "cm", managedFields: [] } },
      { ...cmTarget(), manager: "x" },
    );
    expect((out as Doc).metadata.managedFields).toBeUndefined();
  });

  it("merges the oldest of more than ten Update managers into ancient-changes", () => {
    let live = stored(
      trackUpdate(undefined, cm({ k0: "v" }), { ...cmTarget(new Date(Date.UTC(2026, 0, 1, 0, 0))), manager: "m0" }),
    );
    for (let i = 1; i <= 11; i++) {
      const data: Record<string, string> = {};
      for (let j = 0; j <= i; j++) data[`k${j}`] = "v";
      live = stored(
        trackUpdate(live, cm(data), { ...cmTarget(new Date(Date.UTC(2026, 0, 1, 0, i))), manager: `m${i}` }),
      );
    }
    const entries = (live as Doc).metadata.managedFields as Doc[];
    expect(entries).toHaveLength(10);
    const ancient = entries.find((e) => e.manager === "ancient-changes");
    expect(ancient.fieldsV1).toEqual({ "f:data": { ".": {}, "f:k0": {}, "f:k1": {}, "f:k2": {} } });
    expect(entries.map((e) => e.manager)).not.toContain("m0");
  });
});

describe("objects created without server-side apply", () => {
  it("gives existing fields to before-first-apply on the first apply, so changing them conflicts", () => {
    const untracked = stored(cm({ a: "1", b: "1" }));
    const err = conflictOf(() => apply(untracked, cm({ a: "2" }), "alice"));
    expect(err.message).toBe(
      `Apply failed with 1 conflict: conflict with "${BEFORE_FIRST_APPLY_MANAGER}" using v1: .data.a`,
    );
    const { object } = apply(untracked, cm({ a: "1", c: "1" }), "alice");
    expect((object as Doc).metadata.managedFields.map((e: Doc) => [e.manager, e.operation])).toEqual([
      ["alice", "Apply"],
      [BEFORE_FIRST_APPLY_MANAGER, "Update"],
    ]);
  });
});

describe("kubectl apply --server-side", () => {
  function clientSideApplied(data: Record<string, string>): KubeJson {
    const config = cm(data);
    const annotated = cm(data, { annotations: { [LAST_APPLIED_ANNOTATION]: JSON.stringify(config) + "\n" } });
    return stored(trackUpdate(undefined, annotated, { ...cmTarget(), manager: "kubectl-client-side-apply" }));
  }

  it("takes over fields kubectl set client-side without conflicts and syncs last-applied", () => {
    const live = clientSideApplied({ a: "1" });
    const { object } = apply(live, cm({ a: "2" }), "kubectl", { now: () => T1 });
    expect((object as Doc).data).toEqual({ a: "2" });
    expect(JSON.parse((object as Doc).metadata.annotations[LAST_APPLIED_ANNOTATION])).toEqual(cm({ a: "2" }));
    expect((object as Doc).metadata.annotations[LAST_APPLIED_ANNOTATION].endsWith("\n")).toBe(true);
    const kubectl = (object as Doc).metadata.managedFields.find((e: Doc) => e.manager === "kubectl");
    expect(kubectl.fieldsV1).toEqual({ "f:data": { "f:a": {} } });
  });

  it("still conflicts for another field manager, and for fields changed since the client-side apply", () => {
    const live = clientSideApplied({ a: "1" });
    expect(conflictOf(() => apply(live, cm({ a: "2" }), "other")).message).toBe(
      'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: .data.a',
    );
    const edited = stored(
      trackUpdate(live, { ...live, data: { a: "5" } }, { ...cmTarget(T1), manager: "kubectl-edit" }),
    );
    expect(conflictOf(() => apply(edited, cm({ a: "2" }), "kubectl")).message).toBe(
      'Apply failed with 1 conflict: conflict with "kubectl-edit" using v1: .data.a',
    );
  });

  it("--force-conflicts takes the field", () => {
    const live = stored(
      trackUpdate(stored(apply(undefined, cm({ a: "1" }), "kubectl").object), cm({ a: "5" }), {
        ...cmTarget(T1),
        manager: "kubectl-edit",
      }),
    );
    const { object } = apply(live, cm({ a: "2" }), "kubectl", { force: true });
    expect((object as Doc).data).toEqual({ a: "2" });
    expect((object as Doc).metadata.managedFields.map((e: Doc) => e.manager)).toEqual(["kubectl"]);
  });

  it("reports an apply that changes nothing as unchanged", () => {
    const live = stored(apply(undefined, cm({ a: "1" }), "kubectl").object);
    expect(apply(live, cm({ a: "1" }), "kubectl", { now: () => T2 }).changed).toBe(false);
  });
});

describe("reset fields and bad requests", () => {
  it("never owns or conflicts on reset fields (status on the main resource)", () => {
    const deployment = (replicas: number, status: unknown): KubeJson => ({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "d" },
      spec: { replicas },
      status,
    });
    const target = {
      type: deploymentType,
      apiVersion: "apps/v1",
      kind: "Deployment",
      ignored: statusResetFields(),
      now: () => T0,
    };
    const live = stored(
      applyConfiguration(undefined, deployment(1, { replicas: 1 }), { ...target, manager: "a" }).object,
    );
    expect((live as Doc).metadata.managedFields[0].fieldsV1).toEqual({ "f:spec": { "f:replicas": {} } });
    expect(() => applyConfiguration(live, deployment(1, { replicas: 7 }), { ...target, manager: "b" })).not.toThrow();
  });

  it("refuses managedFields in the body and bodies of another kind with 400", () => {
    const withManaged = { ...cm({ a: "1" }), metadata: { name: "cm", managedFields: [] } };
    const e1 = errorOf(() => apply(undefined, withManaged, "x"));
    expect([e1.code, e1.message]).toEqual([400, "metadata.managedFields must be nil"]);
    const nulled = { ...cm({ a: "1" }), metadata: { name: "cm", managedFields: null } };
    expect(apply(undefined, nulled, "x").object.data).toEqual({ a: "1" });
    const e2 = errorOf(() => apply(undefined, { apiVersion: "v1", kind: "Secret", metadata: { name: "s" } }, "x"));
    expect([e2.code, e2.message, e2.status().reason]).toEqual([
      400,
      "invalid object type: /v1, Kind=Secret",
      "BadRequest",
    ]);
  });

  it("answers 500 when the stored managedFields cannot be decoded, as the real field manager does", () => {
    const bad = (entry: Record<string, unknown>) =>
      stored({ ...cm({ a: "1" }), metadata: { name: "cm", managedFields: [entry] } });
    const cases: [Record<string, unknown>, string][] = [
      [
        { manager: "m", operation: "Patch", apiVersion: "v1", fieldsType: "FieldsV1" },
        "operation must be `Apply` or `Update`",
      ],
      [{ manager: "m", operation: "Update", fieldsType: "FieldsV1" }, "apiVersion must not be empty"],
      [{ manager: "m", operation: "Update", apiVersion: "v1" }, "missing fieldsType in managed fields entry 0"],
      [
        { manager: "m", operation: "Update", apiVersion: "v1", fieldsType: "FieldsV2" },
        'invalid fieldsType "FieldsV2" in managed fields entry 0',
      ],
    ];
    for (const [entry, message] of cases) {
      const err = errorOf(() => apply(bad(entry), cm({ a: "1" }), "x"));
      expect([err.code, err.message]).toEqual([500, `failed to decode managed fields: ${message}`]);
    }
  });

  it("refuses a list item missing a key field that has no default (structured-merge-diff v4.4)", () => {
    const body: KubeJson = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "d", namespace: "ns" },
      spec: { template: { spec: { containers: [{ name: "a", ports: [{ name: "http" }] }] } } },
    };
    const err = errorOf(() =>
      applyConfiguration(undefined, body, {
        type: deploymentType,
        apiVersion: "apps/v1",
        kind: "Deployment",
        manager: "x",
      }),
    );
    expect(err.message).toBe(
      'failed to create typed patch object (ns/d; apps/v1, Kind=Deployment): .spec.template.spec.containers[name="a"].ports: element 0: associative list with keys has an element that omits key field "containerPort" (and doesn\'t have default value)',
    );
  });

  it("refuses duplicate keys in an applied associative list with the typed-conversion error", () => {
    const body: KubeJson = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "d", namespace: "ns" },
      spec: { template: { spec: { containers: [{ name: "a" }, { name: "a" }] } } },
    };
    const err = errorOf(() =>
      applyConfiguration(undefined, body, {
        type: deploymentType,
        apiVersion: "apps/v1",
        kind: "Deployment",
        manager: "x",
      }),
    );
    expect(err.code).toBe(500);
    expect(err.message).toBe(
      'failed to create typed patch object (ns/d; apps/v1, Kind=Deployment): .spec.template.spec.containers: duplicate entries for key [name="a"]',
    );
  });
});

describe("managerOrUserAgent", () => {
  it("uses fieldManager, else the user agent's program name, printable and at most 128 bytes", () => {
    expect(managerOrUserAgent("kubectl-edit", "kubectl/v1.32.4 (linux/amd64) kubernetes/4cb5f07")).toBe("kubectl-edit");
    expect(managerOrUserAgent(null, "kubectl/v1.32.4 (linux/amd64) kubernetes/4cb5f07")).toBe("kubectl");
    expect(managerOrUserAgent("", "my controller\u0007/1.0")).toBe("my controller");
    expect(managerOrUserAgent(undefined, "x".repeat(200))).toBe("x".repeat(128));
  });
});
