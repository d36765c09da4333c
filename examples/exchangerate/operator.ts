/**
 * The exchange-rates operator of seeds 000 and 003, Kopf style: an ExchangeRate names a currency;
 * the operator fetches its rate over HTTP and publishes it in a ConfigMap the ExchangeRate owns
 * (so it is garbage-collected with it), follows currency changes, refreshes the rate on a timer,
 * and shows the rate and when it was fetched in the ExchangeRate's status.
 *
 * ## Expected flow
 * - Start-up: the ExchangeRate CRD is created or updated and awaited (seed 000 registers it
 *   through the API too).
 * - An ExchangeRate is created, or its `spec.currency` changes: `publish-rate` fetches the rate and
 *   server-side applies the ConfigMap `<name>` (`data.rate`, `data.currency`, `data.base`) with a
 *   controller owner reference, then writes `status.rate`, `status.currency`, `status.base`,
 *   `status.fetchedAt`.
 * - Every refresh interval (default 1 h, as in the seed's update): `refresh-rate` fetches again and
 *   rewrites both (recreating the ConfigMap if someone deleted it).
 * - The operator (re)starts and finds an ExchangeRate fetched longer than one interval ago:
 *   `refresh-stale-rate` refreshes it at once (timers restart from zero after a restart).
 *
 * ## Guarantees
 * - A failed fetch (unreachable server, error status, a body without the rate) never crashes the
 *   operator: the handler throws, the framework posts a Warning Event (`HandlerRetrying`, naming
 *   the URL and the status) and retries after the retry backoff, doubling per attempt up to 60 s,
 *   until it succeeds. A failed refresh posts a Warning (`TimerFailed`) and is retried after
 *   {@link REFRESH_RETRY_MS} (or the interval, if shorter).
 * - The ConfigMap is named after the ExchangeRate and written with server-side apply, so a handler
 *   that runs again (at-least-once) rewrites the same ConfigMap instead of creating a second one.
 *
 * ## Caveats
 * - Rates are quoted against EUR, the ECB's base (the seed's exchangeratesapi.io did the same).
 *
 *
 * ## Settings (environment variables, read when this module is imported; settings.ts)
 * - `EXCHANGERATE_RATES_URL`: the rates endpoint, answering `GET <url>?from=EUR&to=USD` with
 *   `{"rates":{"USD":1.08},...}` (default: Frankfurter, the ECB's rates, no key needed).
 * - `EXCHANGERATE_REFRESH_INTERVAL`: time between refreshes, e.g. `30m` (default `1h`).
 * - `EXCHANGERATE_RETRY_BACKOFF`: first retry delay after a failed fetch (default `1s`).
 */
import {
  needs,
  type ObjectContext,
  type ObjectPatch,
  type Operator,
  operator,
  TemporaryError,
  toMilliseconds,
} from "capstan";
import { ConfigMap } from "capstan/core";
import { fetchRate } from "./rates-client.ts";
import { ExchangeRate, type ExchangeRateObject } from "./resources.ts";
import { checkSettings, DEFAULT_SETTINGS, type ExchangeRateSettings, settingsFromEnv } from "./settings.ts";

export { BASE_CURRENCY, type FetchedRate, fetchRate } from "./rates-client.ts";
export { CURRENCIES, type Currency, ExchangeRate, type ExchangeRateObject } from "./resources.ts";
export {
  DEFAULT_RATES_URL,
  DEFAULT_SETTINGS,
  type ExchangeRateSettings,
  RATES_URL_ENV,
  settingsFromEnv,
} from "./settings.ts";

/** The operator's name: its finalizer, annotations (`exchangerates.capstan.dev/...`) and field manager. */
export const OPERATOR_NAME = "exchangerates";

/**
 * How soon a failed refresh is tried again (timers keep no retry count, so no doubling there): the
 * ECB publishes once a day, so a minute keeps an outage's gap short without hammering a server that
 * is down. A refresh interval shorter than this is used instead.
 */
export const REFRESH_RETRY_MS = 60_000;

/** What publishing needs of a handler's or timer's context. */
type PublishContext = ObjectContext<ExchangeRateObject> & { readonly patch: ObjectPatch<ExchangeRateObject> };

/**
 * Fetches the rate of the object's currency, applies the owned ConfigMap and fills the status
 * patch. Posts a Normal Event when the published rate or currency changes (not on every refresh).
 */
async function publish(ctx: PublishContext, settings: ExchangeRateSettings): Promise<void> {
  const fetched = await fetchRate(settings.ratesUrl, ctx.spec.currency, ctx.signal);
  const configMap = ConfigMap.make({
    metadata: { name: ctx.name },
    data: { currency: fetched.currency, base: fetched.base, rate: String(fetched.rate) },
  });
  // Server-side apply: creates it the first time, rewrites it after; `force` because the
  // operator is the authority on these fields even if someone edited them by hand.
  await ctx.api.resource(ConfigMap).apply(ctx.adopt(configMap), { fieldManager: OPERATOR_NAME, force: true });
  const previous = ctx.status;
  ctx.patch.status.currency = fetched.currency;
  ctx.patch.status.base = fetched.base;
  ctx.patch.status.rate = fetched.rate;
  ctx.patch.status.fetchedAt = new Date().toISOString();
  if (previous?.rate !== fetched.rate || previous?.currency !== fetched.currency) {
    ctx.event("Normal", "RatePublished", `${fetched.currency} is ${fetched.rate} per ${fetched.base}`);
  }
}

/** Whether the rate in the status is missing or older than the refresh interval. */
export function isStale(obj: ExchangeRateObject, refreshMs: number, now = Date.now()): boolean {
  const fetchedAt = Date.parse(obj.status?.fetchedAt ?? "");
  return Number.isNaN(fetchedAt) || now - fetchedAt >= refreshMs || obj.status?.currency !== obj.spec.currency;
}

/**
 * The exchange-rates operator with the given settings (tests pass a local rates server's URL and
 * short intervals; the default export reads them from the environment).
 */
export function exchangeRateOperator(overrides: Partial<ExchangeRateSettings> = {}): Operator {
  const settings = checkSettings({ ...DEFAULT_SETTINGS, ...overrides });
  const refreshMs = toMilliseconds(settings.refreshInterval);
  // Handlers write the ConfigMap through `api`, which registration cannot see: declare it, so
  // `capstan generate rbac` grants it. `needs.apply` is what server-side apply sends (patch, and
  // create when the apply creates the object); nothing reads ConfigMaps, so no get/list/watch.
  const op = operator({ name: OPERATOR_NAME, permissions: [needs.apply(ConfigMap)] });

  // A field handler runs on create (the field appears) and on every change of the field: the
  // seed's on.create and its currency update in one handler.
  op.on.field(
    ExchangeRate,
    "spec.currency",
    { id: "publish-rate", backoff: settings.retryBackoff, storeResult: false },
    async (ctx) => publish(ctx, settings),
  );

  // Timers are in memory: after a restart the first refresh would come a whole interval late.
  op.on.resume(
    ExchangeRate,
    { id: "refresh-stale-rate", backoff: settings.retryBackoff, storeResult: false },
    async (ctx) => {
      if (isStale(ctx.obj, refreshMs)) await publish(ctx, settings);
    },
  );

  // The seed's update of 19.01.2021: `@kopf.timer(..., interval=3600.0)`. The first run waits
  // one interval too, since the field handler has just fetched the rate.
  op.timer(
    ExchangeRate,
    {
      id: "refresh-rate",
      interval: settings.refreshInterval,
      initialDelay: settings.refreshInterval,
      storeResult: false,
    },
    async (ctx) => {
      try {
        await publish(ctx, settings);
      } catch (err) {
        if (ctx.signal.aborted) throw err;
        const message = err instanceof Error ? err.message : String(err);
        throw new TemporaryError(message, { delay: Math.min(REFRESH_RETRY_MS, refreshMs), cause: err });
      }
    },
  );
  return op;
}

/** The operator `capstan run examples/exchangerate/operator.ts` runs, configured from the environment. */
export default exchangeRateOperator(settingsFromEnv());
