/**
 * The reconcile timeline in a real browser (Debian's Chromium through playwright-core), end to end:
 * `capstan dev` (the built package) runs the ExchangeRate example in its operator child process,
 * whose runs travel over the report pipe to the dashboard. The rate source is a server of this test
 * that answers 500 once: the timeline of the ExchangeRate shows the failed fetch, its retry delay,
 * and the retry that published the rate with its writes. The screenshot goes to a temporary folder,
 * or to docs/dashboard-timeline.png (for docs/dashboard.md) with UPDATE_SCREENSHOTS=1, so that a
 * test run does not rewrite a tracked file.
 *
 * Needs `npm run build` first (the operator child runs from dist/, as for test/cli).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ExchangeRate } from "../../examples/exchangerate/resources.ts";
import { loadClientConfig } from "../../packages/capstan/src/client/config.ts";
import { KubeClient } from "../../packages/capstan/src/client/resource-client.ts";
import { waitUntil } from "../../packages/capstan-dev/src/testing/index.ts";
import { launchBrowser, waitForText } from "./support/browser.ts";

const repo = fileURLToPath(new URL("../..", import.meta.url));
const bin = join(repo, "packages/capstan/bin/capstan.js");
const operatorFile = join(repo, "examples/exchangerate/operator.ts");
const screenshot =
  process.env.UPDATE_SCREENSHOTS === "1"
    ? join(repo, "docs/dashboard-timeline.png")
    : join(tmpdir(), `dashboard-timeline-${process.pid}.png`);
const EXCHANGE_RATES = "operators.brennerm.github.io/v1/exchangerates";

let dir: string;
let rates: Server;
let rateRequests = 0;
let dev: ChildProcess | undefined;
let exited: Promise<number | null>;
let output = "";
let client: KubeClient | undefined;
let browser: Browser | undefined;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "capstan-timeline-"));
  // The rate source: 500 on the first request, the rate afterwards.
  rates = createServer((_req, res) => {
    rateRequests++;
    if (rateRequests === 1) {
      res.writeHead(500, { "content-type": "text/plain" }).end("rate source down");
      return;
    }
    res
      .writeHead(200, { "content-type": "application/json" })
      .end(JSON.stringify({ base: "EUR", rates: { USD: 1.08 } }));
  });
  rates.listen(0, "127.0.0.1");
  await new Promise((resolve) => rates.once("listening", resolve));
  const ratesUrl = `http://127.0.0.1:${(rates.address() as AddressInfo).port}/latest`;
  dev = spawn(process.execPath, [bin, "dev", operatorFile, "--dashboard-port", "0", "--log-format", "json"], {
    cwd: dir,
    env: { ...process.env, EXCHANGERATE_RATES_URL: ratesUrl, EXCHANGERATE_RETRY_BACKOFF: "1s" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const proc = dev;
  exited = new Promise((resolve) => proc.once("exit", (code) => resolve(code)));
  for (const stream of [dev.stdout, dev.stderr]) stream?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  browser = await launchBrowser();
}, 30_000);

afterAll(async () => {
  await browser?.close();
  await client?.close();
  if (dev?.exitCode === null) {
    dev.kill("SIGINT");
    await exited;
  }
  await new Promise((resolve) => rates?.close(resolve));
  await rm(dir, { recursive: true, force: true });
}, 30_000);

it("shows an ExchangeRate's handler runs: the failed fetch with its retry delay, then the retry and its writes", async () => {
  const dashboardUrl = await waitUntil(() => output.match(/ {2}Dashboard: (http:\/\/\S+)\n/)?.[1], {
    what: () => `capstan dev's dashboard address in:\n${output}`,
    timeout: "30s",
  });
  client = new KubeClient(loadClientConfig({ kubeconfig: join(dir, ".capstan/kubeconfig") }));
  const exchangeRates = client.resource(ExchangeRate, "default");
  // The operator registers its CRD when it starts: create once it is served.
  await waitUntil(
    async () => {
      try {
        await exchangeRates.create(ExchangeRate.make({ metadata: { name: "usd" }, spec: { currency: "USD" } }));
        return true;
      } catch {
        return false;
      }
    },
    { what: () => `the ExchangeRate CRD to be served; capstan dev said:\n${output}`, timeout: "30s" },
  );

  const page = await (browser as Browser).newPage({ viewport: { width: 1280, height: 900 } });
  await page.goto(`${dashboardUrl}#kind=${EXCHANGE_RATES}`);
  await page.click('tr[data-key="default/usd"]');
  const timeline = "#detail .timeline";
  // The first fetch failed: an error run of the handler, with the message and the retry delay.
  await waitForText(page, `${timeline} .run.outcome-error`, /publish-rate.*error.*retry in 1 s.*HTTP 500/, 20_000);
  // Its retry published the rate: the ConfigMap applied and the status written.
  await waitForText(page, `${timeline} .run.outcome-ok`, /publish-rate.*ok/, 20_000);
  const okRun = page.locator(`${timeline} .run.outcome-ok`, { hasText: "publish-rate" }).first();
  await expect.poll(() => okRun.locator(".writes").textContent()).toMatch(/PATCH configmaps default\/usd 20[01]/);
  expect(await okRun.locator(".writes").textContent()).toMatch(
    /PATCH exchangerates\.operators\.brennerm\.github\.io\/status default\/usd 200/,
  );
  // Newest first: the successful retry above the failure; each handler run under its reconcile.
  const runs = await page
    .locator(`${timeline} .run`)
    .evaluateAll((els) => els.map((el) => `${el.className} ${el.querySelector(".who")?.textContent ?? ""}`));
  const okAt = runs.findIndex((r) => r.includes("outcome-ok") && r.includes("publish-rate"));
  const failedAt = runs.findIndex((r) => r.includes("outcome-error") && r.includes("publish-rate"));
  expect(okAt).toBeGreaterThanOrEqual(0);
  expect(okAt).toBeLessThan(failedAt);
  expect(runs.filter((r) => r.includes("nested")).length).toBeGreaterThanOrEqual(2);
  expect(runs.some((r) => !r.includes("nested") && r.includes("exchangerate-handlers"))).toBe(true);
  expect(rateRequests).toBeGreaterThanOrEqual(2);

  await page.locator(timeline).scrollIntoViewIfNeeded();
  await page.screenshot({ path: screenshot });
  if (process.env.UPDATE_SCREENSHOTS !== "1") await rm(screenshot, { force: true });
  await page.close();
}, 90_000);
