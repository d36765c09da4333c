import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../packages/capstan/src/client/types.ts";
import { adopt, applyMergePatch, splitObjectPatch } from "../../packages/capstan/src/operator/context.ts";
import { diff, jsonEqual, parseField } from "../../packages/capstan/src/operator/diff.ts";
import { essenceOf } from "../../packages/capstan/src/operator/essence.ts";
import { ABSENT, matchesFilters, PRESENT } from "../../packages/capstan/src/operator/filters.ts";
import { operator, TemporaryError } from "../../packages/capstan/src/operator/index.ts";
import { normalizeHandlerId, operatorNames } from "../../packages/capstan/src/operator/naming.ts";
import {
  finishEntries,
  readEssence,
  readProgress,
  readState,
  staleProgressKeys,
} from "../../packages/capstan/src/operator/progress.ts";
import { recordTimerRun, timerDueAt } from "../../packages/capstan/src/operator/timers.ts";
import { ConfigMap, Job, Pod } from "../../packages/capstan/src/resources/builtins.ts";
import { deriveRules, needs } from "../../packages/capstan/src/resources/rbac.ts";
import { Machine } from "./support/cluster.ts";

describe("diff", () => {
  it("reports added, changed and removed leaves with their paths, and compares arrays as whole values", () => {
    const changes = diff(
      { spec: { a: 1, b: { c: 2 }, list: [1, 2] }, metadata: { labels: { x: "1" } } },
      { spec: { a: 2, b: {}, list: [1, 2, 3], d: true }, metadata: { labels: { x: "1" } } },
    );
    expect(changes).toEqual([
      { op: "change", path: ["spec", "a"], field: "spec.a", old: 1, new: 2 },
      { op: "remove", path: ["spec", "b", "c"], field: "spec.b.c", old: 2, new: undefined },
      { op: "change", path: ["spec", "list"], field: "spec.list", old: [1, 2], new: [1, 2, 3] },
      { op: "add", path: ["spec", "d"], field: "spec.d", old: undefined, new: true },
    ]);
  });

  it("finds no difference between equal values whatever their key order", () => {
    expect(diff({ a: { b: 1, c: [{ x: 1, y: 2 }] } }, { a: { c: [{ y: 2, x: 1 }], b: 1 } })).toEqual([]);
    expect(jsonEqual({ a: undefined }, {})).toBe(true);
  });

  it("tells values apart by every defined key, array order and type", () => {
    expect(jsonEqual({ a: 1 }, { a: 1, b: undefined, c: 2 })).toBe(false);
    expect(jsonEqual({ a: 1, c: 2 }, { a: 1, b: 2 })).toBe(false);
    expect(jsonEqual({ a: { b: [1, 2] } }, { a: { b: [2, 1] } })).toBe(false);
    expect(jsonEqual({ a: {} }, { a: [] })).toBe(false);
    expect(jsonEqual([{ a: 1 }], [{ a: 1 }, { a: 1 }])).toBe(false);
  });

  it("gives every entry its own path, also under a given base path", () => {
    const changes = diff({ b: 1, c: { d: 1 } }, { b: 2, c: { d: 2 } }, ["spec"]);
    expect(changes.map((c) => c.path)).toEqual([
      ["spec", "b"],
      ["spec", "c", "d"],
    ]);
    expect(changes.map((c) => c.field)).toEqual(["spec.b", "spec.c.d"]);
  });

  it("treats a whole value appearing or disappearing as one add or remove (a create's diff is one root add, as in Kopf)", () => {
    expect(diff(undefined, { spec: { a: 1 } })).toEqual([
      { op: "add", path: [], field: "", old: undefined, new: { spec: { a: 1 } } },
    ]);
    expect(diff({ spec: { a: 1 } }, {})).toEqual([
      { op: "remove", path: ["spec"], field: "spec", old: { a: 1 }, new: undefined },
    ]);
  });

  it("refuses empty field path segments", () => {
    expect(parseField("spec.size")).toEqual(["spec", "size"]);
    expect(() => parseField("spec..size")).toThrow(/invalid field path "spec..size"/);
  });
});

describe("essence", () => {
  it("keeps spec, other top-level fields, labels and user annotations; drops status, system metadata and operator annotations", () => {
    const essence = essenceOf({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: "x",
        resourceVersion: "12",
        generation: 3,
        uid: "u",
        finalizers: ["a/b"],
        managedFields: [{ manager: "kubectl" }],
        labels: { app: "web" },
        annotations: {
          note: "kept",
          "machines.capstan.dev/last-handled-configuration": "{}",
          "other.capstan.dev/create-1": "{}",
          "capstan.dev/x": "y",
          "kubectl.kubernetes.io/last-applied-configuration": "{}",
        },
      },
      data: { k: "v" },
      status: { phase: "Ready" },
    } as KubeObject);
    expect(essence).toEqual({ data: { k: "v" }, metadata: { labels: { app: "web" }, annotations: { note: "kept" } } });
  });

  it("makes no difference between empty maps and absent ones", () => {
    const a = essenceOf({ metadata: { labels: {} }, spec: { opts: {} } } as KubeObject);
    const b = essenceOf({ metadata: {}, spec: {} } as KubeObject);
    expect(a).toEqual(b);
    expect(a).toEqual({});
  });

  it("is a copy: maps normalised at every depth, arrays copied whole, and changing it leaves the object alone", () => {
    const obj = {
      metadata: { labels: { app: "web" } },
      spec: { a: { b: { c: {} }, n: 1 }, list: [{}, { x: { y: 1 } }] },
    } as KubeObject;
    const before = structuredClone(obj);
    const essence = essenceOf(obj) as {
      spec: { a: { n: number }; list: [object, { x: { y: number } }] };
      metadata: { labels: Record<string, string> };
    };
    expect(essence).toEqual({
      spec: { a: { n: 1 }, list: [{}, { x: { y: 1 } }] },
      metadata: { labels: { app: "web" } },
    });
    essence.spec.a.n = 2;
    essence.spec.list[1].x.y = 2;
    essence.metadata.labels.app = "db";
    expect(obj).toEqual(before);
  });
});

describe("names and progress records", () => {
  const names = operatorNames("machines");

  it("derives the prefix, finalizer and annotation keys from the operator name", () => {
    expect(names.finalizer).toBe("machines.capstan.dev/finalizer");
    expect(names.essenceAnnotation).toBe("machines.capstan.dev/last-handled-configuration");
    expect(names.progressAnnotation("create-1")).toBe("machines.capstan.dev/create-1");
  });

  it("refuses operator names that cannot become an annotation prefix", () => {
    expect(() => operatorNames("My_Operator")).toThrow(/invalid operator name "My_Operator"/);
    expect(() => operatorNames("")).toThrow(/invalid operator name/);
  });

  it("turns handler ids into valid annotation key names: replaced characters, long ids hashed to 63 characters", () => {
    expect(normalizeHandlerId("flip/spec.switch")).toBe("flip-spec.switch");
    const long = normalizeHandlerId(`handler-${"x".repeat(100)}`);
    expect(long.length).toBeLessThanOrEqual(63);
    expect(long).toMatch(/^handler-x+-[0-9a-f]{8}$/);
    expect(normalizeHandlerId(`handler-${"x".repeat(100)}`)).toBe(long);
    expect(normalizeHandlerId(`handler-${"x".repeat(101)}`)).not.toBe(long);
    expect(() => normalizeHandlerId("finalizer")).toThrow(/reserved/);
  });

  it("reads a record only for its own cause and never trusts one that does not parse", () => {
    const obj: KubeObject = {
      metadata: {
        annotations: {
          "machines.capstan.dev/a": JSON.stringify({ purpose: "create", started: "2026-01-01T00:00:00Z", retries: 2 }),
          "machines.capstan.dev/b": "{not json",
          "machines.capstan.dev/last-handled-configuration": '{"spec":{"x":1}}\n',
        },
      },
    };
    expect(readProgress(obj, names, "a", "create")).toMatchObject({ retries: 2 });
    expect(readProgress(obj, names, "a", "update")).toBeUndefined();
    expect(readProgress(obj, names, "b", "create")).toBeUndefined();
    expect(readEssence(obj, names)).toEqual({ spec: { x: 1 } });
    expect(staleProgressKeys(obj, names, "update").sort()).toEqual(["a", "b"]);
  });

  it("reads state from status.capstan.<operator> first, then from annotations, and never another operator's", () => {
    const record = (retries: number) => JSON.stringify({ purpose: "create", started: "2026-01-01T00:00:00Z", retries });
    const obj = {
      metadata: {
        annotations: {
          "machines.capstan.dev/a": record(1),
          "machines.capstan.dev/b": record(5),
          "machines.capstan.dev/last-handled-configuration": '{"spec":{"x":1}}\n',
        },
      },
      status: {
        capstan: {
          machines: { a: record(2), "last-handled-configuration": '{"spec":{"x":2}}\n', odd: 3 },
          other: { c: record(9) },
        },
      },
    } as KubeObject;
    expect(readProgress(obj, names, "a", "create")).toMatchObject({ retries: 2 });
    expect(readProgress(obj, names, "b", "create")).toMatchObject({ retries: 5 });
    expect(readProgress(obj, names, "c", "create")).toBeUndefined();
    expect(readEssence(obj, names)).toEqual({ spec: { x: 2 } });
    expect(readState(obj, names)).not.toHaveProperty("odd");
    expect(finishEntries(obj, names, undefined)).toEqual({ a: null, b: null });
  });

  it("ends a cause by removing only this operator's records and storing the essence", () => {
    const obj: KubeObject = {
      metadata: {
        annotations: {
          "machines.capstan.dev/a": "{}",
          "other.capstan.dev/a": "{}",
          "machines.capstan.dev/last-handled-configuration": "{}",
          user: "x",
        },
      },
    };
    expect(finishEntries(obj, names, { spec: { x: 1 } })).toEqual({
      a: null,
      "last-handled-configuration": '{"spec":{"x":1}}\n',
    });
  });
});

describe("filters", () => {
  const obj: KubeObject = { metadata: { labels: { app: "web", tier: "" }, annotations: { team: "a" } } };

  it("matches exact values, PRESENT, ABSENT and value tests on labels and annotations", () => {
    expect(matchesFilters(obj, { labels: { app: "web", tier: PRESENT, legacy: ABSENT } })).toBe(true);
    expect(matchesFilters(obj, { labels: { app: "db" } })).toBe(false);
    expect(matchesFilters(obj, { labels: { tier: ABSENT } })).toBe(false);
    expect(matchesFilters(obj, { labels: { legacy: PRESENT } })).toBe(false);
    expect(matchesFilters(obj, { annotations: { team: (v) => v?.startsWith("a") === true } })).toBe(true);
    expect(matchesFilters(obj, { annotations: { team: "b" } })).toBe(false);
  });

  it("applies the when predicate together with the other filters", () => {
    expect(matchesFilters(obj, { labels: { app: "web" }, when: () => false })).toBe(false);
    expect(matchesFilters(obj, { when: (o) => o.metadata?.labels?.app === "web" })).toBe(true);
  });
});

describe("adopt and collected patches", () => {
  const owner = Machine.make({
    metadata: { name: "m1", namespace: "ns", uid: "uid-1" },
    spec: { switchPosition: "up" },
  });

  it("sets the controller owner reference, the parent's namespace and a name derived from the parent", () => {
    const child = adopt(Machine, owner, ConfigMap.make({ data: { a: "b" } }));
    expect(child.metadata).toEqual({
      name: "m1",
      namespace: "ns",
      ownerReferences: [
        {
          apiVersion: "useless.capstan.test/v1alpha1",
          kind: "Machine",
          name: "m1",
          uid: "uid-1",
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    });
    expect(child.data).toEqual({ a: "b" });
  });

  it("keeps an explicit name or generateName, and uses generateName when asked (Kopf's default)", () => {
    expect(adopt(Machine, owner, ConfigMap.make({ metadata: { name: "own" } })).metadata?.name).toBe("own");
    const generated = adopt(Machine, owner, Pod.make({}), { naming: "generate" });
    expect(generated.metadata?.generateName).toBe("m1-");
    expect(generated.metadata?.name).toBeUndefined();
    expect(adopt(Machine, owner, ConfigMap.make({ metadata: { generateName: "x-" } })).metadata?.name).toBeUndefined();
  });

  it("refuses a child that another object already controls, and an owner without a uid", () => {
    const controlled = ConfigMap.make({
      metadata: { ownerReferences: [{ apiVersion: "v1", kind: "Pod", name: "p", uid: "other", controller: true }] },
    });
    expect(() => adopt(Machine, owner, controlled)).toThrow(/already controlled by Pod p/);
    expect(() =>
      adopt(Machine, Machine.make({ metadata: { name: "x" }, spec: { switchPosition: "up" } }), Pod.make({})),
    ).toThrow(/no uid/);
  });

  it("splits a collected patch into the object's merge patch and its status's, dropping empty parts", () => {
    expect(
      splitObjectPatch({ metadata: { labels: {}, annotations: { a: "1" } }, spec: {}, status: { ok: true } }),
    ).toEqual({ metadata: { annotations: { a: "1" } }, status: { ok: true } });
    expect(applyMergePatch({ spec: { a: 1, b: 2 } }, { spec: { a: null, c: 3 } })).toEqual({ spec: { b: 2, c: 3 } });
  });
});

describe("registration", () => {
  it("refuses two handlers with the same id for one kind, naming the id", () => {
    const op = operator({ name: "dup" });
    op.on.create(Machine, async function sync() {});
    expect(() => op.on.update(Machine, async function sync() {})).toThrow(/share the id "sync"/);
    op.on.update(Machine, { id: "sync-update" }, async function sync() {});
  });

  it("gives anonymous handlers ids from their cause and position, and field handlers ids from the field", () => {
    const op = operator({ name: "ids" });
    op.on.create(Machine, async () => {});
    op.on.create(Machine, async () => {});
    op.on.field(Machine, "spec.size", async () => {});
    expect(() => op.on.create(Machine, { id: "create-2" }, async () => {})).toThrow(/share the id "create-2"/);
    expect(() => op.on.field(Machine, "spec.size", async () => {})).toThrow(/share the id "field-spec.size"/);
  });

  it("refuses a kind registered under two versions, bad durations and non-function handlers", () => {
    const op = operator({ name: "versions" });
    op.on.create(Machine, async () => {});
    expect(() => op.on.create({ ...Machine, version: "v2" } as typeof Machine, async () => {})).toThrow(
      /registered for version v1alpha1 already/,
    );
    expect(() => op.timer(Machine, { interval: "soon" }, async () => {})).toThrow(/invalid duration "soon"/);
    expect(() => op.on.create(Machine, "nope" as never)).toThrow(/must be a function/);
  });

  it("lists what it watches, owns and writes, and derives the verbs of the requests it sends", () => {
    const op = operator({ name: "reqs" });
    op.on.create(Machine, async () => {});
    op.controller(Pod)
      .owns(ConfigMap)
      .reconcile(async () => undefined);
    const r = op.requirements();
    expect(r.watches.map((k) => k.kind).sort()).toEqual(["ConfigMap", "Machine", "Pod"]);
    expect(r.owns.map((k) => k.kind)).toEqual(["ConfigMap"]);
    expect(r.updates.map((k) => k.kind)).toEqual(["Machine"]);
    expect(r.statusWrites.map((k) => k.kind).sort()).toEqual(["Machine", "Pod"]);
    expect(r.crds.map((c) => c.crdName)).toEqual(["machines.useless.capstan.test"]);
    const rules = deriveRules(op.permissions({ leaderElection: true }));
    const find = (group: string, resource: string) =>
      rules
        .filter((rule) => rule.apiGroups?.includes(group) && rule.resources?.includes(resource))
        .map((rule) =>
          rule.resourceNames ? `${rule.verbs.join(",")} on ${rule.resourceNames.join(",")}` : rule.verbs.join(","),
        );
    expect(find("useless.capstan.test", "machines")).toEqual(["list,watch,patch"]);
    expect(find("useless.capstan.test", "machines/status")).toEqual(["patch"]);
    expect(find("useless.capstan.test", "machines/finalizers")).toEqual(["update"]);
    expect(find("", "pods")).toEqual(["list,watch"]);
    expect(find("", "pods/status")).toEqual(["patch"]);
    expect(find("", "configmaps")).toEqual(["list,watch,create,patch"]);
    expect(find("", "events")).toEqual(["create,patch"]);
    expect(find("events.k8s.io", "events")).toEqual([]);
    expect(find("coordination.k8s.io", "leases")).toEqual(["create", "get,update on reqs-leader"]);
    expect(find("apiextensions.k8s.io", "customresourcedefinitions")).toEqual([
      "create",
      "get,update on machines.useless.capstan.test",
    ]);
  });

  it("derives only the watch for a kind owned with { apply: false }, whose children the reconciler writes itself", () => {
    const op = operator({ name: "jobs", permissions: [needs.custom(Job, ["create", "delete"])] });
    op.controller(Pod)
      .owns(Job, { apply: false, labelSelector: "app=jobs" })
      .owns(ConfigMap)
      .reconcile(async () => undefined);
    const r = op.requirements();
    expect(r.owns.map((k) => k.kind)).toEqual(["ConfigMap"]);
    expect(r.watches.map((k) => k.kind).sort()).toEqual(["ConfigMap", "Job", "Pod"]);
    const rules = deriveRules(op.permissions({ registerCrds: false }));
    const verbs = (resource: string) =>
      rules.filter((r) => r.apiGroups?.includes("batch") && r.resources?.includes(resource)).flatMap((r) => r.verbs);
    // No patch: nothing applies Jobs. Create and delete are the reconciler's own, declared.
    expect(verbs("jobs")).toEqual(["list", "watch", "create", "delete"]);
  });

  it("grants get and update on the Lease it is started with only", () => {
    const op = operator({ name: "ha" });
    op.on.create(Machine, async () => {});
    const leases = (leaderElection: boolean | { name?: string }) =>
      deriveRules(op.permissions({ leaderElection }))
        .filter((rule) => rule.resources?.includes("leases"))
        .map((rule) => ({ verbs: rule.verbs, names: rule.resourceNames }));
    expect(leases(true)).toEqual([
      { verbs: ["create"], names: undefined },
      { verbs: ["get", "update"], names: ["ha-leader"] },
    ]);
    expect(leases({ name: "custom" })[1]).toEqual({ verbs: ["get", "update"], names: ["custom"] });
    expect(leases({})[1]).toEqual({ verbs: ["get", "update"], names: ["ha-leader"] });
    expect(leases(false)).toEqual([]);
  });

  it("gives raw event handlers and daemons no writes, and controllers of status-less kinds no status", () => {
    const op = operator({ name: "quiet" });
    op.on.event(Machine, async () => {});
    op.controller(ConfigMap).reconcile(async () => undefined);
    const rules = deriveRules(op.permissions({ registerCrds: false }));
    const verbsOf = (resource: string) =>
      rules.filter((rule) => rule.resources?.includes(resource)).flatMap((rule) => rule.verbs);
    expect(verbsOf("machines")).toEqual(["list", "watch"]);
    expect(verbsOf("machines/status")).toEqual([]);
    expect(verbsOf("machines/finalizers")).toEqual([]);
    expect(verbsOf("configmaps")).toEqual(["list", "watch"]);
    expect(verbsOf("configmaps/status")).toEqual([]);
    expect(verbsOf("configmaps/finalizers")).toEqual(["update"]);
    expect(verbsOf("customresourcedefinitions")).toEqual([]);
    const daemonOnly = operator({ name: "daemon" });
    daemonOnly.daemon(Machine, async () => {});
    const daemonRules = deriveRules(daemonOnly.permissions({ registerCrds: false }));
    expect(daemonRules.filter((rule) => rule.resources?.includes("machines")).flatMap((rule) => rule.verbs)).toEqual([
      "list",
      "watch",
    ]);
  });

  it("grants what handlers declare they do through api, which registration cannot see", () => {
    const op = operator({ name: "declared", permissions: [needs.own(ConfigMap)] });
    op.on.create(Machine, async () => undefined);
    const undeclared = operator({ name: "undeclared" });
    undeclared.on.create(Machine, async () => undefined);
    const configMapVerbs = (o: typeof op) =>
      deriveRules(o.permissions())
        .filter((rule) => rule.apiGroups?.includes("") && rule.resources?.includes("configmaps"))
        .flatMap((rule) => rule.verbs);
    expect(configMapVerbs(op)).toEqual(["get", "list", "watch", "create", "update", "patch", "delete"]);
    expect(configMapVerbs(undeclared)).toEqual([]);
  });

  it("builds declared controllers only once, refusing a second reconcile()", () => {
    const op = operator({ name: "ctrl" });
    const b = op.controller(Pod);
    b.reconcile(async () => undefined);
    expect(() => b.reconcile(async () => undefined)).toThrow(/already called/);
  });
});

describe("errors", () => {
  it("gives TemporaryError Kopf's 60 s default delay and accepts duration strings", () => {
    expect(new TemporaryError("x").delayMs).toBe(60_000);
    expect(new TemporaryError("x", { delay: "1.5s" }).delayMs).toBe(1500);
  });
});

describe("timer schedule", () => {
  const timer = {
    kind: Machine,
    id: "t",
    intervalMs: 1000,
    initialDelayMs: 200,
    idleMs: 0,
    fn: () => undefined,
    options: { interval: 1000 },
  };

  it("is first due initialDelay after first sight, then interval after the previous run ended", () => {
    const schedule = { nextAt: new Map<string, number>(), firstSeen: 10_000, lastChange: 10_000 };
    expect(timerDueAt(timer, schedule)).toBe(10_200);
    expect(recordTimerRun(timer, schedule, 10_700)).toBe(1000);
    expect(timerDueAt(timer, schedule)).toBe(11_700);
    expect(recordTimerRun(timer, schedule, 12_000, 50)).toBe(50);
    expect(timerDueAt(timer, schedule)).toBe(12_050);
  });

  it("waits for the essence to be unchanged for `idle`", () => {
    const idle = { ...timer, idleMs: 5000 };
    expect(timerDueAt(idle, { nextAt: new Map(), firstSeen: 10_000, lastChange: 10_000 })).toBe(15_000);
    expect(timerDueAt(idle, { nextAt: new Map([["t", 30_000]]), firstSeen: 10_000, lastChange: 20_000 })).toBe(30_000);
    expect(timerDueAt(idle, { nextAt: new Map([["t", 21_000]]), firstSeen: 10_000, lastChange: 20_000 })).toBe(25_000);
  });
});
