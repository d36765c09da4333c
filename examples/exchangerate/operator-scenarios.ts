/**
 * The exchange-rates operator's end-to-end scenarios, shared by operator.test.ts (one replica)
 * and operator.sharded.test.ts (three sharded replicas): the same assertions, whoever runs the
 * operator. The seed's scenario (a ConfigMap with the rate appears, follows currency changes, is
 * refreshed by the timer and goes with its owner) and failures (retries with backoff and Warning
 * Events, never a crash).
 */
import { isInvalid } from "capstan";
import { ConfigMap, CustomResourceDefinition, Event } from "capstan/core";
import type { TestCluster } from "capstan-dev/testing";
import { beforeAll, expect, it, vi } from "vitest";
import { CURRENCIES, ExchangeRate } from "./operator.ts";
import { type RatesServer, SAMPLE_RATES } from "./rates-server.ts";

/** Settings of the operator under these scenarios: short intervals so refreshes and retries happen within the test. */
export const SCENARIO_SETTINGS = { refreshInterval: "1s", retryBackoff: "100ms" } as const;

export const NS = "default";

export function exchangeRate(name: string, currency: (typeof CURRENCIES)[number]) {
  return ExchangeRate.make({ metadata: { name, namespace: NS }, spec: { currency } });
}

/** Events about one object with one reason, as the API server has them now. */
async function eventsAbout(cluster: TestCluster, name: string, reason: string) {
  const list = await cluster.client.resource(Event, NS).list();
  return list.items.filter((e) => e.involvedObject?.name === name && e.reason === reason);
}

/** Waits until an Event about `name` with `reason` exists (Events have generated names: no waitFor by key). */
async function waitForEvent(cluster: TestCluster, name: string, reason: string) {
  return vi.waitFor(
    async () => {
      const found = await eventsAbout(cluster, name, reason);
      if (found.length === 0) throw new Error(`no ${reason} Event about ${name} yet`);
      return found;
    },
    { timeout: 10_000, interval: 50 },
  );
}

function requestsFor(rates: RatesServer, currency: string) {
  return rates.requests.filter((r) => r.to === currency);
}

/**
 * Declares the scenarios as tests, against the cluster and rates server `getEnv` returns once the
 * caller's `beforeAll` started them and the operator (with {@link SCENARIO_SETTINGS} and the rates
 * server's URL); call inside a `describe`.
 */
export function exchangeRateScenarios(getEnv: () => { cluster: TestCluster; rates: RatesServer }): void {
  let cluster: TestCluster;
  let rates: RatesServer;
  beforeAll(() => {
    ({ cluster, rates } = getEnv());
  });

  it("registers the ExchangeRate CRD at start-up with the seed's currency enum and short name er", async () => {
    const crd = await cluster.client
      .resource(CustomResourceDefinition)
      .get("exchangerates.operators.brennerm.github.io");
    expect(crd.spec.names.shortNames).toEqual(["er"]);
    const currency = crd.spec.versions[0]?.schema?.openAPIV3Schema?.properties?.spec?.properties?.currency;
    expect(currency?.enum).toEqual([...CURRENCIES]);
    expect(crd.spec.versions[0]?.subresources?.status).toEqual({});
  });

  it("refuses a currency outside the enum", async () => {
    const bad = ExchangeRate.make({ metadata: { name: "eur", namespace: NS }, spec: { currency: "EUR" as "USD" } });
    const err = await cluster.client
      .resource(ExchangeRate)
      .create(bad)
      .catch((e: unknown) => e);
    expect(isInvalid(err)).toBe(true);
    expect(String(err)).toContain("spec.currency");
  });

  it("publishes the rate in a ConfigMap owned by the ExchangeRate and in its status", async () => {
    const er = await cluster.client.resource(ExchangeRate).create(exchangeRate("usd", "USD"));
    const cm = await cluster.waitFor(ConfigMap, `${NS}/usd`, (c) => c.data?.rate !== undefined, { timeout: "10s" });
    expect(cm.data).toEqual({ currency: "USD", base: "EUR", rate: String(SAMPLE_RATES.USD) });
    expect(cm.metadata?.ownerReferences).toEqual([
      expect.objectContaining({ kind: "ExchangeRate", name: "usd", uid: er.metadata.uid, controller: true }),
    ]);
    const withStatus = await cluster.waitFor(ExchangeRate, `${NS}/usd`, (o) => o.status?.rate !== undefined);
    expect(withStatus.status).toMatchObject({ currency: "USD", base: "EUR", rate: SAMPLE_RATES.USD });
    expect(Number.isNaN(Date.parse(withStatus.status?.fetchedAt ?? ""))).toBe(false);
    const published = await waitForEvent(cluster, "usd", "RatePublished");
    expect(published[0]?.type).toBe("Normal");
    expect(published[0]?.message).toBe(`USD is ${SAMPLE_RATES.USD} per EUR`);
  });

  it("updates the ConfigMap and the status when the currency changes", async () => {
    await cluster.client.resource(ExchangeRate).create(exchangeRate("pounds", "USD"));
    await cluster.waitFor(ConfigMap, `${NS}/pounds`, (c) => c.data?.currency === "USD", { timeout: "10s" });
    await cluster.client
      .resource(ExchangeRate)
      .patch("pounds", { spec: { currency: "GBP" } }, { type: "merge", namespace: NS });
    const cm = await cluster.waitFor(ConfigMap, `${NS}/pounds`, (c) => c.data?.currency === "GBP", { timeout: "10s" });
    expect(cm.data?.rate).toBe(String(SAMPLE_RATES.GBP));
    const er = await cluster.waitFor(ExchangeRate, `${NS}/pounds`, (o) => o.status?.currency === "GBP");
    expect(er.status?.rate).toBe(SAMPLE_RATES.GBP);
  });

  it("garbage-collects the ConfigMap with its ExchangeRate", async () => {
    await cluster.client.resource(ExchangeRate).create(exchangeRate("short-lived", "CAD"));
    await cluster.waitFor(ConfigMap, `${NS}/short-lived`, (c) => c.data?.rate !== undefined, { timeout: "10s" });
    await cluster.client.resource(ExchangeRate).delete("short-lived", { namespace: NS });
    // On a real cluster its garbage collector may first have to learn the ExchangeRate kind.
    await cluster.waitForDeletion(ConfigMap, `${NS}/short-lived`, { timeout: cluster.timeouts.garbageCollection });
  });

  it("refreshes the rate on its timer", async () => {
    await cluster.client.resource(ExchangeRate).create(exchangeRate("francs", "CHF"));
    const first = await cluster.waitFor(ExchangeRate, `${NS}/francs`, (o) => o.status?.rate === SAMPLE_RATES.CHF, {
      timeout: "10s",
    });
    rates.setRate("CHF", 0.95);
    await cluster.waitFor(ConfigMap, `${NS}/francs`, (c) => c.data?.rate === "0.95", { timeout: "10s" });
    const refreshed = await cluster.waitFor(ExchangeRate, `${NS}/francs`, (o) => o.status?.rate === 0.95);
    expect(Date.parse(refreshed.status?.fetchedAt ?? "")).toBeGreaterThan(Date.parse(first.status?.fetchedAt ?? ""));
  });

  it("retries a failed fetch with backoff, posting a Warning Event, and publishes once the server recovers", async () => {
    rates.fail("JPY", 503);
    await cluster.client.resource(ExchangeRate).create(exchangeRate("yen", "JPY"));
    const warnings = await waitForEvent(cluster, "yen", "HandlerRetrying");
    expect(warnings[0]?.type).toBe("Warning");
    expect(warnings[0]?.message).toContain("fetching the JPY rate from");
    expect(warnings[0]?.message).toContain("HTTP 503");
    // It keeps trying (the Warning Event is correlated: one object whose count grows).
    await vi.waitFor(() => expect(requestsFor(rates, "JPY").length).toBeGreaterThanOrEqual(3), { timeout: 10_000 });
    const cms = await cluster.client.resource(ConfigMap, NS).list();
    expect(cms.items.some((c) => c.metadata?.name === "yen")).toBe(false);

    rates.recover("JPY");
    const cm = await cluster.waitFor(ConfigMap, `${NS}/yen`, (c) => c.data?.rate !== undefined, { timeout: "20s" });
    expect(cm.data?.rate).toBe(String(SAMPLE_RATES.JPY));
    const statuses = requestsFor(rates, "JPY").map((r) => r.status);
    expect(statuses.at(-1)).toBe(200);
    expect(statuses.slice(0, -1).every((s) => s === 503)).toBe(true);
  });

  it("keeps the last rate when a refresh fails, posts a Warning, and refreshes again after", async () => {
    await cluster.client.resource(ExchangeRate).create(exchangeRate("zloty", "PLN"));
    await cluster.waitFor(ExchangeRate, `${NS}/zloty`, (o) => o.status?.rate === SAMPLE_RATES.PLN, { timeout: "10s" });
    rates.fail("PLN", 500);
    const warnings = await waitForEvent(cluster, "zloty", "TimerFailed");
    expect(warnings[0]?.type).toBe("Warning");
    expect(warnings[0]?.message).toContain("HTTP 500");
    const cm = await cluster.client.resource(ConfigMap).get("zloty", { namespace: NS });
    expect(cm.data?.rate).toBe(String(SAMPLE_RATES.PLN));

    rates.setRate("PLN", 4.4);
    rates.recover("PLN");
    await cluster.waitFor(ConfigMap, `${NS}/zloty`, (c) => c.data?.rate === "4.4", { timeout: "10s" });
  });
}
