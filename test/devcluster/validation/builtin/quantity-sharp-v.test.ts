import { describe, expect, it } from "vitest";
import { goQuantitySharpV } from "../../../../packages/capstan-dev/src/devcluster/validation/builtin/quantity-sharp-v.ts";

/** The int64 form ParseQuantity keeps for small values. */
const small = (value: string, scale: number, s: string, format: string) =>
  `resource.Quantity{i:resource.int64Amount{value:${value}, scale:${scale}}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"${s}", Format:"${format}"}`;
/** The inf.Dec form, its address a stand-in. */
const big = (format: string) =>
  `resource.Quantity{i:resource.int64Amount{value:0, scale:0}, d:resource.infDecAmount{Dec:(*inf.Dec)(0xc000b2d1a0)}, s:"", Format:"${format}"}`;

describe("a resource.Quantity as Go's %#v prints it", () => {
  it("keeps the text as s only when ParseQuantity finds it canonical", () => {
    expect(goQuantitySharpV("0")).toBe(small("0", 0, "0", "DecimalSI"));
    expect(goQuantitySharpV("-1")).toBe(small("-1", 0, "-1", "DecimalSI"));
    expect(goQuantitySharpV("-500m")).toBe(small("-500", -3, "-500m", "DecimalSI"));
    expect(goQuantitySharpV("-1000")).toBe(small("-1000", 0, "", "DecimalSI"));
    expect(goQuantitySharpV("-1.5")).toBe(small("-15", -1, "", "DecimalSI"));
    expect(goQuantitySharpV("00")).toBe(small("0", 0, "", "DecimalSI"));
    expect(goQuantitySharpV("-1n")).toBe(small("-1", -9, "-1n", "DecimalSI"));
    expect(goQuantitySharpV("-2e3")).toBe(small("-2", 3, "-2e3", "DecimalExponent"));
  });

  it("multiplies binary suffixes out and keeps a canonical binary text", () => {
    expect(goQuantitySharpV("-1Ki")).toBe(small("-1024", 0, "-1Ki", "BinarySI"));
    expect(goQuantitySharpV("-8Ki")).toBe(small("-8192", 0, "", "BinarySI"));
    expect(goQuantitySharpV("-1Ti")).toBe(small("-1099511627776", 0, "-1Ti", "BinarySI"));
  });

  it("goes to an inf.Dec past the int64 form's precision or scale", () => {
    expect(goQuantitySharpV("-1Pi")).toBe(big("BinarySI"));
    expect(goQuantitySharpV("-1.5Gi")).toBe(big("BinarySI"));
    expect(goQuantitySharpV("0.0001Ki")).toBe(big("DecimalSI"));
    expect(goQuantitySharpV("-1e-10")).toBe(big("DecimalExponent"));
  });

  it("gives nothing for text ParseQuantity refuses", () => {
    expect(goQuantitySharpV("1ki")).toBeUndefined();
    expect(goQuantitySharpV("")).toBeUndefined();
  });
});
