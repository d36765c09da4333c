/**
 * Cost of RBAC on the read path. Run: `npx tsx bench/rbac.ts`. Prints one JSON line per scenario
 * (`scenario: "rbac-get"`): GETs of one ConfigMap per second from 16 concurrent HTTPS keep-alive
 * clients, without RBAC, with RBAC as the admin (system:masters, no lookup), and as a ServiceAccount
 * bound to `view` with 0 and 200 unrelated ClusterRoleBindings (the evaluation visits every binding).
 * Wall-clock figures on a shared machine: compare lines of one run, not runs.
 */
import { Agent, request } from "undici";
import { startApiServer } from "../packages/capstan-dev/src/devcluster/index.ts";

/** Enough requests for a second or two per scenario at a few thousand GETs per second. */
const REQUESTS = 4000;
/** Concurrent clients: enough to keep the server's single thread busy. */
const CONCURRENCY = 16;
/** Requests before measuring: connections opened and the JIT warm. */
const WARMUP = 200;

const RBAC = "rbac.authorization.k8s.io";

async function scenario(rbac: boolean, asServiceAccount: boolean, extraBindings: number): Promise<void> {
  const server = await startApiServer({ rbac, kubelet: false });
  const agent = new Agent({ connect: { ca: server.caPem }, connections: CONCURRENCY });
  const api = server.internals.api;
  await api.create({ group: "", version: "v1", plural: "configmaps" }, "default", { metadata: { name: "c" } });
  await api.create({ group: "", version: "v1", plural: "serviceaccounts" }, "default", { metadata: { name: "sa" } });
  const crb = { group: RBAC, version: "v1", plural: "clusterrolebindings" };
  for (let i = 0; i < extraBindings; i++) {
    await api.create(crb, "", {
      metadata: { name: `b${i}` },
      roleRef: { apiGroup: RBAC, kind: "ClusterRole", name: "view" },
      subjects: [{ kind: "User", name: `u${i}` }],
    });
  }
  let token = server.token;
  if (asServiceAccount) {
    await api.create({ group: RBAC, version: "v1", plural: "rolebindings" }, "default", {
      metadata: { name: "view" },
      roleRef: { apiGroup: RBAC, kind: "ClusterRole", name: "view" },
      subjects: [{ kind: "ServiceAccount", name: "sa" }],
    });
    const res = await request(`${server.url}/api/v1/namespaces/default/serviceaccounts/sa/token`, {
      method: "POST",
      dispatcher: agent,
      headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
      body: "{}",
    });
    token = ((await res.body.json()) as { status: { token: string } }).status.token;
  }
  const get = async () => {
    const res = await request(`${server.url}/api/v1/namespaces/default/configmaps/c`, {
      dispatcher: agent,
      headers: { authorization: `Bearer ${token}` },
    });
    await res.body.text();
    if (res.statusCode !== 200) throw new Error(`GET answered ${res.statusCode}`);
  };
  for (let i = 0; i < WARMUP; i++) await get();
  let started = 0;
  const client = async () => {
    while (started++ < REQUESTS) await get();
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, client));
  const seconds = (performance.now() - t0) / 1000;
  console.log(
    JSON.stringify({
      scenario: "rbac-get",
      rbac,
      as: asServiceAccount ? "serviceaccount" : "admin",
      extra_bindings: extraBindings,
      requests: REQUESTS,
      gets_per_s: Math.round(REQUESTS / seconds),
    }),
  );
  await agent.close();
  await server.stop();
}

await scenario(false, false, 0);
await scenario(true, false, 0);
await scenario(true, true, 0);
await scenario(true, true, 200);
