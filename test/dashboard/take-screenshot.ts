/**
 * Takes docs/dashboard.png: the dashboard of a test cluster running the useless machine example,
 * with a few machines, one of them open. Not a test; run it by hand after changing the page:
 *
 *   node --import tsx test/dashboard/take-screenshot.ts
 */
import { fileURLToPath } from "node:url";
import pino from "pino";
import { Machine, uselessMachineOperator } from "../../examples/useless-machine/operator.ts";
import { LogFeed, startDashboard } from "../../packages/capstan-dev/src/dashboard/index.ts";
import { startTestCluster } from "../../packages/capstan-dev/src/testing/index.ts";
import { launchBrowser, waitForText } from "./support/browser.ts";

const out = fileURLToPath(new URL("../../docs/dashboard.png", import.meta.url));
const cluster = await startTestCluster();
const logs = new LogFeed();
await cluster.run(uselessMachineOperator({ flipDelay: "2s" }), {
  logger: pino({ level: "debug" }, logs.destination("useless-machine")),
});
const dashboard = await startDashboard({ client: cluster.client, logs });
const browser = await launchBrowser();
try {
  const machines = cluster.client.resource(Machine, "default");
  await machines.create(
    Machine.make({ metadata: { name: "machine-1", namespace: "default" }, spec: { switchPosition: "up" } }),
  );
  await machines.create(Machine.make({ metadata: { name: "machine-2", namespace: "default" }, spec: { switches: 3 } }));
  await machines.create(Machine.make({ metadata: { name: "machine-3", namespace: "default" }, spec: { switches: 1 } }));
  const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
  await page.goto(`${dashboard.url}#kind=useless.container.training/v1alpha1/machines`);
  await page.waitForSelector('tr[data-key="default/machine-2"]');
  await waitForText(page, 'tr[data-key="default/machine-2"] td.cell', /^ddd$/);
  await page.click('tr[data-key="default/machine-2"]');
  await waitForText(page, "#detail .children li", /Switch switch-/);
  await waitForText(page, "#detail .events", /SwitchCreated/);
  await waitForText(page, "#objects", /seenAt|\d+s/);
  await page.screenshot({ path: out });
  process.stdout.write(`wrote ${out}\n`);
} finally {
  await browser.close();
  await dashboard.stop();
  await cluster.stop();
}
