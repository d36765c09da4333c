/**
 * Many tabs of the dashboard in one browser (Debian's Chromium through playwright-core). Over
 * HTTP/1.1 a browser opens at most six connections per host, shared by every tab of a profile:
 * each tab must hold one event stream, not one per panel, or the second tab stalls and the writes
 * queue behind the streams.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ConfigMap } from "../../packages/capstan/src/resources/builtins.ts";
import { type Dashboard, startDashboard } from "../../packages/capstan-dev/src/dashboard/index.ts";
import { startTestCluster, type TestCluster } from "../../packages/capstan-dev/src/testing/index.ts";
import { launchBrowser, waitForText } from "./support/browser.ts";

const CONFIG_MAPS = "core/v1/configmaps";
const TABS = 5;

let cluster: TestCluster;
let dashboard: Dashboard;
let browser: Browser;
let context: BrowserContext;

beforeAll(async () => {
  cluster = await startTestCluster();
  await cluster.client
    .resource(ConfigMap, "default")
    .create(ConfigMap.make({ metadata: { name: "first", namespace: "default" }, data: { a: "1" } }));
  dashboard = await startDashboard({ client: cluster.client });
  browser = await launchBrowser();
  // One context: its tabs share the browser's connections to the dashboard, as a user's tabs do.
  context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
}, 30_000);
afterAll(async () => {
  await browser?.close();
  await dashboard?.stop();
  await cluster?.stop();
});

it("keeps five tabs live at once, each with a kind, an object's detail and the logs open, and takes a write from one", async () => {
  const tabs: Page[] = [];
  for (let i = 0; i < TABS; i++) {
    const tab = await context.newPage();
    tabs.push(tab);
    await tab.goto(dashboard.url);
    await tab.click(`#kinds li[data-kind="${CONFIG_MAPS}"]`);
    await tab.click('tr[data-key="default/first"]', { timeout: 10_000 });
    await waitForText(tab, "#detail .yaml pre", /name: first/);
  }
  for (const tab of tabs) await waitForText(tab, "#connection", /^live$/);
  // Every tab's streams are open (kinds, objects, detail, logs): a change reaches each of them.
  await cluster.client
    .resource(ConfigMap, "default")
    .create(ConfigMap.make({ metadata: { name: "from-cluster", namespace: "default" }, data: { b: "2" } }));
  for (const tab of tabs) await tab.waitForSelector('tr[data-key="default/from-cluster"]', { timeout: 10_000 });
  await cluster.client.resource(ConfigMap, "default").patch("first", { data: { a: "changed" } }, { type: "merge" });
  for (const tab of tabs) await waitForText(tab, "#detail .yaml pre", /a: changed/);

  // A write from the last tab is answered while all five hold their streams, and shows in every tab.
  const last = tabs[TABS - 1] as Page;
  const status = await last.evaluate(async () => {
    const res = await fetch("/api/objects?kind=core/v1/configmaps", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        object: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "from-tab", namespace: "default" } },
      }),
    });
    return res.status;
  });
  expect(status).toBe(201);
  for (const tab of tabs) await tab.waitForSelector('tr[data-key="default/from-tab"]', { timeout: 10_000 });
  // A tab that closes gives its stream back: the server forgets its session.
  await Promise.all(tabs.map((tab) => tab.close()));
}, 90_000);

it("subscribes a tab's panels again when its one stream reconnects to a restarted dashboard", async () => {
  const tab = await context.newPage();
  await tab.goto(dashboard.url);
  await tab.click(`#kinds li[data-kind="${CONFIG_MAPS}"]`);
  await tab.click('tr[data-key="default/first"]', { timeout: 10_000 });
  await waitForText(tab, "#connection", /^live$/);
  // `capstan dev` restarted: a new dashboard on the same port and token, which knows no session.
  const { port, token } = dashboard;
  await dashboard.stop();
  await waitForText(tab, "#connection", /reconnecting/);
  dashboard = await startDashboard({ client: cluster.client, port, token });
  await waitForText(tab, "#connection", /^live$/);
  await cluster.client
    .resource(ConfigMap, "default")
    .create(ConfigMap.make({ metadata: { name: "after-restart", namespace: "default" } }));
  await tab.waitForSelector('tr[data-key="default/after-restart"]', { timeout: 10_000 });
  await cluster.client.resource(ConfigMap, "default").patch("first", { data: { a: "again" } }, { type: "merge" });
  await waitForText(tab, "#detail .yaml pre", /a: again/);
  await tab.close();
}, 60_000);
