import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitUntil } from "capstan-dev/testing";
import { afterEach, describe, expect, it } from "vitest";
import { exchangeRateCrd } from "../kubectl/support/cluster.ts";
import { configMap, type RawHttpCluster, startRawHttpCluster } from "../support/http.ts";

const CMS = "/api/v1/namespaces/default/configmaps";
const CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const RATES = "/apis/operators.example.com/v1/namespaces/default/exchangerates";

let servers: RawHttpCluster[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const s of servers.splice(0)) await s.server.stop().catch(() => {});
  servers = [];
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "capstan-restart-"));
  dirs.push(dir);
  return dir;
}

async function start(dir: string, options: { historySize?: number } = {}): Promise<RawHttpCluster> {
  const t = await startRawHttpCluster({ dataDir: dir, kubelet: false, ...options });
  servers.push(t);
  return t;
}

async function stop(t: RawHttpCluster): Promise<void> {
  await t.stop();
  servers = servers.filter((s) => s !== t);
}

describe("startApiServer({ dataDir })", () => {
  it("serves the objects, custom resources, CA and token of the previous run after a restart", async () => {
    const dir = dataDir();
    const first = await start(dir);
    const cm = await first.request("POST", CMS, { body: configMap("kept", { a: "1" }) });
    expect(cm.status).toBe(201);
    expect((await first.request("POST", CRDS, { body: exchangeRateCrd() })).status).toBe(201);
    const rate = await waitUntil(async () => {
      const res = await first.request("POST", RATES, {
        body: { apiVersion: "operators.example.com/v1", kind: "ExchangeRate", metadata: { name: "eur" } },
      });
      return res.status === 201 ? res : undefined;
    });
    const { token, caPem } = first.server;
    await stop(first);

    const second = await start(dir);
    expect(second.server.token).toBe(token);
    expect(second.server.caPem).toBe(caPem);
    const again = await second.request("GET", `${CMS}/kept`);
    expect(again.body.metadata.resourceVersion).toBe(cm.body.metadata.resourceVersion);
    expect(again.body.data).toEqual({ a: "1" });
    const rateAgain = await waitUntil(async () => {
      const res = await second.request("GET", `${RATES}/eur`);
      return res.status === 200 ? res : undefined;
    });
    expect(rateAgain.body.metadata.uid).toBe(rate.body.metadata.uid);
    const next = await second.request("POST", CMS, { body: configMap("next") });
    expect(Number(next.body.metadata.resourceVersion)).toBeGreaterThan(Number(rate.body.metadata.resourceVersion));
  });

  it("resumes a watch from a resourceVersion of the previous run with every later event", async () => {
    const dir = dataDir();
    const first = await start(dir);
    const a = await first.request("POST", CMS, { body: configMap("a") });
    await first.request("POST", CMS, { body: configMap("b") });
    await first.request("PUT", `${CMS}/a`, { body: configMap("a", { changed: "yes" }) });
    await stop(first);

    const second = await start(dir);
    const w = await second.watch(`${CMS}?watch=true&resourceVersion=${a.body.metadata.resourceVersion}`);
    await second.request("POST", CMS, { body: configMap("c") });
    const events = [await w.next(), await w.next(), await w.next()];
    expect(events.map((e) => `${e?.type} ${e?.object.metadata.name}`)).toEqual(["ADDED b", "MODIFIED a", "ADDED c"]);
    w.close();
  });

  it("answers 410 Expired to a watch from before the history that survived the restart", async () => {
    const dir = dataDir();
    const first = await start(dir);
    const old = await first.request("POST", CMS, { body: configMap("old") });
    for (let i = 0; i < 6; i++) await first.request("POST", CMS, { body: configMap(`n${i}`) });
    await stop(first);

    // The replayed log is longer than the history kept: the oldest changes are gone.
    const second = await start(dir, { historySize: 3 });
    const w = await second.watch(`${CMS}?watch=true&resourceVersion=${old.body.metadata.resourceVersion}`);
    const e = await w.next();
    expect(e?.type).toBe("ERROR");
    expect(e?.object).toMatchObject({ kind: "Status", reason: "Expired", code: 410 });
    await w.ended;
  });

  it("refuses a second server on a data dir in use, without leaking the first's files", async () => {
    const dir = dataDir();
    await start(dir);
    await expect(startRawHttpCluster({ dataDir: dir, kubelet: false })).rejects.toThrow(/already open/);
  });
});
