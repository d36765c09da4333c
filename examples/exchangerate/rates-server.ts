/**
 * A small local exchange-rates server with fixed data, answering like the public API the operator
 * uses by default (Frankfurter, https://frankfurter.dev: ECB reference rates, no key), so the
 * example runs and is tested with no internet:
 *
 * ```
 * GET /v1/latest?from=EUR&to=USD  ->  200 {"amount":1,"base":"EUR","date":"2026-01-02","rates":{"USD":1.083}}
 * GET /v1/latest?from=EUR&to=XYZ  ->  404 {"message":"not found"}
 * ```
 *
 * Tests steer it: `setRate` changes a rate (to see a refresh happen), `fail` makes a currency (or
 * every request) answer an error status until `recover` (to see retries and Warning Events).
 *
 * Run on its own (`npm start` does this): `node --import tsx examples/exchangerate/rates-server.ts
 * [--port N]` prints the URL to give the operator as `EXCHANGERATE_RATES_URL` ({@link RATES_URL_ENV}), and stops on
 * Ctrl-C.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { pathToFileURL } from "node:url";

export { RATES_URL_ENV } from "./settings.ts";

/**
 * Rates against EUR, roughly the ECB's at the end of 2025. Fixed on purpose: the example shows the
 * operator's mechanics, and tests compare exact values.
 */
export const SAMPLE_RATES: Readonly<Record<string, number>> = Object.freeze({
  CAD: 1.47,
  CHF: 0.94,
  GBP: 0.845,
  JPY: 162.5,
  PLN: 4.32,
  USD: 1.083,
});

/** The date the fixed rates are published under (Frankfurter answers with the ECB's publication date). */
const SAMPLE_DATE = "2026-01-02";

/** The currency every rate above is quoted against, as the ECB's are. */
const BASE = "EUR";

/** Options of {@link startRatesServer}. */
export interface RatesServerOptions {
  /** Port to listen on (default 0: a free one). */
  port?: number;
  /** Interface to listen on (default 127.0.0.1: nothing outside this machine reaches it). */
  host?: string;
  /** Rates against EUR (default {@link SAMPLE_RATES}). */
  rates?: Readonly<Record<string, number>>;
}

/** One request the server answered, for tests to count fetches. */
export interface RatesRequest {
  readonly from: string;
  readonly to: string;
  readonly status: number;
}

/** A running rates server. */
export interface RatesServer {
  /** The endpoint to give the operator (`EXCHANGERATE_RATES_URL`): `http://127.0.0.1:<port>/v1/latest`. */
  readonly url: string;
  /** Every request answered so far, oldest first. */
  readonly requests: readonly RatesRequest[];
  /** Sets the rate of `currency` against EUR from now on. */
  setRate(currency: string, rate: number): void;
  /** Answers `status` (default 503) for `currency`, or for every request with `"*"`, until {@link recover}. */
  fail(currency: string, status?: number): void;
  /** Stops failing `currency` (default: every currency). */
  recover(currency?: string): void;
  /** Closes the server and every open connection. */
  stop(): Promise<void>;
}

const FAIL_ALL = "*";

/** Starts the rates server; resolves once it listens. */
export async function startRatesServer(options: RatesServerOptions = {}): Promise<RatesServer> {
  const rates = new Map<string, number>(Object.entries(options.rates ?? SAMPLE_RATES));
  rates.set(BASE, 1);
  const failing = new Map<string, number>();
  const requests: RatesRequest[] = [];

  const answer = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? "/", "http://rates.invalid");
    const send = (status: number, body: unknown, from = "", to = ""): void => {
      requests.push({ from, to, status });
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (req.method !== "GET" || url.pathname !== "/v1/latest") {
      send(404, { message: "not found" });
      return;
    }
    // Frankfurter's names first, then the older exchangeratesapi.io names it also accepts.
    const from = (url.searchParams.get("from") ?? url.searchParams.get("base") ?? BASE).toUpperCase();
    const toParam = url.searchParams.get("to") ?? url.searchParams.get("symbols");
    const to = toParam === null ? [...rates.keys()].filter((c) => c !== from) : toParam.toUpperCase().split(",");
    const joined = to.join(",");
    const failure = failing.get(FAIL_ALL) ?? to.map((c) => failing.get(c)).find((s) => s !== undefined);
    if (failure !== undefined) {
      send(failure, { message: `rates server told to fail with ${failure}` }, from, joined);
      return;
    }
    const fromRate = rates.get(from);
    if (fromRate === undefined || to.some((c) => !rates.has(c))) {
      send(404, { message: "not found" }, from, joined);
      return;
    }
    const quoted: Record<string, number> = {};
    // Cross rates through EUR, rounded as the ECB publishes them (5 significant digits).
    for (const c of to) quoted[c] = Number(((rates.get(c) as number) / fromRate).toPrecision(5));
    send(200, { amount: 1, base: from, date: SAMPLE_DATE, rates: quoted }, from, joined);
  };

  const server = createServer(answer);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  let stopped: Promise<void> | undefined;

  return {
    url: `http://${host}:${address.port}/v1/latest`,
    requests,
    setRate(currency, rate) {
      if (!Number.isFinite(rate) || rate <= 0) throw new Error(`rate of ${currency} must be a positive number`);
      rates.set(currency.toUpperCase(), rate);
    },
    fail(currency, status = 503) {
      if (!Number.isInteger(status) || status < 400 || status > 599) {
        throw new Error(`fail(${currency}): status must be an HTTP error status (400-599), got ${status}`);
      }
      failing.set(currency === FAIL_ALL ? FAIL_ALL : currency.toUpperCase(), status);
    },
    recover(currency) {
      if (currency === undefined) failing.clear();
      else failing.delete(currency === FAIL_ALL ? FAIL_ALL : currency.toUpperCase());
    },
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Keep-alive connections (the operator's fetch pool) would hold close() open.
        server.closeAllConnections();
      });
      return stopped;
    },
  };
}

/** `--port N` from the command line (default 0: a free port). */
function portFromArgs(args: readonly string[]): number {
  const i = args.indexOf("--port");
  if (i === -1) return 0;
  const port = Number(args[i + 1]);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`--port needs a port number (0-65535), got ${args[i + 1] ?? "nothing"}`);
  }
  return port;
}

async function main(): Promise<void> {
  let port: number;
  try {
    port = portFromArgs(process.argv.slice(2));
  } catch (err) {
    console.error(`rates-server: ${(err as Error).message}`);
    process.exitCode = 2;
    return;
  }
  const server = await startRatesServer({ port });
  console.log(server.url);
  const stop = () => void server.stop();
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    console.error(`rates-server: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  });
}
