import { describe, expect, it } from "vitest";
import { fileFixture } from "../support/file-fixture.ts";
import { configMap, startRawHttpCluster } from "./support/http.ts";

const t = fileFixture(() => startRawHttpCluster());

const CMS = "/api/v1/namespaces/default/configmaps";

/** Deterministic pseudo-random bytes, so a failure can be replayed. */
function* garbage(seed: number, count: number): Generator<Buffer> {
  let x = seed;
  for (let i = 0; i < count; i++) {
    const length = (x % 200) + 1;
    const buf = Buffer.alloc(length);
    for (let j = 0; j < length; j++) {
      x = (x * 1103515245 + 12345) & 0x7fffffff;
      buf[j] = x & 0xff;
    }
    yield buf;
  }
}

describe("bad input never crashes the server", () => {
  it("answers random bodies to every write verb with a Status and keeps serving", async () => {
    await t.request("POST", CMS, { body: configMap("target") });
    const targets: [string, string, string][] = [
      ["POST", CMS, "application/json"],
      ["POST", CMS, "application/yaml"],
      ["POST", CMS, "application/vnd.kubernetes.protobuf"],
      ["PUT", `${CMS}/target`, "application/json"],
      ["PATCH", `${CMS}/target`, "application/json-patch+json"],
      ["PATCH", `${CMS}/target`, "application/merge-patch+json"],
      ["DELETE", `${CMS}/target?dryRun=All`, "application/json"],
    ];
    let n = 0;
    for (const raw of garbage(7, 40)) {
      for (const [method, path, contentType] of targets) {
        const res = await t.request(method, path, { raw, contentType });
        expect(res.status, `${method} ${path} ${contentType}`).toBeGreaterThanOrEqual(200);
        if (res.status >= 400) {
          expect(res.body?.kind, `${method} ${contentType}: ${res.text.slice(0, 200)}`).toBe("Status");
          expect(res.status).toBeLessThan(500);
        }
        n++;
      }
    }
    expect(n).toBe(280);
    expect((await t.request("GET", `${CMS}/target`)).status).toBe(200);
  });

  it("answers JSON that is not an object with 400", async () => {
    for (const raw of ["[]", "42", '"x"', "null", "true"]) {
      const res = await t.request("POST", CMS, { raw });
      expect(res.status, raw).toBe(400);
      expect(res.body.reason).toBe("BadRequest");
    }
  });

  it("answers wrongly typed metadata with 422 or 400, never 500", async () => {
    const bodies = [
      { metadata: "x" },
      { metadata: { name: 5 } },
      { metadata: { name: "ok", labels: "no" } },
      { metadata: { name: "ok2", labels: { "bad key!": "v" } } },
      { metadata: { name: "ok3", finalizers: "x" } },
      { metadata: { name: "ok4", annotations: { a: 1 } } },
    ];
    for (const body of bodies) {
      const res = await t.request("POST", CMS, { body });
      expect(res.status, JSON.stringify(body)).toBeGreaterThanOrEqual(400);
      expect(res.status, JSON.stringify(body)).toBeLessThan(500);
    }
  });

  it("answers a kind that does not match the URL with 400", async () => {
    const res = await t.request("POST", CMS, { body: { apiVersion: "v1", kind: "Secret", metadata: { name: "s" } } });
    expect(res.status).toBe(400);
  });

  it("dryRun=All validates and answers without storing", async () => {
    const res = await t.request("POST", `${CMS}?dryRun=All`, { body: configMap("dry") });
    expect(res.status).toBe(201);
    expect(res.body.metadata.name).toBe("dry");
    expect((await t.request("GET", `${CMS}/dry`)).status).toBe(404);
    const invalid = await t.request("POST", `${CMS}?dryRun=All`, { body: configMap("Dry_Bad") });
    expect(invalid.status).toBe(422);
  });
});

describe("metadata of the wrong JSON type", () => {
  it("is a 400 with the decoder's message", async () => {
    const res = await t.request("POST", CMS, { body: { metadata: { name: "typed", labels: "no" } } });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe(
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal string into Go struct field ObjectMeta.metadata.labels of type map[string]string',
    );
  });
});
