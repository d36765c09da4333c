import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, request } from "undici";
import { afterEach, describe, expect, it, vi } from "vitest";
import { parse } from "yaml";

let child: ChildProcess | undefined;
afterEach(() => {
  if (child && child.exitCode === null) child.kill("SIGKILL");
  child = undefined;
});

describe("capstan apiserver", () => {
  it("prints one ready line, serves with the kubeconfig it wrote (mode 0600), namespaces have their default ServiceAccount, and exits 0 on SIGTERM", async () => {
    const kubeconfig = join(mkdtempSync(join(tmpdir(), "capstan-cli-")), "kc");
    child = spawn(
      process.execPath,
      ["packages/capstan/bin/capstan.js", "apiserver", "--port", "0", "--kubeconfig", kubeconfig],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stdout = "";
    const ready = await new Promise<string>((resolve, reject) => {
      child!.stdout!.on("data", (d: Buffer) => {
        stdout += d.toString();
        if (stdout.includes("\n")) resolve(stdout);
      });
      child!.once("exit", (code) => reject(new Error(`exited ${code}`)));
    });
    const match = /^ready (https:\/\/127\.0\.0\.1:\d+) (\S+)\n$/.exec(ready);
    expect(match, ready).not.toBeNull();
    expect(match![2]).toBe(kubeconfig);
    expect(statSync(kubeconfig).mode & 0o777).toBe(0o600);
    const kc = parse(readFileSync(kubeconfig, "utf8"));
    const ca = Buffer.from(kc.clusters[0].cluster["certificate-authority-data"], "base64").toString();
    const agent = new Agent({ connect: { ca } });
    const res = await request(`${match![1]}/api/v1/namespaces/default`, {
      headers: { authorization: `Bearer ${kc.users[0].user.token}` },
      dispatcher: agent,
    });
    expect(res.statusCode).toBe(200);
    await res.body.text();
    // As on a real cluster, a namespace has its `default` ServiceAccount (kubectl create token default).
    // The serviceaccounts controller makes it just after start-up: allow it a moment.
    await vi.waitFor(
      async () => {
        const sa = await request(`${match![1]}/api/v1/namespaces/default/serviceaccounts/default`, {
          headers: { authorization: `Bearer ${kc.users[0].user.token}` },
          dispatcher: agent,
        });
        await sa.body.text();
        expect(sa.statusCode).toBe(200);
      },
      { timeout: 5_000, interval: 50 },
    );
    await agent.close();
    const exited = new Promise<number | null>((resolve) => child!.once("exit", (code) => resolve(code)));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(stdout.trim().split("\n")).toHaveLength(1);
  });

  it("refuses a bad --port with exit code 2", async () => {
    child = spawn(process.execPath, ["packages/capstan/bin/capstan.js", "apiserver", "--port", "http"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr!.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    const code = await new Promise<number | null>((resolve) => child!.once("exit", (c) => resolve(c)));
    expect(code).toBe(2);
    expect(stderr).toMatch(/--port must be an integer/);
  });
});
