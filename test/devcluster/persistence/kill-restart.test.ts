/**
 * The crash test of `--data-dir`: a `capstan apiserver` child process takes concurrent writes, is
 * killed with SIGKILL in the middle of them, and is restarted on the same directory. Every write the
 * client saw acknowledged must be there with the resourceVersion it was acknowledged with.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, request } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { type ApiserverProcess, startApiserverProcess } from "../support/apiserver-process.ts";

const children = new Set<ChildProcess>();
const agents = new Set<Agent>();
const dirs: string[] = [];

afterEach(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  children.clear();
  for (const agent of agents) await agent.close();
  agents.clear();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function startChild(dataDir: string, kubeconfig: string): Promise<ApiserverProcess> {
  return startApiserverProcess(kubeconfig, ["--data-dir", dataDir], (child) => children.add(child));
}

function credentials(kubeconfig: string): { token: string; ca: string } {
  const kc = parse(readFileSync(kubeconfig, "utf8"));
  return {
    token: kc.users[0].user.token,
    ca: Buffer.from(kc.clusters[0].cluster["certificate-authority-data"], "base64").toString(),
  };
}

// biome-ignore lint/suspicious/noExplicitAny: test reads arbitrary JSON
type Json = any;

describe("capstan apiserver --data-dir under kill -9", () => {
  it("loses no acknowledged write, keeps resourceVersions, credentials and watch history across a SIGKILL", async () => {
    const dir = mkdtempSync(join(tmpdir(), "capstan-kill-"));
    dirs.push(dir);
    const dataDir = join(dir, "data");
    const kubeconfig = join(dir, "kubeconfig");
    const first = await startChild(dataDir, kubeconfig);
    const { token, ca } = credentials(kubeconfig);
    const agent = new Agent({ connect: { ca }, connections: 16 });
    agents.add(agent);
    const call = async (base: string, method: string, path: string, body?: unknown) => {
      const res = await request(`${base}${path}`, {
        method: method as "GET",
        dispatcher: agent,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.statusCode, body: (await res.body.json()) as Json };
    };

    /** name -> the resourceVersion and data of its last acknowledged write. */
    const acked = new Map<string, { rv: string; value: string }>();
    const ackedCreates: { name: string; rv: number }[] = [];
    let stopWriting = false;
    let next = 0;
    const killAfter = 400;
    let killed!: () => void;
    const killNow = new Promise<void>((resolve) => {
      killed = resolve;
    });
    const cms = "/api/v1/namespaces/default/configmaps";
    const writer = async () => {
      while (!stopWriting) {
        const name = `cm-${next++}`;
        try {
          const created = await call(first.url, "POST", cms, { metadata: { name }, data: { v: "0" } });
          if (created.status !== 201) throw new Error(`create ${created.status}`);
          const rv = created.body.metadata.resourceVersion as string;
          acked.set(name, { rv, value: "0" });
          ackedCreates.push({ name, rv: Number(rv) });
          // Every third object is updated too: the acknowledged update is what must survive.
          if (next % 3 === 0) {
            const updated = await call(first.url, "PUT", `${cms}/${name}`, {
              metadata: { name, resourceVersion: rv },
              data: { v: "1" },
            });
            if (updated.status !== 200) throw new Error(`update ${updated.status}`);
            acked.set(name, { rv: updated.body.metadata.resourceVersion, value: "1" });
          }
        } catch {
          // The server died mid-request: this write was never acknowledged.
          return;
        }
        if (acked.size >= killAfter) killed();
      }
    };
    const writers = Array.from({ length: 8 }, () => writer());
    await killNow;
    first.child.kill("SIGKILL");
    await first.exited;
    stopWriting = true;
    await Promise.all(writers);
    expect(first.child.signalCode).toBe("SIGKILL");
    expect(acked.size).toBeGreaterThanOrEqual(killAfter);

    const second = await startChild(dataDir, kubeconfig);
    // The kubeconfig's token and CA still work: the same credentials came back from the data dir.
    const listed = await call(second.url, "GET", cms);
    expect(listed.status).toBe(200);
    const found = new Map<string, Json>(listed.body.items.map((item: Json) => [item.metadata.name, item]));
    const missing: string[] = [];
    for (const [name, { rv, value }] of acked) {
      const item = found.get(name);
      if (!item) {
        missing.push(name);
        continue;
      }
      // A later write may have been durable without its acknowledgement reaching the client: never older.
      if (item.metadata.resourceVersion === rv) expect(item.data.v).toBe(value);
      else expect(Number(item.metadata.resourceVersion)).toBeGreaterThan(Number(rv));
    }
    expect(missing).toEqual([]);

    // Revisions continue: a new write gets a resourceVersion above every acknowledged one.
    const maxAcked = Math.max(...[...acked.values()].map((a) => Number(a.rv)));
    const after = await call(second.url, "POST", cms, { metadata: { name: "after-restart" } });
    expect(after.status).toBe(201);
    expect(Number(after.body.metadata.resourceVersion)).toBeGreaterThan(maxAcked);

    // A watch from a resourceVersion of the first run replays every acknowledged create after it.
    ackedCreates.sort((a, b) => a.rv - b.rv);
    const from = ackedCreates[Math.floor(ackedCreates.length / 2)]!.rv;
    const res = await request(`${second.url}${cms}?watch=true&resourceVersion=${from}`, {
      dispatcher: agent,
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.statusCode).toBe(200);
    const added = new Map<string, number>();
    let buffer = "";
    for await (const chunk of res.body) {
      buffer += (chunk as Buffer).toString();
      let nl = buffer.indexOf("\n");
      let done = false;
      while (nl >= 0) {
        const event = JSON.parse(buffer.slice(0, nl)) as Json;
        buffer = buffer.slice(nl + 1);
        nl = buffer.indexOf("\n");
        if (event.type === "ADDED")
          added.set(event.object.metadata.name, Number(event.object.metadata.resourceVersion));
        if (event.object.metadata.name === "after-restart") done = true;
      }
      if (done) break;
    }
    res.body.destroy();
    for (const { name, rv } of ackedCreates.filter((c) => c.rv > from)) expect(added.get(name), name).toBe(rv);

    const exited = second.exited;
    second.child.kill("SIGTERM");
    await exited;
    expect(second.child.exitCode).toBe(0);
  }, 60_000);
});
