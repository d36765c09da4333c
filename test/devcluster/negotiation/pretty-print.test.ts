/**
 * Pretty-printed JSON as kube-apiserver's NegotiateOutputMediaType chooses it: `pretty=1` on the
 * Accept media type, a non-empty `pretty` query value read by Go's strconv.ParseBool, else a
 * User-Agent starting with curl, Wget or Mozilla/5.0 (apiserver endpoints/handlers/negotiation,
 * isPrettyPrint). The pretty serializer is json.MarshalIndent (two spaces, no trailing newline); the
 * plain one is json.Encoder (compact, one trailing newline). Watch streams are never pretty.
 */
import { describe, expect, it } from "vitest";
import { indentJson } from "../../../packages/capstan-dev/src/devcluster/serializer/json-indent.ts";
import { fileFixture } from "../../support/file-fixture.ts";
import { configMap, startRawHttpCluster } from "../support/http.ts";

const CMS = "/api/v1/namespaces/default/configmaps";
const t = fileFixture(() => startRawHttpCluster());

/** True when `text` is laid out exactly as Go's MarshalIndent(v, "", "  ") lays out its value. */
const isIndented = (text: string) => text.startsWith("{\n  ") && text === JSON.stringify(JSON.parse(text), null, 2);
const isCompact = (text: string) => text === `${JSON.stringify(JSON.parse(text))}\n`;

describe("indentJson", () => {
  it("lays out nested objects and arrays as MarshalIndent, empty ones kept on their line", () => {
    const value = { a: 1, b: [true, null, { c: "x" }], d: {}, e: [], f: { g: [[]] } };
    expect(indentJson(JSON.stringify(value))).toBe(JSON.stringify(value, null, 2));
  });

  it("leaves strings alone, escaped quotes, brackets and commas included", () => {
    const value = { 'k"{': 'v\\",[]:', u: "\u2028é" };
    expect(indentJson(JSON.stringify(value))).toBe(JSON.stringify(value, null, 2));
  });

  it("keeps number literals digit for digit", () => {
    expect(indentJson('{"n":12345678901234567890,"f":1e-7}')).toBe('{\n  "n": 12345678901234567890,\n  "f": 1e-7\n}');
  });
});

describe("pretty printing over HTTP", () => {
  it("answers compact JSON ending in a newline by default", async () => {
    await t.request("POST", CMS, { body: configMap("plain", { a: "1" }) });
    const res = await t.request("GET", `${CMS}/plain`);
    expect(isCompact(res.text), res.text).toBe(true);
  });

  it.each(["true", "1", "t", "T", "TRUE", "True"])("indents for pretty=%s", async (value) => {
    await t.request("POST", CMS, { body: configMap(`pretty-${value.toLowerCase()}${value.length}`) });
    const res = await t.request("GET", `${CMS}?pretty=${value}`);
    expect(res.body.kind).toBe("ConfigMapList");
    expect(isIndented(res.text), res.text).toBe(true);
  });

  it.each(["false", "0", "f", "FALSE", "yes", "TrUe"])("stays compact for pretty=%s, even for curl", async (value) => {
    const res = await t.request("GET", `${CMS}?pretty=${value}`, { headers: { "user-agent": "curl/8.5.0" } });
    expect(isCompact(res.text), res.text).toBe(true);
  });

  it.each([
    ["curl/8.5.0", true],
    ["Wget/1.21.4", true],
    ["Mozilla/5.0 (X11; Linux x86_64)", true],
    ["kubectl/v1.32.0 (linux/amd64) kubernetes/70d3cc9", false],
    ["python-requests/2.31", false],
    ["wget/1.21.4", false],
  ])("User-Agent %s: pretty is %s", async (agent, pretty) => {
    const res = await t.request("GET", CMS, { headers: { "user-agent": agent } });
    expect(res.status).toBe(200);
    expect(pretty ? isIndented(res.text) : isCompact(res.text), res.text).toBe(true);
  });

  it("takes an empty pretty parameter as unset: the User-Agent decides", async () => {
    const curl = await t.request("GET", `${CMS}?pretty=`, { headers: { "user-agent": "curl/8.5.0" } });
    expect(isIndented(curl.text), curl.text).toBe(true);
    const other = await t.request("GET", `${CMS}?pretty`, { headers: { "user-agent": "capstan" } });
    expect(isCompact(other.text), other.text).toBe(true);
  });

  it("indents for pretty=1 on the Accept media type, whatever the query says", async () => {
    const res = await t.request("GET", `${CMS}?pretty=false`, { accept: "application/json;pretty=1" });
    expect(isIndented(res.text), res.text).toBe(true);
    const table = await t.request("GET", CMS, { accept: "application/json;as=Table;g=meta.k8s.io;v=v1;pretty=1" });
    expect(table.body.kind).toBe("Table");
    expect(isIndented(table.text), table.text).toBe(true);
  });

  it("indents error Statuses and writes' answers too", async () => {
    const missing = await t.request("GET", `${CMS}/nope?pretty=true`);
    expect(missing.status).toBe(404);
    expect(missing.text).toBe(
      [
        "{",
        '  "kind": "Status",',
        '  "apiVersion": "v1",',
        '  "metadata": {},',
        '  "status": "Failure",',
        '  "message": "configmaps \\"nope\\" not found",',
        '  "reason": "NotFound",',
        '  "details": {',
        '    "name": "nope",',
        '    "kind": "configmaps"',
        "  },",
        '  "code": 404',
        "}",
      ].join("\n"),
    );
    const created = await t.request("POST", `${CMS}?pretty=true`, { body: configMap("pretty-create") });
    expect(created.status).toBe(201);
    expect(isIndented(created.text), created.text).toBe(true);
  });

  it("always indents /version, written by WriteRawJSON, whatever was asked", async () => {
    for (const query of ["", "?pretty=false"]) {
      const res = await t.request("GET", `/version${query}`);
      expect(res.body.major).toBe("1");
      expect(isIndented(res.text), res.text).toBe(true);
    }
  });

  it("answers a failed negotiation (406) with WriteRawJSON's indented Status, even for kubectl", async () => {
    const res = await t.request("GET", CMS, {
      accept: "application/vnd.kubernetes.protobuf",
      headers: { "user-agent": "kubectl/v1.32.0" },
    });
    expect([res.status, res.body.reason]).toEqual([406, "NotAcceptable"]);
    expect(isIndented(res.text), res.text).toBe(true);
  });

  it("never pretty-prints a watch stream: one event a line", async () => {
    await t.request("POST", CMS, { body: configMap("pretty-watch") });
    const watch = await t.watch(`${CMS}?watch=true&pretty=true&fieldSelector=metadata.name%3Dpretty-watch`, {
      headers: { "user-agent": "curl/8.5.0" },
    });
    try {
      const added = await watch.next();
      expect([added?.type, added?.object.metadata.name]).toEqual(["ADDED", "pretty-watch"]);
    } finally {
      watch.close();
    }
  });
});
