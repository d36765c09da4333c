import { startTestCluster } from "capstan-dev/testing";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { loadClientConfig } from "../../packages/capstan/src/client/config.ts";
import { isAlreadyExists } from "../../packages/capstan/src/client/errors.ts";
import { Manager } from "../../packages/capstan/src/runtime/manager.ts";
import { isDeleted } from "../../packages/capstan/src/runtime/reconcile.ts";
import type { RequestContext, Stage } from "../../packages/capstan-dev/src/devcluster/request/pipeline.ts";
import { fileFixture } from "../support/file-fixture.ts";
import { ConfigMap, type ConfigMapObject, Widget, widgetCrd } from "./support/widget.ts";

/** Only requests with this user agent get faults: the test's own calls stay reliable. */
const UNDER_TEST = "capstan-under-test";

/** A small seeded PRNG (mulberry32), so a failing run can be replayed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface FaultCounts {
  failed: number;
  expired: number;
  dropped: number;
}

/**
 * A pipeline stage in front of the handler, standing in for devcluster part 2's fault injection:
 * 10% of ordinary requests fail with 500 or 429 before reaching the handler, 20% of watches get an
 * immediate 410 ERROR event, and every other watch has its connection cut after 300 ms.
 */
function faultStage(random: () => number, counts: FaultCounts): Stage {
  return async (ctx: RequestContext, next) => {
    if (ctx.req.headers["user-agent"] !== UNDER_TEST) return next();
    const watch = ctx.url.searchParams.get("watch") === "true";
    if (watch) {
      if (random() < 0.2) {
        counts.expired++;
        ctx.res.writeHead(200, { "Content-Type": "application/json" });
        ctx.res.end(
          `${JSON.stringify({
            type: "ERROR",
            object: {
              kind: "Status",
              apiVersion: "v1",
              metadata: {},
              status: "Failure",
              message: "too old resource version",
              reason: "Expired",
              code: 410,
            },
          })}\n`,
        );
        return;
      }
      // Cut the connection, as a network failure or a restarting server would.
      const timer = setTimeout(() => {
        counts.dropped++;
        ctx.res.destroy();
      }, 300);
      ctx.res.on("close", () => clearTimeout(timer));
      return next();
    }
    if (random() < 0.1) {
      counts.failed++;
      const code = random() < 0.5 ? 500 : 429;
      const body = JSON.stringify({
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: code === 500 ? "injected failure" : "injected throttling",
        reason: code === 500 ? "InternalError" : "TooManyRequests",
        code,
      });
      ctx.res.writeHead(code, { "Content-Type": "application/json", ...(code === 429 ? { "Retry-After": "0" } : {}) });
      ctx.res.end(body);
      return;
    }
    return next();
  };
}

const cluster = fileFixture(() => startTestCluster({ crds: [widgetCrd()] }));

describe("a controller under injected faults", () => {
  it("reconciles every object despite failing requests, dropped watches and 410s, never one key twice at once", async () => {
    const counts: FaultCounts = { failed: 0, expired: 0, dropped: 0 };
    const stages = cluster.server.internals.stages;
    const stage = faultStage(prng(42), counts);
    stages.splice(stages.length - 1, 0, stage);
    // No client retries: every fault reaches the informers and the reconcile, which must cope.
    const mgr = new Manager({
      config: loadClientConfig({ kubeconfig: cluster.kubeconfigPath }),
      clientOptions: { retry: false, userAgent: UNDER_TEST },
      name: "faulty",
      namespace: "default",
      logger: pino({ level: "silent" }),
      informerDefaults: { backoff: { initial: 10, max: 100 } },
    });
    const active = new Set<string>();
    let overlaps = 0;
    let errors = 0;
    mgr
      .controller(Widget)
      .owns(ConfigMap)
      .withOptions({ maxConcurrentReconciles: 4 })
      .reconcile(async (target, ctx) => {
        const key = ctx.key.name;
        if (active.has(key)) overlaps++;
        active.add(key);
        try {
          if (isDeleted(target)) return;
          const name = `${key}-config`;
          if (ctx.cache(ConfigMap).get(`default/${name}`) === undefined) {
            await ctx.client
              .resource(ConfigMap, "default")
              .create(ctx.adopt<ConfigMapObject>({ metadata: { name }, data: { size: String(target.spec.size) } }))
              .catch((err: unknown) => {
                if (!isAlreadyExists(err)) throw err;
              });
          }
          if (target.status?.observedSize !== target.spec.size)
            await ctx.patchStatus({ observedSize: target.spec.size });
        } catch (err) {
          errors++;
          throw err;
        } finally {
          active.delete(key);
        }
      });
    const run = mgr.start();
    try {
      const widgets = cluster.client.resource(Widget, "default");
      const sizeOf = (name: string) => Number(name.slice(1));
      const createAll = async (names: string[]) => {
        for (const name of names) await widgets.create({ metadata: { name }, spec: { size: sizeOf(name) } } as Widget);
      };
      const reconciled = async (names: string[]) => {
        const deadline = Date.now() + 30_000;
        for (;;) {
          const list = await widgets.list();
          const cms = await cluster.client.resource(ConfigMap, "default").list();
          const haveCm = new Set(cms.items.map((c) => c.metadata?.name));
          const pending = names.filter((name) => {
            const w = list.items.find((x) => x.metadata?.name === name);
            return w?.status?.observedSize !== sizeOf(name) || !haveCm.has(`${name}-config`);
          });
          if (pending.length === 0) return;
          if (Date.now() > deadline)
            throw new Error(`not reconciled: ${pending.join(", ")}; faults ${JSON.stringify(counts)}`);
          await new Promise((r) => setTimeout(r, 100));
        }
      };
      const first = Array.from({ length: 30 }, (_, i) => `f${i}`);
      await createAll(first);
      await reconciled(first);
      // On a quiet machine the first wave can finish before any watch is cut (every 300 ms): wait for a
      // watch fault, then prove that what changes after it is still seen and reconciled.
      const deadline = Date.now() + 10_000;
      while (counts.expired + counts.dropped === 0 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      const second = Array.from({ length: 10 }, (_, i) => `f${100 + i}`);
      await createAll(second);
      await reconciled([...first, ...second]);
      expect(overlaps).toBe(0);
      // The faults really happened, and reached the reconcile function.
      expect(counts.failed).toBeGreaterThan(0);
      expect(counts.expired + counts.dropped).toBeGreaterThan(0);
      expect(errors).toBeGreaterThan(0);
    } finally {
      await mgr.stop();
      await run;
      stages.splice(stages.indexOf(stage), 1);
    }
  });
});
