import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_NESTING_DEPTH } from "../../packages/capstan-dev/src/devcluster/machinery/json-syntax-error.ts";
import {
  exceedsJsonDepth,
  yamlDepthProblem,
} from "../../packages/capstan-dev/src/devcluster/serializer/nesting-depth.ts";
import { customServed } from "./support/custom-served.ts";
import { configMap, type RawHttpCluster, startRawHttpCluster } from "./support/http.ts";

const LIMIT = MAX_NESTING_DEPTH;

/** `levels` nested objects in JSON: {"a":{"a":...1...}}. */
const nested = (levels: number) => `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`;
/** A YAML block map nested `levels` deep, starting at `indent`. */
const blockYaml = (levels: number, indent = 0) =>
  `${Array.from({ length: levels }, (_, i) => `${" ".repeat(indent + i)}a:`).join("\n")} 1\n`;

describe("nesting-depth scans", () => {
  it("count JSON levels outside strings", () => {
    expect(exceedsJsonDepth(nested(LIMIT))).toBe(false);
    expect(exceedsJsonDepth(nested(LIMIT + 1))).toBe(true);
    expect(exceedsJsonDepth(`"${"[".repeat(LIMIT * 2)}"`)).toBe(false);
    expect(exceedsJsonDepth(`["\\"", ${"[".repeat(LIMIT)}${"]".repeat(LIMIT)}]`)).toBe(true);
  });

  it("tell go-yaml's scanner limits (flow or block alone) from the JSON decoder's (both together)", () => {
    expect(yamlDepthProblem(`a: ${"[".repeat(LIMIT - 1)}${"]".repeat(LIMIT - 1)}`)).toBeUndefined();
    expect(yamlDepthProblem(`${"[".repeat(LIMIT + 1)}${"]".repeat(LIMIT + 1)}`)).toEqual({
      kind: "yaml",
      line: undefined,
    });
    expect(yamlDepthProblem(blockYaml(LIMIT))).toBeUndefined();
    expect(yamlDepthProblem(blockYaml(LIMIT + 1))).toEqual({ kind: "yaml", line: LIMIT + 1 });
    expect(yamlDepthProblem(`${"- ".repeat(LIMIT + 1)}x`)).toEqual({ kind: "yaml", line: undefined });
    // 300 block levels holding 201 flow levels: each within go-yaml's limit, together past the decoder's.
    expect(yamlDepthProblem(`${blockYaml(300).slice(0, -3)} ${nested(201)}`)).toEqual({ kind: "json", char: "{" });
  });

  it("count an alias as deep as the node it repeats", () => {
    const anchor = `a: &x ${"[".repeat(300)}${"]".repeat(300)}\n`;
    expect(yamlDepthProblem(`${anchor}b: ${"[".repeat(LIMIT - 301)}*x${"]".repeat(LIMIT - 301)}`)).toBeUndefined();
    expect(yamlDepthProblem(`${anchor}b: ${"[".repeat(LIMIT - 300)}*x${"]".repeat(LIMIT - 300)}`)).toEqual({
      kind: "json",
      char: "[",
    });
  });
});

describe("deeply nested request bodies", () => {
  let t: RawHttpCluster;
  const base = "/apis/deep.example.com/v1/namespaces/default/things";
  const served = customServed("deep.example.com", "Thing");
  /** A Thing whose field `x` nests so that the whole body is `levels` deep. */
  const thing = (name: string, levels: number) =>
    `{"apiVersion":"deep.example.com/v1","kind":"Thing","metadata":{"name":"${name}"},"x":${nested(levels - 1)}}`;

  beforeAll(async () => {
    t = await startRawHttpCluster({ builtinPlugins: false });
    t.server.internals.registry.add(served);
  });
  afterAll(() => t.stop());

  it("accepts objects at the limit on every write path and reads them back", async () => {
    expect((await t.request("POST", base, { raw: thing("at-limit", LIMIT) })).status).toBe(201);
    const yaml = `apiVersion: deep.example.com/v1\nkind: Thing\nmetadata:\n  name: yaml-at-limit\nx:\n${blockYaml(LIMIT - 1, 1)}`;
    expect((await t.request("POST", base, { raw: yaml, contentType: "application/yaml" })).status).toBe(201);
    const rv = (await t.request("GET", `${base}/at-limit`)).body.metadata.resourceVersion;
    const body = thing("at-limit", LIMIT).replace('"name":"at-limit"', `"name":"at-limit","resourceVersion":"${rv}"`);
    const put = await t.request("PUT", `${base}/at-limit`, { raw: body });
    expect(put.status).toBe(200);
    // Patches of fresh objects: a patched object is decoded whole, managedFields (which mirror the
    // object's fields a few levels down) included, as kube-apiserver decodes it.
    for (const name of ["merged", "json-patched"]) {
      expect((await t.request("POST", base, { raw: thing(name, 1) })).status).toBe(201);
    }
    const merge = await t.request("PATCH", `${base}/merged`, {
      raw: `{"y":${nested(LIMIT - 1)}}`,
      contentType: "application/merge-patch+json",
    });
    expect(merge.status).toBe(200);
    const jsonPatch = await t.request("PATCH", `${base}/json-patched`, {
      raw: `[{"op":"add","path":"/z","value":${nested(LIMIT - 2)}}]`,
      contentType: "application/json-patch+json",
    });
    expect(jsonPatch.status).toBe(200);
    const apply = await t.request("PATCH", `${base}/applied?fieldManager=m`, {
      raw: thing("applied", LIMIT),
      contentType: "application/apply-patch+yaml",
    });
    expect(apply.status).toBe(201);
    const applyBlock = await t.request("PATCH", `${base}/applied?fieldManager=b&force=true`, {
      raw: `apiVersion: deep.example.com/v1\nkind: Thing\nmetadata:\n  name: applied\nw:\n${blockYaml(LIMIT - 1, 1)}`,
      contentType: "application/apply-patch+yaml",
    });
    expect(applyBlock.status).toBe(200);
    const got = await t.request("GET", `${base}/at-limit`);
    let depth = 0;
    for (let v = got.body.x; typeof v === "object"; v = v.a) depth++;
    expect(depth).toBe(LIMIT - 1);
    expect((await t.request("GET", base)).body.items).toHaveLength(5);
  });

  it("refuses a JSON body one level deeper as the create handler's decoder does", async () => {
    const body = thing("too-deep", LIMIT + 1);
    const res = await t.request("POST", base, { raw: body });
    expect(res.status).toBe(400);
    expect(res.body.reason).toBe("BadRequest");
    expect(res.body.message).toBe(
      `the object provided is unrecognized (must be of type Thing): couldn't get version/kind; json parse error: invalid character '{' exceeded max depth (${body.slice(0, 30)} ...)`,
    );
  });

  it("refuses YAML nested past go-yaml's limit with its message, naming the line", async () => {
    const yaml = `apiVersion: deep.example.com/v1\nkind: Thing\nmetadata:\n  name: too-deep\n${blockYaml(LIMIT + 1)}`;
    const res = await t.request("POST", base, { raw: yaml, contentType: "application/yaml" });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe(
      "the object provided is unrecognized (must be of type Thing): yaml: line 505: exceeded max depth of 500 (" +
        "00000000  61 70 69 56 65 72 73 69  6f 6e 3a 20 64 65 65 70  |apiVersion: deep|\n" +
        "00000010  2e 65 78 61 6d 70 6c 65  2e 63 6f 6d 2f 76        |.example.com/v|\n)",
    );
  });

  it("refuses patches nested too deep with each patch type's message", async () => {
    const deep = nested(LIMIT + 1);
    const cases: [string, string, string][] = [
      ["application/merge-patch+json", deep, "error decoding patch: invalid character '{' exceeded max depth"],
      [
        "application/json-patch+json",
        `[{"op":"add","path":"/z","value":${deep}}]`,
        "error decoding patch: invalid character '{' exceeded max depth",
      ],
      [
        "application/apply-patch+yaml",
        deep,
        "error decoding YAML: error converting YAML to JSON: yaml: exceeded max depth of 500",
      ],
    ];
    for (const [contentType, raw, message] of cases) {
      const res = await t.request("PATCH", `${base}/merged?fieldManager=m`, { raw, contentType });
      expect([contentType, res.status, res.body.message]).toEqual([contentType, 400, message]);
    }
    const ignore = await t.request("PATCH", `${base}/merged?fieldValidation=Ignore`, {
      raw: deep,
      contentType: "application/merge-patch+json",
    });
    expect(ignore.body.message).toBe("Invalid JSON Patch");
    await t.request("POST", "/api/v1/namespaces/default/configmaps", { body: configMap("smp-target") });
    const smp = await t.request("PATCH", "/api/v1/namespaces/default/configmaps/smp-target", {
      raw: deep,
      contentType: "application/strategic-merge-patch+json",
    });
    expect([smp.status, smp.body.message]).toEqual([400, "invalid character '{' exceeded max depth"]);
  });

  it("refuses a JSON patch whose result nests too deep, as decoding the patched object does", async () => {
    const half = LIMIT / 2;
    expect((await t.request("POST", base, { raw: thing("half", half) })).status).toBe(201);
    // The map that path names sits half - 1 levels down: half + 2 more levels pass the limit.
    const deepest = `/x${"/a".repeat(half - 3)}`;
    const patch = (levels: number) => ({
      raw: `[{"op":"add","path":"${deepest}/b","value":${nested(levels)}}]`,
      contentType: "application/json-patch+json",
    });
    const res = await t.request("PATCH", `${base}/half`, patch(half + 2));
    expect(res.status).toBe(422);
    expect(res.body.message).toMatch(
      /^ "" is invalid: patch: Invalid value: "\{.*": couldn't get version\/kind; json parse error: invalid character '\{' exceeded max depth$/s,
    );
    expect(res.body.details).toEqual({
      causes: [expect.objectContaining({ reason: "FieldValueInvalid", field: "patch" })],
    });
    expect((await t.request("PATCH", `${base}/half`, patch(10))).status).toBe(200);
  });

  it("refuses deep JSON inside a protobuf body (a managedFields entry's fieldsV1)", async () => {
    const varint = (n: number) => {
      const out: number[] = [];
      for (; n > 127; n >>>= 7) out.push((n & 127) | 128);
      out.push(n);
      return Buffer.from(out);
    };
    const field = (n: number, bytes: Buffer | string) => {
      const b = Buffer.from(bytes);
      return Buffer.concat([varint((n << 3) | 2), varint(b.length), b]);
    };
    const configMapWithFields = (fieldsV1: string) => {
      const entry = Buffer.concat([field(1, "m"), field(2, "Update"), field(3, "v1"), field(6, "FieldsV1")]);
      const meta = Buffer.concat([
        field(1, "pb-deep"),
        field(17, Buffer.concat([entry, field(7, field(1, fieldsV1))])),
      ]);
      const typeMeta = Buffer.concat([field(1, "v1"), field(2, "ConfigMap")]);
      return Buffer.concat([Buffer.from("k8s\0", "latin1"), field(1, typeMeta), field(2, field(1, meta))]);
    };
    const send = (fieldsV1: string) =>
      t.request("POST", "/api/v1/namespaces/default/configmaps", {
        raw: configMapWithFields(fieldsV1),
        contentType: "application/vnd.kubernetes.protobuf",
      });
    const deep = await send(nested(LIMIT + 1));
    expect([deep.status, deep.body.message]).toEqual([
      400,
      "unable to decode protobuf ConfigMap: invalid character '{' exceeded max depth",
    ]);
    // Within the limit alone, too deep where it sits in the object (four levels down).
    const placed = await send(nested(LIMIT - 2));
    expect([placed.status, placed.body.message]).toEqual([
      400,
      `unable to decode protobuf ConfigMap: exceeded max depth of ${LIMIT}`,
    ]);
  });

  it("answers the bodies that used to crash the process (1,000 levels of apply YAML, 10,000 of JSON) and keeps serving", async () => {
    const yaml = `a: ${"{a: ".repeat(1000)}1${"}".repeat(1000)}`;
    for (let i = 0; i < 2; i++) {
      const res = await t.request("PATCH", `${base}/at-limit?fieldManager=m`, {
        raw: yaml,
        contentType: "application/apply-patch+yaml",
      });
      expect(res.status).toBe(400);
    }
    const json = await t.request("POST", base, { raw: thing("huge", 10_000) });
    expect(json.status).toBe(400);
    const yamlCreate = await t.request("POST", base, { raw: yaml, contentType: "application/yaml" });
    expect(yamlCreate.status).toBe(400);
    expect((await t.request("GET", `${base}/at-limit`)).status).toBe(200);
  });
});
