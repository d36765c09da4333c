import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { KubeClient } from "../../packages/capstan/src/client/resource-client.ts";
import { ConfigMapKind, clientFor } from "./support/client.ts";
import { json, type RecordingHttpsServer, startRecordingHttpsServer } from "./support/recording-https-server.ts";

let server: RecordingHttpsServer;
let client: KubeClient;

beforeEach(async () => {
  server = await startRecordingHttpsServer();
  // One socket: a request in flight holds the whole pool.
  client = clientFor(server, { connections: 1 });
});
afterEach(async () => {
  await client.close();
  await server.close();
});

const cm = { metadata: { name: "a", namespace: "ns1" }, data: { k: "v" } };

/** GET of `slow` answers only once the returned function is called. */
function holdSlow(): () => void {
  let release!: () => void;
  const released = new Promise<void>((r) => {
    release = r;
  });
  server.on("GET", "/api/v1/namespaces/ns1/configmaps/slow", async (_req, res) => {
    await released;
    json(res, 200, { ...cm, metadata: { ...cm.metadata, name: "slow" } });
  });
  server.on("GET", "/api/v1/namespaces/ns1/configmaps/a", (_req, res) => json(res, 200, cm));
  return release;
}

describe("KubeClient.withOwnConnections", () => {
  it("answers on its own connection while every socket of its client is busy", async () => {
    const release = holdSlow();
    const slow = client.resource(ConfigMapKind, "ns1").get("slow");
    await expect.poll(() => server.requests.length).toBe(1); // the slow GET holds the client's only socket
    const view = client.withOwnConnections();
    await expect(view.resource(ConfigMapKind, "ns1").get("a")).resolves.toMatchObject(cm);
    // The client's own next request still waits for its socket: only the view got through.
    let parentAnswered = false;
    const parent = client
      .resource(ConfigMapKind, "ns1")
      .get("a")
      .then(() => {
        parentAnswered = true;
      });
    await view.resource(ConfigMapKind, "ns1").get("a");
    expect(parentAnswered).toBe(false);
    release();
    await Promise.all([slow, parent]);
    expect(parentAnswered).toBe(true);
    await view.close();
  });

  it("is closed with the client it came from, and closing it leaves that client working", async () => {
    holdSlow();
    const first = client.withOwnConnections();
    await first.resource(ConfigMapKind, "ns1").get("a");
    await first.close();
    await expect(client.resource(ConfigMapKind, "ns1").get("a")).resolves.toMatchObject(cm);

    const second = client.withOwnConnections();
    await second.resource(ConfigMapKind, "ns1").get("a");
    await client.close();
    await expect(second.resource(ConfigMapKind, "ns1").get("a")).rejects.toThrow(/closed/);
    await expect.poll(() => server.openSockets()).toBe(0);
  });
});
