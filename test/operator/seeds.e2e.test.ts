/**
 * The seed operators (Kopf tutorials: ExchangeRate, ImmortalContainer, Guitar; the useless
 * Machine is in handlers.e2e.test.ts) written with Capstan's API, run on the embedded API server.
 * The operator registers their CRDs itself at start-up.
 */

import { startTestCluster, waitUntil } from "capstan-dev/testing";
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { isAlreadyExists } from "../../packages/capstan/src/client/errors.ts";
import { operator } from "../../packages/capstan/src/operator/index.ts";
import { ConfigMap, Pod } from "../../packages/capstan/src/resources/builtins.ts";
import { defineResource } from "../../packages/capstan/src/resources/define-resource.ts";
import { isDeleted } from "../../packages/capstan/src/runtime/reconcile.ts";
import { fileFixture } from "../support/file-fixture.ts";
import { machineCrd, namespace, run } from "./support/cluster.ts";

const cluster = fileFixture(() => startTestCluster({ crds: [machineCrd] }));

const ExchangeRate = defineResource({
  group: "operators.capstan.test",
  version: "v1",
  kind: "ExchangeRate",
  scope: "Namespaced",
  shortNames: ["er"],
  spec: Type.Object({ currency: Type.Enum(["CAD", "CHF", "USD"]) }),
  status: Type.Object({ rate: Type.Optional(Type.Number()) }, { additionalProperties: true }),
});

const ImmortalContainer = defineResource({
  group: "immortal.capstan.test",
  version: "v1alpha1",
  kind: "ImmortalContainer",
  scope: "Namespaced",
  spec: Type.Object({ image: Type.String() }),
  status: Type.Object({ currentPod: Type.Optional(Type.String()) }),
});

const Guitar = defineResource({
  group: "kool.capstan.test",
  version: "v1",
  kind: "Guitar",
  scope: "Namespaced",
  spec: Type.Object({ brand: Type.String(), review: Type.Optional(Type.Boolean()) }),
  status: Type.Object({ comment: Type.Optional(Type.String()) }, { additionalProperties: true }),
});

describe("the seed operators", () => {
  it("ExchangeRate: a ConfigMap per rate on create, refreshed by a timer, rebuilt when the currency changes", async () => {
    const ns = await namespace(cluster, "exchange");
    const rates: Record<string, number> = { CAD: 0.7, CHF: 1.1, USD: 1 };
    let fetches = 0;
    const fetchRate = async (currency: string) => {
      fetches++;
      return (rates[currency] ?? 0) + fetches / 1000;
    };
    const op = operator({ name: "exchangerates" });
    op.on.create(ExchangeRate, async function publish({ spec, adopt, api, patch }) {
      const rate = await fetchRate(spec.currency);
      try {
        await api.resource(ConfigMap).create(adopt(ConfigMap.make({ data: { rate: String(rate) } })));
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
      }
      patch.status.rate = rate;
    });
    const refresh = async (name: string, currency: string) => {
      const rate = await fetchRate(currency);
      await cluster.client.resource(ConfigMap, ns).patch(name, { data: { rate: String(rate) } }, { type: "merge" });
      return rate;
    };
    op.on.field(
      ExchangeRate,
      "spec.currency",
      { id: "currency-changed" },
      async ({ name, new: currency, cause, patch }) => {
        if (cause === "update") patch.status.rate = await refresh(name, String(currency));
      },
    );
    op.timer(ExchangeRate, { interval: 50, initialDelay: 100 }, async ({ name, spec, patch }) => {
      patch.status.rate = await refresh(name, spec.currency);
    });
    const running = await run(op, cluster, { namespaces: [ns] });
    try {
      await cluster.client
        .resource(ExchangeRate, ns)
        .create(ExchangeRate.make({ metadata: { name: "usd", namespace: ns }, spec: { currency: "USD" } }));
      const cm = await waitUntil(() => cluster.client.resource(ConfigMap, ns).get("usd"), {
        what: "the rate ConfigMap",
      });
      expect(Number(cm.data?.rate)).toBeGreaterThanOrEqual(1);
      const first = Number(cm.data?.rate);
      await waitUntil(
        async () => Number((await cluster.client.resource(ConfigMap, ns).get("usd")).data?.rate) > first + 0.002,
        { what: "timer refreshes" },
      );
      await cluster.client.resource(ExchangeRate, ns).patch("usd", { spec: { currency: "CAD" } }, { type: "merge" });
      await waitUntil(async () => Number((await cluster.client.resource(ConfigMap, ns).get("usd")).data?.rate) < 1, {
        what: "the CAD rate",
      });
    } finally {
      await running.stop();
    }
  });

  it("ImmortalContainer: a level-triggered controller next to handlers recreates its Pod whenever it is deleted", async () => {
    const ns = await namespace(cluster, "immortal");
    const op = operator({ name: "immortal" });
    const created: string[] = [];
    op.on.create(ImmortalContainer, async function announce({ name, event }) {
      created.push(name);
      event("Normal", "Accepted", `will keep a pod running for ${name}`);
    });
    op.controller(ImmortalContainer)
      .owns(Pod)
      .reconcile(async (target, ctx) => {
        if (isDeleted(target)) return undefined; // the Pod goes with its owner
        const name = `${target.metadata.name}-immortalpod`;
        if (ctx.cache(Pod).get(`${ctx.key.namespace}/${name}`) === undefined) {
          const pod = ctx.adopt(
            Pod.make({ metadata: { name }, spec: { containers: [{ name: "acontainer", image: target.spec.image }] } }),
          );
          try {
            await ctx.client.resource(Pod).create(pod);
          } catch (err) {
            if (!isAlreadyExists(err)) throw err;
          }
        }
        if (target.status?.currentPod !== name) await ctx.patchStatus({ currentPod: name });
        return undefined;
      });
    const running = await run(op, cluster, { namespaces: [ns] });
    try {
      await cluster.client
        .resource(ImmortalContainer, ns)
        .create(ImmortalContainer.make({ metadata: { name: "web", namespace: ns }, spec: { image: "nginx" } }));
      const pods = cluster.client.resource(Pod, ns);
      const first = await waitUntil(() => pods.get("web-immortalpod"), { what: "the pod" });
      await pods.delete("web-immortalpod", { gracePeriodSeconds: 0 });
      const second = await waitUntil(
        async () => {
          const p = await pods.get("web-immortalpod");
          return p.metadata?.uid !== first.metadata?.uid ? p : undefined;
        },
        { what: "a new pod" },
      );
      expect(second.metadata?.ownerReferences?.[0]?.kind).toBe("ImmortalContainer");
      expect(created).toEqual(["web"]);
    } finally {
      await running.stop();
    }
  });

  it("Guitar: reviews each new guitar by patching its spec and status, once", async () => {
    const ns = await namespace(cluster, "guitars");
    const op = operator({ name: "guitarcenter" });
    let reviews = 0;
    op.on.create(Guitar, { when: (g) => g.spec.review !== true }, async function review({ spec, patch }) {
      reviews++;
      patch.spec.review = true;
      patch.status.comment = spec.brand === "fender" ? "Great guitar" : "Not my taste";
    });
    const running = await run(op, cluster, { namespaces: [ns] });
    try {
      await cluster.client
        .resource(Guitar, ns)
        .create(Guitar.make({ metadata: { name: "strato", namespace: ns }, spec: { brand: "fender", review: false } }));
      const reviewed = await waitUntil(
        async () => {
          const g = await cluster.client.resource(Guitar, ns).get("strato");
          // Status is written first, then the object (spec and the progress bookkeeping).
          return g.status?.comment && g.spec.review ? g : undefined;
        },
        { what: "the review" },
      );
      expect(reviewed.spec.review).toBe(true);
      expect(reviewed.status?.comment).toBe("Great guitar");
      await new Promise((r) => setTimeout(r, 300));
      expect(reviews).toBe(1);
    } finally {
      await running.stop();
    }
  });
});
