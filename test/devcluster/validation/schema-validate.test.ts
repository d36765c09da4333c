import { describe, expect, it } from "vitest";
import {
  fieldErrorMessage,
  invalid,
  invalidStatus,
} from "../../../packages/capstan-dev/src/devcluster/validation/field-errors.ts";
import type { JSONSchemaProps } from "../../../packages/capstan-dev/src/devcluster/validation/schema-types.ts";
import {
  hasValidationRules,
  validateCustomObject,
} from "../../../packages/capstan-dev/src/devcluster/validation/schema-validate.ts";

// Cases and expected messages follow apiextensions-apiserver v0.32 pkg/apiserver/validation/validation_test.go
// (TestValidateCustomResource), which compares error sets; so do we, except where order is deterministic.
const obj = (field: Record<string, JSONSchemaProps>, required?: string[]): JSONSchemaProps => ({
  type: "object",
  properties: field,
  ...(required ? { required } : {}),
});
const messages = (schema: JSONSchemaProps, value: unknown) =>
  validateCustomObject(schema, value).map(fieldErrorMessage);
const messageSet = (schema: JSONSchemaProps, value: unknown) => [...new Set(messages(schema, value))].sort();
const sorted = (xs: string[]) => [...xs].sort();

describe("types and nullable", () => {
  const notNullable = obj({ field: { type: "object" } });
  const nullable = obj({ field: { type: "object", nullable: true } });

  it("names the JSON type the value has when it is not the declared one", () => {
    const cases: Array<[unknown, string]> = [
      ["foo", "string"],
      [42, "integer"],
      [true, "boolean"],
      [1.2, "number"],
      [[], "array"],
    ];
    for (const [value, got] of cases) {
      expect(messages(notNullable, { field: value })).toEqual([
        `field: Invalid value: "${got}": field in body must be of type object: "${got}"`,
      ]);
      expect(messages(nullable, { field: value })).toEqual([
        `field: Invalid value: "${got}": field in body must be of type object: "${got}"`,
      ]);
    }
  });

  it("rejects null unless the schema is nullable", () => {
    expect(messages(notNullable, { field: null })).toEqual([
      'field: Invalid value: "null": field in body must be of type object: "null"',
    ]);
    expect(messages(nullable, { field: null })).toEqual([]);
    expect(messages(obj({ field: { nullable: true } }), { field: 1.2 })).toEqual([]);
  });

  it("accepts integers and strings for x-kubernetes-int-or-string and names both types otherwise", () => {
    const schema = obj({ field: { "x-kubernetes-int-or-string": true } });
    expect(messages(schema, { field: 42 })).toEqual([]);
    expect(messages(schema, { field: "foo" })).toEqual([]);
    expect(messages(schema, { field: null })).toEqual([
      'field: Invalid value: "null": field in body must be of type integer,string: "null"',
    ]);
    expect(messages(schema, { field: 1.2 })).toEqual([
      'field: Invalid value: "number": field in body must be of type integer,string: "number"',
    ]);
    expect(messages(obj({ field: { "x-kubernetes-int-or-string": true, nullable: true } }), { field: null })).toEqual(
      [],
    );
  });

  it("reports the brief's integer example with the value's type as the bad value", () => {
    const schema = obj({ spec: obj({ replicas: { type: "integer" } }) });
    expect(messages(schema, { spec: { replicas: "3" } })).toEqual([
      'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"',
    ]);
  });

  it("accepts a whole float for an integer field but reports a fractional one twice, as kube-openapi does", () => {
    const schema = obj({ field: { type: "integer" } });
    expect(messages(schema, { field: 2.0 })).toEqual([]);
    expect(messageSet(schema, { field: 2.5 })).toEqual(
      sorted([
        'field: Invalid value: "number": field in body must be of type integer: "number"',
        '<nil>: Invalid value: "": Checked value must be of type integer (default format) in field',
      ]),
    );
  });
});

describe("anyOf and allOf", () => {
  it("adds the unnamed anyOf failure and the best failing alternative", () => {
    const schema = obj({
      field: { nullable: true, "x-kubernetes-int-or-string": true, anyOf: [{ type: "integer" }, { type: "string" }] },
    });
    expect(messages(schema, { field: null })).toEqual([]);
    expect(messages(schema, { field: 42 })).toEqual([]);
    expect(messageSet(schema, { field: true })).toEqual(
      sorted([
        '<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)',
        'field: Invalid value: "boolean": field in body must be of type integer,string: "boolean"',
        'field: Invalid value: "boolean": field in body must be of type integer: "boolean"',
      ]),
    );
    expect(messageSet(schema, { field: 1.2 })).toEqual(
      sorted([
        '<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)',
        'field: Invalid value: "number": field in body must be of type integer,string: "number"',
        'field: Invalid value: "number": field in body must be of type integer: "number"',
        '<nil>: Invalid value: "": Checked value must be of type integer (default format) in field',
      ]),
    );
  });

  it("reports allOf with 'None validated' when no member passes", () => {
    const schema = obj({
      field: {
        nullable: true,
        "x-kubernetes-int-or-string": true,
        allOf: [{ anyOf: [{ type: "integer" }, { type: "string" }] }],
      },
    });
    expect(messageSet(schema, { field: [] })).toEqual(
      sorted([
        '<nil>: Invalid value: "": "field" must validate all the schemas (allOf). None validated',
        '<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)',
        'field: Invalid value: "array": field in body must be of type integer,string: "array"',
        'field: Invalid value: "array": field in body must be of type integer: "array"',
      ]),
    );
  });

  it("reports oneOf matching none or several, and not matching", () => {
    const oneOf = obj({ f: { oneOf: [{ minimum: 5 }, { maximum: 10 }] } });
    expect(messages(oneOf, { f: 1 })).toEqual([]);
    expect(messages(oneOf, { f: 7 })).toEqual([
      '<nil>: Invalid value: "": "f" must validate one and only one schema (oneOf). Found 2 valid alternatives',
    ]);
    const not = obj({ f: { type: "string", not: { pattern: "^x" } } });
    expect(messages(not, { f: "xy" })).toEqual(['<nil>: Invalid value: "": "f" must not validate the schema (not)']);
  });
});

describe("required, enum, pattern, lengths and counts", () => {
  it("reports missing required fields by full path", () => {
    const schema = obj({ field: { type: "object", required: ["nested"], properties: { nested: {} } } }, ["field"]);
    expect(messages(schema, { test: "a" })).toEqual(["field: Required value"]);
    expect(messages(schema, { field: {} })).toEqual(["field.nested: Required value"]);
  });

  it("lists enum values quoted, the bad value rendered by type", () => {
    const schema = obj({
      field: {
        type: "object",
        required: ["nestedint", "nestedstring"],
        properties: {
          nestedint: { type: "integer", enum: [1, 2] },
          nestedstring: { type: "string", enum: ["a", "b"] },
        },
      },
    });
    expect(messageSet(schema, { field: {} })).toEqual([
      "field.nestedint: Required value",
      "field.nestedstring: Required value",
    ]);
    expect(messageSet(schema, { field: { nestedint: "x", nestedstring: true } })).toEqual(
      sorted([
        'field.nestedint: Invalid value: "string": field.nestedint in body must be of type integer: "string"',
        'field.nestedint: Unsupported value: "x": supported values: "1", "2"',
        'field.nestedstring: Invalid value: "boolean": field.nestedstring in body must be of type string: "boolean"',
        'field.nestedstring: Unsupported value: true: supported values: "a", "b"',
      ]),
    );
    const currency = obj({ spec: obj({ currency: { type: "string", enum: ["CAD", "USD"] } }) });
    expect(messages(currency, { spec: { currency: "EUR" } })).toEqual([
      'spec.currency: Unsupported value: "EUR": supported values: "CAD", "USD"',
    ]);
    // 1.32 prints a nil bad value as the string "null", and a composite one with %#v.
    const nullable = obj({ mode: { type: "string", nullable: true, enum: ["on", "off"] } });
    expect(messages(nullable, { mode: null })).toEqual([
      'mode: Unsupported value: "null": supported values: "on", "off"',
    ]);
    const shapes = obj({ shape: { type: "object", enum: [{ a: 1 }] } });
    expect(messages(shapes, { shape: { a: 2 } })).toEqual([
      'shape: Unsupported value: map[string]interface {}{"a":2}: supported values: "{\\"a\\":1}"',
    ]);
  });

  it("reports pattern, minLength, maxLength (as Too long) and an invalid pattern", () => {
    expect(messages(obj({ a: { type: "string", pattern: "^[a-zA-Z0-9_]*$" } }), { a: "a b" })).toEqual([
      `a: Invalid value: "a b": a in body should match '^[a-zA-Z0-9_]*$'`,
    ]);
    expect(messages(obj({ a: { type: "string", minLength: 3 } }), { a: "ab" })).toEqual([
      'a: Invalid value: "ab": a in body should be at least 3 chars long',
    ]);
    expect(messages(obj({ fieldX: { type: "string", maxLength: 2 } }), { fieldX: "abc" })).toEqual([
      "fieldX: Too long: may not be more than 2 bytes",
    ]);
    // Length counts characters (runes), not bytes or UTF-16 units.
    expect(messages(obj({ a: { type: "string", maxLength: 2 } }), { a: "é😀" })).toEqual([]);
    expect(messages(obj({ field: { type: "string", pattern: "+" } }), { field: "foo" })).toEqual([
      "field: Invalid value: \"foo\": field in body should match '+, but pattern is invalid: error parsing regexp: missing argument to repetition operator: `+`'",
    ]);
  });

  it("handles Go's inline case-insensitive flag in patterns", () => {
    expect(messages(obj({ a: { type: "string", pattern: "(?i)^abc$" } }), { a: "ABC" })).toEqual([]);
  });

  it("reports item and property counts and duplicates", () => {
    expect(messages(obj({ fieldX: { type: "array", maxItems: 2 } }), { fieldX: ["a", "b", "c"] })).toEqual([
      "fieldX: Too many: 3: must have at most 2 items",
    ]);
    expect(messages(obj({ fieldX: { type: "object", maxProperties: 2 } }), { fieldX: { a: 1, b: 1, c: 1 } })).toEqual([
      "fieldX: Too many: 3: must have at most 2 items",
    ]);
    expect(messages(obj({ l: { type: "array", minItems: 2 } }), { l: ["a"] })).toEqual([
      "l: Invalid value: 1: l in body should have at least 2 items",
    ]);
    expect(messages(obj({ m: { type: "object", minProperties: 1 } }), { m: {} })).toEqual([
      "m: Invalid value: 0: m in body should have at least 1 properties",
    ]);
    expect(messages(obj({ l: { type: "array", uniqueItems: true } }), { l: [{ a: 1 }, { a: 1 }] })).toEqual([
      `l: Invalid value: "": l in body shouldn't contain duplicates`,
    ]);
  });
});

describe("numbers", () => {
  it("checks inclusive and exclusive bounds with Go's number rendering", () => {
    expect(messages(obj({ num: { type: "integer", maximum: 10 } }), { num: 15 })).toEqual([
      "num: Invalid value: 15: num in body should be less than or equal to 10",
    ]);
    expect(messages(obj({ beta: { type: "integer", minimum: 10 } }), { beta: 5 })).toEqual([
      "beta: Invalid value: 5: beta in body should be greater than or equal to 10",
    ]);
    expect(messages(obj({ n: { type: "number", maximum: 1.5, exclusiveMaximum: true } }), { n: 1.5 })).toEqual([
      "n: Invalid value: 1.5: n in body should be less than 1.5",
    ]);
    expect(messages(obj({ n: { type: "number", minimum: 1000000, exclusiveMinimum: true } }), { n: 0.5 })).toEqual([
      "n: Invalid value: 0.5: n in body should be greater than 1e+06",
    ]);
    expect(messages(obj({ n: { type: "number", multipleOf: 0.5 } }), { n: 1.25 })).toEqual([
      "n: Invalid value: 1.25: n in body should be a multiple of 0.5",
    ]);
    // Floating-point noise is tolerated as swag v0.23.0 tolerates it: only just above an integer
    // (10 * 0.3 = 3.0000000000000004 passes; 100 * 19.99 = 1998.9999999999998 does not, on the real server too).
    expect(messages(obj({ n: { type: "number", multipleOf: 0.1 } }), { n: 0.3 })).toEqual([]);
    expect(messages(obj({ n: { type: "number", multipleOf: 0.01 } }), { n: 19.99 })).toEqual([
      "n: Invalid value: 19.99: n in body should be a multiple of 0.01",
    ]);
    expect(messages(obj({ n: { type: "number", multipleOf: 0.1 } }), { n: 0.35 })).toEqual([
      "n: Invalid value: 0.35: n in body should be a multiple of 0.1",
    ]);
    expect(messages(obj({ n: { type: "integer", multipleOf: 3 } }), { n: 7 })).toEqual([
      "n: Invalid value: 7: n in body should be a multiple of 3",
    ]);
  });

  it("reports a non-positive multipleOf with the factor, a number, as the bad value", () => {
    expect(messages(obj({ n: { type: "integer", multipleOf: -2 } }), { n: 4 })).toEqual([
      "n: Invalid value: -2: factor MultipleOf declared for n must be positive: -2",
    ]);
    expect(messages(obj({ n: { type: "number", multipleOf: -0.5 } }), { n: 1.5 })).toEqual([
      "n: Invalid value: -0.5: factor MultipleOf declared for n must be positive: -0.5",
    ]);
  });

  it("checks int32, int64 and float ranges with kube-openapi's unnamed errors", () => {
    const schema = obj({
      intThirtyTwo: { type: "integer", format: "int32" },
      intSixtyFour: { type: "integer", format: "int64" },
      floatThreeTwo: { type: "number", format: "float" },
      floatSixFour: { type: "number", format: "double" },
    });
    const max32 = 3.4028234663852886e38;
    expect(
      messages(schema, {
        intThirtyTwo: 2 ** 31 - 1,
        intSixtyFour: -(2 ** 63),
        floatThreeTwo: max32,
        floatSixFour: -Number.MAX_VALUE,
      }),
    ).toEqual([]);
    expect(messages(schema, { intThirtyTwo: 2 ** 31 })).toEqual([
      '<nil>: Invalid value: "": Checked value must be of type integer with format int32 in intThirtyTwo',
    ]);
    expect(messages(schema, { intThirtyTwo: -(2 ** 31) - 1 })).toEqual([
      '<nil>: Invalid value: "": Checked value must be of type integer with format int32 in intThirtyTwo',
    ]);
    expect(messageSet(schema, { intSixtyFour: 2 ** 63 * 1.1 })).toEqual(
      sorted([
        'intSixtyFour: Invalid value: "float64": intSixtyFour in body must be of type int64: "float64"',
        '<nil>: Invalid value: "": Checked value must be of type integer with format int64 in intSixtyFour',
      ]),
    );
    expect(messages(schema, { floatThreeTwo: max32 * 1.1 })).toEqual([
      '<nil>: Invalid value: "": Checked value must be of type number with format float in floatThreeTwo',
    ]);
  });
});

describe("formats", () => {
  it("ignores the Kubernetes name formats, which 1.32 does not know (they came in 1.34)", () => {
    expect(messages(obj({ fieldX: { type: "string", format: "k8s-long-name" } }), { fieldX: "a.-" })).toEqual([]);
    expect(messages(obj({ fieldX: { type: "string", format: "k8s-short-name" } }), { fieldX: "a-" })).toEqual([]);
  });

  it("accepts the addresses net/mail accepts (kube-openapi's strfmt test list) and refuses two @", () => {
    const schema = obj({ e: { type: "string", format: "email" } });
    for (const e of [
      '" "@example.com',
      '"Fred Bloggs"@example.com',
      "!#$%&'*+-/=?^_`{}|~@example.com",
      "postmaster@☁→❄→☃.ws",
      "john@com",
    ]) {
      expect(messages(schema, { e })).toEqual([]);
    }
    expect(messages(schema, { e: "somebody@somewhere@com" })).toEqual([
      'e: Invalid value: "somebody@somewhere@com": e in body must be of type email: "somebody@somewhere@com"',
    ]);
  });

  it("checks date-time, date, uuid, ipv4, cidr and byte, and ignores formats the apiserver strips", () => {
    const schema = obj({
      t: { type: "string", format: "date-time" },
      d: { type: "string", format: "date" },
      u: { type: "string", format: "uuid" },
      ip: { type: "string", format: "ipv4" },
      c: { type: "string", format: "cidr" },
      b: { type: "string", format: "byte" },
      x: { type: "string", format: "no-such-format" },
    });
    const good = {
      t: "2026-11-22T10:00:00Z",
      d: "2024-02-29",
      u: "123e4567-e89b-12d3-a456-426614174000",
      ip: "10.0.0.1",
      c: "10.0.0.0/8",
      b: "aGVsbG8=",
      x: "anything",
    };
    expect(messages(schema, good)).toEqual([]);
    expect(messages(schema, { t: "2026-11-22 10:00:00" })).toEqual([
      't: Invalid value: "2026-11-22 10:00:00": t in body must be of type date-time: "2026-11-22 10:00:00"',
    ]);
    expect(messages(schema, { d: "2023-02-29" })).toEqual([
      'd: Invalid value: "2023-02-29": d in body must be of type date: "2023-02-29"',
    ]);
    expect(messages(schema, { ip: "10.0.0.256" }).length).toBe(1);
    expect(messages(schema, { c: "10.0.0.0/33" }).length).toBe(1);
    expect(messages(schema, { b: "abc" }).length).toBe(1);
  });
});

describe("objects, arrays and paths", () => {
  it("renders array item paths with brackets and map values with dots", () => {
    const schema = obj({
      spec: obj({
        items: { type: "array", items: obj({ name: { type: "string" } }, ["name"]) },
        labels: { type: "object", additionalProperties: { type: "string" } },
      }),
    });
    expect(messageSet(schema, { spec: { items: [{ name: "a" }, {}, { name: 3 }], labels: { a: "x", b: 1 } } })).toEqual(
      sorted([
        "spec.items[1].name: Required value",
        'spec.items[2].name: Invalid value: "integer": spec.items[2].name in body must be of type string: "integer"',
        'spec.labels.b: Invalid value: "integer": spec.labels.b in body must be of type string: "integer"',
      ]),
    );
  });

  it("forbids properties under additionalProperties: false", () => {
    const schema = obj({ o: { type: "object", properties: { a: {} }, additionalProperties: false } });
    expect(messages(schema, { o: { a: 1, b: 2 } })).toEqual([
      'o: Invalid value: "b": o.b in body is a forbidden property',
    ]);
  });

  it("prefixes paths of a status validation and keeps unnamed errors on the prefix", () => {
    const status: JSONSchemaProps = { type: "object", properties: { num: { type: "integer", maximum: 10 } } };
    const errs = validateCustomObject(status, { num: 15 }, { fieldPrefix: "status" });
    expect(errs.map(fieldErrorMessage)).toEqual([
      "status.num: Invalid value: 15: num in body should be less than or equal to 10",
    ]);
    expect(invalidStatus("stable.example.com", "CronTab", "c1", errs).message).toBe(
      'CronTab.stable.example.com "c1" is invalid: status.num: Invalid value: 15: num in body should be less than or equal to 10',
    );
  });

  it("never throws on odd input", () => {
    const schema = obj({ a: { type: "array", items: { type: "object" } } });
    for (const v of [undefined, null, 1, "x", [], { a: [null, 1, "x"] }]) {
      expect(() => validateCustomObject(schema, v)).not.toThrow();
    }
  });
});

describe("ratcheting on update", () => {
  const schema = obj({
    spec: obj({
      name: { type: "string", maxLength: 3 },
      size: { type: "integer", minimum: 1 },
      ports: {
        type: "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
        items: obj({ name: { type: "string" }, port: { type: "integer", maximum: 100 } }),
      },
      tags: { type: "array", items: { type: "string", maxLength: 2 } },
    }),
  });
  const stored = { spec: { name: "toolong", size: 0, ports: [{ name: "a", port: 500 }], tags: ["abc"] } };

  it("keeps accepting invalid values an update leaves unchanged", () => {
    const next = structuredClone(stored);
    expect(validateCustomObject(schema, next, { oldObj: stored })).toEqual([]);
    expect(messages(schema, next).length).toBe(4);
  });

  it("reports values the update changed, and map-list items correlated by key", () => {
    const next = {
      spec: {
        name: "toolong",
        size: -1,
        ports: [
          { name: "b", port: 501 },
          { name: "a", port: 500 },
        ],
        tags: ["abc"],
      },
    };
    expect(validateCustomObject(schema, next, { oldObj: stored }).map(fieldErrorMessage)).toEqual([
      "spec.size: Invalid value: -1: spec.size in body should be greater than or equal to 1",
      "spec.ports[0].port: Invalid value: 501: spec.ports[0].port in body should be less than or equal to 100",
    ]);
  });

  it("does not correlate items of atomic lists, so a changed list re-validates every item", () => {
    const next = { spec: { ...stored.spec, tags: ["abc", "d"] } };
    expect(validateCustomObject(schema, next, { oldObj: stored }).map(fieldErrorMessage)).toEqual([
      "spec.tags[0]: Too long: may not be more than 2 bytes",
    ]);
  });
});

describe("the CEL extension point", () => {
  const schema = obj({
    spec: {
      type: "object",
      required: ["x"],
      properties: { x: { type: "integer" } },
      "x-kubernetes-validations": [{ rule: "self.x > 0" }],
    },
  });

  it("runs the rules evaluator when the schema checks found nothing blocking", () => {
    const rules = (_s: JSONSchemaProps, o: unknown) =>
      (o as { spec: { x: number } }).spec.x > 0
        ? []
        : [invalid("spec", (o as { spec: unknown }).spec, "failed rule: self.x > 0")];
    expect(validateCustomObject(schema, { spec: { x: 1 } }, { rules })).toEqual([]);
    expect(validateCustomObject(schema, { spec: { x: -1 } }, { rules }).map(fieldErrorMessage)).toEqual([
      'spec: Invalid value: map[string]interface {}{"x":-1}: failed rule: self.x > 0',
    ]);
  });

  it("skips the rules with the real server's message when an error blocks them", () => {
    let called = false;
    const rules = () => {
      called = true;
      return [];
    };
    expect(validateCustomObject(schema, { spec: {} }, { rules }).map(fieldErrorMessage)).toEqual([
      "spec.x: Required value",
      '<nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
    ]);
    expect(called).toBe(false);
  });

  it("tells whether a schema has rules at all", () => {
    expect(hasValidationRules(schema)).toBe(true);
    expect(hasValidationRules(obj({ a: { type: "string" } }))).toBe(false);
  });
});
