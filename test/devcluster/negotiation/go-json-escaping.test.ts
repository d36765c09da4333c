/**
 * Answers escape what Go's encoding/json escapes (HTML escaping is on in the json.Encoder and
 * json.MarshalIndent apimachinery's serializer and WriteRawJSON use): <, >, & and U+2028/U+2029
 * inside strings come out as \u003c, \u003e, \u0026, \u2028 and \u2029, compact or pretty.
 */
import { describe, expect, it } from "vitest";
import { fileFixture } from "../../support/file-fixture.ts";
import { configMap, startRawHttpCluster } from "../support/http.ts";

const CMS = "/api/v1/namespaces/default/configmaps";
const t = fileFixture(() => startRawHttpCluster());
const VALUE = "<a href='x'>&amp;</a>\u2028\u2029";

describe("Go's JSON escaping", () => {
  it("escapes objects, compact and pretty", async () => {
    const created = await t.request("POST", CMS, { body: configMap("escaped", { v: VALUE }) });
    expect(created.text).toContain(String.raw`"v":"\u003ca href='x'\u003e\u0026amp;\u003c/a\u003e\u2028\u2029"`);
    expect(created.body.data.v).toBe(VALUE);
    const pretty = await t.request("GET", `${CMS}/escaped?pretty=true`);
    expect(pretty.text).toContain(String.raw`"v": "\u003ca href='x'\u003e\u0026amp;\u003c/a\u003e\u2028\u2029"`);
    const list = await t.request("GET", CMS);
    expect(list.text).not.toMatch(/[<>&\u2028\u2029]/);
  });

  it("escapes error Statuses", async () => {
    const res = await t.request("GET", `${CMS}/a%26b`);
    expect(res.status).toBe(404);
    expect(res.text).toContain(String.raw`"message":"configmaps \"a\u0026b\" not found"`);
  });
});
