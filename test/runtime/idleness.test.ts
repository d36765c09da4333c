import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { Idleness, NotIdleError } from "../../packages/capstan/src/runtime/idleness.ts";
import { trackRuntimeTimers } from "./support/fake-lister-watcher.ts";

describe("Idleness", () => {
  it("resolves whenIdle at once when every check answers nothing and no work is in flight", async () => {
    const idleness = new Idleness();
    idleness.add("queue", () => undefined);
    await idleness.whenIdle();
    expect(idleness.busy()).toEqual([]);
  });

  it("waits for a busy check until it reports idle and calls changed()", async () => {
    const idleness = new Idleness();
    let queued = 2;
    idleness.add("queue", () => (queued > 0 ? `${queued} queued` : undefined));
    let idle = false;
    const waiting = idleness.whenIdle().then(() => {
      idle = true;
    });
    expect(idleness.busy()).toEqual(["queue: 2 queued"]);
    queued = 1;
    idleness.changed();
    await new Promise((r) => setImmediate(r));
    expect(idle).toBe(false);
    queued = 0;
    idleness.changed();
    await waiting;
    expect(idle).toBe(true);
  });

  it("counts work in flight from begin() until its end(), once however often end() is called", async () => {
    const idleness = new Idleness();
    const end = idleness.begin("lease renewal");
    expect(idleness.busy()).toEqual(["lease renewal"]);
    const waiting = idleness.whenIdle();
    end();
    end();
    await waiting;
    expect(idleness.busy()).toEqual([]);
  });

  it("rejects after its timeout with a NotIdleError naming what was busy, leaving no timer or listener", async () => {
    const timers = trackRuntimeTimers();
    try {
      const idleness = new Idleness();
      idleness.add("daemons", () => "monitor of default/m at work");
      const abort = new AbortController();
      const error = await idleness.whenIdle({ timeout: 20, signal: abort.signal }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(NotIdleError);
      expect((error as NotIdleError).busy).toEqual(["daemons: monitor of default/m at work"]);
      expect((error as Error).message).toContain("monitor of default/m at work");
      expect(getEventListeners(abort.signal, "abort")).toHaveLength(0);
      expect(await timers.pending()).toBe(0);
    } finally {
      timers.stop();
    }
  });

  it("rejects with the signal's reason when it aborts", async () => {
    const idleness = new Idleness();
    idleness.add("queue", () => "busy");
    const abort = new AbortController();
    const waiting = idleness.whenIdle({ signal: abort.signal });
    abort.abort(new Error("test over"));
    await expect(waiting).rejects.toThrow("test over");
  });
});
