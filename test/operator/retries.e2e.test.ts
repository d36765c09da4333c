import { startTestCluster, waitUntil } from "capstan-dev/testing";
import { describe, expect, it } from "vitest";
import { isNotFound } from "../../packages/capstan/src/client/errors.ts";
import { operator, PermanentError, TemporaryError } from "../../packages/capstan/src/operator/index.ts";
import { fileFixture } from "../support/file-fixture.ts";
import { eventsFor, handlerState, Machine, machineCrd, namespace, run } from "./support/cluster.ts";

const cluster = fileFixture(() => startTestCluster({ crds: [machineCrd] }));

const machines = (ns: string) => cluster.client.resource(Machine, ns);
const progress = async (ns: string, name: string, operatorName: string, handlerId: string) => {
  const raw = handlerState(await machines(ns).get(name), operatorName)[handlerId];
  return raw === undefined ? undefined : JSON.parse(raw);
};

describe("retries", () => {
  it("retries a TemporaryError after its delay, with the attempt number, without re-running handlers that succeeded", async () => {
    const ns = await namespace(cluster, "temporary");
    const op = operator({ name: "retrier" });
    const calls: string[] = [];
    op.on.create(Machine, async function prepare() {
      calls.push("prepare");
    });
    let recordSeenOnRetry: unknown;
    op.on.create(Machine, async function waitForIt({ retry, obj }) {
      calls.push(`wait#${retry}`);
      // The retry reads its own progress record back from the object.
      if (retry === 1) recordSeenOnRetry = JSON.parse(handlerState(obj, "retrier").waitForIt ?? "{}");
      if (retry < 2) throw new TemporaryError("not ready yet", { delay: "50ms" });
      return "ready";
    });
    const running = await run(op, cluster, { namespaces: [ns] });
    try {
      await machines(ns).create(
        Machine.make({ metadata: { name: "m", namespace: ns }, spec: { switchPosition: "up" } }),
      );
      await waitUntil(
        async () =>
          ((await machines(ns).get("m")).status as Record<string, unknown> | undefined)?.waitForIt === "ready",
        { what: "the result" },
      );
      expect(calls).toEqual(["prepare", "wait#0", "wait#1", "wait#2"]);
      expect(recordSeenOnRetry).toMatchObject({ purpose: "create", retries: 1, message: "not ready yet" });
      expect(typeof (recordSeenOnRetry as { delayed?: unknown }).delayed).toBe("string");
      // Events are posted beside the handler's progress, not before it: wait for the Warning.
      const isRetryWarning = (e: { type?: string; message?: string }) =>
        e.type === "Warning" && e.message?.includes("failed temporarily") === true;
      const events = await waitUntil(
        async () => {
          const list = await eventsFor(cluster, ns, "m");
          return list.some(isRetryWarning) ? list : undefined;
        },
        { what: "the retry's Warning event" },
      );
      expect(events.some(isRetryWarning)).toBe(true);
    } finally {
      await running.stop();
    }
  });

  it("stops at a PermanentError, records the failure, and still completes the cause with the other handlers", async () => {
    const ns = await namespace(cluster, "permanent");
    const op = operator({ name: "strict" });
    let broken = 0;
    let after = 0;
    op.on.create(Machine, async function broken1() {
      broken++;
      throw new PermanentError("spec.switchPosition must be up or down");
    });
    op.on.create(Machine, async function later() {
      after++;
    });
    const running = await run(op, cluster, { namespaces: [ns] });
    try {
      await machines(ns).create(
        Machine.make({ metadata: { name: "m", namespace: ns }, spec: { switchPosition: "sideways" } }),
      );
      await waitUntil(async () => handlerState(await machines(ns).get("m"), "strict")["last-handled-configuration"], {
        what: "the cause to end",
      });
      const events = await eventsFor(cluster, ns, "m");
      expect(events.map((e) => [e.type, e.reason, e.message])).toContainEqual([
        "Warning",
        "HandlerFailed",
        "Handler 'broken1' failed permanently: spec.switchPosition must be up or down",
      ]);
      await new Promise((r) => setTimeout(r, 300));
      expect([broken, after]).toEqual([1, 1]);
    } finally {
      await running.stop();
    }
  });

  it("gives up after `retries` failed attempts of an arbitrary error", async () => {
    const ns = await namespace(cluster, "exhausted");
    const op = operator({ name: "limited" });
    let attempts = 0;
    op.on.create(Machine, { id: "flaky", retries: 3, backoff: 10 }, async () => {
      attempts++;
      throw new Error("boom");
    });
    const running = await run(op, cluster, { namespaces: [ns] });
    try {
      await machines(ns).create(
        Machine.make({ metadata: { name: "m", namespace: ns }, spec: { switchPosition: "up" } }),
      );
      await waitUntil(async () => (await eventsFor(cluster, ns, "m")).some((e) => e.reason === "HandlerFailed"), {
        what: "the final failure",
      });
      const failed = (await eventsFor(cluster, ns, "m")).find((e) => e.reason === "HandlerFailed");
      expect(failed?.message).toBe("Handler 'flaky' has exhausted its retries: boom");
      await new Promise((r) => setTimeout(r, 300));
      expect(attempts).toBe(3);
    } finally {
      await running.stop();
    }
  });

  it("fails a handler for good when its next retry would exceed its timeout", async () => {
    const ns = await namespace(cluster, "timeout");
    const op = operator({ name: "impatient" });
    let attempts = 0;
    op.on.create(Machine, { id: "slow", timeout: 250 }, async () => {
      attempts++;
      throw new TemporaryError("still provisioning", { delay: 100 });
    });
    const running = await run(op, cluster, { namespaces: [ns] });
    try {
      await machines(ns).create(
        Machine.make({ metadata: { name: "m", namespace: ns }, spec: { switchPosition: "up" } }),
      );
      const failed = await waitUntil(
        async () => (await eventsFor(cluster, ns, "m")).find((e) => e.reason === "HandlerFailed"),
        { what: "the timeout" },
      );
      expect(failed.message).toBe("Handler 'slow' would exceed its timeout of 250 ms: still provisioning");
      // Attempts at ~0, ~100 ms; the one at ~200 ms would retry at ~300 ms > 250 ms: final.
      expect(attempts).toBeGreaterThanOrEqual(2);
      expect(attempts).toBeLessThanOrEqual(3);
      await new Promise((r) => setTimeout(r, 300));
      const settled = attempts;
      await new Promise((r) => setTimeout(r, 200));
      expect(attempts).toBe(settled);
    } finally {
      await running.stop();
    }
  });

  it("keeps the finalizer while a delete handler fails temporarily and releases the object once it succeeds", async () => {
    const ns = await namespace(cluster, "delete-retry");
    const op = operator({ name: "careful" });
    let attempts = 0;
    op.on.delete(Machine, async function release() {
      attempts++;
      if (attempts < 3) throw new TemporaryError("bucket still has objects", { delay: 30 });
    });
    const running = await run(op, cluster, { namespaces: [ns] });
    try {
      await machines(ns).create(
        Machine.make({ metadata: { name: "m", namespace: ns }, spec: { switchPosition: "up" } }),
      );
      await waitUntil(async () => (await machines(ns).get("m")).metadata.finalizers?.length === 1, {
        what: "the finalizer",
      });
      await machines(ns).delete("m");
      await waitUntil(
        async () => {
          try {
            await machines(ns).get("m");
            return false;
          } catch (err) {
            return isNotFound(err);
          }
        },
        { what: "the object to go" },
      );
      expect(attempts).toBe(3);
    } finally {
      await running.stop();
    }
  });

  it("keeps the finalizer after a delete handler failed permanently, so the cleanup is never skipped silently", async () => {
    const ns = await namespace(cluster, "delete-permanent");
    const op = operator({ name: "stubborn" });
    let attempts = 0;
    op.on.delete(Machine, async function release() {
      attempts++;
      throw new PermanentError("cannot reach the bucket's account");
    });
    const running = await run(op, cluster, { namespaces: [ns] });
    try {
      await machines(ns).create(
        Machine.make({ metadata: { name: "m", namespace: ns }, spec: { switchPosition: "up" } }),
      );
      await waitUntil(async () => (await machines(ns).get("m")).metadata.finalizers?.length === 1, {
        what: "the finalizer",
      });
      await machines(ns).delete("m");
      const record = await waitUntil(() => progress(ns, "m", "stubborn", "release"), {
        what: "the failure record",
      });
      expect(record).toMatchObject({ purpose: "delete", failure: true, message: "cannot reach the bucket's account" });
      await new Promise((r) => setTimeout(r, 300));
      const m = await machines(ns).get("m");
      expect(m.metadata.finalizers).toEqual(["stubborn.capstan.dev/finalizer"]);
      expect(attempts).toBe(1);
    } finally {
      await running.stop();
      await machines(ns).patch("m", { metadata: { finalizers: null } }, { type: "merge" });
    }
  });
});
