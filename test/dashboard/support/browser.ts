/**
 * Debian's Chromium driven by playwright-core (which downloads no browser of its own), as the
 * dashboard's browser tests and its screenshot script launch it.
 */
import { type Browser, chromium, type Page } from "playwright-core";

/** Where Debian (and CI, which installs the package when missing) puts Chromium. */
export const CHROMIUM = "/usr/bin/chromium";

/**
 * Headless, as root in a container (no sandbox), and quiet: without the background-networking
 * flags Chromium keeps trying to reach Google's hosts, which this machine's closed network refuses.
 */
const ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Launches a headless Chromium; close it when done. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
}

/** Waits until the first element matching `selector` has text matching `pattern`. */
export async function waitForText(page: Page, selector: string, pattern: RegExp, timeoutMs = 10_000): Promise<void> {
  // A function, not a string: the page's Content-Security-Policy forbids evaluating strings. It runs
  // in the page, where `document` exists (this file is compiled without DOM types, hence the cast).
  await page.waitForFunction(
    ({ selector, source, flags }) => {
      type Doc = { querySelectorAll(s: string): Iterable<{ textContent: string | null }> };
      const doc = (globalThis as unknown as { document: Doc }).document;
      const re = new RegExp(source, flags);
      return [...doc.querySelectorAll(selector)].some((el) => re.test(el.textContent ?? ""));
    },
    { selector, source: pattern.source, flags: pattern.flags },
    { timeout: timeoutMs },
  );
}
