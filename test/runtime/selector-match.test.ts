import { describe, expect, it } from "vitest";
import { fieldSelectorMatches, labelSelectorMatches } from "../../packages/capstan/src/runtime/selector-match.ts";

describe("labelSelectorMatches", () => {
  const labels = { app: "web", tier: "frontend", replicas: "3" };

  it("judges equality, inequality, set and existence requirements as apimachinery does", () => {
    expect(labelSelectorMatches("app=web", labels)).toBe(true);
    expect(labelSelectorMatches("app==web,tier=frontend", labels)).toBe(true);
    expect(labelSelectorMatches("app!=web", labels)).toBe(false);
    expect(labelSelectorMatches("missing!=x", labels)).toBe(true);
    expect(labelSelectorMatches("tier in (frontend, backend)", labels)).toBe(true);
    expect(labelSelectorMatches("tier notin (frontend)", labels)).toBe(false);
    expect(labelSelectorMatches("missing notin (x)", labels)).toBe(true);
    expect(labelSelectorMatches("app,!legacy", labels)).toBe(true);
    expect(labelSelectorMatches("!app", labels)).toBe(false);
    expect(labelSelectorMatches("replicas>2,replicas<4", labels)).toBe(true);
    expect(labelSelectorMatches("", labels)).toBe(true);
  });

  it("answers undefined for a selector it cannot parse", () => {
    expect(labelSelectorMatches("app in web", labels)).toBeUndefined();
    expect(labelSelectorMatches("replicas>x", labels)).toBeUndefined();
  });
});

describe("fieldSelectorMatches", () => {
  const pod = { metadata: { name: "p", namespace: "ns" }, spec: { nodeName: "n1" } };

  it("reads dotted paths, with a missing field as the empty string", () => {
    expect(fieldSelectorMatches("metadata.name=p,metadata.namespace==ns", pod)).toBe(true);
    expect(fieldSelectorMatches("spec.nodeName!=n1", pod)).toBe(false);
    expect(fieldSelectorMatches("status.phase=", pod)).toBe(true);
    expect(fieldSelectorMatches("nonsense", pod)).toBeUndefined();
  });
});
