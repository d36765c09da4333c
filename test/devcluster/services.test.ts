/**
 * Services as kube-apiserver keeps them: the `default/kubernetes` Service of every cluster, cluster IPs
 * allocated around the ones already held (also across a persistent restart), a taken IP refused.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type RawHttpCluster, startRawHttpCluster } from "./support/http.ts";

const SERVICES = "/api/v1/namespaces/default/services";

let servers: RawHttpCluster[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function start(dataDir?: string): Promise<RawHttpCluster> {
  const t = await startRawHttpCluster({ kubelet: false, ...(dataDir ? { dataDir } : {}) });
  servers.push(t);
  return t;
}

function service(name: string, clusterIP?: string): Record<string, unknown> {
  return { metadata: { name }, spec: { ...(clusterIP ? { clusterIP } : {}), ports: [{ port: 80 }] } };
}

describe("services", () => {
  it("every server has default/kubernetes at 10.96.0.1, port 443 pointing at the API server's port", async () => {
    const t = await start();
    const res = await t.request("GET", `${SERVICES}/kubernetes`);
    expect(res.status).toBe(200);
    expect(res.body.metadata.labels).toEqual({ component: "apiserver", provider: "kubernetes" });
    expect(res.body.spec).toMatchObject({
      type: "ClusterIP",
      clusterIP: "10.96.0.1",
      clusterIPs: ["10.96.0.1"],
      ports: [{ name: "https", port: 443, protocol: "TCP", targetPort: Number(new URL(t.server.url).port) }],
    });
  });

  it("allocates cluster IPs around taken ones and refuses a taken one with the allocator's 422", async () => {
    const t = await start();
    const explicit = await t.request("POST", SERVICES, { body: service("explicit", "10.96.0.3") });
    expect(explicit.status).toBe(201);
    const ips: string[] = [];
    for (const name of ["a", "b", "c"]) {
      const res = await t.request("POST", SERVICES, { body: service(name) });
      expect(res.status).toBe(201);
      ips.push(res.body.spec.clusterIP);
    }
    expect(ips).toEqual(["10.96.0.2", "10.96.0.4", "10.96.0.5"]);
    const taken = await t.request("POST", SERVICES, { body: service("dup", "10.96.0.4") });
    expect(taken.status).toBe(422);
    expect(taken.body.message).toContain(
      'Service "dup" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.0.4"}: failed to allocate IP 10.96.0.4: provided IP is already allocated',
    );
    expect(taken.body.details.causes).toEqual([
      {
        reason: "FieldValueInvalid",
        message:
          'Invalid value: []string{"10.96.0.4"}: failed to allocate IP 10.96.0.4: provided IP is already allocated',
        field: "spec.clusterIPs",
      },
    ]);
    // A headless Service holds no address.
    const headless = await t.request("POST", SERVICES, { body: service("headless", "None") });
    expect(headless.status).toBe(201);
    expect(headless.body.spec.clusterIP).toBe("None");
  });

  it("a restarted persistent server hands out no address its stored Services hold", async () => {
    const dir = mkdtempSync(join(tmpdir(), "capstan-services-"));
    dirs.push(dir);
    const first = await start(dir);
    const kept = await first.request("POST", SERVICES, { body: service("kept") });
    expect(kept.body.spec.clusterIP).toBe("10.96.0.2");
    await first.stop();
    servers = servers.filter((s) => s !== first);

    const second = await start(dir);
    const next = await second.request("POST", SERVICES, { body: service("next") });
    expect(next.status).toBe(201);
    expect(next.body.spec.clusterIP).not.toBe("10.96.0.2");
    expect(next.body.spec.clusterIP).not.toBe("10.96.0.1");
    // The kubernetes Service now points at this run's port.
    const kubernetes = await second.request("GET", `${SERVICES}/kubernetes`);
    expect(kubernetes.body.spec.ports[0].targetPort).toBe(Number(new URL(second.server.url).port));
  });
});
