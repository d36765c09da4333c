/** ServiceAccount tokens across a restart: signed under the admin token, which `dataDir` keeps. */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, request } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { ServiceAccountTokens } from "../../../packages/capstan-dev/src/devcluster/auth/service-account-tokens.ts";
import { type ApiServer, startApiServer } from "../../../packages/capstan-dev/src/devcluster/index.ts";

let server: ApiServer | undefined;
let dir: string | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

async function call(s: ApiServer, method: string, path: string, token: string, body?: unknown) {
  const agent = new Agent({ connect: { ca: s.caPem } });
  try {
    const res = await request(`${s.url}${path}`, {
      method: method as "GET",
      dispatcher: agent,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.body.text();
    return { status: res.statusCode, body: text === "" ? undefined : JSON.parse(text) };
  } finally {
    await agent.close();
  }
}

describe("ServiceAccount tokens and restarts", () => {
  it("are still accepted after a restart on the same data dir", async () => {
    dir = await mkdtemp(join(tmpdir(), "capstan-rbac-restart-"));
    server = await startApiServer({ kubelet: false, dataDir: dir });
    await call(server, "POST", "/api/v1/namespaces/default/serviceaccounts", server.token, {
      metadata: { name: "op" },
    });
    const issued = await call(server, "POST", "/api/v1/namespaces/default/serviceaccounts/op/token", server.token, {});
    const token = issued.body.status.token as string;
    expect((await call(server, "GET", "/api", token)).status).toBe(200);
    await server.stop();
    server = await startApiServer({ kubelet: false, dataDir: dir });
    expect((await call(server, "GET", "/api", token)).status).toBe(200);
  });

  it("verify only under the key that signed them", async () => {
    server = await startApiServer({ kubelet: false, builtinPlugins: false });
    const api = server.internals.api;
    const sa = await api.create({ group: "", version: "v1", plural: "serviceaccounts" }, "default", {
      metadata: { name: "op" },
    });
    const ref = { namespace: "default", name: "op", uid: String(sa.metadata?.["uid"]) };
    const signer = new ServiceAccountTokens(api, Buffer.alloc(32, 1));
    const { token } = signer.issue(ref, signer.audiences, 3600);
    expect(new ServiceAccountTokens(api, Buffer.alloc(32, 1)).authenticate(token)?.username).toBe(
      "system:serviceaccount:default:op",
    );
    expect(new ServiceAccountTokens(api, Buffer.alloc(32, 2)).authenticate(token)).toBeUndefined();
  });
});
