/**
 * Cost of RBAC on the read path. Run: `npx tsx bench/rbac.ts`. Prints one JSON line per scenario
 * (`scenario: "rbac-get"`): GETs of one ConfigMap per second from 16 concurrent HTTPS keep-alive
 * clients, with the `rbac: false` opt-out (AlwaysAllow, which no real cluster runs), with RBAC (the
 * default) as the admin (system:masters, no lookup), and as a ServiceAccount bound to `view` with 0
 * and 200 unrelated ClusterRoleBindings (the evaluation visits every binding). A first, unprinted
 * round warms the JIT, which would otherwise make whichever scenario runs first the slowest.
 * Wall-clock figures on a shared machine: compare lines of one run, not runs.
 */
import { IncomingMessage, type ServerResponse } from "node:http";
import { Socket } from "node:net";
import { Agent, request } from "undici";
import { startApiServer } from "../packages/capstan-dev/src/devcluster/index.ts";
import {
  composePipeline,
  HttpRequestContext,
  type Stage,
} from "../packages/capstan-dev/src/devcluster/request/pipeline.ts";
import { parseRequestInfo } from "../packages/capstan-dev/src/devcluster/request/request-info.ts";

/** Enough requests for a second or two per scenario at a few thousand GETs per second. */
const REQUESTS = 4000;
/** Concurrent clients: enough to keep the server's single thread busy. */
const CONCURRENCY = 16;
/** Requests before measuring: connections opened and the JIT warm. */
const WARMUP = 200;

const RBAC = "rbac.authorization.k8s.io";

async function scenario(rbac: boolean, asServiceAccount: boolean, extraBindings: number, print = true): Promise<void> {
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
  if (print)
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

/** Admin requests pushed through the pipeline's stages per round of {@link stageCost}. */
const STAGE_REQUESTS = 200_000;
const STAGE_ROUNDS = 5;

/**
 * What the stages before the handler cost an admin GET, without a connection or the handler: the
 * server's own stages (request info, authentication, faults, and RBAC's impersonation, authorization
 * and auth-API stages or AlwaysAllow's review stage) in front of a handler that does nothing. CPU
 * microseconds per request, the best of a few rounds: the figure the load of a shared machine
 * disturbs least, and the one to read against bench/apiserver.ts's server_cpu_us_per_get.
 */
async function stageCost(rbac: boolean): Promise<number[]> {
  const server = await startApiServer({ rbac, kubelet: false, builtinPlugins: false });
  const noHandler: Stage = () => Promise.resolve();
  const pipeline = composePipeline([...server.internals.stages.slice(0, -1), noHandler]);
  const socket = new Socket();
  const path = "/api/v1/namespaces/default/configmaps/c";
  const rawHeaders = ["Authorization", `Bearer ${server.token}`, "Accept", "application/json", "User-Agent", "bench"];
  // A real IncomingMessage per request, as the server gets: its headers objects are built on first use.
  const incoming = () => {
    const req = new IncomingMessage(socket);
    req.method = "GET";
    req.url = path;
    // What Node's HTTP parser calls with the headers it read; `headers` is then built from them on first use.
    (req as unknown as { _addHeaderLines(headers: string[], n: number): void })._addHeaderLines(
      rawHeaders,
      rawHeaders.length,
    );
    return req;
  };
  // Any answer but the no-op handler's (a 401, a 403, a 500) is a broken measurement.
  const res = {
    writeHead: (code: number) => {
      throw new Error(`the stages answered ${code}`);
    },
  } as unknown as ServerResponse;
  const url = new URL(path, "https://localhost");
  const empty = parseRequestInfo("GET", "/", new URLSearchParams());
  const signal = new AbortController().signal;
  const rounds: number[] = [];
  for (let round = 0; round < STAGE_ROUNDS; round++) {
    const before = process.cpuUsage();
    for (let i = 0; i < STAGE_REQUESTS; i++) {
      const req = incoming();
      await pipeline(new HttpRequestContext(req, res, url, empty, signal));
    }
    const used = process.cpuUsage(before);
    rounds.push(Math.round(((used.user + used.system) / STAGE_REQUESTS) * 1000) / 1000);
  }
  await server.stop();
  return rounds;
}

// Alternated, so that both see the same JIT state and machine load.
const stageRounds = { alwaysAllow: [] as number[], rbac: [] as number[] };
for (let i = 0; i < 2; i++) {
  stageRounds.alwaysAllow.push(...(await stageCost(false)));
  stageRounds.rbac.push(...(await stageCost(true)));
}
console.log(
  JSON.stringify({
    scenario: "admin-stages",
    requests_per_round: STAGE_REQUESTS,
    always_allow_cpu_us_per_request: Math.min(...stageRounds.alwaysAllow),
    rbac_cpu_us_per_request: Math.min(...stageRounds.rbac),
  }),
);

await scenario(false, false, 0, false);
await scenario(true, false, 0, false);
await scenario(false, false, 0);
await scenario(true, false, 0);
await scenario(true, true, 0);
await scenario(true, true, 200);
