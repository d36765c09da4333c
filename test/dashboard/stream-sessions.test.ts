/**
 * A page's one stream (stream-sessions.ts) over HTTP: topics subscribed and ended with POST and
 * DELETE, their events tagged with the page's id, the Origin check, the bounds, and a session
 * forgotten once its stream closes.
 */
import { request } from "node:http";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ConfigMap } from "../../packages/capstan/src/resources/builtins.ts";
import { type Dashboard, startDashboard } from "../../packages/capstan-dev/src/dashboard/index.ts";
import { MAX_SESSIONS, MAX_TOPICS } from "../../packages/capstan-dev/src/dashboard/stream-sessions.ts";
import { startTestCluster, type TestCluster } from "../../packages/capstan-dev/src/testing/index.ts";
import { apiUrl } from "./support/dashboard-url.ts";
import { openSse, type SseReader } from "./support/sse-client.ts";

const CONFIG_MAPS = "core/v1/configmaps";

let cluster: TestCluster;
let dashboard: Dashboard;

beforeAll(async () => {
  cluster = await startTestCluster();
  dashboard = await startDashboard({ client: cluster.client });
}, 30_000);
afterAll(async () => {
  await dashboard?.stop();
  await cluster?.stop();
});

/** A POST or DELETE from the dashboard's page (its Origin, unless `origin` says otherwise). */
function call(
  method: string,
  path: string,
  body?: unknown,
  origin: string | null = new URL(dashboard.url).origin,
): Promise<{ status: number; body: { error?: { message: string } } & Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {
      authorization: `Bearer ${dashboard.token}`,
      "content-type": "application/json",
    };
    if (origin !== null) headers.origin = origin;
    const req = request(new URL(path, dashboard.url), { method, headers }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => {
        text += c;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : {} }));
    });
    req.on("error", reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

const subscribe = (session: string, id: string, topic: string, query: Record<string, string> = {}) =>
  call("POST", `/api/stream/${session}/topics`, { id, topic, query });

it("sends each subscribed topic's events tagged with the page's id, until the topic is deleted", async () => {
  const stream = await openSse(apiUrl(dashboard, "/api/stream?session=session-one"));
  try {
    expect(stream.status).toBe(200);
    expect((await subscribe("session-one", "o1", "objects", { kind: CONFIG_MAPS })).status).toBe(201);
    const snapshot = await stream.next("snapshot");
    expect(snapshot.topic).toBe("o1");
    expect((snapshot.data as { kind: { id: string } }).kind.id).toBe(CONFIG_MAPS);
    expect((await subscribe("session-one", "k1", "kinds")).status).toBe(201);
    expect((await stream.next("kinds")).topic).toBe("k1");

    await cluster.client
      .resource(ConfigMap, "default")
      .create(ConfigMap.make({ metadata: { name: "tagged", namespace: "default" } }));
    const upsert = await stream.next("upsert");
    expect(upsert).toMatchObject({ topic: "o1", data: { key: "default/tagged" } });

    // Deleted (twice: the second is answered alike), o1 sends nothing more; a new topic o2 does.
    expect((await call("DELETE", "/api/stream/session-one/topics/o1")).status).toBe(204);
    expect((await call("DELETE", "/api/stream/session-one/topics/o1")).status).toBe(204);
    expect((await subscribe("session-one", "o2", "objects", { kind: CONFIG_MAPS })).status).toBe(201);
    await stream.next("snapshot");
    await cluster.client
      .resource(ConfigMap, "default")
      .create(ConfigMap.make({ metadata: { name: "after", namespace: "default" } }));
    const next = await stream.next("upsert");
    expect(next).toMatchObject({ topic: "o2", data: { key: "default/after" } });
    expect(await stream.next("upsert", 500).catch(() => "none")).toBe("none");
  } finally {
    stream.close();
  }
}, 30_000);

it("refuses a topic from another Origin, of a session not open, of an unknown kind or topic, with a clear error", async () => {
  const stream = await openSse(apiUrl(dashboard, "/api/stream?session=session-two"));
  try {
    const foreign = await call(
      "POST",
      "/api/stream/session-two/topics",
      { id: "a", topic: "kinds" },
      "http://evil.example",
    );
    expect(foreign.status).toBe(403);
    expect(foreign.body.error?.message).toMatch(/Origin "http:\/\/evil.example"/);
    expect((await call("POST", "/api/stream/session-two/topics", { id: "a", topic: "kinds" }, null)).status).toBe(403);
    const unopened = await subscribe("no-such-session", "a", "kinds");
    expect(unopened.status).toBe(410);
    expect(unopened.body.error?.message).toMatch(/no open stream session "no-such-session"/);
    const unknownKind = await subscribe("session-two", "a", "objects", { kind: "example.com/v1/nothings" });
    expect(unknownKind.status).toBe(404);
    expect(unknownKind.body.error?.message).toMatch(/does not watch kind "example.com\/v1\/nothings"/);
    const unknownTopic = await subscribe("session-two", "a", "weather");
    expect(unknownTopic.status).toBe(400);
    expect(unknownTopic.body.error?.message).toMatch(/unknown topic "weather" \(known: kinds, objects, object, logs\)/);
    expect((await subscribe("session-two", "bad id!", "kinds")).status).toBe(400);
    const shortSession = await openSse(apiUrl(dashboard, "/api/stream?session=x"));
    expect(shortSession.status).toBe(400);
    shortSession.close();
  } finally {
    stream.close();
  }
}, 30_000);

it(`bounds a session to ${MAX_TOPICS} topics and the dashboard to ${MAX_SESSIONS} sessions`, async () => {
  const streams: SseReader[] = [];
  try {
    for (let i = 0; i < MAX_SESSIONS; i++) {
      const s = await openSse(apiUrl(dashboard, `/api/stream?session=bounded-${i}`));
      streams.push(s);
      expect(s.status).toBe(200);
    }
    const extra = await openSse(apiUrl(dashboard, "/api/stream?session=one-too-many"));
    extra.close();
    expect(extra.status).toBe(429);
    for (let i = 0; i < MAX_TOPICS; i++) expect((await subscribe("bounded-0", `t${i}`, "logs")).status).toBe(201);
    const tooMany = await subscribe("bounded-0", "one-more", "logs");
    expect(tooMany.status).toBe(429);
    expect(tooMany.body.error?.message).toMatch(new RegExp(`at most ${MAX_TOPICS} topics`));
    // Replacing a topic of the same id is not one more.
    expect((await subscribe("bounded-0", "t0", "kinds")).status).toBe(201);
  } finally {
    for (const s of streams) s.close();
  }
  // Their streams closed, the sessions are forgotten: new ones open, old ones take no topic.
  await expect.poll(async () => (await subscribe("bounded-1", "a", "kinds")).status, { timeout: 10_000 }).toBe(410);
  await expect
    .poll(
      async () => {
        const s = await openSse(apiUrl(dashboard, "/api/stream?session=after-bound"));
        s.close();
        return s.status;
      },
      { timeout: 10_000 },
    )
    .toBe(200);
}, 30_000);
