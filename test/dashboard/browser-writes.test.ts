/**
 * The dashboard's write controls in a real browser (Debian's Chromium through playwright-core), with
 * the guitar reviewer (examples/guitar, seed 004) running against a test cluster: a Guitar created
 * from the form generated from its CRD's schema is reviewed live, edited (through a conflict),
 * refused with a 422 shown on its field, and deleted after a confirmation listing its finalizers
 * and dependents. Also: keyboard navigation, a 900 px window, read-only mode, and how fast a kind
 * of 1,000 objects loads (printed as a JSON line, not asserted tightly).
 *
 * Screenshots of each state are taken every run; with UPDATE_SCREENSHOTS=1 they are written to
 * docs/ (next to docs/dashboard.png, for docs/dashboard.md), else to a temporary folder.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pino from "pino";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { Guitar, guitarOperator } from "../../examples/guitar/operator.ts";
import { ConfigMap, Namespace, Service } from "../../packages/capstan/src/resources/builtins.ts";
import { type Dashboard, LogFeed, startDashboard } from "../../packages/capstan-dev/src/dashboard/index.ts";
import { startTestCluster, type TestCluster } from "../../packages/capstan-dev/src/testing/index.ts";
import { launchBrowser, waitForText } from "./support/browser.ts";

const GUITARS = "kool.karmalabs.local/v1/guitars";
const STRAT = 'tr[data-key="default/strat"]';
const DIALOG = "dialog.object-editor";

const docs = fileURLToPath(new URL("../../docs/", import.meta.url));
const scratch = process.env.UPDATE_SCREENSHOTS === "1" ? undefined : mkdtempSync(join(tmpdir(), "dashboard-shots-"));
const shot = (page: Page, name: string) => page.screenshot({ path: join(scratch ?? docs, `dashboard-${name}.png`) });

let cluster: TestCluster;
let dashboard: Dashboard;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  cluster = await startTestCluster();
  const logs = new LogFeed();
  await cluster.run(guitarOperator(), { logger: pino({ level: "info" }, logs.destination("guitar-reviewer")) });
  dashboard = await startDashboard({ client: cluster.client, logs });
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1280, height: 820 } });
  page.setDefaultTimeout(10_000);
  await page.goto(dashboard.url);
  await page.click(`#kinds li[data-kind="${GUITARS}"]`);
  await page.waitForSelector("#create-object:not([hidden])");
}, 30_000);
afterAll(async () => {
  await browser?.close();
  await dashboard?.stop();
  await cluster?.stop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

it("creates a Guitar from the form generated from its schema, and shows the operator's review live", async () => {
  // One AGE column: the CRD's own Age printer column is left out.
  await waitForText(page, "#objects thead", /Brand.*Reviewed.*Comment/i);
  const headers = (await page.locator("#objects thead th").allTextContents()).map((t) => t.toLowerCase());
  expect(headers.filter((t) => t === "age")).toHaveLength(1);

  await page.click("#create-object");
  await page.waitForSelector(`${DIALOG}[open]`);
  expect(await page.inputValue("#editor-namespace")).toBe("default");
  // Required marked, description as help text, the default (review: false) pre-filled.
  await waitForText(page, `${DIALOG} [data-path="spec.brand"] label`, /brand \*/);
  await waitForText(page, `${DIALOG} [data-path="spec.brand"] .help`, /Who made the guitar/);
  expect(await page.isChecked(`${DIALOG} [data-path="spec.review"] input`)).toBe(false);
  await page.fill("#editor-name", "strat");
  await page.fill(`${DIALOG} [data-path="spec.brand"] input`, "fender");
  await shot(page, "create");
  await page.click(`${DIALOG} button[type=submit]`);

  await waitForText(page, STRAT, /fender.*true.*this is a great instrument/);
  // The new object is selected: its detail shows the operator's event.
  await waitForText(page, "#detail .events", /Reviewed/);
  await shot(page, "reviewed");
  const created = await cluster.client.resource(Guitar, "default").get("strat");
  expect(created.metadata?.managedFields?.map((f) => f.manager)).toContain("capstan-dashboard");
}, 30_000);

it("edits it, and resolves a conflict by reapplying the change on the latest version", async () => {
  await page.click(STRAT);
  await page.click("#detail button.edit");
  await page.waitForSelector(`${DIALOG}[open]`);
  expect(await page.inputValue(`${DIALOG} [data-path="spec.brand"] input`)).toBe("fender");
  // Meanwhile someone else labels it: the edit's resourceVersion is stale.
  await cluster.client
    .resource(Guitar, "default")
    .patch("strat", { metadata: { labels: { shop: "downtown" } } }, { type: "merge" });
  await page.fill(`${DIALOG} [data-path="spec.brand"] input`, "yamaha");
  await page.uncheck(`${DIALOG} [data-path="spec.review"] input`); // asks for a new review
  await page.click(`${DIALOG} button[type=submit]`);
  await waitForText(page, `${DIALOG} .conflict`, /Someone changed it/);
  await shot(page, "conflict");
  await page.click(`${DIALOG} .conflict button.reapply`);
  await waitForText(page, `${DIALOG} .dialog-error`, /Reapplied/);
  expect(await page.inputValue(`${DIALOG} [data-path="spec.brand"] input`)).toBe("yamaha");
  await page.click(`${DIALOG} button[type=submit]`);

  await waitForText(page, STRAT, /yamaha.*true.*this one is not for me/);
  const edited = await cluster.client.resource(Guitar, "default").get("strat");
  expect(edited.metadata?.labels).toEqual({ shop: "downtown" }); // their change kept
}, 30_000);

it("shows the API server's 422 next to the field it names, and Escape closes the dialog", async () => {
  await page.click("#create-object");
  await page.waitForSelector(`${DIALOG}[open]`);
  await page.fill("#editor-name", "nameless-brand");
  const brand = `${DIALOG} [data-path="spec.brand"] input`;
  await page.fill(brand, "x");
  await page.fill(brand, ""); // sent as "": the schema's minLength is the server's to enforce
  await page.click(`${DIALOG} button[type=submit]`);
  await waitForText(page, `${DIALOG} [data-path="spec.brand"].invalid .field-error`, /at least 1 ch/);
  await waitForText(page, `${DIALOG} .dialog-error`, /Invalid/);
  expect(await page.getAttribute(brand, "aria-invalid")).toBe("true");
  await shot(page, "invalid");
  await page.keyboard.press("Escape");
  await page.waitForSelector(DIALOG, { state: "detached" });
  await expect(cluster.client.resource(Guitar, "default").get("nameless-brand")).rejects.toMatchObject({ code: 404 });
}, 30_000);

it("deletes after a confirmation that shows its finalizers and what garbage collection takes with it", async () => {
  const strat = await cluster.client.resource(Guitar, "default").get("strat");
  const owner = {
    apiVersion: "kool.karmalabs.local/v1",
    kind: "Guitar",
    name: "strat",
    uid: strat.metadata?.uid ?? "",
  };
  await cluster.client
    .resource(ConfigMap, "default")
    .create({ metadata: { name: "strat-strings", namespace: "default", ownerReferences: [owner] } });
  await page.click(STRAT);
  await waitForText(page, "#detail .children", /ConfigMap strat-strings/);
  await page.click("#detail button.delete");
  await waitForText(page, "dialog.delete-confirm .dependents", /ConfigMap default\/strat-strings/);
  await waitForText(page, "dialog.delete-confirm .finalizers", /none/);
  await shot(page, "delete");
  await page.click("dialog.delete-confirm button.danger.primary");
  await page.waitForSelector(STRAT, { state: "detached" });
  await waitForText(page, "#detail-title", /Pick an object/); // its detail closed with it
}, 30_000);

it("creates a built-in kind from the schema the API server publishes: a ConfigMap's data as key/value rows", async () => {
  await page.click('#kinds li[data-kind="core/v1/configmaps"]');
  await waitForText(page, "#create-object", /Create ConfigMap/);
  await page.click("#create-object");
  await page.waitForSelector(`${DIALOG}[open]`);
  await page.fill("#editor-name", "settings");
  await page.click(`${DIALOG} details[data-path="data"] > summary`);
  await page.click(`${DIALOG} details[data-path="data"] button.add`);
  await page.fill(`${DIALOG} details[data-path="data"] input.map-key`, "color");
  await page.press(`${DIALOG} details[data-path="data"] input.map-key`, "Tab"); // the rename lands on change
  await page.fill(`${DIALOG} [data-path="data[color]"] input`, "blue");
  await page.click(`${DIALOG} button[type=submit]`);
  await page.waitForSelector('tr[data-key="default/settings"]');
  expect((await cluster.client.resource(ConfigMap, "default").get("settings")).data).toEqual({ color: "blue" });
  await page.click(`#kinds li[data-kind="${GUITARS}"]`);
}, 30_000);

it("creates from pasted YAML, and carries what the form holds into the YAML tab", async () => {
  await page.click("#create-object");
  await page.waitForSelector(`${DIALOG}[open]`);
  await page.fill("#editor-name", "from-form");
  await page.fill(`${DIALOG} [data-path="spec.brand"] input`, "martin");
  await page.click("#editor-tab-yaml");
  // Written by the dashboard server from what the form holds.
  await expect.poll(() => page.inputValue("#editor-yaml")).toMatch(/name: from-form[\s\S]*brand: martin/);
  await page.fill(
    "#editor-yaml",
    "apiVersion: kool.karmalabs.local/v1\nkind: Guitar\nmetadata:\n  name: pasted\n  namespace: default\nspec:\n  brand: ibanez\n",
  );
  await page.click(`${DIALOG} button[type=submit]`);
  await waitForText(page, 'tr[data-key="default/pasted"]', /ibanez.*this is a great instrument/);

  // YAML back to the form: its fields fill the form, and what the form does not show (labels) stays.
  await page.click("#create-object");
  await page.waitForSelector(`${DIALOG}[open]`);
  await page.click("#editor-tab-yaml");
  await expect.poll(() => page.inputValue("#editor-yaml")).toMatch(/review: false/);
  await page.fill(
    "#editor-yaml",
    "metadata:\n  name: labelled\n  namespace: default\n  labels:\n    shop: uptown\nspec:\n  brand: gretsch\n",
  );
  await page.click("#editor-tab-form");
  await expect.poll(() => page.inputValue(`${DIALOG} [data-path="spec.brand"] input`)).toBe("gretsch");
  expect(await page.inputValue("#editor-name")).toBe("labelled");
  await page.click(`${DIALOG} button[type=submit]`);
  await waitForText(page, 'tr[data-key="default/labelled"]', /gretsch/);
  expect((await cluster.client.resource(Guitar, "default").get("labelled")).metadata?.labels).toEqual({
    shop: "uptown",
  });
}, 30_000);

it("edits a list of objects: a Service's ports, added in the form", async () => {
  await page.click('#kinds li[data-kind="core/v1/services"]');
  await waitForText(page, "#create-object", /Create Service/);
  await page.click("#create-object");
  await page.waitForSelector(`${DIALOG}[open]`);
  await page.fill("#editor-name", "web");
  await page.click(`${DIALOG} details[data-path="spec"] > summary`);
  await page.click(`${DIALOG} details[data-path="spec.ports"] > summary`);
  await page.click(`${DIALOG} details[data-path="spec.ports"] button.add`);
  await page.click(`${DIALOG} details[data-path="spec.ports"] button.add`);
  await page.fill(`${DIALOG} [data-path="spec.ports[0].port"] input`, "80");
  await page.fill(`${DIALOG} [data-path="spec.ports[0].name"] input`, "http");
  await page.fill(`${DIALOG} [data-path="spec.ports[1].port"] input`, "443");
  await page.click(`${DIALOG} details[data-path="spec.ports"] li:nth-child(2) > button.remove`);
  expect(await page.locator(`${DIALOG} [data-path="spec.ports[1]"]`).count()).toBe(0);
  await page.click(`${DIALOG} button[type=submit]`);
  await page.waitForSelector('tr[data-key="default/web"]');
  const web = await cluster.client.resource(Service, "default").get("web");
  expect(web.spec?.ports).toEqual([expect.objectContaining({ name: "http", port: 80 })]);
  await page.click(`#kinds li[data-kind="${GUITARS}"]`);
}, 30_000);

it("moves through rows with the keyboard, and clears the selection when the kind changes", async () => {
  const guitars = cluster.client.resource(Guitar, "default");
  for (const name of ["g1", "g2"])
    await guitars.create(Guitar.make({ metadata: { name, namespace: "default" }, spec: { brand: "gibson" } }));
  for (const name of ["g1", "g2"]) await waitForText(page, `tr[data-key="default/${name}"]`, /gibson.*true/);
  const focusedAttr = (attr: string) =>
    page.evaluate(
      (a) =>
        (
          globalThis as unknown as { document: { activeElement: { getAttribute(n: string): string | null } | null } }
        ).document.activeElement?.getAttribute(a) ?? null,
      attr,
    );
  // A live update redraws the focused row (and the kinds list its count): the focus stays on it.
  await page.focus('tr[data-key="default/g1"]');
  await guitars.patch("g1", { spec: { brand: "gibson les paul" } }, { type: "merge" });
  await waitForText(page, 'tr[data-key="default/g1"]', /les paul/);
  expect(await focusedAttr("data-key")).toBe("default/g1");
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("Enter");
  await waitForText(page, "#detail-title", /Guitar default\/g2/);
  const configMaps = '#kinds li[data-kind="core/v1/configmaps"]';
  const count = await page.textContent(`${configMaps} .count`);
  await page.focus(configMaps);
  await cluster.client.resource(ConfigMap, "default").create({ metadata: { name: "keyboard" }, data: {} });
  await expect.poll(() => page.textContent(`${configMaps} .count`)).not.toBe(count);
  expect(await focusedAttr("data-kind")).toBe("core/v1/configmaps");
  await page.keyboard.press("Enter");
  await waitForText(page, "#detail-title", /Pick an object/);
  expect(await page.locator("#detail > *").count()).toBe(0);
}, 30_000);

it("keeps the table and detail usable in a 900 px window", async () => {
  await page.setViewportSize({ width: 900, height: 700 });
  await page.click(`#kinds li[data-kind="${GUITARS}"]`);
  await page.click('tr[data-key="default/g1"]');
  await waitForText(page, "#detail .yaml pre", /brand: gibson/);
  const widths = await page.evaluate(() => {
    type El = { getBoundingClientRect(): { width: number } } | null;
    const doc = (globalThis as unknown as { document: { querySelector(s: string): El } }).document;
    return {
      objects: doc.querySelector("#objects-panel")?.getBoundingClientRect().width ?? 0,
      detail: doc.querySelector("#detail-panel")?.getBoundingClientRect().width ?? 0,
    };
  });
  expect(widths.objects).toBeGreaterThan(600);
  expect(widths.detail).toBeGreaterThan(600);
  await page.locator("#objects thead th", { hasText: /Comment/i }).scrollIntoViewIfNeeded();
  expect(await page.locator("#objects thead th", { hasText: /Comment/i }).isVisible()).toBe(true);
  await shot(page, "narrow");
  await page.setViewportSize({ width: 1280, height: 820 });
}, 30_000);

it("read-only: hides the write controls", async () => {
  const readOnly = await startDashboard({ client: cluster.client, readOnly: true });
  const ro = await browser.newPage({ viewport: { width: 1280, height: 820 } });
  try {
    await ro.goto(`${readOnly.url}#kind=${GUITARS}`);
    await ro.waitForSelector('tr[data-key="default/g1"]');
    await waitForText(ro, "#mode", /read-only/);
    await ro.click('tr[data-key="default/g1"]');
    await waitForText(ro, "#detail .yaml pre", /brand: gibson/);
    expect(await ro.isVisible("#create-object")).toBe(false);
    expect(await ro.locator("#detail button.edit, #detail button.delete").count()).toBe(0);
  } finally {
    await ro.close();
    await readOnly.stop();
  }
}, 30_000);

it("loads a kind of 1,000 objects and goes live (measured, printed)", async () => {
  await cluster.client.resource(Namespace).create({ metadata: { name: "many" } });
  const configMaps = cluster.client.resource(ConfigMap, "many");
  const names = Array.from({ length: 1000 }, (_, i) => `cm-${String(i).padStart(4, "0")}`);
  for (let i = 0; i < names.length; i += 50) {
    await Promise.all(
      names
        .slice(i, i + 50)
        .map((name) => configMaps.create({ metadata: { name, namespace: "many" }, data: { i: name } })),
    );
  }
  await page.goto("about:blank"); // its streams closed: the measured page has the server to itself
  const fresh = await browser.newPage({ viewport: { width: 1280, height: 820 } });
  try {
    // Warm the dashboard's feed (the first list), as a user's second look would find it.
    await fresh.goto(`${dashboard.url}#kind=core/v1/configmaps`);
    await fresh.waitForFunction(
      (n) =>
        (globalThis as unknown as { document: Document }).document.querySelectorAll("#objects tbody tr").length >= n,
      1000,
      { timeout: 20_000 },
    );
    await fresh.reload();
    // Measured in the page, from the start of the navigation to the frame that shows the rows.
    const ready = await fresh.waitForFunction(
      (n) => {
        const doc = (globalThis as unknown as { document: Document }).document;
        const done =
          doc.querySelectorAll("#objects tbody tr").length >= n &&
          doc.getElementById("connection")?.textContent === "live";
        return done ? performance.now() : false;
      },
      1000,
      { timeout: 20_000 },
    );
    const ms = (await ready.jsonValue()) as number;
    console.log(JSON.stringify({ bench: "dashboard-load-1000", objects: 1000, msToRowsAndLive: Math.round(ms) }));
    expect(ms).toBeLessThan(10_000); // generous: the goal is 1 s, measured above on a quiet machine
  } finally {
    await fresh.close();
  }
}, 60_000);

interface Document {
  querySelectorAll(s: string): { length: number };
  getElementById(id: string): { textContent: string | null } | null;
}
