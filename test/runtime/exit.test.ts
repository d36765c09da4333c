import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const script = fileURLToPath(new URL("./support/exit-script.ts", import.meta.url));

describe("stopping the runtime primitives", () => {
  it("leaves nothing that keeps the process alive: it exits by itself after stop", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", script], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      err += d.toString();
    });
    // A leaked 1 h timer would keep the child alive; kill it well before the test times out.
    const killer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    const code = await new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)));
    clearTimeout(killer);
    expect(err).toBe("");
    expect(out).toBe("stopped\n");
    expect(code).toBe(0);
  });
});
