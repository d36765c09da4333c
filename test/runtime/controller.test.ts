import { waitUntil } from "capstan-dev/testing";
import { afterEach, describe, expect, it } from "vitest";
import type { KubeClient } from "../../packages/capstan/src/client/resource-client.ts";
import type { KubeObject, ResourceKind } from "../../packages/capstan/src/client/types.ts";
import { PermanentError } from "../../packages/capstan/src/operator/errors.ts";
import {
  Controller,
  type ControllerOptions,
  controllerOwnerKeys,
  type ReconcileContext,
} from "../../packages/capstan/src/runtime/controller.ts";
import { RuntimeMetrics } from "../../packages/capstan/src/runtime/metrics.ts";
import {
  and,
  annotationsChanged,
  generationChanged,
  labelsChanged,
  matching,
  not,
  or,
} from "../../packages/capstan/src/runtime/predicates.ts";
import { exponentialFailureRateLimiter } from "../../packages/capstan/src/runtime/rate-limiter.ts";
import { isDeleted, type ReconcileTarget, TerminalError } from "../../packages/capstan/src/runtime/reconcile.ts";
import { deferred, FakeSource } from "./controller-fakes.ts";
import { trackRuntimeTimers } from "./support/fake-lister-watcher.ts";

type Widget = KubeObject & { spec?: { size?: number }; status?: { seen?: number } };
const Widget: ResourceKind<Widget> = {
  group: "example.com",
  version: "v1",
  kind: "Widget",
  plural: "widgets",
  namespaced: true,
};
const ClusterWidget: ResourceKind<Widget> = {
  group: "example.com",
  version: "v1",
  kind: "ClusterWidget",
  plural: "clusterwidgets",
  namespaced: false,
};
const ConfigMap: ResourceKind = { group: "", version: "v1", kind: "ConfigMap", plural: "configmaps", namespaced: true };

function widget(name: string, extra: Partial<Widget["metadata"]> = {}, spec: Widget["spec"] = {}): Widget {
  return {
    apiVersion: "example.com/v1",
    kind: "Widget",
    metadata: { name, namespace: "default", uid: `uid-${name}`, generation: 1, resourceVersion: "1", ...extra },
    spec,
  };
}

function child(
  name: string,
  owner: { apiVersion: string; kind: string; name: string; controller?: boolean },
): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name,
      namespace: "default",
      ownerReferences: [{ uid: `uid-${owner.name}`, ...owner }],
    },
  };
}

const controllers: Controller<Widget>[] = [];
afterEach(() => {
  for (const c of controllers.splice(0)) c.stopNow();
});

function makeController(
  primary: FakeSource<Widget>,
  reconcile: ControllerOptions<Widget>["reconcile"],
  extra: Partial<ControllerOptions<Widget>> = {},
): Controller<Widget> {
  const c = new Controller<Widget>({
    name: "widget",
    kind: Widget,
    primary,
    reconcile,
    // 1 ms base so retries in tests come quickly; the production default is 5 ms.
    rateLimiter: exponentialFailureRateLimiter({ baseDelay: 1, maxDelay: 50 }),
    ...extra,
  });
  controllers.push(c);
  return c;
}

describe("reconcile input", () => {
  it("hands reconcile the cached (frozen) object itself, and only the key once it is deleted", async () => {
    const source = new FakeSource<Widget>();
    const seen: ReconcileTarget<Widget>[] = [];
    const c = makeController(source, (target) => {
      seen.push(target);
    });
    c.start();
    const stored = source.upsert(widget("a"));
    await waitUntil(() => seen.length === 1, { what: "first reconcile", timeout: 2000 });
    expect(seen[0]).toBe(stored);
    expect(Object.isFrozen((seen[0] as Widget).metadata)).toBe(true);
    expect(() => {
      ((seen[0] as Widget).spec as { size?: number }).size = 3;
    }).toThrow(TypeError);

    source.remove(stored);
    await waitUntil(() => seen.length === 2, { what: "reconcile after delete", timeout: 2000 });
    const gone = seen[1] as ReconcileTarget<Widget>;
    expect(isDeleted(gone)).toBe(true);
    expect(gone).toEqual({ deleted: true, namespace: "default", name: "a" });
  });

  it("gives the context a logger, the cache of watched kinds only, and adopt() for children", async () => {
    const source = new FakeSource<Widget>();
    const cms = new FakeSource<KubeObject>();
    let ctx: ReconcileContext<Widget> | undefined;
    const c = makeController(
      source,
      (_t, context) => {
        ctx = context;
      },
      { sources: [{ source: cms, kind: ConfigMap, map: () => [] }] },
    );
    c.start();
    source.upsert(widget("a"));
    await waitUntil(() => ctx !== undefined, { what: "reconcile", timeout: 2000 });
    const context = ctx as ReconcileContext<Widget>;
    // Destructuring is supported: no member relies on `this`.
    const { cache, adopt, key } = context;
    expect(key.name).toBe("a");
    expect(cache(Widget).get("default/a")).toBeDefined();
    expect(adopt<KubeObject>({ metadata: { name: "x" } }).metadata?.ownerReferences).toHaveLength(1);
    expect(context.key).toEqual({ namespace: "default", name: "a" });
    expect(context.cache(Widget).get("default/a")?.metadata?.uid).toBe("uid-a");
    expect(context.cache(ConfigMap)).toBe(cms.store);
    expect(() => context.cache({ ...ConfigMap, kind: "Secret", plural: "secrets" })).toThrow(/does not watch Secret/);
    expect(typeof context.logger.info).toBe("function");
    const adopted = context.adopt({ metadata: { name: "a-config" }, data: {} } as KubeObject);
    expect(adopted.metadata?.namespace).toBe("default");
    expect(adopted.metadata?.ownerReferences).toEqual([
      {
        apiVersion: "example.com/v1",
        kind: "Widget",
        name: "a",
        uid: "uid-a",
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(() =>
      context.adopt(child("x", { apiVersion: "apps/v1", kind: "Deployment", name: "d", controller: true })),
    ).toThrow(/already controlled by Deployment d/);
  });
});

describe("context writes", () => {
  it("without a client, client throws and apply() / patchStatus() reject, each naming the controller", async () => {
    const source = new FakeSource<Widget>();
    let ctx: ReconcileContext<Widget> | undefined;
    const c = makeController(source, (_t, context) => {
      ctx = context;
    });
    c.start();
    source.upsert(widget("a"));
    await waitUntil(() => ctx !== undefined, { what: "reconcile", timeout: 2000 });
    const context = ctx as ReconcileContext<Widget>;
    expect(() => context.client).toThrow("controller widget has no client");
    await expect(context.apply(ConfigMap, { metadata: { name: "x" } })).rejects.toThrow(
      "controller widget has no client",
    );
    await expect(context.patchStatus({ seen: 1 })).rejects.toThrow("controller widget has no client");
  });

  it("apply() is a forced server-side apply owned by the controller, in the object's namespace by default", async () => {
    const source = new FakeSource<Widget>();
    const calls: { kind: string; namespace?: string; obj: KubeObject; opts: Record<string, unknown> }[] = [];
    const client = {
      resource: (kind: ResourceKind, namespace?: string) => ({
        apply: async (obj: KubeObject, opts: Record<string, unknown>) => {
          calls.push({ kind: kind.kind, namespace, obj, opts });
          return obj;
        },
        patchStatus: async (name: string, patch: unknown, opts: Record<string, unknown>) => {
          calls.push({ kind: kind.kind, namespace, obj: { metadata: { name }, ...(patch as object) }, opts });
          return {};
        },
      }),
    } as unknown as KubeClient;
    let done = false;
    const c = makeController(
      source,
      async (_t, ctx) => {
        await ctx.apply(ConfigMap, ctx.adopt({ metadata: { name: "a-config" } }));
        await ctx.patchStatus({ seen: 1 });
        done = true;
      },
      { client },
    );
    c.start();
    source.upsert(widget("a"));
    await waitUntil(() => done, { what: "reconcile", timeout: 2000 });
    expect(calls[0]).toMatchObject({
      kind: "ConfigMap",
      namespace: "default",
      opts: { fieldManager: "widget", force: true },
    });
    expect(calls[0]?.obj.metadata?.ownerReferences?.[0]?.name).toBe("a");
    expect(calls[1]).toMatchObject({
      kind: "Widget",
      namespace: "default",
      obj: { metadata: { name: "a" }, status: { seen: 1 } },
    });
  });
});

describe("owner mapping (owns)", () => {
  it("maps a child to its controller owner when group and kind match, whatever the version", () => {
    expect(
      controllerOwnerKeys(
        Widget,
        child("c", { apiVersion: "example.com/v1", kind: "Widget", name: "w", controller: true }),
      ),
    ).toEqual(["default/w"]);
    expect(
      controllerOwnerKeys(
        Widget,
        child("c", { apiVersion: "example.com/v2", kind: "Widget", name: "w", controller: true }),
      ),
    ).toEqual(["default/w"]);
  });

  it("ignores owners that are not the controller, or of another group or kind", () => {
    expect(
      controllerOwnerKeys(Widget, child("c", { apiVersion: "example.com/v1", kind: "Widget", name: "w" })),
    ).toEqual([]);
    expect(
      controllerOwnerKeys(
        Widget,
        child("c", { apiVersion: "other.io/v1", kind: "Widget", name: "w", controller: true }),
      ),
    ).toEqual([]);
    expect(
      controllerOwnerKeys(
        Widget,
        child("c", { apiVersion: "example.com/v1", kind: "Gadget", name: "w", controller: true }),
      ),
    ).toEqual([]);
    expect(controllerOwnerKeys(Widget, { metadata: { name: "orphan", namespace: "default" } })).toEqual([]);
  });

  it("maps to a cluster-scoped owner by name only", () => {
    const c = child("c", { apiVersion: "example.com/v1", kind: "ClusterWidget", name: "w", controller: true });
    expect(controllerOwnerKeys(ClusterWidget, c)).toEqual(["w"]);
  });

  it("reconciles the owner when an owned child changes or is deleted", async () => {
    const source = new FakeSource<Widget>();
    const cms = new FakeSource<KubeObject>();
    const keys: string[] = [];
    const c = makeController(
      source,
      (_t, ctx) => {
        keys.push(`${ctx.key.namespace}/${ctx.key.name}`);
      },
      { sources: [{ source: cms, kind: ConfigMap, map: (obj) => controllerOwnerKeys(Widget, obj) }] },
    );
    c.start();
    const cm = child("w-config", { apiVersion: "example.com/v1", kind: "Widget", name: "w", controller: true });
    cms.upsert(cm);
    await waitUntil(() => keys.length === 1, { what: "reconcile for the child's add", timeout: 2000 });
    cms.remove(cm);
    await waitUntil(() => keys.length === 2, { what: "reconcile for the child's deletion", timeout: 2000 });
    expect(keys).toEqual(["default/w", "default/w"]);
  });
});

describe("predicates", () => {
  const a = widget("a", { generation: 1, labels: { x: "1" }, annotations: { n: "1" } });
  const statusOnly = widget("a", { generation: 1, labels: { x: "1" }, annotations: { n: "1" }, resourceVersion: "2" });
  const specChange = widget("a", { generation: 2, labels: { x: "1" }, annotations: { n: "1" } });
  const relabelled = widget("a", { generation: 1, labels: { x: "2" }, annotations: { n: "1" } });
  const reannotated = widget("a", { generation: 1, labels: { x: "1" }, annotations: { n: "2" } });

  it("generationChanged passes spec changes and blocks status/metadata-only updates", () => {
    const p = generationChanged<Widget>();
    expect(p.update?.(a, specChange)).toBe(true);
    expect(p.update?.(a, statusOnly)).toBe(false);
    expect(p.update?.(a, relabelled)).toBe(false);
    expect(p.create).toBeUndefined();
  });

  it("labelsChanged and annotationsChanged look only at their map", () => {
    expect(labelsChanged<Widget>().update?.(a, relabelled)).toBe(true);
    expect(labelsChanged<Widget>().update?.(a, reannotated)).toBe(false);
    expect(annotationsChanged<Widget>().update?.(a, reannotated)).toBe(true);
    expect(annotationsChanged<Widget>().update?.(a, relabelled)).toBe(false);
    // A key removed and another added is a change even with the same count.
    const swapped = widget("a", { labels: { y: "1" } });
    expect(labelsChanged<Widget>().update?.(widget("a", { labels: { x: "1" } }), swapped)).toBe(true);
  });

  it("combines with and / or / not, and custom (old, new) functions judge updates only", () => {
    const either = or<Widget>(generationChanged(), labelsChanged());
    expect(either.update?.(a, relabelled)).toBe(true);
    expect(either.update?.(a, reannotated)).toBe(false);
    const both = and<Widget>(generationChanged(), (o, n) => o.spec?.size !== n.spec?.size);
    expect(both.update?.(a, specChange)).toBe(false);
    expect(both.update?.(a, { ...specChange, spec: { size: 9 } })).toBe(true);
    expect(both.create?.(a)).toBe(true);
    expect(not<Widget>(generationChanged()).update?.(a, statusOnly)).toBe(true);
    const named = matching<Widget>((w) => w.metadata?.name === "a");
    expect(named.create?.(a)).toBe(true);
    expect(named.delete?.(widget("b"))).toBe(false);
  });

  it("a status-only update filtered by generationChanged does not reconcile; a spec change does", async () => {
    const source = new FakeSource<Widget>();
    const seen: string[] = [];
    const c = makeController(
      source,
      (t) => {
        if (!isDeleted(t)) seen.push(`${t.metadata?.name}@${t.metadata?.generation}`);
      },
      { primaryPredicates: [generationChanged()] },
    );
    c.start();
    source.upsert(widget("a"));
    await waitUntil(() => seen.length === 1, { what: "create reconcile", timeout: 2000 });
    source.upsert({ ...widget("a", { resourceVersion: "2" }), status: { seen: 1 } });
    // FIFO with one worker: once "b" is reconciled, a queued "a" would have run before it.
    source.upsert(widget("b"));
    await waitUntil(() => seen.includes("b@1"), { what: "b reconciled", timeout: 2000 });
    source.upsert(widget("a", { generation: 2, resourceVersion: "3" }));
    await waitUntil(() => seen.includes("a@2"), { what: "spec change reconciled", timeout: 2000 });
    expect(seen).toEqual(["a@1", "b@1", "a@2"]);
  });
});

describe("outcomes", () => {
  it("requeueAfter reconciles again after the delay, with the backoff forgotten", async () => {
    const source = new FakeSource<Widget>();
    const metrics = new RuntimeMetrics();
    const requeuesSeen: number[] = [];
    let calls = 0;
    const c = makeController(
      source,
      () => {
        requeuesSeen.push(c.queue.numRequeues("default/a"));
        calls++;
        if (calls === 1) throw new Error("first attempt fails");
        return calls === 2 ? { requeueAfter: 20 } : undefined;
      },
      { metrics },
    );
    c.start();
    source.upsert(widget("a"));
    await waitUntil(() => calls === 3, { what: "requeued reconcile", timeout: 2000 });
    // The failure counted one requeue; returning requeueAfter forgot it before the delayed run.
    expect(requeuesSeen).toEqual([0, 1, 0]);
    const text = await metrics.text();
    expect(text).toContain('controller_runtime_reconcile_total{controller="widget",result="requeue_after"} 1');
    expect(text).toContain('controller_runtime_reconcile_total{controller="widget",result="success"} 1');
  });

  it("a thrown error requeues with per-key backoff, is counted, and success forgets the backoff", async () => {
    const source = new FakeSource<Widget>();
    const metrics = new RuntimeMetrics();
    const requeuesSeen: number[] = [];
    let calls = 0;
    const c = makeController(
      source,
      () => {
        requeuesSeen.push(c.queue.numRequeues("default/a"));
        calls++;
        if (calls <= 3) throw new Error(`boom ${calls}`);
      },
      { metrics },
    );
    c.start();
    source.upsert(widget("a"));
    await waitUntil(() => calls === 4, { what: "four attempts", timeout: 2000 });
    // Each failure counted one more requeue for the key; the success cleared them.
    expect(requeuesSeen).toEqual([0, 1, 2, 3]);
    await waitUntil(() => c.queue.numRequeues("default/a") === 0, { what: "backoff forgotten", timeout: 2000 });
    const text = await metrics.text();
    expect(text).toContain('controller_runtime_reconcile_errors_total{controller="widget"} 3');
    expect(text).toContain('controller_runtime_reconcile_total{controller="widget",result="error"} 3');
    expect(text).toContain('controller_runtime_reconcile_total{controller="widget",result="success"} 1');
    expect(text).toContain('workqueue_retries_total{name="widget",controller="widget"} 3');
  });

  it("requeue: true retries with the rate limiter's growing delay", async () => {
    const source = new FakeSource<Widget>();
    let calls = 0;
    const c = makeController(source, () => {
      calls++;
      return calls < 3 ? { requeue: true } : undefined;
    });
    c.start();
    source.upsert(widget("a"));
    await waitUntil(() => calls === 3, { what: "three calls", timeout: 2000 });
  });

  it.each([
    ["a TerminalError is counted but never retried", TerminalError],
    ["a Kopf-style PermanentError thrown by a reconcile is terminal too: counted, never retried", PermanentError],
  ])("%s", async (_title, ErrorClass) => {
    const source = new FakeSource<Widget>();
    const metrics = new RuntimeMetrics();
    const calls: string[] = [];
    const c = makeController(
      source,
      (t) => {
        const name = isDeleted(t) ? t.name : (t.metadata?.name ?? "");
        calls.push(name);
        if (name === "bad") throw new ErrorClass("spec.size must be positive");
      },
      { metrics },
    );
    c.start();
    source.upsert(widget("bad"));
    source.upsert(widget("after"));
    await waitUntil(() => calls.includes("after"), { what: "next key", timeout: 2000 });
    // Give a retry (1 ms backoff) every chance to happen before looking.
    await new Promise((r) => setTimeout(r, 30));
    expect(calls.filter((n) => n === "bad")).toHaveLength(1);
    expect(await metrics.text()).toContain('controller_runtime_terminal_reconcile_errors_total{controller="widget"} 1');
  });
});

describe("concurrency", () => {
  it("runs at most maxConcurrentReconciles at once and never one key twice at once", async () => {
    const source = new FakeSource<Widget>();
    const active = new Set<string>();
    let peak = 0;
    let overlapSameKey = 0;
    const done: string[] = [];
    const c = makeController(
      source,
      async (t, ctx) => {
        const key = ctx.key.name;
        if (active.has(key)) overlapSameKey++;
        active.add(key);
        peak = Math.max(peak, active.size);
        await new Promise((r) => setTimeout(r, 2));
        active.delete(key);
        done.push(isDeleted(t) ? `${key}-gone` : key);
      },
      { maxConcurrentReconciles: 3 },
    );
    c.start();
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 10; i++) source.upsert(widget(`w${i}`, { resourceVersion: String(round + 2) }));
      await new Promise((r) => setTimeout(r, 1));
    }
    await waitUntil(() => active.size === 0 && c.queue.len() === 0 && done.length >= 10, {
      what: "all reconciled",
      timeout: 5000,
    });
    await waitUntil(() => active.size === 0 && c.queue.len() === 0, { what: "quiet", timeout: 5000 });
    expect(peak).toBe(3);
    expect(overlapSameKey).toBe(0);
  });

  it("a key changed while being reconciled runs exactly once more afterwards", async () => {
    const source = new FakeSource<Widget>();
    const gate = deferred();
    const versions: string[] = [];
    const c = makeController(
      source,
      async (t) => {
        if (isDeleted(t)) return;
        versions.push(t.metadata?.resourceVersion ?? "");
        if (versions.length === 1) await gate.promise;
      },
      { maxConcurrentReconciles: 4 },
    );
    c.start();
    source.upsert(widget("a", { resourceVersion: "1" }));
    await waitUntil(() => versions.length === 1, { what: "first reconcile running", timeout: 2000 });
    source.upsert(widget("a", { resourceVersion: "2" }));
    source.upsert(widget("a", { resourceVersion: "3" }));
    gate.resolve();
    await waitUntil(() => versions.length === 2, { what: "second reconcile", timeout: 2000 });
    await new Promise((r) => setTimeout(r, 20));
    // The two changes coalesced into one more run, which saw the latest version.
    expect(versions).toEqual(["1", "3"]);
  });
});

describe("stopping", () => {
  it("stop() lets in-flight reconciles finish, takes no new keys, and leaves no timer", async () => {
    const timers = trackRuntimeTimers();
    try {
      const source = new FakeSource<Widget>();
      const gate = deferred();
      const started: string[] = [];
      const finished: string[] = [];
      let signal: AbortSignal | undefined;
      const c = makeController(
        source,
        async (_t, ctx) => {
          started.push(ctx.key.name);
          signal = ctx.signal;
          await gate.promise;
          finished.push(ctx.key.name);
          return { requeueAfter: "1h" };
        },
        { maxConcurrentReconciles: 1 },
      );
      c.start();
      source.upsert(widget("a"));
      await waitUntil(() => started.length === 1, { what: "reconcile running", timeout: 2000 });
      source.upsert(widget("b"));
      const stopping = c.stop("10s");
      expect(c.state).toBe("draining");
      gate.resolve();
      await stopping;
      expect(finished).toEqual(["a"]);
      expect(started).toEqual(["a"]);
      expect(signal?.aborted).toBe(true);
      expect(c.state).toBe("stopped");
      expect(source.handlers.size).toBe(0);
      // The requeueAfter of "a" came after shutdown: no delayed-add timer may survive.
      expect(await timers.pending()).toBe(0);
    } finally {
      timers.stop();
    }
  });

  it("the drain timeout aborts reconciles that do not finish in time", async () => {
    const source = new FakeSource<Widget>();
    let signal: AbortSignal | undefined;
    const c = makeController(source, async (_t, ctx) => {
      signal = ctx.signal;
      await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve()));
    });
    c.start();
    source.upsert(widget("a"));
    await waitUntil(() => signal !== undefined, { what: "reconcile running", timeout: 2000 });
    await c.stop(20);
    expect(signal?.aborted).toBe(true);
    await c.stopped();
  });

  it("aborting the start signal aborts running reconciles at once (lost leadership)", async () => {
    const source = new FakeSource<Widget>();
    const leading = new AbortController();
    let signal: AbortSignal | undefined;
    const c = makeController(source, async (_t, ctx) => {
      signal = ctx.signal;
      await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve()));
    });
    c.start(leading.signal);
    source.upsert(widget("a"));
    await waitUntil(() => signal !== undefined, { what: "reconcile running", timeout: 2000 });
    leading.abort();
    expect(signal?.aborted).toBe(true);
    expect(c.state).toBe("stopped");
    source.upsert(widget("b"));
    await c.stopped();
    expect(c.queue.len()).toBe(0);
  });
});

describe("waiting for our own write", () => {
  it("parks a key whose own status write the cache has not shown, and its worker serves other keys meanwhile", async () => {
    const source = new FakeSource<Widget>();
    const client = {
      resource: () => ({
        // The server's answer: the object at resourceVersion 2, which the cache has not delivered yet.
        patchStatus: async (name: string) => widget(name, { resourceVersion: "2" }),
      }),
    } as unknown as KubeClient;
    const runs: string[] = [];
    const c = makeController(
      source,
      async (target, ctx) => {
        const rv = (target as Widget).metadata?.resourceVersion;
        runs.push(`${ctx.key.name}@${rv}`);
        if (ctx.key.name === "a" && rv === "1") await ctx.patchStatus({ seen: 1 });
      },
      { client, maxConcurrentReconciles: 1 },
    );
    c.start();
    source.upsert(widget("a"));
    await waitUntil(() => runs.length === 1, { what: "a's first reconcile", timeout: 2000 });
    // a comes back (say, its child's event) before its own write does, then b arrives.
    c.queue.add("default/a");
    source.upsert(widget("b"));
    await waitUntil(() => runs.includes("b@1"), { what: "b reconciled while a waits", timeout: 2000 });
    // The one worker was not held by a (it would wait up to 5 s), and a ran nothing on the stale copy...
    expect(runs).toEqual(["a@1", "b@1"]);
    expect(c.busy()).toContain("1 waiting to see our own write");
    // ...it runs, once, when its write shows.
    source.upsert(widget("a", { resourceVersion: "2" }));
    await waitUntil(() => c.busy() === undefined, { what: "the controller idle", timeout: 2000 });
    expect(runs).toEqual(["a@1", "b@1", "a@2"]);
  });
});
