import { startTestCluster, waitUntil } from "capstan-dev/testing";
import { describe, expect, it } from "vitest";
import { operator, PermanentError } from "../../packages/capstan/src/operator/index.ts";
import { Event, Namespace } from "../../packages/capstan/src/resources/builtins.ts";
import { TerminalError } from "../../packages/capstan/src/runtime/reconcile.ts";
import { fileFixture } from "../support/file-fixture.ts";
import { Machine, machineCrd } from "./support/cluster.ts";

const cluster = fileFixture(() => startTestCluster({ crds: [machineCrd] }));

const machines = (ns: string) => cluster.client.resource(Machine, ns);
const eventsFor = async (ns: string, name: string) =>
  (await cluster.client.resource(Event, ns).list()).items.filter((e) => e.involvedObject?.name === name);

describe("one 'do not retry' error for both styles", () => {
  it("fails a handler for good, once, whether it throws the runtime's TerminalError or Kopf's PermanentError", async () => {
    const ns = "terminal";
    await cluster.client.resource(Namespace).create(Namespace.make({ metadata: { name: ns } }));
    const op = operator({ name: "terminal" });
    const attempts = { terminal: 0, permanent: 0 };
    op.on.create(Machine, { id: "terminal", backoff: 10 }, async () => {
      attempts.terminal++;
      throw new TerminalError("spec.switchPosition must be up or down");
    });
    op.on.create(Machine, { id: "permanent", backoff: 10 }, async () => {
      attempts.permanent++;
      throw new PermanentError("spec.size must be positive");
    });
    const running = await cluster.run(op, { namespaces: [ns] });
    try {
      await machines(ns).create(
        Machine.make({ metadata: { name: "m", namespace: ns }, spec: { switchPosition: "sideways" } }),
      );
      await waitUntil(async () => (await eventsFor(ns, "m")).filter((e) => e.reason === "HandlerFailed").length === 2, {
        what: "both handlers to fail",
      });
      const events = await eventsFor(ns, "m");
      expect(events.map((e) => [e.type, e.reason, e.message])).toEqual(
        expect.arrayContaining([
          ["Warning", "HandlerFailed", "Handler 'terminal' failed permanently: spec.switchPosition must be up or down"],
          ["Warning", "HandlerFailed", "Handler 'permanent' failed permanently: spec.size must be positive"],
        ]),
      );
      // A retry (10 ms backoff) would have come by now.
      await new Promise((r) => setTimeout(r, 300));
      expect(attempts).toEqual({ terminal: 1, permanent: 1 });
      expect((await eventsFor(ns, "m")).some((e) => e.reason === "HandlerRetrying")).toBe(false);
    } finally {
      await running.stop();
    }
  });

  it("ends a daemon for good, without a restart, when it throws the runtime's TerminalError", async () => {
    const ns = "terminal-daemon";
    await cluster.client.resource(Namespace).create(Namespace.make({ metadata: { name: ns } }));
    const op = operator({ name: "terminal-daemon" });
    let runs = 0;
    op.daemon(Machine, { id: "watcher", backoff: 10 }, async () => {
      runs++;
      throw new TerminalError("nothing to watch");
    });
    const running = await cluster.run(op, { namespaces: [ns] });
    try {
      await machines(ns).create(
        Machine.make({ metadata: { name: "m", namespace: ns }, spec: { switchPosition: "up" } }),
      );
      await waitUntil(async () => (await eventsFor(ns, "m")).some((e) => e.reason === "DaemonFailed"), {
        what: "the daemon to fail",
      });
      const failed = (await eventsFor(ns, "m")).find((e) => e.reason === "DaemonFailed");
      expect(failed?.message).toBe("Daemon 'watcher' failed permanently: nothing to watch");
      // A restart (10 ms backoff) would have come by now.
      await new Promise((r) => setTimeout(r, 300));
      expect(runs).toBe(1);
    } finally {
      await running.stop();
    }
  });

  it("a PermanentError is a TerminalError, so code that checks for the runtime's name sees the Kopf one", () => {
    const err = new PermanentError("no", { cause: "why" });
    expect(err).toBeInstanceOf(TerminalError);
    expect(err.name).toBe("PermanentError");
    expect(err.cause).toBe("why");
  });
});
