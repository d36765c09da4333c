import type { Event as CoreEvent } from "kubernetes-types/core/v1.d.ts";
import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../packages/capstan/src/client/types.ts";
import { ApiEventRecorder, type EventApi } from "../../packages/capstan/src/runtime/event-recorder.ts";
import { apiError } from "./support/fake-lister-watcher.ts";

/** An in-memory Events endpoint recording every call. */
function fakeEvents() {
  const stored = new Map<string, CoreEvent>();
  const calls: { verb: "create" | "patch"; name: string; body: unknown }[] = [];
  const warnings: string[] = [];
  let failCreates = false;
  const api: EventApi = {
    async create(obj) {
      calls.push({ verb: "create", name: obj.metadata.name as string, body: obj });
      if (failCreates) throw apiError(500, "etcd down");
      stored.set(obj.metadata.name as string, structuredClone(obj));
      return obj;
    },
    async patch(name, patch) {
      calls.push({ verb: "patch", name, body: patch });
      const current = stored.get(name);
      if (current === undefined) throw apiError(404, `events "${name}" not found`);
      Object.assign(current, patch);
      return current;
    },
  };
  const logger = {
    debug() {},
    info() {},
    warn(_f: object, msg: string) {
      warnings.push(msg);
    },
    error() {},
  };
  return {
    api,
    stored,
    calls,
    warnings,
    logger,
    failCreates: (v: boolean) => {
      failCreates = v;
    },
  };
}

const widget: KubeObject = {
  apiVersion: "example.com/v1",
  kind: "Widget",
  metadata: { name: "w", namespace: "prod", uid: "uid-w", resourceVersion: "7" },
};

describe("event recorder", () => {
  it("posts a core/v1 Event about the object, with source and reporting controller", async () => {
    const f = fakeEvents();
    const r = new ApiEventRecorder({ events: f.api, component: "widget-controller", host: "pod-1", logger: f.logger });
    r.event(widget, "Normal", "Synced", "all good");
    await r.flush();
    expect(f.calls).toHaveLength(1);
    const e = f.calls[0]?.body as CoreEvent;
    expect(e.metadata.namespace).toBe("prod");
    expect(e.metadata.name).toMatch(/^w\.[0-9a-f]+$/);
    expect(e.involvedObject).toEqual({
      apiVersion: "example.com/v1",
      kind: "Widget",
      name: "w",
      namespace: "prod",
      uid: "uid-w",
      resourceVersion: "7",
    });
    expect(e).toMatchObject({
      type: "Normal",
      reason: "Synced",
      message: "all good",
      count: 1,
      source: { component: "widget-controller", host: "pod-1" },
      reportingComponent: "widget-controller",
      reportingInstance: "pod-1",
    });
    expect(e.firstTimestamp).toBe(e.lastTimestamp);
  });

  it("turns repeats into one Event whose count grows, patching count and lastTimestamp", async () => {
    const f = fakeEvents();
    const r = new ApiEventRecorder({ events: f.api, component: "c", logger: f.logger });
    for (let i = 0; i < 3; i++) r.event(widget, "Warning", "FetchFailed", "rate server unreachable");
    await r.flush();
    expect(f.calls.map((c) => c.verb)).toEqual(["create", "patch", "patch"]);
    const name = f.calls[0]?.name;
    expect(f.calls.every((c) => c.name === name)).toBe(true);
    expect(f.calls[2]?.body).toMatchObject({ count: 3, message: "rate server unreachable" });
    expect(Object.keys(f.calls[2]?.body as object).sort()).toEqual(["count", "lastTimestamp", "message"]);
    expect(f.stored.get(name as string)?.count).toBe(3);
  });

  it("creates a fresh Event when the one it would bump was deleted", async () => {
    const f = fakeEvents();
    const r = new ApiEventRecorder({ events: f.api, component: "c", logger: f.logger });
    r.event(widget, "Normal", "Synced", "ok");
    await r.flush();
    f.stored.clear();
    r.event(widget, "Normal", "Synced", "ok");
    await r.flush();
    expect(f.calls.map((c) => c.verb)).toEqual(["create", "patch", "create"]);
    expect((f.calls[2]?.body as CoreEvent | undefined)?.count).toBe(2);
  });

  it("aggregates the 10th distinct message with the same reason into a combined event", async () => {
    const f = fakeEvents();
    const r = new ApiEventRecorder({ events: f.api, component: "c", logger: f.logger });
    for (let i = 1; i <= 12; i++) r.event(widget, "Warning", "Failed", `attempt ${i} failed`);
    await r.flush();
    const creates = f.calls.filter((c) => c.verb === "create").map((c) => (c.body as CoreEvent).message);
    expect(creates.slice(0, 9)).toEqual(Array.from({ length: 9 }, (_, i) => `attempt ${i + 1} failed`));
    expect(creates[9]).toBe("(combined from similar events): attempt 10 failed");
    // After that, similar events bump the aggregate instead of creating new ones.
    expect(creates).toHaveLength(10);
    const patches = f.calls.filter((c) => c.verb === "patch").map((c) => c.body as { count: number; message: string });
    expect(patches).toEqual([
      expect.objectContaining({ count: 2, message: "(combined from similar events): attempt 11 failed" }),
      expect.objectContaining({ count: 3, message: "(combined from similar events): attempt 12 failed" }),
    ]);
  });

  it("drops events past a burst of 25 per object (spam filter)", async () => {
    const f = fakeEvents();
    const r = new ApiEventRecorder({ events: f.api, component: "c", logger: f.logger });
    for (let i = 0; i < 30; i++) r.event(widget, "Normal", `Reason${i}`, "m");
    await r.flush();
    expect(f.calls).toHaveLength(25);
    // Another object has its own budget.
    r.event({ ...widget, metadata: { ...widget.metadata, name: "other", uid: "uid-o" } }, "Normal", "Reason0", "m");
    await r.flush();
    expect(f.calls).toHaveLength(26);
  });

  it("never throws into the caller: failed writes and nameless objects are logged", async () => {
    const f = fakeEvents();
    f.failCreates(true);
    const r = new ApiEventRecorder({ events: f.api, component: "c", logger: f.logger });
    expect(() => r.event(widget, "Normal", "Synced", "ok")).not.toThrow();
    expect(() => r.event({ kind: "Widget", metadata: {} }, "Normal", "Synced", "ok")).not.toThrow();
    await r.flush();
    expect(f.warnings).toContain("cannot write event");
    expect(f.warnings).toContain("cannot record event");
  });

  it("files events of cluster-scoped objects in the default namespace, and stops after close()", async () => {
    const f = fakeEvents();
    const r = new ApiEventRecorder({ events: f.api, component: "c", logger: f.logger });
    r.event({ apiVersion: "v1", kind: "Node", metadata: { name: "node-1", uid: "n1" } }, "Warning", "Hot", "too hot");
    await r.close();
    expect((f.calls[0]?.body as CoreEvent | undefined)?.metadata.namespace).toBe("default");
    r.event(widget, "Normal", "Synced", "ok");
    await r.flush();
    expect(f.calls).toHaveLength(1);
  });
});
