/**
 * A handler's outcome whose write fails without the operator dying (no connection to the API
 * server within the connect timeout under load, an answer lost on the way): the handler has run,
 * so its outcome is written again at the object's next visit and the handler is not run a second
 * time (docs/handlers.md, "Guarantees after a crash": only a crash re-runs a handler that succeeded).
 */
import { startTestCluster, waitUntil } from "capstan-dev/testing";
import { describe, expect, it } from "vitest";
import type { KubeClient } from "../../packages/capstan/src/client/kube-client.ts";
import type { RequestOptions } from "../../packages/capstan/src/client/options.ts";
import { RequestError } from "../../packages/capstan/src/client/request-error.ts";
import { operator } from "../../packages/capstan/src/operator/index.ts";
import { fileFixture } from "../support/file-fixture.ts";
import { handlerState, Machine, machineCrd, namespace, run } from "./support/cluster.ts";

const cluster = fileFixture(() => startTestCluster({ crds: [machineCrd] }));

const machines = (ns: string) => cluster.client.resource(Machine, ns);

/**
 * A view of the test cluster's client whose first write of operator `name`'s handler state fails
 * with a network error: `before` the request is sent (nothing stored), or `after` it was answered
 * (stored, but the answer lost). Returns the client and the count of failed writes.
 */
function failingFirstStateWrite(name: string, when: "before" | "after"): { client: KubeClient; failed: () => number } {
  const client = cluster.client.withRetry({});
  const request = client.request.bind(client);
  let failed = 0;
  client.request = async <R>(method: string, path: string, opts: RequestOptions = {}): Promise<R> => {
    const state = (opts.body as { status?: { capstan?: Record<string, unknown> } } | undefined)?.status?.capstan;
    if (failed > 0 || method !== "PATCH" || state?.[name] === undefined) return request<R>(method, path, opts);
    failed++;
    if (when === "after") await request<R>(method, path, opts);
    throw new RequestError(`${method} ${path} failed: no connection within 10000 ms (injected)`, {
      method,
      path,
      server: client.config.server,
      cause: new Error("injected"),
    });
  };
  return { client, failed: () => failed };
}

describe("a handler's outcome whose write failed", () => {
  for (const when of ["before", "after"] as const) {
    it(`is written at the next visit, the handler not run again (failed ${when} the request was sent)`, async () => {
      const ns = await namespace(cluster, `outcome-${when}`);
      const op = operator({ name: "recorder" });
      const calls: string[] = [];
      op.on.create(Machine, async function first() {
        calls.push("first");
        return "one";
      });
      op.on.create(Machine, async function second() {
        calls.push("second");
      });
      const faulty = failingFirstStateWrite("recorder", when);
      const running = await run(op, cluster, { namespaces: [ns], client: faulty.client });
      try {
        await machines(ns).create(
          Machine.make({ metadata: { name: "m", namespace: ns }, spec: { switchPosition: "up" } }),
        );
        const handled = await waitUntil(
          async () => {
            const m = await machines(ns).get("m");
            return handlerState(m, "recorder")["last-handled-configuration"] !== undefined ? m : undefined;
          },
          { what: "the create to end" },
        );
        await op.whenIdle();
        expect(faulty.failed()).toBe(1);
        expect(calls).toEqual(["first", "second"]);
        // The first handler's result went with the outcome written again.
        expect((handled.status as Record<string, unknown> | undefined)?.first).toBe("one");
      } finally {
        await running.stop();
      }
    });
  }
});
