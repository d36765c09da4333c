/**
 * `stop()` leaves nothing behind: a process that started a dashboard, had a page's streams open
 * and stopped it exits on its own, with no socket, timer or watch keeping it alive.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

const fixture = fileURLToPath(new URL("./fixtures/start-and-stop.ts", import.meta.url));

it("a process exits on its own after stopping a dashboard that had open page streams", async () => {
  const child = spawn(process.execPath, ["--import", "tsx", fixture], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (c: Buffer) => {
    out += c.toString();
  });
  child.stderr.on("data", (c: Buffer) => {
    out += c.toString();
  });
  // Generous: tsx start-up on a shared 2-core machine; a leak keeps the process alive forever.
  const timer = setTimeout(() => child.kill("SIGKILL"), 25_000);
  const code = await new Promise<number | null>((resolve) => child.once("exit", (c) => resolve(c)));
  clearTimeout(timer);
  expect(out).toContain("stopped");
  expect(code).toBe(0);
}, 30_000);
