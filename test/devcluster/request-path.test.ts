/**
 * The create/get hot path, tuned for throughput (bench/apiserver.ts): what each shortcut must keep
 * exactly as before — token checks, the pipeline's stage semantics, request-info decoding and the JSON
 * the store writes.
 */
import { Agent, request } from "undici";
import { describe, expect, it } from "vitest";
import type { Stage } from "../../packages/capstan-dev/src/devcluster/request/pipeline.ts";
import { fileFixture } from "../support/file-fixture.ts";
import { configMap, startRawHttpCluster } from "./support/http.ts";

const CMS = "/api/v1/namespaces/default/configmaps";

/** Metadata keys in order, without managedFields (whether a create records it is not this file's concern). */
function ownKeys(meta: object): string[] {
  return Object.keys(meta).filter((k) => k !== "managedFields");
}

const t = fileFixture(() => startRawHttpCluster({ builtinPlugins: false }));

describe("authentication on the hot path", () => {
  it("refuses a token of the admin token's length that differs in one character", async () => {
    const admin = t.server.token;
    const last = admin.at(-1) === "a" ? "b" : "a";
    const res = await t.request("GET", CMS, { token: `${admin.slice(0, -1)}${last}` });
    expect(res.status).toBe(401);
    expect(res.body.reason).toBe("Unauthorized");
  });

  it("accepts the admin token with the scheme in any case", async () => {
    const agent = new Agent({ connect: { ca: t.server.caPem } });
    try {
      const ok = await request(`${t.server.url}${CMS}`, {
        headers: { authorization: `bEaReR ${t.server.token}` },
        dispatcher: agent,
      });
      await ok.body.text();
      expect(ok.statusCode).toBe(200);
    } finally {
      await agent.close();
    }
  });
});

describe("pipeline stages", () => {
  it("runs a stage inserted after start-up, and answers a stage's synchronous throw with a 500 Status", async () => {
    const stages = t.server.internals.stages;
    const seen: string[] = [];
    const recorder: Stage = (ctx, next) => {
      seen.push(ctx.info.verb);
      if (ctx.url.searchParams.get("explode") === "sync") throw new Error("boom");
      return next();
    };
    stages.splice(stages.length - 1, 0, recorder);
    try {
      const listed = await t.request("GET", CMS);
      expect(listed.status).toBe(200);
      const failed = await t.request("GET", `${CMS}?explode=sync`);
      expect(failed.status).toBe(500);
      expect(failed.body).toMatchObject({ kind: "Status", status: "Failure", code: 500 });
      expect(seen).toEqual(["list", "list"]);
    } finally {
      stages.splice(stages.indexOf(recorder), 1);
    }
    const after = await t.request("GET", CMS);
    expect(after.status).toBe(200);
    expect(seen).toHaveLength(2);
  });
});

describe("request info", () => {
  it("percent-decodes path segments, so an escaped name addresses the object", async () => {
    const created = await t.request("POST", CMS, { body: configMap("dotted.name") });
    expect(created.status).toBe(201);
    const got = await t.request("GET", `${CMS}/dotted%2Ename`);
    expect(got.status).toBe(200);
    expect(got.body.metadata.name).toBe("dotted.name");
    const slashes = await t.request("GET", `${CMS}/dotted.name/`);
    expect(slashes.status).toBe(200);
  });
});

describe("the JSON a create writes", () => {
  it("puts resourceVersion at its ObjectMeta position and stamps creationTimestamp to the second", async () => {
    const before = Math.floor(Date.now() / 1000) * 1000;
    const res = await t.request("POST", CMS, { body: configMap("ordered", { a: "1" }, { labels: { x: "y" } }) });
    expect(res.status).toBe(201);
    const meta = res.body.metadata;
    expect(Object.keys(res.body)).toEqual(["apiVersion", "kind", "metadata", "data"]);
    // managedFields (server-side apply's bookkeeping) is last in ObjectMeta's order when present.
    expect(ownKeys(meta)).toEqual(["name", "namespace", "uid", "resourceVersion", "creationTimestamp", "labels"]);
    expect(meta.resourceVersion).toMatch(/^[1-9]\d*$/);
    expect(meta.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const stamped = Date.parse(meta.creationTimestamp);
    expect(stamped).toBeGreaterThanOrEqual(before);
    expect(stamped).toBeLessThanOrEqual(Date.now());
    const got = await t.request("GET", `${CMS}/ordered`);
    expect(got.text).toBe(res.text);
  });

  it("answers a dry-run create without a resourceVersion and stores nothing", async () => {
    const res = await t.request("POST", `${CMS}?dryRun=All`, { body: configMap("dry-ordered") });
    expect(res.status).toBe(201);
    expect(res.body.metadata.resourceVersion).toBeUndefined();
    expect(ownKeys(res.body.metadata)).toEqual(["name", "namespace", "uid", "creationTimestamp"]);
    expect((await t.request("GET", `${CMS}/dry-ordered`)).status).toBe(404);
  });

  it("refuses metadata fields of the wrong JSON type with the decoder's 400", async () => {
    const res = await t.request("POST", CMS, { body: configMap("typed", {}, { labels: { a: 1 } }) });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe(
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string',
    );
  });
});

describe("write parameters", () => {
  it("are read by writes only: a get ignores a bad fieldValidation, as GetOptions has no such field", async () => {
    expect((await t.request("POST", CMS, { body: configMap("params") })).status).toBe(201);
    const got = await t.request("GET", `${CMS}/params?fieldValidation=Bogus&dryRun=All`);
    expect(got.status).toBe(200);
    expect(got.body.metadata.name).toBe("params");
    const listed = await t.request("GET", `${CMS}?fieldValidation=Bogus`);
    expect(listed.status).toBe(200);
    const refused = await t.request("POST", `${CMS}?fieldValidation=Bogus`, { body: configMap("params-2") });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toBe('fieldValidation must be one of Ignore, Warn, or Strict, got "Bogus"');
  });
});
