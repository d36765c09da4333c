import { describe, expect, it } from "vitest";
import {
  duplicate,
  type FieldError,
  fieldErrorBody,
  fieldErrorMessage,
  fieldPath,
  forbidden,
  internalError,
  invalid,
  invalidStatus,
  notFound,
  notSupported,
  required,
  tooLong,
  tooMany,
  typeInvalid,
} from "../../../packages/capstan-dev/src/devcluster/validation/field-errors.ts";
import { goFloatV, goJSON, goQuote } from "../../../packages/capstan-dev/src/devcluster/validation/go-format.ts";
import {
  goPrinted,
  goSharpDecoded,
  goSharpPointer,
  goSharpStrings,
  goSharpStruct,
} from "../../../packages/capstan-dev/src/devcluster/validation/go-sharp-v.ts";

// Expected strings follow apimachinery v0.32 pkg/util/validation/field/errors.go (ErrorBody: %q, %v,
// nil as "null", %#v for composites) and pkg/api/errors/errors.go NewInvalid.
describe("fieldErrorMessage renders as field.Error.Error()", () => {
  const p = "path.to.field";
  it("leaves the value out of Required, Forbidden, TooLong and Internal errors", () => {
    expect(fieldErrorMessage(required(p, "the details"))).toBe("path.to.field: Required value: the details");
    expect(fieldErrorMessage(required(p))).toBe("path.to.field: Required value");
    expect(fieldErrorMessage(forbidden(p, "the details"))).toBe("path.to.field: Forbidden: the details");
    expect(fieldErrorMessage(tooLong(p, 1))).toBe("path.to.field: Too long: may not be more than 1 bytes");
    expect(fieldErrorMessage(tooLong(p, 2))).toBe("path.to.field: Too long: may not be more than 2 bytes");
    expect(fieldErrorMessage(tooLong(p, -1))).toBe("path.to.field: Too long: value is too long");
    expect(fieldErrorMessage(internalError(p, "the error"))).toBe("path.to.field: Internal error: the error");
  });

  it("shows the actual count of TooMany unless it is unknown", () => {
    expect(fieldErrorMessage(tooMany(p, 2, 1))).toBe("path.to.field: Too many: 2: must have at most 1 items");
    expect(fieldErrorMessage(tooMany(p, 3, 2))).toBe("path.to.field: Too many: 3: must have at most 2 items");
    expect(fieldErrorMessage(tooMany(p, 2, -1))).toBe("path.to.field: Too many: 2: has too many items");
    expect(fieldErrorMessage(tooMany(p, -1, 1))).toBe("path.to.field: Too many: must have at most 1 items");
  });

  it('quotes strings, prints numbers and booleans bare, nil as "null", and composites with Go\'s %#v', () => {
    expect(fieldErrorMessage(invalid(p, "the value", "the details"))).toBe(
      'path.to.field: Invalid value: "the value": the details',
    );
    expect(fieldErrorMessage(invalid(p, -42, "the details"))).toBe("path.to.field: Invalid value: -42: the details");
    expect(fieldErrorMessage(invalid(p, true, "the details"))).toBe("path.to.field: Invalid value: true: the details");
    expect(fieldErrorMessage(invalid(p, ["one", "two", "three"], "the details"))).toBe(
      'path.to.field: Invalid value: []interface {}{"one", "two", "three"}: the details',
    );
    expect(fieldErrorMessage(invalid(p, { one: 1, two: 2, three: 3 }, "the details"))).toBe(
      'path.to.field: Invalid value: map[string]interface {}{"one":1, "three":3, "two":2}: the details',
    );
    expect(fieldErrorMessage(invalid(p, null, "the details"))).toBe(
      'path.to.field: Invalid value: "null": the details',
    );
  });

  it("prints nested JSON values with their interface types, nil inside a composite as interface {}(nil)", () => {
    expect(fieldErrorBody(invalid(p, { a: [1.5, null, { b: true }], "": "x" }))).toBe(
      'Invalid value: map[string]interface {}{"":"x", "a":[]interface {}{1.5, interface {}(nil), map[string]interface {}{"b":true}}}',
    );
    expect(goSharpDecoded(null, "apiextensions.JSON")).toBe("apiextensions.JSON(nil)");
    expect(fieldErrorBody(invalid(p, {}))).toBe("Invalid value: map[string]interface {}{}");
  });

  it("prints typed values with the text their builder gives: structs, pointers as nil or an address, []string", () => {
    const s = goSharpStruct("v1.Thing", [
      ["Name", goQuote("a")],
      ["Count", "9376"],
      ["Flag", goSharpPointer("bool", false)],
      ["Other", goSharpPointer("bool", true)],
      ["Keys", goSharpStrings(["x", "y"])],
      ["None", goSharpStrings(undefined)],
    ]);
    expect(fieldErrorBody(invalid(p, goPrinted(s)))).toBe(
      'Invalid value: v1.Thing{Name:"a", Count:9376, Flag:(*bool)(0xc000000000), Other:(*bool)(nil), Keys:[]string{"x", "y"}, None:[]string(nil)}',
    );
  });

  it("renders floats as Go's %v does, switching to exponent form at 1e+06 and below 1e-04", () => {
    expect(fieldErrorBody(invalid(p, 1.5))).toBe("Invalid value: 1.5");
    expect(fieldErrorBody(invalid(p, 1234567.5))).toBe("Invalid value: 1.2345675e+06");
    expect(fieldErrorBody(invalid(p, 0.00001))).toBe("Invalid value: 1e-05");
    expect(fieldErrorBody(invalid(p, 0.0001))).toBe("Invalid value: 0.0001");
    expect(goFloatV(999999.5)).toBe("999999.5");
    expect(goFloatV(-2.5e-300)).toBe("-2.5e-300");
    expect(goFloatV(1e21)).toBe("1e+21");
  });

  it("uses Go's %q escapes, not JSON's, for string values", () => {
    expect(goQuote('a"b\\c\n\t')).toBe('"a\\"b\\\\c\\n\\t"');
    expect(goQuote("\u0000\u007f")).toBe('"\\x00\\x7f"');
    expect(goQuote("héllo ☃")).toBe('"héllo ☃"');
    expect(goQuote("\u00ad")).toBe('"\\u00ad"');
    expect(goQuote("a\ud800b")).toBe('"a\ufffdb"');
  });

  it("escapes HTML characters inside JSON-rendered values as encoding/json does", () => {
    expect(goJSON({ b: "<a&b>", a: [1.5, 2e-7] })).toBe('{"a":[1.5,2e-7],"b":"\\u003ca\\u0026b\\u003e"}');
    expect(goJSON(["x\ud800", "\ud83d\ude00"])).toBe('["x\ufffd","\ud83d\ude00"]');
  });

  it("lists NotSupported choices quoted, whatever their type", () => {
    expect(fieldErrorMessage(notSupported("spec.currency", "EUR", ["CAD", "USD"]))).toBe(
      'spec.currency: Unsupported value: "EUR": supported values: "CAD", "USD"',
    );
    expect(fieldErrorMessage(notSupported("spec.n", 3, [1, 2]))).toBe(
      'spec.n: Unsupported value: 3: supported values: "1", "2"',
    );
    expect(fieldErrorMessage(notSupported("spec.n", 3, []))).toBe("spec.n: Unsupported value: 3");
  });

  it("renders TypeInvalid like Invalid, NotFound and Duplicate with their values", () => {
    expect(fieldErrorMessage(typeInvalid("a", "x", "d"))).toBe('a: Invalid value: "x": d');
    expect(fieldErrorMessage(notFound("a", "x"))).toBe('a: Not found: "x"');
    expect(fieldErrorMessage(duplicate("a", 7))).toBe("a: Duplicate value: 7");
  });
});

describe("fieldPath renders as field.Path.String()", () => {
  it("joins children with dots and writes indexes and keys in brackets without quotes", () => {
    expect(fieldPath("spec").child("x").index(0).key("k").toString()).toBe("spec.x[0][k]");
    expect(fieldPath("metadata", "labels").key("a/b").toString()).toBe("metadata.labels[a/b]");
    expect(required(fieldPath("spec").child("items").index(2).child("name")).field).toBe("spec.items[2].name");
  });
});

describe("invalidStatus is apierrors.NewInvalid", () => {
  it("builds a 422 Status with one bare message and causes carrying the body without the path", () => {
    const errs: FieldError[] = [notSupported("spec.currency", "EUR", ["CAD", "USD"])];
    const status = invalidStatus("example.com", "Payment", "p1", errs);
    expect(JSON.stringify(status)).toBe(
      JSON.stringify({
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message:
          'Payment.example.com "p1" is invalid: spec.currency: Unsupported value: "EUR": supported values: "CAD", "USD"',
        reason: "Invalid",
        details: {
          name: "p1",
          group: "example.com",
          kind: "Payment",
          causes: [
            {
              reason: "FieldValueNotSupported",
              message: 'Unsupported value: "EUR": supported values: "CAD", "USD"',
              field: "spec.currency",
            },
          ],
        },
        code: 422,
      }),
    );
  });

  it("brackets several errors, drops duplicate messages, and omits the core group", () => {
    const errs = [
      required("metadata.name", "name or generateName is required"),
      required("spec.a"),
      required("spec.a"),
    ];
    const status = invalidStatus("", "ConfigMap", "", errs);
    expect(status.message).toBe(
      'ConfigMap "" is invalid: [metadata.name: Required value: name or generateName is required, spec.a: Required value]',
    );
    expect(status.details).toEqual({
      kind: "ConfigMap",
      causes: [
        {
          reason: "FieldValueRequired",
          message: "Required value: name or generateName is required",
          field: "metadata.name",
        },
        { reason: "FieldValueRequired", message: "Required value", field: "spec.a" },
        { reason: "FieldValueRequired", message: "Required value", field: "spec.a" },
      ],
    });
    expect(invalidStatus("", "Pod", "x", []).message).toBe('Pod "x" is invalid');
  });
});
