import { waitUntil } from "capstan-dev/testing";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import type { KubeObject, ListerWatcher, ResourceKind } from "../../packages/capstan/src/client/types.ts";
import { type Controller, DEFAULT_MAX_CONCURRENT_RECONCILES } from "../../packages/capstan/src/runtime/controller.ts";
import { ControllerBuilder } from "../../packages/capstan/src/runtime/controller-builder.ts";
import { RuntimeMetrics } from "../../packages/capstan/src/runtime/metrics.ts";
import { labelsChanged } from "../../packages/capstan/src/runtime/predicates.ts";
import { isDeleted } from "../../packages/capstan/src/runtime/reconcile.ts";
import { SharedInformerFactory } from "../../packages/capstan/src/runtime/shared-informers.ts";
import { FakeListerWatcher } from "./support/fake-lister-watcher.ts";

const Target: ResourceKind = {
  group: "example.com",
  version: "v1",
  kind: "Target",
  plural: "targets",
  namespaced: true,
};
const Pointer: ResourceKind = { group: "", version: "v1", kind: "ConfigMap", plural: "configmaps", namespaced: true };

/** A factory whose lister-watchers are fakes, one per kind and namespace, recording the scopes asked for. */
function environment() {
  const fakes = new Map<string, FakeListerWatcher>();
  const scopes: string[] = [];
  const informers = new SharedInformerFactory({
    listerWatcherFor: <T extends KubeObject>(kind: ResourceKind<T>, scope: { namespace?: string }) => {
      const id = `${kind.kind}/${scope.namespace ?? "*"}`;
      scopes.push(id);
      let fake = fakes.get(id);
      if (fake === undefined) {
        fake = new FakeListerWatcher();
        fakes.set(id, fake);
      }
      return fake as unknown as ListerWatcher<T>;
    },
  });
  const registered: Controller[] = [];
  const env = {
    informers,
    logger: pino({ level: "silent" }),
    namespace: "team-a",
    register: (c: Controller) => registered.push(c),
  };
  return { env, informers, fakes, scopes, registered };
}

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

async function run(e: ReturnType<typeof environment>): Promise<void> {
  const abort = new AbortController();
  const informing = e.informers.start(abort.signal);
  await e.informers.waitForCacheSync();
  for (const c of e.registered) c.start();
  stops.push(async () => {
    for (const c of e.registered) c.stopNow();
    abort.abort();
    await informing;
  });
}

describe("controller builder", () => {
  it("shares one informer between controllers watching the same kind in the same scope", () => {
    const e = environment();
    new ControllerBuilder(e.env)
      .for(Target)
      .named("one")
      .reconcile(() => {});
    new ControllerBuilder(e.env)
      .for(Target)
      .named("two")
      .owns(Pointer)
      .reconcile(() => {});
    new ControllerBuilder(e.env)
      .for(Target, { namespace: "team-b" })
      .named("three")
      .reconcile(() => {});
    // Target in team-a once (shared by one and two), ConfigMap in team-a, Target in team-b.
    expect(e.scopes).toEqual(["Target/team-a", "ConfigMap/team-a", "Target/team-b"]);
    expect(e.informers.all()).toHaveLength(3);
    expect(e.registered.map((c) => c.name)).toEqual(["one", "two", "three"]);
  });

  it("watches() maps any object to the keys it names, old and new object on update", async () => {
    const e = environment();
    const reconciled: string[] = [];
    new ControllerBuilder(e.env)
      .for(Target)
      .watches(Pointer, (cm: KubeObject & { data?: Record<string, string> }) =>
        cm.data?.target ? [{ namespace: "team-a", name: cm.data.target }] : [],
      )
      .reconcile((t, ctx) => {
        reconciled.push(`${ctx.key.name}${isDeleted(t) ? " (absent)" : ""}`);
      });
    await run(e);
    const pointers = e.fakes.get("ConfigMap/team-a") as FakeListerWatcher;
    pointers.upsert("p", { target: "first" }, "team-a");
    await waitUntil(() => reconciled.length === 1, { what: "first target", timeout: 2000 });
    pointers.upsert("p", { target: "second" }, "team-a");
    await waitUntil(() => reconciled.length === 3, { what: "both targets after the pointer moved", timeout: 2000 });
    expect(reconciled[0]).toBe("first (absent)");
    expect(reconciled.slice(1).sort()).toEqual(["first (absent)", "second (absent)"]);
  });

  it("withEventFilter applies to every watch; per-watch predicates only to theirs", async () => {
    const e = environment();
    const reconciled: string[] = [];
    new ControllerBuilder(e.env)
      .for(Target, { predicates: [labelsChanged()] })
      .withEventFilter({ create: (obj) => obj.metadata?.name !== "ignored" })
      .reconcile((_t, ctx) => {
        reconciled.push(ctx.key.name);
      });
    await run(e);
    const targets = e.fakes.get("Target/team-a") as FakeListerWatcher;
    targets.upsert("ignored", {}, "team-a");
    targets.upsert("kept", {}, "team-a");
    await waitUntil(() => reconciled.includes("kept"), { what: "kept reconciled", timeout: 2000 });
    // A data-only update does not pass labelsChanged (the fake's objects carry no labels).
    targets.upsert("kept", { x: "1" }, "team-a");
    targets.upsert("later", {}, "team-a");
    await waitUntil(() => reconciled.includes("later"), { what: "later reconciled", timeout: 2000 });
    expect(reconciled).toEqual(["kept", "later"]);
  });

  it("refuses to build without for(), and a second reconcile()", () => {
    const e = environment();
    expect(() => new ControllerBuilder(e.env).reconcile(() => {})).toThrow(/call for\(kind\) before reconcile/);
    const b = new ControllerBuilder(e.env).for(Target);
    b.reconcile(() => {});
    expect(() => b.reconcile(() => {})).toThrow(/already called/);
  });
});

describe("maxConcurrentReconciles", () => {
  async function workersOf(controller: string, metrics: RuntimeMetrics): Promise<number> {
    const line = (await metrics.text())
      .split("\n")
      .find((l) => l.startsWith(`controller_runtime_max_concurrent_reconciles{controller="${controller}"}`));
    return Number(line?.split(" ").at(-1));
  }

  it("takes the environment's default when the controller sets none, and its own over it", async () => {
    const e = environment();
    const metrics = new RuntimeMetrics();
    const env = { ...e.env, metrics, maxConcurrentReconciles: 8 };
    new ControllerBuilder(env)
      .for(Target)
      .named("defaulted")
      .reconcile(() => {});
    new ControllerBuilder(env)
      .for(Target)
      .named("own")
      .withOptions({ maxConcurrentReconciles: 2 })
      .reconcile(() => {});
    new ControllerBuilder({ ...e.env, metrics })
      .for(Target)
      .named("plain")
      .reconcile(() => {});
    expect([
      await workersOf("defaulted", metrics),
      await workersOf("own", metrics),
      await workersOf("plain", metrics),
    ]).toEqual([8, 2, DEFAULT_MAX_CONCURRENT_RECONCILES]);
    expect(DEFAULT_MAX_CONCURRENT_RECONCILES).toBe(16);
  });
});
