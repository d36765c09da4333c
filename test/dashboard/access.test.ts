/**
 * The dashboard's access token (access-token.ts) over HTTP: nothing without it, the cookie a first
 * visit gets for it, the bearer header, and another user of the machine left outside.
 */
import { spawn } from "node:child_process";
import { type IncomingHttpHeaders, request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigMap } from "../../packages/capstan/src/resources/builtins.ts";
import { accessCookieName } from "../../packages/capstan-dev/src/dashboard/access-token.ts";
import { type Dashboard, startDashboard } from "../../packages/capstan-dev/src/dashboard/index.ts";
import { startTestCluster, type TestCluster } from "../../packages/capstan-dev/src/testing/index.ts";

/** What a request got: status, headers and as much of the body as arrived (streams are cut after their headers). */
interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** One request to the dashboard, as raw as a script or another user's tool would send it. */
function send(
  dashboard: Dashboard,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, dashboard.url), { method: options.method ?? "GET", headers: options.headers });
    req.on("response", (res) => {
      let body = "";
      res.setEncoding("utf8");
      const answer = () => ({ status: res.statusCode ?? 0, headers: res.headers, body });
      if (res.headers["content-type"]?.startsWith("text/event-stream")) {
        // An open stream: its first bytes show it is one; then hang up.
        res.once("data", (chunk: string) => {
          body = chunk;
          resolve(answer());
          req.destroy();
        });
        return;
      }
      res.on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () => resolve(answer()));
    });
    req.on("error", reject);
    req.end(options.body ?? (options.method === "POST" ? "{}" : undefined));
  });
}

const STREAM = "/api/stream/objects?kind=core/v1/configmaps";
/** A page, one of its assets, a JSON route and an event stream: what a browser tab requests. */
const ROUTES = ["/", "/app.js", "/api/kinds", STREAM];
const TOKEN = "fixed-token-for-the-access-tests-0123456789";

let cluster: TestCluster;
let dashboard: Dashboard;

beforeAll(async () => {
  cluster = await startTestCluster();
  dashboard = await startDashboard({ client: cluster.client, token: TOKEN });
});
afterAll(async () => {
  await dashboard?.stop();
  await cluster?.stop();
});

describe("the dashboard without its access token", () => {
  it("answers 401 to a page, an asset, a JSON route, an event stream and a write, saying where to open it", async () => {
    for (const path of ROUTES) {
      const answer = await send(dashboard, path);
      expect(answer.status, path).toBe(401);
      expect(answer.headers["www-authenticate"], path).toMatch(/^Bearer /);
      expect(answer.body, path).toContain("open the dashboard at the address capstan dev printed");
      expect(answer.body, path).not.toContain(TOKEN);
    }
    expect((await send(dashboard, "/")).headers["content-type"]).toMatch(/^text\/plain/);
    expect(JSON.parse((await send(dashboard, "/api/kinds")).body).error).toMatchObject({
      code: 401,
      reason: "Unauthorized",
    });
    // Before any route or method check: a write gets no further than a read.
    expect((await send(dashboard, "/api/kinds", { method: "POST" })).status).toBe(401);
  });

  it("answers 401 to a wrong token in the query, a bearer header or the cookie", async () => {
    const wrong = `${TOKEN.slice(0, -1)}x`;
    const cookie = `${accessCookieName(dashboard.port)}=${wrong}`;
    for (const path of ROUTES) {
      expect((await send(dashboard, `${path}${path.includes("?") ? "&" : "?"}token=${wrong}`)).status, path).toBe(401);
      expect((await send(dashboard, path, { headers: { authorization: `Bearer ${wrong}` } })).status, path).toBe(401);
      expect((await send(dashboard, path, { headers: { cookie } })).status, path).toBe(401);
    }
    // The right token under another port's cookie name: that is another dashboard's cookie.
    const otherPort = `${accessCookieName(dashboard.port + 1)}=${TOKEN}`;
    expect((await send(dashboard, "/api/kinds", { headers: { cookie: otherPort } })).status).toBe(401);
    // A prefix or an empty token is not the token.
    expect((await send(dashboard, `/api/kinds?token=${TOKEN.slice(0, 22)}`)).status).toBe(401);
    expect((await send(dashboard, "/api/kinds?token=")).status).toBe(401);
  });

  it("answers 401 to the write routes, even from the dashboard's own Origin with a JSON body, and writes nothing", async () => {
    const headers = { origin: new URL(dashboard.url).origin, "content-type": "application/json" };
    const object = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "sneaked", namespace: "default" } };
    await cluster.client
      .resource(ConfigMap, "default")
      .create(ConfigMap.make({ metadata: { name: "kept", namespace: "default" } }));
    const writes: [string, string][] = [
      ["POST", "/api/objects?kind=core/v1/configmaps"],
      ["PUT", "/api/object?kind=core/v1/configmaps&namespace=default&name=sneaked"],
      ["DELETE", "/api/object?kind=core/v1/configmaps&namespace=default&name=kept"],
      ["POST", "/api/yaml/parse"],
    ];
    for (const [method, path] of writes) {
      const answer = await send(dashboard, path, { method, headers, body: JSON.stringify({ object, yaml: "a: 1" }) });
      expect(answer.status, `${method} ${path}`).toBe(401);
    }
    const names = (await cluster.client.resource(ConfigMap, "default").list()).items.map((cm) => cm.metadata?.name);
    expect(names).not.toContain("sneaked");
    expect(names).toContain("kept");
  });

  // Switching users takes root (CI and the development container run as root).
  it.skipIf(process.getuid?.() !== 0)(
    "answers another user of the machine, who cannot know the token, with 401",
    async () => {
      const script = `const r = await fetch(${JSON.stringify(new URL("/api/kinds", dashboard.url).href)});
      process.stdout.write(r.status + " " + (await r.text()));`;
      const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
        uid: 65534, // nobody
        gid: 65534,
        cwd: "/",
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      child.stdout.on("data", (c: Buffer) => {
        out += c.toString();
      });
      child.stderr.on("data", (c: Buffer) => {
        out += c.toString();
      });
      const code = await new Promise((resolve) => child.once("exit", resolve));
      expect(out).toMatch(/^401 .*Unauthorized/);
      expect(code).toBe(0);
    },
  );
});

describe("the dashboard with its access token", () => {
  it("prints an address carrying the token, which a first visit trades for a cookie and a redirect without it", async () => {
    expect(new URL(dashboard.url).searchParams.get("token")).toBe(TOKEN);
    const first = await send(dashboard, new URL(dashboard.url).pathname + new URL(dashboard.url).search);
    expect(first.status).toBe(303);
    expect(first.headers.location).toBe("/");
    const [cookie] = first.headers["set-cookie"] ?? [];
    expect(cookie).toBe(`${accessCookieName(dashboard.port)}=${TOKEN}; HttpOnly; SameSite=Strict; Path=/`);
    // The page's own parameters stay in the address it is sent to.
    const withKind = await send(dashboard, `/?kind=core/v1/pods&token=${TOKEN}`);
    expect(withKind.status).toBe(303);
    expect(withKind.headers.location).toBe("/?kind=core%2Fv1%2Fpods");
  });

  it("admits the cookie alone on pages, assets, JSON routes and event streams", async () => {
    const cookie = `other=1; ${accessCookieName(dashboard.port)}=${TOKEN}`;
    for (const path of ROUTES) expect((await send(dashboard, path, { headers: { cookie } })).status, path).toBe(200);
    const stream = await send(dashboard, STREAM, { headers: { cookie } });
    expect(stream.headers["content-type"]).toMatch(/^text\/event-stream/);
  });

  it("admits Authorization: Bearer, and the token in an /api/ route's query without a redirect", async () => {
    const authorization = `Bearer ${TOKEN}`;
    for (const path of ROUTES)
      expect((await send(dashboard, path, { headers: { authorization } })).status, path).toBe(200);
    expect((await send(dashboard, `/api/kinds?token=${TOKEN}`)).status).toBe(200);
    expect((await send(dashboard, `${STREAM}&token=${TOKEN}`)).status).toBe(200);
  });

  it("checks the Host header before the token: a valid token from a rebound name still gets 403", async () => {
    const answer = await send(dashboard, "/api/kinds", {
      headers: { authorization: `Bearer ${TOKEN}`, host: `evil.example:${dashboard.port}` },
    });
    expect(answer.status).toBe(403);
  });
});

describe("the dashboard's token option", () => {
  it("makes a new random token of 256 bits when given none, another each time", async () => {
    const a = await startDashboard({ client: cluster.client });
    const b = await startDashboard({ client: cluster.client });
    try {
      expect(a.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(b.token).not.toBe(a.token);
      expect((await send(a, "/api/kinds", { headers: { authorization: `Bearer ${b.token}` } })).status).toBe(401);
    } finally {
      await a.stop();
      await b.stop();
    }
  });

  it("refuses a token too short to be secret, or one that cannot go in an address", async () => {
    await expect(startDashboard({ client: cluster.client, token: "secret" })).rejects.toThrow(
      /at least 22 base64url characters/,
    );
    await expect(startDashboard({ client: cluster.client, token: `${TOKEN};x=1` })).rejects.toThrow(/base64url/);
  });
});
