/**
 * The exchange-rates operator end to end, through the typed client, against the embedded API
 * server (or another backend) and the local rates server, with one operator: the scenarios of
 * operator-scenarios.ts, and the refresh after a restart.
 */

import { ConfigMap } from "capstan/core";
import { startTestCluster, type TestCluster } from "capstan-dev/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ExchangeRate, exchangeRateOperator, fetchRate, isStale, settingsFromEnv } from "./operator.ts";
import { exchangeRate, exchangeRateScenarios, NS, SCENARIO_SETTINGS } from "./operator-scenarios.ts";
import { type RatesServer, SAMPLE_RATES, startRatesServer } from "./rates-server.ts";

describe("exchange-rates operator", () => {
  let cluster: TestCluster;
  let rates: RatesServer;

  beforeAll(async () => {
    rates = await startRatesServer();
    cluster = await startTestCluster();
    await cluster.run(exchangeRateOperator({ ratesUrl: rates.url, ...SCENARIO_SETTINGS }));
  });
  afterAll(async () => {
    await cluster?.stop();
    await rates?.stop();
  });

  exchangeRateScenarios(() => ({ cluster, rates }));
});

describe("exchange-rates operator after a restart", () => {
  let cluster: TestCluster;
  let rates: RatesServer;
  afterEach(async () => {
    await cluster?.stop();
    await rates?.stop();
  });

  it("refreshes at once a rate fetched longer than one interval ago, not one interval later", async () => {
    rates = await startRatesServer();
    cluster = await startTestCluster();
    const settings = { ratesUrl: rates.url, refreshInterval: "1h", retryBackoff: "100ms" };
    const first = await cluster.run(exchangeRateOperator(settings));
    await cluster.client.resource(ExchangeRate).create(exchangeRate("loonie", "CAD"));
    await cluster.waitFor(ExchangeRate, `${NS}/loonie`, (o) => o.status?.rate === SAMPLE_RATES.CAD, { timeout: "10s" });
    await first.stop();

    // Two hours pass while the operator is down; the rate moves meanwhile.
    const twoHoursAgo = new Date(Date.now() - 2 * 3_600_000).toISOString();
    await cluster.client
      .resource(ExchangeRate)
      .patchStatus("loonie", { status: { fetchedAt: twoHoursAgo } }, { namespace: NS });
    rates.setRate("CAD", 1.5);

    await cluster.run(exchangeRateOperator(settings));
    await cluster.waitFor(ConfigMap, `${NS}/loonie`, (c) => c.data?.rate === "1.5", { timeout: "10s" });
  });
});

describe("fetchRate and settings", () => {
  let rates: RatesServer;
  beforeAll(async () => {
    rates = await startRatesServer({ rates: { USD: 1.25 } });
  });
  afterAll(() => rates?.stop());

  it("parses the rates API's answer", async () => {
    await expect(fetchRate(rates.url, "USD", new AbortController().signal)).resolves.toEqual({
      currency: "USD",
      base: "EUR",
      rate: 1.25,
    });
  });

  it("names the URL and the status of a failed fetch", async () => {
    await expect(fetchRate(rates.url, "JPY", new AbortController().signal)).rejects.toThrow(
      /fetching the JPY rate from http:\/\/127\.0\.0\.1:\d+\/v1\/latest\?from=EUR&to=JPY: HTTP 404/,
    );
  });

  it("names an unreachable server", async () => {
    const gone = await startRatesServer();
    const url = gone.url;
    await gone.stop();
    await expect(fetchRate(url, "USD", new AbortController().signal)).rejects.toThrow(
      /fetching the USD rate from .*ECONNREFUSED/,
    );
  });

  it("counts a rate as stale when missing, older than the interval, or for another currency", () => {
    const now = Date.parse("2026-01-02T12:00:00Z");
    const er = (status: { currency?: string; fetchedAt?: string } | undefined) =>
      ({ ...exchangeRate("x", "USD"), ...(status ? { status } : {}) }) as Parameters<typeof isStale>[0];
    const hour = 3_600_000;
    expect(isStale(er(undefined), hour, now)).toBe(true);
    expect(isStale(er({ currency: "USD", fetchedAt: "2026-01-02T11:30:00Z" }), hour, now)).toBe(false);
    expect(isStale(er({ currency: "USD", fetchedAt: "2026-01-02T10:59:59Z" }), hour, now)).toBe(true);
    expect(isStale(er({ currency: "GBP", fetchedAt: "2026-01-02T11:30:00Z" }), hour, now)).toBe(true);
  });

  it("names the environment variable of a bad setting", () => {
    expect(() => settingsFromEnv({ EXCHANGERATE_RATES_URL: "not a url" })).toThrow(/EXCHANGERATE_RATES_URL/);
    expect(() => settingsFromEnv({ EXCHANGERATE_REFRESH_INTERVAL: "soon" })).toThrow(/EXCHANGERATE_REFRESH_INTERVAL/);
    expect(() => settingsFromEnv({ EXCHANGERATE_RETRY_BACKOFF: "0" })).toThrow(/EXCHANGERATE_RETRY_BACKOFF/);
    expect(settingsFromEnv({})).toEqual({
      ratesUrl: "https://api.frankfurter.dev/v1/latest",
      refreshInterval: "1h",
      retryBackoff: "1s",
    });
  });
});
