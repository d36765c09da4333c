/**
 * The local rates server: answers like Frankfurter, fails on demand, and runs on its own from the
 * command line printing its URL.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { type RatesServer, SAMPLE_RATES, startRatesServer } from "./rates-server.ts";

let rates: RatesServer;
beforeAll(async () => {
  rates = await startRatesServer({ rates: { USD: 1.1, GBP: 0.88 } });
});
afterAll(() => rates?.stop());
afterEach(() => rates.recover());

async function get(query: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${rates.url}${query}`);
  return { status: res.status, body: await res.json() };
}

it("answers the latest rates against EUR in Frankfurter's shape", async () => {
  expect(await get("?from=EUR&to=USD")).toEqual({
    status: 200,
    body: { amount: 1, base: "EUR", date: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/), rates: { USD: 1.1 } },
  });
  // The older exchangeratesapi.io parameter names of the seed work too; no `to` lists every rate.
  expect((await get("?base=EUR&symbols=GBP")).body).toMatchObject({ rates: { GBP: 0.88 } });
  expect((await get("")).body).toMatchObject({ base: "EUR", rates: { USD: 1.1, GBP: 0.88 } });
});

it("quotes cross rates through EUR", async () => {
  expect((await get("?from=USD&to=GBP")).body).toMatchObject({ base: "USD", rates: { GBP: 0.8 } });
});

it("answers 404 for an unknown currency or path", async () => {
  expect(await get("?to=XYZ")).toEqual({ status: 404, body: { message: "not found" } });
  expect((await get("/../../other")).status).toBe(404);
});

it("fails a currency, or everything, with the status asked for until it recovers", async () => {
  rates.fail("usd", 503);
  expect((await get("?to=USD")).status).toBe(503);
  expect((await get("?to=GBP")).status).toBe(200);
  rates.fail("*", 500);
  expect((await get("?to=GBP")).status).toBe(500);
  rates.recover("*");
  expect((await get("?to=GBP")).status).toBe(200);
  expect((await get("?to=USD")).status).toBe(503);
  rates.recover("USD");
  expect((await get("?to=USD")).status).toBe(200);
  expect(rates.requests.slice(-2)).toEqual([
    { from: "EUR", to: "USD", status: 503 },
    { from: "EUR", to: "USD", status: 200 },
  ]);
  expect(() => rates.fail("USD", 200)).toThrow(/HTTP error status/);
});

it("changes a rate with setRate, and refuses a rate that is not positive", async () => {
  rates.setRate("USD", 1.2);
  expect((await get("?to=USD")).body).toMatchObject({ rates: { USD: 1.2 } });
  expect(() => rates.setRate("USD", 0)).toThrow(/positive/);
});

it("runs from the command line, printing its URL, and stops on SIGTERM", async () => {
  const script = fileURLToPath(new URL("rates-server.ts", import.meta.url));
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", script, "--port", "0"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  try {
    child.stdout?.setEncoding("utf8");
    const [line] = (await once(child.stdout as NodeJS.ReadableStream, "data")) as [string];
    const url = line.trim();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1\/latest$/);
    const res = await fetch(`${url}?to=JPY`);
    expect(await res.json()).toMatchObject({ rates: { JPY: SAMPLE_RATES.JPY } });
    const exited = once(child, "exit");
    child.kill("SIGTERM");
    const [code] = (await exited) as [number | null];
    expect(code).toBe(0);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
}, 30_000);
