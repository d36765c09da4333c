/**
 * The page's form logic without a browser: defaults pre-filled, the required/number checks, and the
 * merge patch that reapplies an edit on the latest version after a 409.
 */
import { describe, expect, it } from "vitest";

// Plain ES modules of the page (no types): imported by URL, so the compiler takes them as they are.
const page = (file: string) => new URL(`../../packages/capstan-dev/src/dashboard/page/${file}`, import.meta.url).href;
// biome-ignore lint/suspicious/noExplicitAny: untyped page modules, checked by the assertions
const forms: any = await import(page("schema-form.js"));
// biome-ignore lint/suspicious/noExplicitAny: untyped page modules, checked by the assertions
const editor: any = await import(page("object-editor.js"));

const schema = {
  type: "object",
  properties: {
    metadata: { type: "object", default: {} },
    spec: {
      type: "object",
      required: ["brand", "strings"],
      properties: {
        brand: { type: "string" },
        review: { type: "boolean", default: false },
        strings: { type: "integer" },
        tuning: { type: "object", properties: { pitch: { type: "number", default: 440 } } },
        pickups: {
          type: "array",
          items: { type: "object", required: ["kind"], properties: { kind: { type: "string" } } },
        },
        labels: { type: "object", additionalProperties: { type: "integer" } },
      },
    },
  },
};

describe("the generated form's logic", () => {
  it("pre-fills defaults in present or required objects only", () => {
    expect(forms.withDefaults(schema.properties.spec, {})).toEqual({ review: false });
    expect(forms.withDefaults(schema.properties.spec, { tuning: {} })).toEqual({
      review: false,
      tuning: { pitch: 440 },
    });
  });

  it("reports missing required fields and non-numbers with the API server's field paths", () => {
    const object = {
      metadata: {},
      spec: { strings: 6.5, pickups: [{ kind: "humbucker" }, {}], labels: { a: 1, b: "x" } },
    };
    expect(forms.validate(schema, object)).toEqual([
      { field: "spec.brand", message: "Required value" },
      { field: "spec.strings", message: "must be an integer" },
      { field: "spec.pickups[1].kind", message: "Required value" },
      { field: "spec.labels[b]", message: "must be an integer" },
    ]);
  });
});

describe("reapplying an edit after a conflict", () => {
  it("puts only the fields the edit changed onto the latest version", () => {
    const opened = { spec: { brand: "fender", review: true, comment: "old" }, metadata: { labels: { a: "1" } } };
    const mine = { spec: { brand: "yamaha", review: false }, metadata: { labels: { a: "1" } } };
    const latest = {
      spec: { brand: "fender", review: true, comment: "new" },
      metadata: { labels: { a: "1", shop: "x" } },
    };
    const patch = editor.mergeDiff(opened, mine);
    expect(patch).toEqual({ spec: { brand: "yamaha", review: false, comment: null } });
    expect(editor.mergeApply(latest, patch)).toEqual({
      spec: { brand: "yamaha", review: false },
      metadata: { labels: { a: "1", shop: "x" } },
    });
  });
});
