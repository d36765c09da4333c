/**
 * The dashboard in a real browser (Debian's Chromium through playwright-core), with the useless
 * machine example running against a test cluster: the page follows the cluster without a reload.
 */

import pino from "pino";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { Machine, uselessMachineOperator } from "../../examples/useless-machine/operator.ts";
import { type Dashboard, LogFeed, startDashboard } from "../../packages/capstan-dev/src/dashboard/index.ts";
import { startTestCluster, type TestCluster } from "../../packages/capstan-dev/src/testing/index.ts";
import { launchBrowser, waitForText } from "./support/browser.ts";

const MACHINES = "useless.container.training/v1alpha1/machines";

let cluster: TestCluster;
let dashboard: Dashboard;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  cluster = await startTestCluster();
  const logs = new LogFeed();
  // The operator's pino records go to the logs panel, as `capstan dev` feeds its children's lines.
  await cluster.run(uselessMachineOperator({ flipDelay: "200ms" }), {
    logger: pino({ level: "debug" }, logs.destination("useless-machine")),
  });
  dashboard = await startDashboard({ client: cluster.client, logs });
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
});
afterAll(async () => {
  await browser?.close();
  await dashboard?.stop();
  await cluster?.stop();
});

it("shows a new object's row and its printer columns changing, live, and its YAML, events and children", async () => {
  await page.goto(dashboard.url);
  await page.click(`#kinds li[data-kind="${MACHINES}"]`);
  await waitForText(page, "#objects thead", /Switches.*Positions/);
  // Set on the page now: still there at the end only if the page never reloaded.
  await page.evaluate(() => Object.assign(globalThis, { notReloaded: true }));

  await cluster.client
    .resource(Machine)
    .create(Machine.make({ metadata: { name: "m1", namespace: "default" }, spec: { switches: 2 } }));
  const row = 'tr[data-key="default/m1"]';
  await page.waitForSelector(row);
  // The operator creates two Switches and writes their positions: the POSITIONS cell follows.
  await waitForText(page, `${row} td.cell`, /^dd$/);

  await page.click(row);
  await waitForText(page, "#detail .yaml pre", /name: m1/);
  await waitForText(page, "#detail .events", /SwitchCreated/);
  await waitForText(page, "#detail .children li", /Switch switch-/);
  expect(await page.locator("#detail .children li").count()).toBe(2);

  // A change made now shows in the open detail and the row: the operator flips the switch back down.
  await cluster.client.resource(Machine, "default").patch("m1", { spec: { switchPosition: "up" } }, { type: "merge" });
  await waitForText(page, "#detail .events", /FlippedDown/);
  expect(await page.evaluate(() => (globalThis as { notReloaded?: boolean }).notReloaded)).toBe(true);
}, 20_000);

it("lets in only a browser that opened the address with the token, and takes the token out of the address", async () => {
  const stranger = await browser.newPage();
  try {
    const refused = await stranger.goto(new URL("/", dashboard.url).href);
    expect(refused?.status()).toBe(401);
    expect(await stranger.textContent("body")).toMatch(/open the dashboard at the address capstan dev printed/);
    expect(await stranger.evaluate(() => fetch("/api/kinds").then((r) => r.status))).toBe(401);
  } finally {
    await stranger.close();
  }
  // The page of the first test opened dashboard.url: the token went into its cookie, out of the address.
  await page.goto(dashboard.url);
  expect(page.url()).toBe(new URL("/", dashboard.url).href);
  expect(await page.evaluate(() => fetch("/api/kinds").then((r) => r.status))).toBe(200);
}, 20_000);

it("shows the operator's log lines in the logs panel, filterable by operator", async () => {
  await page.goto(dashboard.url);
  await waitForText(page, "#logs .line", /useless-machine.*Starting workers/);
  await page.selectOption("#log-source", "useless-machine");
  await waitForText(page, "#logs .line", /Starting workers/);
  const sources = await page.locator("#logs .line .source").allTextContents();
  expect(new Set(sources)).toEqual(new Set(["useless-machine"]));
}, 20_000);

it("shows the cluster's refusal (403) as a message in the page, not a blank page", async () => {
  const rbacCluster = await startTestCluster();
  const nobody = await rbacCluster.serviceAccount("default/nobody");
  const forbidden = await startDashboard({ client: nobody.client });
  try {
    const errorPage = await browser.newPage({ viewport: { width: 1200, height: 800 } });
    await errorPage.goto(forbidden.url);
    await waitForText(errorPage, "#kinds-error", /Forbidden: custom kinds: .*nobody/);
    await errorPage.click('#kinds li[data-kind="core/v1/pods"]');
    await waitForText(errorPage, "#objects-error", /Forbidden: .*pods/);
    await errorPage.close();
  } finally {
    await forbidden.stop();
    await rbacCluster.stop();
  }
}, 20_000);
