/**
 * The objects table's Member columns without a browser: the rows of a sharded operator's kind
 * (their `shards`, read from the shard and drain labels) give one column per ring, and a kind
 * nobody shards gives none.
 */
import { describe, expect, it } from "vitest";
import { objectRow } from "../../packages/capstan-dev/src/dashboard/object-row.ts";

// A plain ES module of the page (no types): imported by URL, so the compiler takes it as it is.
const page = new URL("../../packages/capstan-dev/src/dashboard/page/shard-columns.js", import.meta.url).href;
// biome-ignore lint/suspicious/noExplicitAny: untyped page module, checked by the assertions
const columns: any = await import(page);

const kind = { columns: [] } as unknown as Parameters<typeof objectRow>[0];
const row = (name: string, labels?: Record<string, string>) =>
  objectRow(kind, { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "default", uid: name, labels } });

describe("the dashboard's Member columns", () => {
  it("shows each object's member in its ring's column, and which are being handed over", () => {
    const rows = [
      row("a", { "shard.capstan.dev/useless": "replica-0", app: "x" }),
      row("b", { "shard.capstan.dev/useless": "replica-1", "drain.shard.capstan.dev/useless": "true" }),
      row("c", { "drain.shard.capstan.dev/useless": "true" }),
      row("d"),
    ];
    expect(rows[0]?.shards).toEqual([{ ring: "useless", member: "replica-0", draining: false }]);
    const rings = columns.shardRings(rows);
    expect(rings).toEqual(["useless"]);
    expect(columns.shardHeader("useless", rings)).toBe("Member");
    expect(rows.map((r) => columns.shardCell(r, "useless"))).toEqual([
      "replica-0",
      "replica-1 (draining)",
      "draining",
      "",
    ]);
  });

  it("shows no Member column for a kind whose objects carry no shard label", () => {
    const rows = [row("a", { app: "x", "capstan.dev/shard-ring": "useless" }), row("b")];
    expect(rows.map((r) => r.shards)).toEqual([undefined, undefined]);
    expect(columns.shardRings(rows)).toEqual([]);
  });

  it("names the ring in each column's header when objects are on several rings", () => {
    const rows = [row("a", { "shard.capstan.dev/blue": "b-0", "shard.capstan.dev/green": "g-1" })];
    const rings = columns.shardRings(rows);
    expect(rings).toEqual(["blue", "green"]);
    expect(rings.map((r: string) => columns.shardHeader(r, rings))).toEqual(["Member (blue)", "Member (green)"]);
    expect(rings.map((r: string) => columns.shardCell(rows[0], r))).toEqual(["b-0", "g-1"]);
  });
});
