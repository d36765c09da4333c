import { describe, expect, it } from "vitest";
import {
  compileCelRules,
  compiledRulesOf,
} from "../../../../packages/capstan-dev/src/devcluster/validation/cel/compile.ts";
import { evaluateCelRules } from "../../../../packages/capstan-dev/src/devcluster/validation/cel/evaluate.ts";
import { escapePropertyName } from "../../../../packages/capstan-dev/src/devcluster/validation/cel/values.ts";
import {
  fieldErrorMessage,
  fieldPath,
} from "../../../../packages/capstan-dev/src/devcluster/validation/field-errors.ts";
import type {
  JSONSchemaProps,
  ValidationRule,
} from "../../../../packages/capstan-dev/src/devcluster/validation/schema-types.ts";
import { validateCustomObject } from "../../../../packages/capstan-dev/src/devcluster/validation/schema-validate.ts";

/** A root schema whose `spec` has the given properties and rules. */
function root(spec: JSONSchemaProps): JSONSchemaProps {
  return { type: "object", properties: { spec } };
}

function errors(schema: JSONSchemaProps, obj: unknown, old?: unknown): string[] {
  return evaluateCelRules(schema, obj, old).map(fieldErrorMessage);
}

function specRule(rule: ValidationRule, properties: Record<string, JSONSchemaProps>): JSONSchemaProps {
  return root({ type: "object", properties, "x-kubernetes-validations": [rule] });
}

const INT: JSONSchemaProps = { type: "integer" };
const STR: JSONSchemaProps = { type: "string" };

describe("rule results and messages", () => {
  it("reports `failed rule: <rule>` when the rule has no message, on the rule's node", () => {
    const s = specRule({ rule: "self.a < self.b" }, { a: INT, b: INT });
    expect(errors(s, { spec: { a: 2, b: 1 } })).toEqual([
      'spec: Invalid value: "object": failed rule: self.a < self.b',
    ]);
    expect(errors(s, { spec: { a: 1, b: 2 } })).toEqual([]);
  });

  it("shows the schema type as the bad value, as 1.32 does (later releases show scalar values)", () => {
    const s = root({
      type: "object",
      properties: { name: { type: "string", "x-kubernetes-validations": [{ rule: "self.size() < 3" }] } },
    });
    expect(errors(s, { spec: { name: "long" } })).toEqual([
      'spec.name: Invalid value: "string": failed rule: self.size() < 3',
    ]);
  });

  it("uses a messageExpression's string, falling back to message when it fails or is empty", () => {
    const props = { n: INT };
    const ok = specRule({ rule: "self.n < 3", messageExpression: "'n is ' + string(self.n)", message: "m" }, props);
    expect(errors(ok, { spec: { n: 5 } })).toEqual(['spec: Invalid value: "object": n is 5']);
    const empty = specRule({ rule: "self.n < 3", messageExpression: "'  '", message: "fallback" }, props);
    expect(errors(empty, { spec: { n: 5 } })).toEqual(['spec: Invalid value: "object": fallback']);
    const failing = specRule({ rule: "self.n < 3", messageExpression: "self.missing", message: "fallback" }, props);
    expect(errors(failing, { spec: { n: 5 } })).toEqual(['spec: Invalid value: "object": fallback']);
  });

  it("maps reason to Forbidden, Required and Duplicate field errors", () => {
    const props = { n: INT };
    const with_ = (reason: string) => specRule({ rule: "false", message: "no", reason }, props);
    expect(errors(with_("FieldValueForbidden"), { spec: { n: 1 } })).toEqual(["spec: Forbidden: no"]);
    expect(errors(with_("FieldValueRequired"), { spec: { n: 1 } })).toEqual(["spec: Required value: no"]);
    // Duplicate carries no detail; its value is the schema type, as for Invalid (1.32).
    expect(errors(with_("FieldValueDuplicate"), { spec: { n: 1 } })).toEqual(['spec: Duplicate value: "object"']);
  });

  it("appends fieldPath to the node's path", () => {
    const s = specRule(
      { rule: "self.min <= self.max", message: "min above max", fieldPath: ".min" },
      {
        min: INT,
        max: INT,
      },
    );
    expect(errors(s, { spec: { min: 3, max: 1 } })).toEqual(['spec.min: Invalid value: "object": min above max']);
    const keyed = specRule(
      { rule: "self.limits.cpu <= 4", message: "too much cpu", fieldPath: ".limits['cpu']" },
      {
        limits: { type: "object", additionalProperties: INT },
      },
    );
    expect(errors(keyed, { spec: { limits: { cpu: 8 } } })).toEqual([
      'spec.limits[cpu]: Invalid value: "object": too much cpu',
    ]);
  });

  it("reports evaluation errors with cel-go's texts and the rule", () => {
    const s = specRule({ rule: "self.a == 'x'" }, { a: STR });
    expect(errors(s, { spec: {} })).toEqual([
      "spec: Invalid value: \"object\": no such key: a evaluating rule: self.a == 'x'",
    ]);
  });

  it("runs root rules on the `<nil>` path and exposes only name and generateName of metadata", () => {
    // Of metadata only name and generateName exist for CEL: other fields do not compile.
    const labels = { rule: "has(self.metadata.labels)" };
    const refused = compileCelRules(
      { type: "object", "x-kubernetes-validations": [labels] },
      fieldPath("openAPIV3Schema"),
    );
    expect(refused.map(fieldErrorMessage)[0]).toContain("undefined field 'labels'");
    const s: JSONSchemaProps = {
      type: "object",
      "x-kubernetes-validations": [{ rule: "self.metadata.name.startsWith('w-') && self.kind == 'W'" }],
      properties: { spec: { type: "object" } },
    };
    const meta = (name: string) => ({ apiVersion: "a/v1", kind: "W", metadata: { name, labels: { a: "b" } } });
    expect(errors(s, meta("w-1"))).toEqual([]);
    expect(errors(s, meta("x"))).toEqual([
      "<nil>: Invalid value: \"object\": failed rule: self.metadata.name.startsWith('w-') && self.kind == 'W'",
    ]);
  });
});

describe("where rules run", () => {
  const items: JSONSchemaProps = {
    type: "object",
    properties: { name: STR, port: INT },
    "x-kubernetes-validations": [{ rule: "self.port > 0", message: "port must be positive" }],
  };

  it("runs item rules on every item with its index, and nested object rules on their node", () => {
    const s = root({
      type: "object",
      properties: {
        ports: { type: "array", items },
        tls: {
          type: "object",
          properties: { secret: { type: "object", properties: { name: STR } } },
          "x-kubernetes-validations": [{ rule: "has(self.secret.name)", message: "tls needs a secret name" }],
        },
      },
    });
    expect(
      errors(s, {
        spec: { ports: [{ name: "a", port: 1 }, { name: "b", port: 0 }, { port: -1 }], tls: { secret: {} } },
      }),
    ).toEqual([
      'spec.ports[1]: Invalid value: "object": port must be positive',
      'spec.ports[2]: Invalid value: "object": port must be positive',
      'spec.tls: Invalid value: "object": tls needs a secret name',
    ]);
  });

  it("runs additionalProperties rules on each value with the key in brackets", () => {
    const s = root({
      type: "object",
      properties: {
        limits: {
          type: "object",
          additionalProperties: { type: "integer", "x-kubernetes-validations": [{ rule: "self <= 10" }] },
        },
      },
    });
    expect(errors(s, { spec: { limits: { cpu: 4, memory: 11 } } })).toEqual([
      'spec.limits[memory]: Invalid value: "integer": failed rule: self <= 10',
    ]);
  });

  it("does not validate null or absent values", () => {
    const s = root({
      type: "object",
      properties: { name: { type: "string", nullable: true, "x-kubernetes-validations": [{ rule: "self != ''" }] } },
    });
    expect(errors(s, { spec: { name: null } })).toEqual([]);
    expect(errors(s, { spec: {} })).toEqual([]);
  });

  it("skips rules when the schema found blocking errors, with the real server's message", () => {
    const s = specRule({ rule: "self.n > 100" }, { n: INT });
    const errs = validateCustomObject(s, { spec: { n: "x" } }, { rules: evaluateCelRules }).map(fieldErrorMessage);
    expect(errs).toEqual([
      'spec.n: Invalid value: "string": spec.n in body must be of type integer: "string"',
      '<nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
    ]);
  });
});

describe("transition rules (oldSelf)", () => {
  const immutable = specRule(
    { rule: "self.name == oldSelf.name", message: "name is immutable" },
    { name: STR, n: INT },
  );

  it("are skipped on create and enforced on update", () => {
    expect(errors(immutable, { spec: { name: "a" } })).toEqual([]);
    expect(errors(immutable, { spec: { name: "b" } }, { spec: { name: "a" } })).toEqual([
      'spec: Invalid value: "object": name is immutable',
    ]);
    expect(errors(immutable, { spec: { name: "a", n: 2 } }, { spec: { name: "a", n: 1 } })).toEqual([]);
  });

  it("are skipped where no old value exists (a field added by the update)", () => {
    const s = root({
      type: "object",
      properties: {
        tier: {
          type: "string",
          "x-kubernetes-validations": [{ rule: "self == oldSelf", message: "tier is immutable" }],
        },
      },
    });
    expect(errors(s, { spec: { tier: "gold" } }, { spec: {} })).toEqual([]);
    expect(errors(s, { spec: { tier: "gold" } }, { spec: { tier: "silver" } })).toEqual([
      'spec.tier: Invalid value: "string": tier is immutable',
    ]);
  });

  it("correlate map-list items by their keys, and never items of other lists", () => {
    const item: JSONSchemaProps = {
      type: "object",
      properties: { name: STR, port: INT },
      "x-kubernetes-validations": [{ rule: "self.port == oldSelf.port", message: "port is immutable" }],
    };
    const mapList = root({
      type: "object",
      properties: {
        ports: { type: "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"], items: item },
      },
    });
    const oldObj = {
      spec: {
        ports: [
          { name: "a", port: 1 },
          { name: "b", port: 2 },
        ],
      },
    };
    // Reordered and "b" changed: "b" is caught at its new index, "a" correlates although it moved.
    expect(
      errors(
        mapList,
        {
          spec: {
            ports: [
              { name: "b", port: 3 },
              { name: "a", port: 1 },
            ],
          },
        },
        oldObj,
      ),
    ).toEqual(['spec.ports[0]: Invalid value: "object": port is immutable']);
    const atomic = root({ type: "object", properties: { ports: { type: "array", items: item } } });
    expect(errors(atomic, { spec: { ports: [{ name: "b", port: 3 }] } }, oldObj)).toEqual([]);
  });

  it("ratchet: a failing non-transition rule on an unchanged value is not reported on update", () => {
    const s = root({
      type: "object",
      properties: {
        a: { type: "string", "x-kubernetes-validations": [{ rule: "self.size() <= 3" }] },
        b: INT,
      },
    });
    const old = { spec: { a: "toolong", b: 1 } };
    expect(errors(s, { spec: { a: "toolong", b: 2 } }, old)).toEqual([]);
    expect(errors(s, { spec: { a: "toolong!", b: 1 } }, old)).toEqual([
      'spec.a: Invalid value: "string": failed rule: self.size() <= 3',
    ]);
  });
});

describe("values and library functions", () => {
  const check = (rule: string, properties: Record<string, JSONSchemaProps>, spec: unknown) =>
    errors(specRule({ rule }, properties), { spec });

  it("types integers as int and numbers as double, int-or-string as either", () => {
    expect(
      check(
        "self.n == 3 && self.r == 0.5 && self.q == 3 && self.s == '50%'",
        {
          n: INT,
          r: { type: "number" },
          q: { "x-kubernetes-int-or-string": true },
          s: { "x-kubernetes-int-or-string": true },
        },
        { n: 3, r: 0.5, q: 3, s: "50%" },
      ),
    ).toEqual([]);
  });

  it("reaches escaped property names (dash, dot, reserved words)", () => {
    expect(escapePropertyName("foo-bar")).toBe("foo__dash__bar");
    expect(escapePropertyName("namespace")).toBe("__namespace__");
    expect(escapePropertyName("a.b/c__d")).toBe("a__dot__b__slash__c__underscores__d");
    expect(escapePropertyName("1abc")).toBeUndefined();
    expect(
      check(
        "self.foo__dash__bar == 1 && self.__namespace__ == 'x'",
        { "foo-bar": INT, namespace: STR },
        {
          "foo-bar": 1,
          namespace: "x",
        },
      ),
    ).toEqual([]);
  });

  it("provides the macros and the Kubernetes list, string and regex functions", () => {
    const props = {
      xs: { type: "array", items: INT },
      names: { type: "array", items: STR },
      s: STR,
    } satisfies Record<string, JSONSchemaProps>;
    const spec = { xs: [1, 2, 3], names: ["a-1", "b-2"], s: "Hello,World" };
    for (const rule of [
      "self.xs.all(x, x > 0) && self.xs.exists(x, x == 2) && self.xs.exists_one(x, x == 3)",
      "self.xs.map(x, x * 2) == [2, 4, 6] && self.xs.filter(x, x > 1).size() == 2",
      "self.xs.isSorted() && self.xs.sum() == 6 && self.xs.min() == 1 && self.xs.max() == 3",
      "self.xs.indexOf(2) == 1 && self.names.lastIndexOf('b-2') == 1",
      "self.s.lowerAscii() == 'hello,world' && self.s.split(',').size() == 2 && self.s.startsWith('He')",
      "self.names.all(n, n.matches('^[a-z]-[0-9]$')) && 'a1b22'.findAll('[0-9]+') == ['1', '22']",
      "'abc 123'.find('[0-9]+') == '123' && size(self.s) == 11 && self.s.endsWith('ld')",
      "sets.contains(self.xs, [3, 1]) && !sets.contains(self.xs, [4]) && sets.equivalent(self.xs, [3, 2, 1, 1])",
      "sets.intersects(self.names, ['x', 'b-2']) && !sets.intersects(self.xs, [7])",
    ]) {
      expect(check(rule, props, spec), rule).toEqual([]);
    }
    expect(check("[].min() == 1", props, spec)).toEqual([
      'spec: Invalid value: "object": min called on empty list evaluating rule: [].min() == 1',
    ]);
  });
});

describe("compilation", () => {
  const path = fieldPath("spec", "validation", "openAPIV3Schema").child("properties").key("spec");
  const compile = (rule: ValidationRule, properties: Record<string, JSONSchemaProps> = { n: INT }) =>
    compileCelRules({ type: "object", properties, "x-kubernetes-validations": [rule] }, path).map(fieldErrorMessage);
  const prefix = "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0]";

  it("refuses undefined fields and undeclared references with cel-go's message and caret", () => {
    expect(compile({ rule: "self.m == 1" })).toEqual([
      `${prefix}.rule: Invalid value: apiextensions.ValidationRule{Rule:"self.m == 1", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:5: undefined field 'm'\n | self.m == 1\n | ....^`,
    ]);
    expect(compile({ rule: "self.n == limit" })[0]).toContain(
      "compilation failed: ERROR: <input>:1:11: undeclared reference to 'limit' (in container '')\n | self.n == limit\n | ..........^",
    );
  });

  it("refuses syntax errors, non-bool rules and non-string messageExpressions", () => {
    expect(compile({ rule: "self.n == " })[0]).toMatch(/compilation failed: ERROR: <input>:1:\d+: Syntax error: /);
    expect(compile({ rule: "self.n + 1" })[0]).toMatch(
      /\.rule: Invalid value: .*: cel expression must evaluate to a bool$/,
    );
    expect(compile({ rule: "self.n > 1", messageExpression: "self.n" })).toEqual([
      `${prefix}.messageExpression: Invalid value: apiextensions.ValidationRule{Rule:"self.n > 1", Message:"", MessageExpression:"self.n", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: messageExpression must evaluate to a string`,
    ]);
  });

  it("refuses optionalOldSelf on a rule that does not use oldSelf", () => {
    expect(compile({ rule: "self.n > 1", optionalOldSelf: true })).toEqual([
      `${prefix}.optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule`,
    ]);
  });

  it("accepts rules using comprehension variables, type names and functions it does not provide", () => {
    expect(compile({ rule: "self.xs.all(x, type(x) == int && x > 0)" }, { xs: { type: "array", items: INT } })).toEqual(
      [],
    );
    expect(compile({ rule: "quantity(self.q).isLessThan(quantity('1Gi'))" }, { q: STR })).toEqual([]);
    // Optional syntax compiles on a real cluster: accepted here, failing when it runs.
    expect(compile({ rule: "self.?n.orValue(0) > 1" })).toEqual([]);
    const s = specRule({ rule: "self.?n.orValue(0) > 1" }, { n: INT });
    expect(errors(s, { spec: { n: 2 } })).toEqual([
      `spec: Invalid value: "object": optional types (?. and [?]) are not supported by the devcluster's CEL evaluating rule: self.?n.orValue(0) > 1`,
    ]);
  });

  it("compiles each schema node's rules once and reuses them", () => {
    const node: JSONSchemaProps = {
      type: "object",
      properties: { n: INT },
      "x-kubernetes-validations": [{ rule: "self.n > 0" }],
    };
    const first = compiledRulesOf(node, false);
    expect(compiledRulesOf(node, false)).toBe(first);
    expect(first[0]!.program).toBeDefined();
  });
});

describe("formatted strings", () => {
  it("types date-time and date strings as timestamps and duration strings as durations", () => {
    const s = specRule(
      {
        rule: "self.start < self.end && self.end - self.start > self.minWindow && self.day < self.start && self.start > timestamp('2020-01-01T00:00:00Z')",
      },
      {
        start: { type: "string", format: "date-time" },
        end: { type: "string", format: "date-time" },
        day: { type: "string", format: "date" },
        minWindow: { type: "string", format: "duration" },
      },
    );
    const spec = { start: "2024-01-01T00:00:00Z", day: "2023-12-31", minWindow: "1h" };
    expect(errors(s, { spec: { ...spec, end: "2024-01-01T02:00:00Z" } })).toEqual([]);
    expect(errors(s, { spec: { ...spec, end: "2024-01-01T00:30:00Z" } })).toHaveLength(1);
  });
});
