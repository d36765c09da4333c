/**
 * The exchange-rates operator run as three sharded replicas (docs/runtime.md, "Sharding"): the
 * scenarios of operator-scenarios.ts unchanged, then a replica stopped while its ExchangeRates
 * have work to do, which the other two take over, timers included.
 */
import { ConfigMap } from "capstan/core";
import { type ShardedRun, startTestCluster, type TestCluster } from "capstan-dev/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CURRENCIES, ExchangeRate, exchangeRateOperator } from "./operator.ts";
import { exchangeRate, exchangeRateScenarios, NS, SCENARIO_SETTINGS } from "./operator-scenarios.ts";
import { type RatesServer, startRatesServer } from "./rates-server.ts";

/** A hand-over waits for a drain or a coordinator's election on a loaded machine: more than a plain wait. */
const HANDOVER_TIMEOUT = "30s";

describe("exchange-rates operator, three sharded replicas", () => {
  let cluster: TestCluster;
  let rates: RatesServer;
  let sharded: ShardedRun;

  beforeAll(async () => {
    rates = await startRatesServer();
    cluster = await startTestCluster();
    sharded = await cluster.runSharded(() => exchangeRateOperator({ ratesUrl: rates.url, ...SCENARIO_SETTINGS }), {
      replicas: 3,
    });
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
    await rates?.stop();
  });

  exchangeRateScenarios(() => ({ cluster, rates }));

  it("moves a stopped replica's ExchangeRates to the others, which publish their changes and run their timers", async () => {
    const rateObjects = cluster.client.resource(ExchangeRate, NS);
    const names = Array.from({ length: 9 }, (_, i) => `h-${i}`);
    for (const [i, name] of names.entries()) {
      await rateObjects.create(exchangeRate(name, CURRENCIES[i % CURRENCIES.length] as (typeof CURRENCIES)[number]));
    }
    for (const name of names) {
      await cluster.waitFor(ConfigMap, `${NS}/${name}`, (c) => c.data?.rate !== undefined, { timeout: "10s" });
    }
    const holders = new Map<string, string>();
    for (const er of (await rateObjects.list()).items.filter((e) => names.includes(e.metadata.name as string))) {
      const replica = sharded.replicaOf(er);
      expect(replica, `ExchangeRate ${er.metadata.name} assigned`).toBeDefined();
      holders.set(er.metadata.name as string, replica?.member as string);
    }
    expect(new Set(holders.values()).size).toBeGreaterThan(1);

    // One replica stops, then its ExchangeRates change currency: only the others can publish that.
    const leaving = sharded.replicas.find((r) => r.member === holders.get("h-0"));
    const theirs = names.filter((n) => holders.get(n) === leaving?.member);
    await leaving?.stop();
    const wanted = new Map<string, (typeof CURRENCIES)[number]>();
    for (const name of theirs) {
      const current = (await rateObjects.get(name)).spec.currency;
      const next = current === "CAD" ? "USD" : "CAD";
      wanted.set(name, next);
      await rateObjects.patch(name, { spec: { currency: next } }, { type: "merge" });
    }

    // The others publish them, each ExchangeRate now on a running replica.
    const onLiveReplica = (er: Parameters<ShardedRun["replicaOf"]>[0]) =>
      sharded.running().some((r) => r === sharded.replicaOf(er));
    for (const name of theirs) {
      await cluster.waitFor(ConfigMap, `${NS}/${name}`, (c) => c.data?.currency === wanted.get(name), {
        timeout: HANDOVER_TIMEOUT,
      });
      await cluster.waitFor(ExchangeRate, `${NS}/${name}`, onLiveReplica, { timeout: HANDOVER_TIMEOUT });
    }
    // The rest stayed where they were: only the leaving replica's objects moved.
    for (const er of (await rateObjects.list()).items) {
      const name = er.metadata.name as string;
      if (names.includes(name) && !theirs.includes(name)) expect(sharded.replicaOf(er)?.member).toBe(holders.get(name));
    }

    // Their refresh timers run on their new replicas: a new rate reaches their ConfigMaps.
    const moved = theirs[0] as string;
    const currency = wanted.get(moved) as string;
    rates.setRate(currency, 2.5);
    await cluster.waitFor(ConfigMap, `${NS}/${moved}`, (c) => c.data?.rate === "2.5", { timeout: HANDOVER_TIMEOUT });
  }, 90_000);
});
