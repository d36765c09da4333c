/**
 * The exchange-rates operator's settings: environment variables for `capstan run` (read when
 * operator.ts is imported), or overrides passed to `exchangeRateOperator(...)` in tests.
 *
 * | variable | default | what |
 * | --- | --- | --- |
 * | `EXCHANGERATE_RATES_URL` | `https://api.frankfurter.dev/v1/latest` | the rates endpoint (`GET <url>?from=EUR&to=USD`) |
 * | `EXCHANGERATE_REFRESH_INTERVAL` | `1h` | time between refreshes of a published rate |
 * | `EXCHANGERATE_RETRY_BACKOFF` | `1s` | first retry delay after a failed fetch (doubles per attempt up to 60 s) |
 */
import { type Duration, toMilliseconds } from "capstan";

/**
 * Frankfurter's endpoint (https://frankfurter.dev): the ECB's reference rates, free and without a
 * key, answering in the shape the seed parsed from exchangeratesapi.io (`rates[currency]`).
 */
export const DEFAULT_RATES_URL = "https://api.frankfurter.dev/v1/latest";

/** The environment variable holding the rates endpoint (`npm start` sets it to the local rates server). */
export const RATES_URL_ENV = "EXCHANGERATE_RATES_URL";
/** The environment variable holding the refresh interval. */
export const REFRESH_INTERVAL_ENV = "EXCHANGERATE_REFRESH_INTERVAL";
/** The environment variable holding the first retry delay. */
export const RETRY_BACKOFF_ENV = "EXCHANGERATE_RETRY_BACKOFF";

/** What the operator can be told. */
export interface ExchangeRateSettings {
  /** The rates endpoint (`EXCHANGERATE_RATES_URL`). */
  ratesUrl: string;
  /** Time between refreshes (`EXCHANGERATE_REFRESH_INTERVAL`). */
  refreshInterval: Duration;
  /** First retry delay after a failed fetch; doubles per attempt up to 60 s (`EXCHANGERATE_RETRY_BACKOFF`). */
  retryBackoff: Duration;
}

/**
 * Hourly refreshes as in the seed's timer (`interval=3600.0`); a 1 s first retry, the handlers'
 * own default, so a blip is retried at once while an outage backs off to a minute.
 */
export const DEFAULT_SETTINGS: Readonly<ExchangeRateSettings> = Object.freeze({
  ratesUrl: DEFAULT_RATES_URL,
  refreshInterval: "1h",
  retryBackoff: "1s",
});

/**
 * The settings from environment variables (unset or empty ones keep their defaults).
 * @throws Error naming the variable when its value is not an http(s) URL or a positive duration.
 */
export function settingsFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): ExchangeRateSettings {
  return checkSettings(
    {
      ratesUrl: env[RATES_URL_ENV] || DEFAULT_SETTINGS.ratesUrl,
      refreshInterval: env[REFRESH_INTERVAL_ENV] || DEFAULT_SETTINGS.refreshInterval,
      retryBackoff: env[RETRY_BACKOFF_ENV] || DEFAULT_SETTINGS.retryBackoff,
    },
    { ratesUrl: RATES_URL_ENV, refreshInterval: REFRESH_INTERVAL_ENV, retryBackoff: RETRY_BACKOFF_ENV },
  );
}

/**
 * Returns `settings` once checked.
 * @throws Error naming the setting (`names` says how: its field, or its environment variable) that
 * is not an http(s) URL or a positive duration.
 */
export function checkSettings(
  settings: ExchangeRateSettings,
  names: Readonly<Record<keyof ExchangeRateSettings, string>> = {
    ratesUrl: "ratesUrl",
    refreshInterval: "refreshInterval",
    retryBackoff: "retryBackoff",
  },
): ExchangeRateSettings {
  let url: URL;
  try {
    url = new URL(settings.ratesUrl);
  } catch {
    throw new Error(`${names.ratesUrl}: "${settings.ratesUrl}" is not a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new Error(`${names.ratesUrl}: "${settings.ratesUrl}" must be an http or https URL`);
  }
  for (const key of ["refreshInterval", "retryBackoff"] as const) {
    let ms: number;
    try {
      ms = toMilliseconds(settings[key]);
    } catch (err) {
      throw new Error(`${names[key]}: ${(err as Error).message}`);
    }
    if (ms <= 0) throw new Error(`${names[key]}: must be longer than 0, got "${settings[key]}"`);
  }
  return settings;
}
