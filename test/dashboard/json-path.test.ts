import { describe, expect, it } from "vitest";
import { cellValue, parseJsonPath } from "../../packages/capstan-dev/src/dashboard/json-path.ts";

const obj = {
  metadata: { name: "m1", labels: { "app.kubernetes.io/name": "x" } },
  spec: { switches: 3, enabled: false, items: [{ name: "a" }, { name: "b" }] },
  status: {
    rate: 1.25,
    conditions: [
      { type: "Progressing", status: "False" },
      { type: "Ready", status: "True" },
    ],
  },
};
const cell = (path: string) => cellValue(parseJsonPath(path), obj);

describe("printer column JSONPath", () => {
  it("reads the plain field paths CRDs use, keeping numbers and booleans as such", () => {
    expect(cell(".status.rate")).toBe(1.25);
    expect(cell(".spec.switches")).toBe(3);
    expect(cell(".spec.enabled")).toBe(false);
    expect(cell("{.metadata.name}")).toBe("m1");
  });

  it("reads indexes, quoted keys, wildcards and equality filters", () => {
    expect(cell(".status.conditions[1].type")).toBe("Ready");
    expect(cell(".status.conditions[-1].status")).toBe("True");
    expect(cell(".metadata.labels['app.kubernetes.io/name']")).toBe("x");
    expect(cell(".spec.items[*].name")).toBe("a,b");
    expect(cell('.status.conditions[?(@.type=="Ready")].status')).toBe("True");
  });

  it("gives null for an absent field and JSON for a structure", () => {
    expect(cell(".status.missing")).toBeNull();
    expect(cell(".spec.items[5]")).toBeNull();
    expect(cell(".spec.items[0]")).toBe('{"name":"a"}');
  });

  it("reports a path it cannot parse instead of throwing, and selects nothing with it", () => {
    const bad = parseJsonPath(".status..rate");
    expect(bad.error).toMatch(/empty field name/);
    expect(cellValue(bad, obj)).toBeNull();
    expect(parseJsonPath(".a[?(@.x > 1)]").error).toMatch(/unsupported/);
    expect(parseJsonPath(".a[0").error).toMatch(/no "\]"/);
  });
});
