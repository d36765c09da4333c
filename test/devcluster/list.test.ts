import { afterEach, describe, expect, it } from "vitest";
import { configMap, type RawHttpCluster, startRawHttpCluster } from "./support/http.ts";

let t: RawHttpCluster | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

const CMS = "/api/v1/namespaces/default/configmaps";
/** REST semantics alone: no controllers (scheduler, kubelet) changing pods between requests. */
const REST_ONLY = { builtinPlugins: false };
const names = (res: { body: { items: { metadata: { name: string } }[] } }) =>
  res.body.items.map((i) => i.metadata.name);

async function seed(server: RawHttpCluster): Promise<void> {
  const labels: Record<string, Record<string, string>> = {
    a: { app: "web", tier: "front", rank: "1" },
    b: { app: "web", tier: "back", rank: "5" },
    c: { app: "db", rank: "10" },
    d: {},
  };
  for (const [name, l] of Object.entries(labels)) {
    await server.request("POST", CMS, { body: configMap(name, {}, { labels: l }) });
  }
}

describe("list", () => {
  it("returns a List with kind, apiVersion and the current resourceVersion", async () => {
    t = await startRawHttpCluster(REST_ONLY);
    await seed(t);
    const res = await t.request("GET", CMS);
    expect(res.body.kind).toBe("ConfigMapList");
    expect(res.body.apiVersion).toBe("v1");
    expect(names(res)).toEqual(["a", "b", "c", "d"]);
    const rvs = res.body.items.map((i: { metadata: { resourceVersion: string } }) =>
      Number(i.metadata.resourceVersion),
    );
    expect(Number(res.body.metadata.resourceVersion)).toBeGreaterThanOrEqual(Math.max(...rvs));
  });

  it.each([
    ["app=web", ["a", "b"]],
    ["app==web", ["a", "b"]],
    ["app!=web", ["c", "d"]],
    ["app in (web,db)", ["a", "b", "c"]],
    ["app notin (web)", ["c", "d"]],
    ["tier", ["a", "b"]],
    ["!tier", ["c", "d"]],
    ["app=web,tier=back", ["b"]],
    ["rank>4", ["b", "c"]],
    ["rank<5", ["a"]],
  ])("filters by labelSelector %s", async (selector, expected) => {
    t = await startRawHttpCluster(REST_ONLY);
    await seed(t);
    const res = await t.request("GET", `${CMS}?labelSelector=${encodeURIComponent(selector)}`);
    expect(res.status).toBe(200);
    expect(names(res)).toEqual(expected);
  });

  it("answers a malformed label selector with 400", async () => {
    t = await startRawHttpCluster(REST_ONLY);
    const res = await t.request("GET", `${CMS}?labelSelector=${encodeURIComponent("app in (web")}`);
    expect(res.status).toBe(400);
    expect(res.body.reason).toBe("BadRequest");
  });

  it("filters by metadata.name and metadata.namespace field selectors across namespaces", async () => {
    t = await startRawHttpCluster(REST_ONLY);
    await seed(t);
    await t.request("POST", "/api/v1/namespaces/kube-system/configmaps", { body: configMap("a") });
    const byName = await t.request("GET", "/api/v1/configmaps?fieldSelector=metadata.name%3Da");
    expect(byName.body.items.map((i: { metadata: { namespace: string } }) => i.metadata.namespace)).toEqual([
      "default",
      "kube-system",
    ]);
    const notNs = await t.request("GET", "/api/v1/configmaps?fieldSelector=metadata.namespace!%3Ddefault");
    expect(names(notNs)).toEqual(["a"]);
  });

  it("supports per-kind field selectors (pods spec.nodeName, status.phase; events involvedObject.name)", async () => {
    t = await startRawHttpCluster(REST_ONLY);
    const pod = (name: string, nodeName?: string) => ({
      metadata: { name },
      spec: { nodeName, containers: [{ name: "c", image: "x:1" }] },
    });
    await t.request("POST", "/api/v1/namespaces/default/pods", { body: pod("on-n1", "n1") });
    await t.request("POST", "/api/v1/namespaces/default/pods", { body: pod("unscheduled") });
    const onNode = await t.request("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1");
    expect(names(onNode)).toEqual(["on-n1"]);
    const pending = await t.request(
      "GET",
      "/api/v1/namespaces/default/pods?fieldSelector=status.phase%3DPending,spec.nodeName%3D",
    );
    expect(names(pending)).toEqual(["unscheduled"]);
    await t.request("POST", "/api/v1/namespaces/default/events", {
      body: { metadata: { name: "ev1" }, involvedObject: { kind: "Pod", name: "on-n1" }, reason: "Started" },
    });
    const events = await t.request(
      "GET",
      "/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Don-n1",
    );
    expect(names(events)).toEqual(["ev1"]);
  });

  it("answers an unsupported field selector with 400 field label not supported", async () => {
    t = await startRawHttpCluster(REST_ONLY);
    const res = await t.request("GET", `${CMS}?fieldSelector=data.x%3D1`);
    expect(res.status).toBe(400);
    expect(res.body.message).toBe("field label not supported: data.x");
  });

  it("pages with limit and continue, with remainingItemCount, over a consistent snapshot", async () => {
    t = await startRawHttpCluster(REST_ONLY);
    await seed(t);
    const first = await t.request("GET", `${CMS}?limit=2`);
    expect(names(first)).toEqual(["a", "b"]);
    expect(first.body.metadata.remainingItemCount).toBe(2);
    const token = first.body.metadata.continue as string;
    expect(JSON.parse(Buffer.from(token, "base64url").toString())).toMatchObject({ v: "meta.k8s.io/v1" });
    // Changes after the first page do not show in later pages: they read the first page's snapshot.
    await t.request("POST", CMS, { body: configMap("bb") });
    await t.request("DELETE", `${CMS}/c`);
    const second = await t.request("GET", `${CMS}?limit=2&continue=${encodeURIComponent(token)}`);
    expect(names(second)).toEqual(["c", "d"]);
    expect(second.body.metadata.continue).toBeUndefined();
    expect(second.body.metadata.resourceVersion).toBe(first.body.metadata.resourceVersion);
  });

  it("answers a continue token older than the history with 410 Expired and an inconsistent continue token", async () => {
    t = await startRawHttpCluster({ ...REST_ONLY, historySize: 4 });
    await seed(t);
    const first = await t.request("GET", `${CMS}?limit=1`);
    for (let i = 0; i < 6; i++) await t.request("POST", CMS, { body: configMap(`z${i}`) });
    const res = await t.request("GET", `${CMS}?limit=1&continue=${encodeURIComponent(first.body.metadata.continue)}`);
    expect(res.status).toBe(410);
    expect(res.body.reason).toBe("Expired");
    expect(res.body.message).toMatch(
      /^The provided continue parameter is too old to display a consistent list result\./,
    );
    const resumed = await t.request(
      "GET",
      `${CMS}?limit=100&continue=${encodeURIComponent(res.body.metadata.continue)}`,
    );
    expect(resumed.status).toBe(200);
    expect(names(resumed)[0]).toBe("b");
  });

  it("ignores limit for resourceVersion=0, as the watch cache serving it does", async () => {
    t = await startRawHttpCluster(REST_ONLY);
    await seed(t);
    const res = await t.request("GET", `${CMS}?limit=2&resourceVersion=0`);
    expect(names(res)).toEqual(["a", "b", "c", "d"]);
    expect(res.body.metadata.continue).toBeUndefined();
  });

  it("answers a garbage continue token with 400", async () => {
    t = await startRawHttpCluster(REST_ONLY);
    const res = await t.request("GET", `${CMS}?continue=notatoken`);
    expect(res.status).toBe(400);
  });

  it("serves resourceVersionMatch=Exact from history and rejects it without a resourceVersion", async () => {
    t = await startRawHttpCluster(REST_ONLY);
    await t.request("POST", CMS, { body: configMap("one") });
    const before = await t.request("GET", CMS);
    await t.request("POST", CMS, { body: configMap("two") });
    const exact = await t.request(
      "GET",
      `${CMS}?resourceVersion=${before.body.metadata.resourceVersion}&resourceVersionMatch=Exact`,
    );
    expect(names(exact)).toEqual(["one"]);
    expect(exact.body.metadata.resourceVersion).toBe(before.body.metadata.resourceVersion);
    const notOlder = await t.request(
      "GET",
      `${CMS}?resourceVersion=${before.body.metadata.resourceVersion}&resourceVersionMatch=NotOlderThan`,
    );
    expect(names(notOlder)).toEqual(["one", "two"]);
    const bad = await t.request("GET", `${CMS}?resourceVersionMatch=Exact`);
    expect(bad.status).toBe(422);
    expect(bad.body.message).toBe(
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
    );
  });

  it("waits for a resourceVersion the server reaches meanwhile", async () => {
    t = await startRawHttpCluster(REST_ONLY);
    const current = Number((await t.request("GET", CMS)).body.metadata.resourceVersion);
    const pending = t.request("GET", `${CMS}?resourceVersion=${current + 1}`);
    await t.request("POST", CMS, { body: configMap("late-arrival") });
    const res = await pending;
    expect(res.status).toBe(200);
    expect(names(res)).toEqual(["late-arrival"]);
  });

  it("answers a resourceVersion the server never reaches with 504 Too large resource version", async () => {
    t = await startRawHttpCluster(REST_ONLY);
    const res = await t.request("GET", `${CMS}?resourceVersion=999999&resourceVersionMatch=NotOlderThan`);
    expect(res.status).toBe(504);
    expect(res.body.message).toMatch(/^Too large resource version: 999999, current: \d+$/);
  });
});
