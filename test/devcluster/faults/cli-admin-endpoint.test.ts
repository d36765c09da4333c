/**
 * `capstan apiserver` as its own process: the fault-injection admin endpoint is reachable with the
 * admin token of the kubeconfig it wrote, and what it arms is what the next requests get.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, request } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { startApiserverProcess, stopApiserverProcess } from "../support/apiserver-process.ts";

let child: ChildProcess | undefined;
let agent: Agent | undefined;
let dir: string | undefined;
afterEach(async () => {
  await agent?.close();
  agent = undefined;
  await stopApiserverProcess(child);
  child = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe("capstan apiserver's /capstan/faults", () => {
  it("arms a 429 with the admin token; the next resource request gets it, then the server serves again", async () => {
    dir = mkdtempSync(join(tmpdir(), "capstan-faults-cli-"));
    const kubeconfig = join(dir, "kc");
    const { url } = await startApiserverProcess(kubeconfig, [], (spawned) => {
      child = spawned;
    });
    const kc = parse(readFileSync(kubeconfig, "utf8"));
    const ca = Buffer.from(kc.clusters[0].cluster["certificate-authority-data"], "base64").toString();
    agent = new Agent({ connect: { ca } });
    const call = async (method: "GET" | "POST", path: string, body?: unknown) => {
      const res = await request(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${kc.users[0].user.token}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
        dispatcher: agent,
      });
      return { status: res.statusCode, headers: res.headers, body: JSON.parse(await res.body.text()) };
    };

    const armed = await call("POST", "/capstan/faults", { action: "fail", count: 1, code: 429, retryAfterSeconds: 2 });
    expect(armed.status).toBe(200);
    expect(armed.body.state.failures).toEqual([{ remaining: 1, code: 429, retryAfterSeconds: 2 }]);
    const throttled = await call("GET", "/api/v1/namespaces/default/configmaps");
    expect(throttled.status).toBe(429);
    expect(throttled.headers["retry-after"]).toBe("2");
    expect(throttled.body).toMatchObject({ reason: "TooManyRequests", details: { retryAfterSeconds: 2 } });
    expect((await call("GET", "/api/v1/namespaces/default/configmaps")).status).toBe(200);
    expect((await call("GET", "/capstan/faults")).body.counts.failed429).toBe(1);
  });
});
