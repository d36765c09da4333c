/**
 * Object keys that are special in JavaScript (`__proto__`, `constructor`, `toString`, ...) are plain
 * keys in Kubernetes objects: ConfigMap data keys allow them, and so does any map under a CRD field
 * with `x-kubernetes-preserve-unknown-fields` or `additionalProperties`. kube-apiserver stores and
 * returns them like any other key, on every write path. The server runs in this process, so the
 * tests also check that no request wrote into Object.prototype.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitUntil } from "capstan-dev/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fileFixture } from "../support/file-fixture.ts";
import { startRawHttpCluster } from "./support/http.ts";

// biome-ignore lint/suspicious/noExplicitAny: test assertions read arbitrary JSON
type Doc = any;

// The CRD controller serves the custom resource; no kubelet or workload controllers are needed.
const t = fileFixture(() => startRawHttpCluster({ kubelet: false }));

const CMS = "/api/v1/namespaces/default/configmaps";
const CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const THINGS = "/apis/special.example.com/v1/namespaces/default/things";
const MERGE = "application/merge-patch+json";
const STRATEGIC = "application/strategic-merge-patch+json";
const JSON_PATCH = "application/json-patch+json";
const APPLY = "application/apply-patch+yaml";
const YAML = "application/yaml";

/** The keys an object literal, a lookup or an assignment treats specially. */
const SPECIAL = ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf", "prototype"];

/** `{key: value}` for each special key, as JSON text: an object literal would set the prototype instead. */
function specialData(suffix: string): string {
  return `{${SPECIAL.map((k) => `"${k}":"${k}-${suffix}"`).join(",")}}`;
}

/** The own entries of `obj`, sorted: a comparison that sees an own `__proto__` like any other key. */
function entries(obj: Doc): [string, unknown][] {
  expect(Object.getPrototypeOf(obj)).toBe(Object.prototype);
  return Object.entries(obj).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

function expected(text: string): [string, unknown][] {
  return entries(JSON.parse(text));
}

/** JSON text with keys sorted at every level (object key order is not what these tests are about). */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v === null || typeof v !== "object") return JSON.stringify(v);
  expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
  const keys = Object.keys(v).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((v as Doc)[k])}`).join(",")}}`;
}

/** `actual` holds exactly the JSON `text`, own `__proto__` keys included. */
function expectJson(actual: unknown, text: string): void {
  expect(canonical(actual)).toBe(canonical(JSON.parse(text)));
}

function fieldsOf(obj: Doc, manager: string): Doc {
  return obj.metadata.managedFields.find((e: Doc) => e.manager === manager)?.fieldsV1;
}

const protoBefore = Object.getOwnPropertyNames(Object.prototype).sort();

/** Nothing any request sent reached Object.prototype (the server shares this process). */
function expectNoPollution(): void {
  expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(protoBefore);
  expect(({} as Doc).polluted).toBeUndefined();
  expect(Object.prototype.toString.call([])).toBe("[object Array]");
}

async function createCm(name: string, data: string): Promise<Doc> {
  const res = await t.request("POST", `${CMS}?fieldManager=creator`, {
    raw: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${name}"},"data":${data}}`,
  });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

async function getCm(name: string): Promise<Doc> {
  const res = await t.request("GET", `${CMS}/${name}`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

describe("ConfigMap data keys special in JavaScript", () => {
  it("survive a JSON create, and managedFields lists them", async () => {
    const created = await createCm("create-json", specialData("1"));
    expect(entries(created.data)).toEqual(expected(specialData("1")));
    expect(entries((await getCm("create-json")).data)).toEqual(expected(specialData("1")));
    const fields = fieldsOf(created, "creator");
    expect(Object.keys(fields["f:data"]).sort()).toEqual([".", ...SPECIAL.map((k) => `f:${k}`)].sort());
    expectNoPollution();
  });

  it("are unknown fields of metadata: dropped, and reported under Strict", async () => {
    const body = (name: string) =>
      `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${name}","__proto__":{"polluted":"yes"},"constructor":"c"}}`;
    const res = await t.request("POST", CMS, { raw: body("meta-unknown") });
    expect(res.status, res.text).toBe(201);
    expect(Object.keys(res.body.metadata)).not.toContain("constructor");
    expect(Object.keys(res.body.metadata)).not.toContain("__proto__");
    const strict = await t.request("POST", `${CMS}?fieldValidation=Strict`, { raw: body("meta-strict") });
    expect(strict.status, strict.text).toBe(400);
    expect(strict.body.message).toContain('unknown field "metadata.__proto__"');
    expect(strict.body.message).toContain('unknown field "metadata.constructor"');
    expectNoPollution();
  });

  it("are no field selectors of a list", async () => {
    // Pods have field selectors beyond metadata's; the special names must not find Object.prototype's members.
    for (const field of ["__proto__", "constructor", "toString"]) {
      const res = await t.request("GET", `/api/v1/namespaces/default/pods?fieldSelector=${field}%3Dx`);
      expect(res.status, res.text).toBe(400);
      expect(res.body.message).toBe(`field label not supported: ${field}`);
    }
  });

  it("survive a YAML create", async () => {
    const yaml = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: create-yaml\ndata:\n${SPECIAL.map((k) => `  ${k}: ${k}-y\n`).join("")}`;
    const res = await t.request("POST", CMS, { raw: yaml, contentType: YAML });
    expect(res.status, res.text).toBe(201);
    expect(entries(res.body.data)).toEqual(expected(specialData("y")));
    expectNoPollution();
  });

  it("survive an update that changes and removes some of them", async () => {
    const created = await createCm("update", specialData("1"));
    const res = await t.request("PUT", `${CMS}/update?fieldManager=updater`, {
      raw: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"update","resourceVersion":"${created.metadata.resourceVersion}"},"data":{"__proto__":"p2","constructor":"c2","valueOf":"v1"}}`,
    });
    expect(res.status, res.text).toBe(200);
    expect(entries(res.body.data)).toEqual(expected('{"__proto__":"p2","constructor":"c2","valueOf":"v1"}'));
    expect(Object.keys(fieldsOf(res.body, "updater")["f:data"]).sort()).toEqual([
      "f:__proto__",
      "f:constructor",
      "f:valueOf",
    ]);
    expectNoPollution();
  });

  it("survive a merge patch that sets, adds and deletes them", async () => {
    await createCm("merge", '{"__proto__":"p","toString":"t"}');
    const res = await t.request("PATCH", `${CMS}/merge?fieldManager=merger`, {
      raw: '{"data":{"__proto__":"p2","constructor":"c","toString":null,"valueOf":null}}',
      contentType: MERGE,
    });
    expect(res.status, res.text).toBe(200);
    expect(entries(res.body.data)).toEqual(expected('{"__proto__":"p2","constructor":"c"}'));
    expect(Object.keys(fieldsOf(res.body, "merger")["f:data"]).sort()).toEqual(["f:__proto__", "f:constructor"]);
    expectNoPollution();
  });

  it("survive a strategic merge patch that sets, adds and deletes them", async () => {
    await createCm("strategic", '{"__proto__":"p","toString":"t"}');
    const res = await t.request("PATCH", `${CMS}/strategic`, {
      raw: '{"data":{"__proto__":"p2","constructor":"c","toString":null,"valueOf":null},"metadata":{"labels":{"constructor":"l"}}}',
      contentType: STRATEGIC,
    });
    expect(res.status, res.text).toBe(200);
    expect(entries(res.body.data)).toEqual(expected('{"__proto__":"p2","constructor":"c"}'));
    expect(entries(res.body.metadata.labels)).toEqual([["constructor", "l"]]);
    expectNoPollution();
  });

  it("survive JSON patch add, replace, test, copy, move and remove at /data/__proto__", async () => {
    await createCm("json-patch", '{"a":"1"}');
    const patch = async (ops: string) => {
      const res = await t.request("PATCH", `${CMS}/json-patch`, { raw: ops, contentType: JSON_PATCH });
      expect(res.status, res.text).toBe(200);
      return res.body;
    };
    let cm = await patch('[{"op":"add","path":"/data/__proto__","value":"p"}]');
    expect(entries(cm.data)).toEqual(expected('{"a":"1","__proto__":"p"}'));
    cm = await patch(
      '[{"op":"test","path":"/data/__proto__","value":"p"},{"op":"replace","path":"/data/__proto__","value":"p2"}]',
    );
    expect(entries(cm.data)).toEqual(expected('{"a":"1","__proto__":"p2"}'));
    cm = await patch('[{"op":"copy","from":"/data/__proto__","path":"/data/constructor"}]');
    expect(entries(cm.data)).toEqual(expected('{"a":"1","__proto__":"p2","constructor":"p2"}'));
    cm = await patch('[{"op":"move","from":"/data/__proto__","path":"/data/toString"}]');
    expect(entries(cm.data)).toEqual(expected('{"a":"1","toString":"p2","constructor":"p2"}'));
    cm = await patch('[{"op":"remove","path":"/data/constructor"}]');
    expect(entries(cm.data)).toEqual(expected('{"a":"1","toString":"p2"}'));
    expectNoPollution();
  });

  it("are missing to a JSON patch when the object lacks them, not found on Object.prototype", async () => {
    await createCm("json-patch-missing", '{"a":"1"}');
    for (const op of [
      '{"op":"remove","path":"/data/constructor"}',
      '{"op":"remove","path":"/data/__proto__"}',
      '{"op":"test","path":"/data/toString","value":"x"}',
      '{"op":"add","path":"/data/__proto__/polluted","value":"yes"}',
      '{"op":"add","path":"/data/constructor/prototype/polluted","value":"yes"}',
    ]) {
      const res = await t.request("PATCH", `${CMS}/json-patch-missing`, { raw: `[${op}]`, contentType: JSON_PATCH });
      expect(res.status, op).toBe(422);
    }
    expect(entries((await getCm("json-patch-missing")).data)).toEqual([["a", "1"]]);
    expectNoPollution();
  });

  it("do not reach Object.prototype through a patch into a key the object lacks", async () => {
    await createCm("no-pollution", '{"a":"1"}');
    const body = '{"data":{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}}}}';
    for (const contentType of [STRATEGIC, MERGE]) {
      const res = await t.request("PATCH", `${CMS}/no-pollution`, { raw: body, contentType });
      // ConfigMap data holds strings only: the merged object is refused, and nothing else happened.
      expect(res.status, contentType).toBe(400);
      expectNoPollution();
    }
    expect(entries((await getCm("no-pollution")).data)).toEqual([["a", "1"]]);
  });

  it("survive an apply that creates the object", async () => {
    const res = await t.request("PATCH", `${CMS}/apply-create?fieldManager=a`, {
      raw: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: apply-create\ndata:\n  __proto__: x4\n  toString: t\n",
      contentType: APPLY,
    });
    expect(res.status, res.text).toBe(201);
    expect(entries(res.body.data)).toEqual(expected('{"__proto__":"x4","toString":"t"}'));
    expect(fieldsOf(res.body, "a")).toEqual(JSON.parse('{"f:data":{"f:__proto__":{},"f:toString":{}}}'));
    expectNoPollution();
  });

  it("survive an apply to an object that has them already", async () => {
    await createCm("apply-update", '{"__proto__":"x","toString":"y"}');
    const res = await t.request("PATCH", `${CMS}/apply-update?fieldManager=a&force=true`, {
      raw: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: apply-update\ndata:\n  __proto__: x4\n  constructor: c\n",
      contentType: APPLY,
    });
    expect(res.status, res.text).toBe(200);
    expect(entries(res.body.data)).toEqual(expected('{"__proto__":"x4","toString":"y","constructor":"c"}'));
    expect(fieldsOf(res.body, "a")).toEqual(JSON.parse('{"f:data":{"f:__proto__":{},"f:constructor":{}}}'));
    // The creator lost __proto__ to the forced apply and keeps toString.
    expect(fieldsOf(res.body, "creator")).toEqual(JSON.parse('{"f:data":{".":{},"f:toString":{}}}'));

    // A second applier that leaves out constructor removes it; one that leaves out toString does not own it.
    const again = await t.request("PATCH", `${CMS}/apply-update?fieldManager=a`, {
      raw: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: apply-update\ndata:\n  __proto__: x5\n",
      contentType: APPLY,
    });
    expect(again.status, again.text).toBe(200);
    expect(entries(again.body.data)).toEqual(expected('{"__proto__":"x5","toString":"y"}'));
    expectNoPollution();
  });

  it("name the conflicting field of an apply, and a forced apply takes it over", async () => {
    await t.request("PATCH", `${CMS}/apply-conflict?fieldManager=first`, {
      raw: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: apply-conflict\ndata:\n  __proto__: one\n  constructor: c\n",
      contentType: APPLY,
    });
    const body = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: apply-conflict\ndata:\n  __proto__: two\n";
    const conflict = await t.request("PATCH", `${CMS}/apply-conflict?fieldManager=second`, {
      raw: body,
      contentType: APPLY,
    });
    expect(conflict.status, conflict.text).toBe(409);
    expect(conflict.body.message).toBe('Apply failed with 1 conflict: conflict with "first": .data.__proto__');
    expect(conflict.body.details.causes).toEqual([
      { reason: "FieldManagerConflict", message: 'conflict with "first"', field: ".data.__proto__" },
    ]);
    const forced = await t.request("PATCH", `${CMS}/apply-conflict?fieldManager=second&force=true`, {
      raw: body,
      contentType: APPLY,
    });
    expect(forced.status, forced.text).toBe(200);
    expect(entries(forced.body.data)).toEqual(expected('{"__proto__":"two","constructor":"c"}'));
    expect(fieldsOf(forced.body, "first")).toEqual(JSON.parse('{"f:data":{"f:constructor":{}}}'));
    expect(fieldsOf(forced.body, "second")).toEqual(JSON.parse('{"f:data":{"f:__proto__":{}}}'));
    expectNoPollution();
  });
});

/** A CRD whose spec keeps any field, with a typed part, a string map and printer columns over special keys. */
const thingCrd = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "things.special.example.com" },
  spec: {
    group: "special.example.com",
    scope: "Namespaced",
    names: { plural: "things", singular: "thing", kind: "Thing", listKind: "ThingList" },
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        additionalPrinterColumns: [
          { name: "Ctor", type: "string", jsonPath: ".spec.free.constructor" },
          { name: "Proto", type: "string", jsonPath: ".spec.free.__proto__" },
        ],
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: {
              spec: {
                type: "object",
                properties: {
                  // A declared property and a rule make pruning and CEL walk the keys by name too.
                  free: {
                    type: "object",
                    "x-kubernetes-preserve-unknown-fields": true,
                    properties: { a: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
                    "x-kubernetes-validations": [{ rule: "!has(self.a) || self.a == self.a" }],
                  },
                  labels: { type: "object", additionalProperties: { type: "string" } },
                  typed: {
                    type: "object",
                    properties: { name: { type: "string", default: "n" } },
                  },
                },
              },
            },
          },
        },
      },
    ],
  },
};

function thing(name: string, spec: string): string {
  return `{"apiVersion":"special.example.com/v1","kind":"Thing","metadata":{"name":"${name}"},"spec":${spec}}`;
}

describe("custom resource keys special in JavaScript", () => {
  beforeAll(async () => {
    expect((await t.request("POST", CRDS, { body: thingCrd })).status).toBe(201);
    await waitUntil(async () => (await t.request("GET", THINGS)).status === 200);
  });
  afterAll(() => expectNoPollution());

  const FREE = '{"__proto__":{"polluted":"yes","a":1},"constructor":{"prototype":{"polluted":"yes"}},"toString":"t"}';

  it("keep nested objects under __proto__ and constructor in a preserve-unknown-fields map", async () => {
    const res = await t.request("POST", `${THINGS}?fieldManager=creator`, {
      raw: thing("create", `{"free":${FREE},"labels":{"__proto__":"l","valueOf":"v"},"typed":{}}`),
    });
    expect(res.status, res.text).toBe(201);
    expectJson(res.body.spec, `{"free":${FREE},"labels":{"__proto__":"l","valueOf":"v"},"typed":{"name":"n"}}`);
    const fields = fieldsOf(res.body, "creator")["f:spec"];
    expect(Object.keys(fields["f:free"]).sort()).toEqual([".", "f:__proto__", "f:constructor", "f:toString"]);
    expect(Object.keys(fields["f:free"]["f:__proto__"]).sort()).toEqual([".", "f:a", "f:polluted"]);
    expect(Object.keys(fields["f:labels"]).sort()).toEqual([".", "f:__proto__", "f:valueOf"]);
    expectNoPollution();
  });

  it("prune unknown special keys of a typed object and report them under Strict", async () => {
    const body = thing("pruned", '{"typed":{"constructor":"c","__proto__":{"polluted":"yes"},"toString":"t"}}');
    const res = await t.request("POST", THINGS, { raw: body });
    expect(res.status, res.text).toBe(201);
    expectJson(res.body.spec, '{"typed":{"name":"n"}}');
    const strict = await t.request("POST", `${THINGS}?fieldValidation=Strict`, {
      raw: body.replace('"pruned"', '"strict"'),
    });
    expect(strict.status, strict.text).toBe(400);
    expect(strict.body.message).toContain('unknown field "spec.typed.__proto__"');
    expect(strict.body.message).toContain('unknown field "spec.typed.constructor"');
    expectNoPollution();
  });

  it("keep them through an update, which owns what it changed", async () => {
    const created = await t.request("POST", `${THINGS}?fieldManager=creator`, {
      raw: thing("update", '{"free":{"__proto__":{"a":1},"constructor":"c"}}'),
    });
    expect(created.status, created.text).toBe(201);
    const body = JSON.parse(thing("update", '{"free":{"__proto__":{"a":2},"toString":"t"}}'));
    body.metadata.resourceVersion = created.body.metadata.resourceVersion;
    const res = await t.request("PUT", `${THINGS}/update?fieldManager=updater`, { raw: JSON.stringify(body) });
    expect(res.status, res.text).toBe(200);
    expectJson(res.body.spec, '{"free":{"__proto__":{"a":2},"toString":"t"}}');
    expectJson(fieldsOf(res.body, "updater"), '{"f:spec":{"f:free":{"f:__proto__":{"f:a":{}},"f:toString":{}}}}');
    expectJson(fieldsOf(res.body, "creator"), '{"f:spec":{".":{},"f:free":{".":{},"f:__proto__":{}}}}');
    expectNoPollution();
  });

  it("keep a merge patch under __proto__", async () => {
    await t.request("POST", THINGS, { raw: thing("merge", '{"free":{"a":{"b":1}}}') });
    const res = await t.request("PATCH", `${THINGS}/merge`, {
      raw: '{"spec":{"free":{"a":{"__proto__":{"z":1}},"__proto__":{"polluted":"yes"}}}}',
      contentType: MERGE,
    });
    expect(res.status, res.text).toBe(200);
    expectJson(res.body.spec.free, '{"a":{"b":1,"__proto__":{"z":1}},"__proto__":{"polluted":"yes"}}');
    const again = await t.request("PATCH", `${THINGS}/merge`, {
      raw: '{"spec":{"free":{"a":{"__proto__":{"z":null,"y":2}},"__proto__":null}}}',
      contentType: MERGE,
    });
    expectJson(again.body.spec.free, '{"a":{"b":1,"__proto__":{"y":2}}}');
    expectNoPollution();
  });

  it("keep a JSON patch under __proto__", async () => {
    await t.request("POST", THINGS, { raw: thing("json-patch", '{"free":{}}') });
    const res = await t.request("PATCH", `${THINGS}/json-patch`, {
      raw: '[{"op":"add","path":"/spec/free/__proto__","value":{"polluted":"yes"}},{"op":"add","path":"/spec/free/__proto__/b","value":2}]',
      contentType: JSON_PATCH,
    });
    expect(res.status, res.text).toBe(200);
    expectJson(res.body.spec.free, '{"__proto__":{"polluted":"yes","b":2}}');
    expectNoPollution();
  });

  it("keep an apply's __proto__ map, and merge a second apply into it", async () => {
    const apply = (manager: string, free: string) =>
      t.request("PATCH", `${THINGS}/apply?fieldManager=${manager}&force=true`, {
        raw: thing("apply", `{"free":${free}}`),
        contentType: APPLY,
      });
    const first = await apply("a", '{"__proto__":{"polluted":"yes","x":1},"constructor":"c"}');
    expect(first.status, first.text).toBe(201);
    expectJson(first.body.spec.free, '{"__proto__":{"polluted":"yes","x":1},"constructor":"c"}');
    const second = await apply("b", '{"__proto__":{"x":2,"y":3}}');
    expect(second.status, second.text).toBe(200);
    expectJson(second.body.spec.free, '{"__proto__":{"polluted":"yes","x":2,"y":3},"constructor":"c"}');
    // Keys of an untyped map are map entries: both appliers own the `__proto__` entry itself (`.`).
    expect(fieldsOf(second.body, "a")).toEqual(
      JSON.parse('{"f:spec":{"f:free":{"f:__proto__":{".":{},"f:polluted":{}},"f:constructor":{}}}}'),
    );
    expect(fieldsOf(second.body, "b")).toEqual(
      JSON.parse('{"f:spec":{"f:free":{"f:__proto__":{".":{},"f:x":{},"f:y":{}}}}}'),
    );
    const third = await apply("a", '{"toString":"t"}');
    expect(third.status, third.text).toBe(200);
    expectJson(third.body.spec.free, '{"__proto__":{"x":2,"y":3},"toString":"t"}');
    expectNoPollution();
  });

  it("print no printer-column value for a special key the object lacks, and the value of one it has", async () => {
    await t.request("POST", THINGS, { raw: thing("printed", '{"free":{"__proto__":"p"}}') });
    const res = await t.request("GET", `${THINGS}/printed`, {
      accept: "application/json;as=Table;v=v1;g=meta.k8s.io",
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.rows[0].cells.slice(1, 3)).toEqual([null, "p"]);
  });
});

/** A CRD whose schema declares properties named like Object.prototype's members. */
const namedCrd = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "nameds.special.example.com" },
  spec: {
    group: "special.example.com",
    scope: "Namespaced",
    names: { plural: "nameds", singular: "named", kind: "Named", listKind: "NamedList" },
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: JSON.parse(
            '{"type":"object","properties":{"spec":{"type":"object","properties":{"__proto__":{"type":"string","default":"d"},"constructor":{"type":"object","properties":{"prototype":{"type":"string"}}},"toString":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["valueOf"],"items":{"type":"object","required":["valueOf"],"properties":{"valueOf":{"type":"string"},"n":{"type":"integer"}}}}}}}}',
          ),
        },
      },
    ],
  },
};
const NAMEDS = "/apis/special.example.com/v1/namespaces/default/nameds";

describe("CRD properties named like Object.prototype's members", () => {
  beforeAll(async () => {
    const res = await t.request("POST", CRDS, { body: namedCrd });
    expect(res.status, res.text).toBe(201);
    expect(Object.keys(res.body.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties).sort()).toEqual([
      "__proto__",
      "constructor",
      "toString",
    ]);
    await waitUntil(async () => (await t.request("GET", NAMEDS)).status === 200);
  });
  afterAll(() => expectNoPollution());

  const named = (name: string, spec: string) =>
    `{"apiVersion":"special.example.com/v1","kind":"Named","metadata":{"name":"${name}"},"spec":${spec}}`;

  it("are declared fields: kept, defaulted, validated and owned field by field", async () => {
    const res = await t.request("POST", `${NAMEDS}?fieldManager=creator&fieldValidation=Strict`, {
      raw: named("declared", '{"constructor":{"prototype":"p"},"toString":[{"valueOf":"a","n":1}]}'),
    });
    expect(res.status, res.text).toBe(201);
    expectJson(res.body.spec, '{"constructor":{"prototype":"p"},"toString":[{"n":1,"valueOf":"a"}],"__proto__":"d"}');
    expect(fieldsOf(res.body, "creator")).toEqual(
      JSON.parse(
        '{"f:spec":{".":{},"f:__proto__":{},"f:constructor":{".":{},"f:prototype":{}},"f:toString":{".":{},"k:{\\"valueOf\\":\\"a\\"}":{".":{},"f:n":{},"f:valueOf":{}}}}}',
      ),
    );
    const invalid = await t.request("POST", NAMEDS, { raw: named("invalid", '{"__proto__":1}') });
    expect(invalid.status, invalid.text).toBe(422);
    expect(invalid.body.message).toContain("spec.__proto__: Invalid value");
  });

  it("merge by key in an apply, and a merge patch changes them", async () => {
    const apply = (manager: string, spec: string) =>
      t.request("PATCH", `${NAMEDS}/applied?fieldManager=${manager}&force=true`, {
        raw: named("applied", spec),
        contentType: APPLY,
      });
    const first = await apply("a", '{"__proto__":"x","toString":[{"valueOf":"a","n":1}]}');
    expect(first.status, first.text).toBe(201);
    const second = await apply("b", '{"toString":[{"valueOf":"b","n":2}],"constructor":{"prototype":"q"}}');
    expect(second.status, second.text).toBe(200);
    expectJson(
      second.body.spec,
      '{"__proto__":"x","toString":[{"n":1,"valueOf":"a"},{"n":2,"valueOf":"b"}],"constructor":{"prototype":"q"}}',
    );
    const merged = await t.request("PATCH", `${NAMEDS}/applied`, {
      raw: '{"spec":{"__proto__":"y","constructor":{"prototype":null}}}',
      contentType: MERGE,
    });
    expect(merged.status, merged.text).toBe(200);
    expectJson(
      merged.body.spec,
      '{"__proto__":"y","toString":[{"n":1,"valueOf":"a"},{"n":2,"valueOf":"b"}],"constructor":{}}',
    );
  });

  it("are published in the OpenAPI documents", async () => {
    const v2 = await t.request("GET", "/openapi/v2");
    const v2spec = v2.body.definitions["com.example.special.v1.Named"].properties.spec.properties;
    expect(Object.keys(v2spec).sort()).toEqual(["__proto__", "constructor", "toString"]);
    const index = await t.request("GET", "/openapi/v3");
    const v3 = await t.request("GET", index.body.paths["apis/special.example.com/v1"].serverRelativeURL);
    const v3spec = v3.body.components.schemas["com.example.special.v1.Named"].properties.spec.properties;
    expect(Object.keys(v3spec).sort()).toEqual(["__proto__", "constructor", "toString"]);
  });
});

describe("a /scale subresource whose replicas paths go through special keys", () => {
  const scaledCrd = {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "scaleds.special.example.com" },
    spec: {
      group: "special.example.com",
      scope: "Namespaced",
      names: { plural: "scaleds", singular: "scaled", kind: "Scaled", listKind: "ScaledList" },
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          subresources: {
            status: {},
            scale: { specReplicasPath: ".spec.__proto__.replicas", statusReplicasPath: ".status.constructor.replicas" },
          },
          schema: {
            openAPIV3Schema: JSON.parse(
              '{"type":"object","properties":{"spec":{"type":"object","properties":{"__proto__":{"type":"object","properties":{"replicas":{"type":"integer"}}}}},"status":{"type":"object","properties":{"constructor":{"type":"object","properties":{"replicas":{"type":"integer"}}}}}}}',
            ),
          },
        },
      ],
    },
  };
  const SCALEDS = "/apis/special.example.com/v1/namespaces/default/scaleds";

  it("reads and writes the replicas there, not on Object.prototype", async () => {
    const crd = await t.request("POST", CRDS, { body: scaledCrd });
    expect(crd.status, crd.text).toBe(201);
    await waitUntil(async () => (await t.request("GET", SCALEDS)).status === 200);
    const created = await t.request("POST", SCALEDS, {
      raw: '{"apiVersion":"special.example.com/v1","kind":"Scaled","metadata":{"name":"s"},"spec":{}}',
    });
    expect(created.status, created.text).toBe(201);
    const empty = await t.request("GET", `${SCALEDS}/s/scale`);
    expect(empty.status, empty.text).toBe(200);
    expect(empty.body.spec).toEqual({});
    expect(empty.body.status).toEqual({ replicas: 0 });

    const scaled = await t.request("PATCH", `${SCALEDS}/s/scale`, {
      body: { spec: { replicas: 3 } },
      contentType: MERGE,
    });
    expect(scaled.status, scaled.text).toBe(200);
    expect(scaled.body.spec).toEqual({ replicas: 3 });
    expectNoPollution();
    const got = await t.request("GET", `${SCALEDS}/s`);
    expectJson(got.body.spec, '{"__proto__":{"replicas":3}}');
  });
});

describe("impersonation extras named like Object.prototype's members", () => {
  it("are the impersonated user's extras", async () => {
    const res = await t.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", {
      body: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" },
      headers: { "Impersonate-User": "jane", "Impersonate-Extra-__proto__": "x", "Impersonate-Extra-constructor": "y" },
    });
    expect(res.status, res.text).toBe(201);
    expectJson(res.body.status.userInfo.extra, '{"__proto__":["x"],"constructor":["y"]}');
    expectNoPollution();
  });
});

describe("persistence of keys special in JavaScript", () => {
  it("keeps them across a restart on the same data directory", async () => {
    const dir = mkdtempSync(join(tmpdir(), "capstan-special-keys-"));
    try {
      const first = await startRawHttpCluster({ dataDir: dir, builtinPlugins: false });
      const created = await first.request("POST", CMS, {
        raw: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"kept"},"data":${specialData("d")}}`,
      });
      expect(created.status, created.text).toBe(201);
      await first.stop();
      const second = await startRawHttpCluster({ dataDir: dir, builtinPlugins: false });
      try {
        const got = await second.request("GET", `${CMS}/kept`);
        expect(got.status, got.text).toBe(200);
        expect(entries(got.body.data)).toEqual(expected(specialData("d")));
        expect(got.body.metadata.managedFields).toEqual(created.body.metadata.managedFields);
      } finally {
        await second.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("kubectl with keys special in JavaScript", () => {
  it("creates (protobuf body), applies server-side and reads back a ConfigMap with them", async () => {
    const literals = SPECIAL.map((k) => `--from-literal=${k}=${k}-k`);
    const created = await t.cluster.kubectl(["create", "configmap", "kubectl-create", ...literals]);
    expect(created.code, created.stderr).toBe(0);
    expect(entries((await getCm("kubectl-create")).data)).toEqual(expected(specialData("k")));

    const manifest = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kubectl-apply\ndata:\n  __proto__: p\n  constructor: c\n`;
    for (const stdin of [manifest, manifest.replace("constructor: c", "toString: t")]) {
      const applied = await t.cluster.kubectl(["apply", "--server-side", "--field-manager=kubectl-ssa", "-f", "-"], {
        stdin,
      });
      expect(applied.code, applied.stderr).toBe(0);
    }
    const got = await t.cluster.kubectl(["get", "configmap", "kubectl-apply", "-o", "json", "--show-managed-fields"]);
    expect(got.code, got.stderr).toBe(0);
    const cm = JSON.parse(got.stdout);
    expect(entries(cm.data)).toEqual(expected('{"__proto__":"p","toString":"t"}'));
    expect(fieldsOf(cm, "kubectl-ssa")).toEqual(JSON.parse('{"f:data":{"f:__proto__":{},"f:toString":{}}}'));
    const jsonpath = await t.cluster.kubectl(["get", "configmap", "kubectl-apply", "-o", "jsonpath={.data.__proto__}"]);
    expect(jsonpath.stdout).toBe("p");
    expectNoPollution();
  });
});
