// The "Member" columns of the objects table: one per shard ring among the rows' labels
// (`shards`, src/dashboard/object-row.ts), so a sharded operator's objects show which replica
// holds each of them, and a kind nobody shards shows no such column.

/** The rings named by any of `rows`, sorted: one column each. */
export function shardRings(rows) {
  const rings = new Set();
  for (const row of rows) for (const s of row.shards ?? []) rings.add(s.ring);
  return [...rings].sort();
}

/** The header of ring `ring`'s column; the ring is named only when there are several. */
export function shardHeader(ring, rings) {
  return rings.length > 1 ? `Member (${ring})` : "Member";
}

/** The cell of `row` in ring `ring`'s column: its member, and whether it is being handed over. */
export function shardCell(row, ring) {
  const s = (row.shards ?? []).find((x) => x.ring === ring);
  if (s === undefined) return "";
  if (s.draining) return s.member === undefined ? "draining" : `${s.member} (draining)`;
  return s.member ?? "";
}
