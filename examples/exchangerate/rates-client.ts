/**
 * Fetching one exchange rate over HTTP, from any endpoint that answers like Frankfurter
 * (https://frankfurter.dev) and the seed's exchangeratesapi.io did:
 * `GET <endpoint>?from=EUR&to=USD` -> `{"base":"EUR","rates":{"USD":1.08},...}`.
 */
import type { Currency } from "./resources.ts";

/** The currency rates are quoted against: the ECB publishes against EUR. */
export const BASE_CURRENCY = "EUR";

/**
 * A rates API answers in well under a second; 10 s covers a slow network while keeping a hung
 * server from holding the object's worker for long (one object's handlers run one at a time).
 */
export const FETCH_TIMEOUT_MS = 10_000;

/** A rate as the rates API published it. */
export interface FetchedRate {
  readonly currency: Currency;
  /** The currency the rate is quoted against, as the API said (EUR). */
  readonly base: string;
  /** Units of `currency` per one unit of `base`. */
  readonly rate: number;
}

/**
 * Fetches the rate of `currency` against {@link BASE_CURRENCY} from `endpoint`.
 * @throws Error naming the URL and what went wrong: network error, timeout, error status, a body
 * that is not JSON or holds no positive rate for the currency.
 */
export async function fetchRate(endpoint: string, currency: Currency, signal: AbortSignal): Promise<FetchedRate> {
  const url = new URL(endpoint);
  url.searchParams.set("from", BASE_CURRENCY);
  url.searchParams.set("to", currency);
  const fail = (what: string): Error => new Error(`fetching the ${currency} rate from ${url.href}: ${what}`);
  let res: Response;
  try {
    res = await fetch(url, {
      headers: { accept: "application/json" },
      signal: AbortSignal.any([signal, AbortSignal.timeout(FETCH_TIMEOUT_MS)]),
    });
  } catch (err) {
    // fetch says "fetch failed"; the reason (ECONNREFUSED, ENOTFOUND, a timeout) is its cause.
    const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : "";
    throw fail(`${err instanceof Error ? err.message : String(err)}${cause}`);
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw fail(`HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ""}`);
  }
  let body: unknown;
  try {
    body = await res.json();
  } catch {
    throw fail("the response is not JSON");
  }
  const rates = (body as { rates?: unknown } | null)?.rates;
  const rate = typeof rates === "object" && rates !== null ? (rates as Record<string, unknown>)[currency] : undefined;
  if (typeof rate !== "number" || !Number.isFinite(rate) || rate <= 0) {
    throw fail(`the response holds no positive rate for ${currency}: ${JSON.stringify(body).slice(0, 200)}`);
  }
  const base = (body as { base?: unknown }).base;
  return { currency, base: typeof base === "string" ? base : BASE_CURRENCY, rate };
}
