import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { previousApiPort } from "../../packages/capstan-dev/src/cli/previous-api-port.ts";
import { renderKubeconfig } from "../../packages/capstan-dev/src/devcluster/kubeconfig.ts";

let dir: string;
const servers: Server[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "capstan-previous-port-"));
});
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((resolve) => s.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

/** A port free now (bound and released). */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const { port } = s.address() as { port: number };
  await new Promise((resolve) => s.close(resolve));
  return port;
}

async function kubeconfigFor(server: string): Promise<string> {
  const path = join(dir, "kubeconfig");
  await writeFile(path, renderKubeconfig({ server, caPem: "-----BEGIN CERTIFICATE-----", token: "t" }));
  return path;
}

describe("capstan dev's API server port across restarts", () => {
  it("is the port of the kubeconfig the last run wrote, when it is free", async () => {
    const port = await freePort();
    expect(await previousApiPort(await kubeconfigFor(`https://127.0.0.1:${port}`))).toBe(port);
  });

  it("is left to the system when that port is taken now", async () => {
    const busy = createServer();
    servers.push(busy);
    await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", resolve));
    const { port } = busy.address() as { port: number };
    expect(await previousApiPort(await kubeconfigFor(`https://127.0.0.1:${port}`))).toBeUndefined();
  });

  it("is left to the system without a kubeconfig, or with one that is not the devcluster's on 127.0.0.1", async () => {
    expect(await previousApiPort(join(dir, "absent"))).toBeUndefined();
    const port = await freePort();
    expect(await previousApiPort(await kubeconfigFor(`https://10.0.0.1:${port}`))).toBeUndefined();
    expect(await previousApiPort(await kubeconfigFor(`http://127.0.0.1:${port}`))).toBeUndefined();
    await writeFile(join(dir, "kubeconfig"), ": not yaml [");
    expect(await previousApiPort(join(dir, "kubeconfig"))).toBeUndefined();
  });
});
