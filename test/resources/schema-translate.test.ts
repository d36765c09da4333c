import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { Kube } from "../../packages/capstan/src/resources/kube-extensions.ts";
import { SchemaTranslationError, translateSchema } from "../../packages/capstan/src/resources/schema-translate.ts";
import { structuralProblems } from "../../packages/capstan/src/resources/structural.ts";

const t = (schema: unknown) => translateSchema(schema, "spec", "Thing");

/** The error message translating `schema` produces. */
function refusal(schema: unknown): string {
  try {
    t(schema);
  } catch (err) {
    expect(err).toBeInstanceOf(SchemaTranslationError);
    return (err as Error).message;
  }
  throw new Error("expected the schema to be refused");
}

describe("TypeBox -> CRD schema: what users reach for", () => {
  it("keeps objects with required and optional properties", () => {
    expect(t(Type.Object({ a: Type.String(), b: Type.Optional(Type.Boolean()) }))).toEqual({
      type: "object",
      required: ["a"],
      properties: { a: { type: "string" }, b: { type: "boolean" } },
    });
  });

  it("drops required when every property is optional (Type.Partial)", () => {
    expect(t(Type.Partial(Type.Object({ a: Type.String() })))).toEqual({
      type: "object",
      properties: { a: { type: "string" } },
    });
  });

  it("keeps string bounds, patterns and the formats the server validates", () => {
    expect(t(Type.String({ minLength: 1, maxLength: 63, pattern: "^[a-z]+$" }))).toEqual({
      type: "string",
      minLength: 1,
      maxLength: 63,
      pattern: "^[a-z]+$",
    });
    expect(t(Type.String({ format: "date-time" }))).toEqual({ type: "string", format: "date-time" });
    expect(t(Type.String({ format: "uuid" }))).toEqual({ type: "string", format: "uuid" });
  });

  it("gives integers int64 by default and keeps an explicit int32", () => {
    expect(t(Type.Integer({ minimum: 0, maximum: 10 }))).toEqual({
      type: "integer",
      minimum: 0,
      maximum: 10,
      format: "int64",
    });
    expect(t(Type.Integer({ format: "int32" }))).toEqual({ type: "integer", format: "int32" });
  });

  it("keeps numbers with bounds and multipleOf", () => {
    expect(t(Type.Number({ minimum: 0.5, maximum: 2, multipleOf: 0.5 }))).toEqual({
      type: "number",
      minimum: 0.5,
      maximum: 2,
      multipleOf: 0.5,
    });
  });

  it("turns numeric exclusiveMinimum/exclusiveMaximum into OpenAPI v3.0 booleans", () => {
    expect(t(Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1 }))).toEqual({
      type: "number",
      minimum: 0,
      exclusiveMinimum: true,
      maximum: 1,
      exclusiveMaximum: true,
    });
    // A stricter inclusive bound wins over a looser exclusive one.
    expect(t(Type.Number({ minimum: 5, exclusiveMinimum: 1 }))).toEqual({ type: "number", minimum: 5 });
  });

  it("keeps booleans", () => {
    expect(t(Type.Boolean())).toEqual({ type: "boolean" });
  });

  it("keeps arrays with item bounds", () => {
    expect(t(Type.Array(Type.String(), { minItems: 1, maxItems: 3 }))).toEqual({
      type: "array",
      items: { type: "string" },
      minItems: 1,
      maxItems: 3,
    });
  });

  it("turns Type.Record(Type.String(), T) into additionalProperties: T", () => {
    expect(t(Type.Record(Type.String(), Type.Integer()))).toEqual({
      type: "object",
      additionalProperties: { type: "integer", format: "int64" },
    });
  });

  it("turns a union of string literals into an enum of type string", () => {
    const schema = Type.Union(["CAD", "USD"].map((c) => Type.Literal(c)));
    expect(JSON.parse(JSON.stringify(schema))).toEqual({
      anyOf: [
        { type: "string", const: "CAD" },
        { type: "string", const: "USD" },
      ],
    });
    expect(t(schema)).toEqual({ type: "string", enum: ["CAD", "USD"] });
  });

  it("turns Type.Enum and numeric literal unions into typed enums", () => {
    expect(t(Type.Enum(["a", "b"]))).toEqual({ type: "string", enum: ["a", "b"] });
    expect(t(Type.Union([Type.Literal(1), Type.Literal(2)]))).toEqual({
      type: "integer",
      enum: [1, 2],
      format: "int64",
    });
    expect(t(Type.Union([Type.Literal(1), Type.Literal(2.5)]))).toEqual({ type: "number", enum: [1, 2.5] });
    expect(t(Type.Enum({ Low: 1, High: 2 }))).toEqual({ type: "integer", enum: [1, 2], format: "int64" });
  });

  it("turns const into a single-value enum", () => {
    expect(t(Type.Literal("fixed"))).toEqual({ type: "string", enum: ["fixed"] });
    expect(t(Type.Literal(true))).toEqual({ type: "boolean", enum: [true] });
  });

  it("turns T | null into nullable: true", () => {
    expect(t(Type.Union([Type.String(), Type.Null()]))).toEqual({ type: "string", nullable: true });
    expect(t(Type.Union([Type.Object({ a: Type.String() }), Type.Null()], { description: "maybe" }))).toEqual({
      type: "object",
      required: ["a"],
      properties: { a: { type: "string" } },
      nullable: true,
      description: "maybe",
    });
  });

  it("turns integer | string into x-kubernetes-int-or-string", () => {
    expect(t(Type.Union([Type.Integer(), Type.String()]))).toEqual({ "x-kubernetes-int-or-string": true });
    expect(t(Kube.IntOrString({ description: "port" }))).toEqual({
      description: "port",
      "x-kubernetes-int-or-string": true,
    });
  });

  it("keeps defaults, on fields and on unions", () => {
    expect(t(Type.Integer({ default: 3 }))).toEqual({ type: "integer", default: 3, format: "int64" });
    expect(t(Type.Union([Type.Literal("a"), Type.Literal("b")], { default: "b" }))).toEqual({
      type: "string",
      enum: ["a", "b"],
      default: "b",
    });
  });

  it("translates nested objects all the way down", () => {
    const schema = Type.Object({
      template: Type.Object({
        containers: Type.Array(Type.Object({ name: Type.String(), ports: Type.Optional(Type.Array(Type.Integer())) })),
      }),
    });
    expect(t(schema)).toEqual({
      type: "object",
      required: ["template"],
      properties: {
        template: {
          type: "object",
          required: ["containers"],
          properties: {
            containers: {
              type: "array",
              items: {
                type: "object",
                required: ["name"],
                properties: {
                  name: { type: "string" },
                  ports: { type: "array", items: { type: "integer", format: "int64" } },
                },
              },
            },
          },
        },
      },
    });
  });

  it("merges Type.Intersect of objects into one object", () => {
    const schema = Type.Intersect([
      Type.Object({ a: Type.String() }),
      Type.Object({ b: Type.Optional(Type.Integer()) }),
    ]);
    expect(t(schema)).toEqual({
      type: "object",
      properties: { a: { type: "string" }, b: { type: "integer", format: "int64" } },
      required: ["a"],
    });
  });

  it("strips $id, $schema, examples (kept as example) and TypeBox's hidden markers", () => {
    const schema = Type.Object(
      { a: Type.Optional(Type.String({ $id: "A", examples: ["x"] })) },
      { $id: "Spec", $schema: "x" },
    );
    const out = t(schema);
    expect(out).toEqual({ type: "object", properties: { a: { type: "string", example: "x" } } });
    expect(JSON.stringify(out)).not.toContain("~");
  });

  it("never copies symbol-keyed markers (older TypeBox kept its Kind there)", () => {
    const marked = { type: "string", [Symbol.for("TypeBox.Kind")]: "String" };
    expect(Object.getOwnPropertySymbols(t(marked))).toEqual([]);
  });

  it("drops additionalProperties: false (Kubernetes prunes unknown fields instead)", () => {
    expect(t(Type.Object({ a: Type.String() }, { additionalProperties: false }))).toEqual({
      type: "object",
      required: ["a"],
      properties: { a: { type: "string" } },
    });
  });

  it("turns additionalProperties: true into x-kubernetes-preserve-unknown-fields", () => {
    expect(t(Type.Object({ a: Type.String() }, { additionalProperties: true }))).toEqual({
      type: "object",
      required: ["a"],
      properties: { a: { type: "string" } },
      "x-kubernetes-preserve-unknown-fields": true,
    });
  });

  it("keeps any value for Type.Unknown()/Type.Any() and Kube.PreserveUnknownFields()", () => {
    expect(t(Type.Unknown())).toEqual({ "x-kubernetes-preserve-unknown-fields": true });
    expect(t(Type.Any())).toEqual({ "x-kubernetes-preserve-unknown-fields": true });
    expect(t(Kube.PreserveUnknownFields())).toEqual({ "x-kubernetes-preserve-unknown-fields": true });
  });

  it("passes the escape hatches through: embedded resources, list and map types, CEL rules", () => {
    expect(t(Kube.EmbeddedResource())).toEqual({
      type: "object",
      "x-kubernetes-embedded-resource": true,
      "x-kubernetes-preserve-unknown-fields": true,
    });
    expect(t(Type.Array(Type.String(), Kube.listSet()))).toEqual({
      type: "array",
      items: { type: "string" },
      "x-kubernetes-list-type": "set",
    });
    const ports = Type.Array(Type.Object({ name: Type.String(), port: Type.Integer() }), Kube.listMap(["name"]));
    expect(t(ports)).toMatchObject({ "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"] });
    expect(t(Type.Object({ a: Type.String() }, Kube.mapAtomic()))).toMatchObject({ "x-kubernetes-map-type": "atomic" });
    const rules = Kube.validations({ rule: "self.min <= self.max", message: "min must not exceed max" });
    expect(t(Type.Object({ min: Type.Integer(), max: Type.Integer() }, rules))["x-kubernetes-validations"]).toEqual([
      { rule: "self.min <= self.max", message: "min must not exceed max" },
    ]);
  });

  it("produces structural output for every construct above", () => {
    const everything = Type.Object({
      s: Type.String({ minLength: 1, format: "date-time" }),
      i: Type.Integer({ exclusiveMinimum: 0 }),
      n: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
      e: Type.Union([Type.Literal("a"), Type.Literal("b")]),
      r: Type.Record(Type.String(), Type.Array(Type.String())),
      p: Kube.IntOrString(),
      u: Type.Unknown(),
      x: Kube.EmbeddedResource(),
      m: Type.Intersect([Type.Object({ a: Type.String() }), Type.Object({ b: Type.String() })]),
    });
    const spec = t(everything);
    expect(structuralProblems({ type: "object", properties: { spec } })).toEqual([]);
  });
});

describe("TypeBox -> CRD schema: refusals name the field", () => {
  it("refuses unions of object shapes", () => {
    const schema = Type.Object({
      foo: Type.Union([Type.Object({ a: Type.String() }), Type.Object({ b: Type.Number() })]),
    });
    expect(refusal(schema)).toBe(
      "Thing spec.foo: anyOf of non-literal types is not a structural schema; Kubernetes needs one type per field — use a union of literals, T | null, integer | string, or a single object with optional fields",
    );
  });

  it("refuses number | string, pointing at integer | string", () => {
    expect(refusal(Type.Object({ port: Type.Union([Type.Number(), Type.String()]) }))).toMatch(
      /^Thing spec\.port: number \| string is not a structural schema; Kubernetes only knows integer \| string/,
    );
  });

  it("refuses literals mixing types", () => {
    expect(refusal(Type.Object({ v: Type.Union([Type.Literal("a"), Type.Literal(1)]) }))).toBe(
      "Thing spec.v: enum mixes value types (string, integer); a CRD field has exactly one type",
    );
  });

  it("refuses a nullable enum, because the server checks enum against null", () => {
    expect(refusal(Type.Union([Type.Literal("a"), Type.Literal("b"), Type.Null()]))).toMatch(
      /^Thing spec: a nullable enum \(literals \| null\) is not supported/,
    );
  });

  it("refuses `not`", () => {
    expect(refusal(Type.Object({ a: Type.Unsafe({ type: "string", not: { enum: ["x"] } }) }))).toMatch(
      /^Thing spec\.a: `not` is not supported/,
    );
  });

  it("refuses tuples", () => {
    expect(refusal(Type.Object({ pair: Type.Tuple([Type.String(), Type.Number()]) }))).toBe(
      "Thing spec.pair: tuples are not supported by CRDs (items must be a single schema); use an object with named fields",
    );
  });

  it("refuses pattern properties other than a string-keyed record", () => {
    expect(refusal(Type.Unsafe({ type: "object", patternProperties: { "^x-": { type: "string" } } }))).toMatch(
      /^Thing spec: pattern properties \(\["\^x-"\]\) are not supported by CRDs/,
    );
  });

  it("refuses fields without a type", () => {
    expect(refusal(Type.Object({ blob: Type.Unsafe({ description: "anything" }) }))).toBe(
      "Thing spec.blob: has no type; Kubernetes needs one for every field (use Type.Unknown() or x-kubernetes-preserve-unknown-fields to keep any value)",
    );
  });

  it("refuses references and recursive types", () => {
    expect(refusal(Type.Object({ a: Type.Ref("Other") }))).toMatch(/^Thing spec\.a: schema references \(\$ref\/\$defs/);
  });

  it("refuses uniqueItems and points at list-type set", () => {
    expect(refusal(Type.Array(Type.String(), { uniqueItems: true }))).toMatch(
      /uniqueItems is forbidden in CRDs .*x-kubernetes-list-type/,
    );
  });

  it("refuses formats the server would silently ignore", () => {
    expect(refusal(Type.Object({ r: Type.String({ format: "regex" }) }))).toBe(
      'Thing spec.r: format "regex" is not one kube-apiserver validates for type string; it would be silently ignored',
    );
    expect(refusal(Type.Integer({ format: "float" }))).toMatch(
      /format "float" is not one kube-apiserver validates for type integer/,
    );
  });

  it("refuses patterns Go's RE2 cannot compile", () => {
    expect(refusal(Type.String({ pattern: "^(?!kube-).*$" }))).toMatch(/uses lookaround or backreferences/);
    expect(refusal(Type.String({ pattern: "(a)\\1" }))).toMatch(/uses lookaround or backreferences/);
  });

  it("refuses properties and additionalProperties together", () => {
    expect(refusal(Type.Object({ a: Type.String() }, { additionalProperties: Type.String() }))).toMatch(
      /additionalProperties and properties are mutually exclusive/,
    );
  });

  it("refuses types that JSON cannot hold", () => {
    expect(refusal(Type.Object({ big: Type.BigInt() }))).toMatch(
      /^Thing spec\.big: type "bigint" cannot be stored in a Kubernetes object/,
    );
    expect(refusal(Type.Object({ n: Type.Null() }))).toMatch(/^Thing spec\.n: type null alone is not allowed/);
  });

  it("refuses keywords with no CRD equivalent instead of dropping them", () => {
    expect(refusal(Type.Unsafe({ type: "array", items: { type: "string" }, contains: { const: "a" } }))).toMatch(
      /^Thing spec: keyword "contains" has no CRD equivalent/,
    );
  });

  it("refuses defaults that do not satisfy their own schema", () => {
    expect(refusal(Type.Object({ n: Type.Integer({ minimum: 1, default: 0 }) }))).toBe(
      "Thing spec.n (default): default 0 is below the minimum 1",
    );
    expect(refusal(Type.Object({ c: Type.Union([Type.Literal("a")], { default: "z" }) }))).toMatch(
      /default "z" is not one of \["a"\]/,
    );
    expect(refusal(Type.Object({ s: Type.String({ default: 3 }) }))).toMatch(
      /default 3 is integer, but the field is string/,
    );
    expect(refusal(Type.Object({ o: Type.Object({ a: Type.Optional(Type.String()) }, { default: { b: "x" } }) }))).toBe(
      'Thing spec.o (default): default {"b":"x"} has unknown field "b" (the server refuses defaults that pruning would change)',
    );
    // Nested defaults count as present when checking required fields of an object default.
    expect(t(Type.Object({ n: Type.Integer({ default: 1 }) }, { default: {} })).default).toEqual({});
  });

  it("refuses JavaScript-only refinements and codecs instead of dropping them", () => {
    expect(refusal(Type.Object({ name: Type.Refine(Type.String(), (v) => v.length > 2) }))).toMatch(
      /^Thing spec\.name: Type\.Refine predicates are JavaScript functions the API server cannot run/,
    );
    const date = Type.Codec(Type.String())
      .Decode((v) => new Date(v))
      .Encode((d) => d.toISOString());
    expect(refusal(Type.Object({ at: date }))).toMatch(/^Thing spec\.at: Type\.Codec transforms values in JavaScript/);
  });

  it("refuses required properties that are never declared (they would be pruned)", () => {
    expect(refusal(Type.Unsafe({ type: "object", properties: {}, required: ["ghost"] }))).toBe(
      'Thing spec: required property "ghost" is not declared in properties, so no object could ever be valid',
    );
  });

  it("refuses malformed CEL rule entries with the server's wording", () => {
    expect(refusal(Type.String(Kube.validations({ rule: "" })))).toMatch(/rule is not specified/);
    expect(refusal(Type.String(Kube.validations({ rule: "self != ''", message: "a\nb" })))).toMatch(
      /message must not contain line breaks/,
    );
    expect(refusal(Type.String(Kube.validations({ rule: "self != ''", reason: "Nope" })))).toMatch(
      /reason must be one of FieldValueRequired/,
    );
  });

  it("refuses list-map keys that are optional without a default", () => {
    const ports = Type.Array(Type.Object({ name: Type.Optional(Type.String()) }), Kube.listMap(["name"]));
    expect(refusal(Type.Object({ ports }))).toBe(
      "Thing spec.ports[*].name: is in x-kubernetes-list-map-keys, so it must be required or have a default",
    );
  });

  it("refuses list-type set over objects", () => {
    expect(refusal(Type.Array(Type.Object({ a: Type.String() }), Kube.listSet()))).toMatch(
      /^Thing spec\[\*\]: items of a list with x-kubernetes-list-type=set must be scalars/,
    );
  });

  it("names fields inside arrays, records and odd keys", () => {
    const schema = Type.Object({
      list: Type.Array(Type.Object({ bad: Type.Unsafe({}) })),
      map: Type.Record(Type.String(), Type.Object({ "odd-key": Type.Unsafe({}) })),
    });
    expect(refusal(Type.Object({ list: schema.properties.list }))).toMatch(/^Thing spec\.list\[\*\]\.bad: has no type/);
    expect(refusal(Type.Object({ map: schema.properties.map }))).toMatch(
      /^Thing spec\.map\.\*\["odd-key"\]: has no type/,
    );
  });
});
