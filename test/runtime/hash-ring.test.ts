import { describe, expect, it } from "vitest";
import { HashRing, shardKeyText } from "../../packages/capstan/src/runtime/hash-ring.ts";

const keys = Array.from({ length: 10_000 }, (_, i) => ({
  group: "example.com",
  kind: "Widget",
  namespace: `ns-${i % 37}`,
  name: `widget-${i}`,
}));

function assign(ring: HashRing): Map<string, string> {
  return new Map(keys.map((k) => [shardKeyText(k), ring.memberFor(k) as string]));
}

function counts(assignment: Map<string, string>): Map<string, number> {
  const n = new Map<string, number>();
  for (const m of assignment.values()) n.set(m, (n.get(m) ?? 0) + 1);
  return n;
}

describe("HashRing", () => {
  it("spreads 10,000 keys over 4 members within ±20% of an even share", () => {
    const ring = new HashRing(["widgets-7d9f-abcde", "widgets-7d9f-fghij", "widgets-7d9f-klmno", "widgets-7d9f-pqrst"]);
    const n = counts(assign(ring));
    expect(n.size).toBe(4);
    for (const c of n.values()) {
      expect(c).toBeGreaterThanOrEqual(2000);
      expect(c).toBeLessThanOrEqual(3000);
    }
  });

  it("moves only the joining member's share when a member joins, and nothing between those that stayed", () => {
    const before = assign(new HashRing(["a", "b", "c"]));
    const after = assign(new HashRing(["a", "b", "c", "d"]));
    let moved = 0;
    for (const [key, owner] of after) {
      if (before.get(key) === owner) continue;
      moved++;
      expect(owner).toBe("d");
    }
    // About a quarter of the keys; far from the ~3/4 a modulo assignment would move.
    expect(moved).toBeGreaterThan(1500);
    expect(moved).toBeLessThan(3500);
  });

  it("moves only the leaving member's keys when a member leaves", () => {
    const before = assign(new HashRing(["a", "b", "c", "d"]));
    const after = assign(new HashRing(["a", "b", "c"]));
    for (const [key, owner] of before) {
      if (owner !== "d") expect(after.get(key)).toBe(owner);
      else expect(["a", "b", "c"]).toContain(after.get(key));
    }
  });

  it("assigns the same way whatever order the members come in, and nothing on an empty ring", () => {
    const one = new HashRing(["x", "y", "z"]);
    const two = new HashRing(["z", "x", "y", "x"]);
    for (const k of keys.slice(0, 500)) expect(two.memberFor(k)).toBe(one.memberFor(k));
    expect(new HashRing([]).memberFor(keys[0] as (typeof keys)[0])).toBeUndefined();
    expect(new HashRing([]).empty).toBe(true);
  });

  it("keys differ by group, kind, namespace and name", () => {
    expect(shardKeyText({ group: "", kind: "ConfigMap", name: "a" })).toBe("/ConfigMap//a");
    expect(shardKeyText({ group: "g", kind: "K", namespace: "n", name: "a" })).toBe("g/K/n/a");
  });
});
