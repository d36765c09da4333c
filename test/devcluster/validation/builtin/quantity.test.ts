/**
 * resource.Quantity as validation reads and prints it: ParseQuantity's rounding and suffix families,
 * and Quantity.String()'s canonical form (what field errors show for a quantity).
 */
import { describe, expect, it } from "vitest";
import {
  compareQuantities,
  parseQuantity,
  quantityGoSharpV,
  quantityString,
} from "../../../../packages/capstan-dev/src/devcluster/validation/builtin/quantity.ts";

function canonical(text: string | number): string {
  const q = parseQuantity(text);
  if (q === undefined) throw new Error(`not a quantity: ${text}`);
  return quantityString(q);
}

describe("Quantity.String()", () => {
  it.each([
    ["100m", "100m"],
    ["1000m", "1"],
    ["0.5", "500m"],
    ["1.5", "1500m"],
    ["1.5k", "1500"],
    ["2", "2"],
    ["0", "0"],
    ["0.0", "0"],
    ["1.0", "1"],
    ["-1.5", "-1500m"],
  ])("prints the decimal quantity %s as %s", (text, expected) => {
    expect(canonical(text)).toBe(expected);
  });

  it.each([
    ["1Gi", "1Gi"],
    ["1.5Gi", "1536Mi"],
    ["0.5Gi", "512Mi"],
    ["1024Mi", "1Gi"],
    ["8Gi", "8Gi"],
    ["1Ki", "1Ki"],
    ["500Mi", "500Mi"],
    ["-2Gi", "-2Gi"],
  ])("prints the binary quantity %s as %s", (text, expected) => {
    expect(canonical(text)).toBe(expected);
  });

  it("prints binary quantities under 1Ki, or not whole, in decimal", () => {
    expect(canonical("0.5Ki")).toBe("512");
    expect(canonical("0.1Mi")).toBe("104857600m");
  });

  it("keeps exponent notation, with the exponent lowered to a multiple of three", () => {
    expect(canonical("1e3")).toBe("1e3");
    expect(canonical("10e3")).toBe("10e3");
    expect(canonical("12e-3")).toBe("12e-3");
    expect(canonical("1.5e3")).toBe("1500");
  });

  it("keeps a canonical text as written, sign and leading zeros included, as Go's parse cache does", () => {
    expect(canonical("+1")).toBe("+1");
    expect(canonical("01")).toBe("01");
  });

  it("rounds values finer than 1n up to 1n", () => {
    expect(canonical("0.0000000001")).toBe("1n");
    expect(canonical("1n")).toBe("1n");
  });

  it("reads a JSON number as its literal", () => {
    expect(canonical(2)).toBe("2");
    expect(canonical(0.5)).toBe("500m");
  });
});

describe("comparing quantities", () => {
  it("compares across suffix families exactly", () => {
    const cmp = (a: string, b: string) => compareQuantities(parseQuantity(a)!, parseQuantity(b)!);
    expect(cmp("1Gi", "1G")).toBe(1);
    expect(cmp("500m", "0.5")).toBe(0);
    expect(cmp("1024Mi", "1Gi")).toBe(0);
    expect(cmp("-1", "0")).toBe(-1);
  });
});

describe("%#v of a Quantity", () => {
  it("shows the int64 mantissa and scale, the kept string and the format", () => {
    expect(quantityGoSharpV(parseQuantity("500m")!)).toBe(
      'resource.Quantity{i:resource.int64Amount{value:500, scale:-3}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"500m", Format:"DecimalSI"}',
    );
    expect(quantityGoSharpV(parseQuantity("0.5")!)).toBe(
      'resource.Quantity{i:resource.int64Amount{value:5, scale:-1}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"", Format:"DecimalSI"}',
    );
  });
});
