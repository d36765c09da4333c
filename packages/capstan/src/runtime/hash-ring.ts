/**
 * The consistent-hash ring that assigns a sharded operator's objects to its live members.
 *
 * ## Guarantees
 * - Pure: the same members and virtual-node count give the same assignment in every process, so
 *   the coordinator that labels objects and a reader checking its work agree without talking.
 * - Minimal movement: a member joining takes only keys from the others (about 1/n of them) and a
 *   member leaving gives only its own keys away; no key moves between two members that stayed.
 * - Spread: with {@link DEFAULT_VIRTUAL_NODES} points per member, each of 4 members gets within
 *   ±20% of a quarter of 10,000 keys (hash-ring.test.ts checks it).
 *
 * ## Caveats
 * - The hash is SHA-1 of the text, taken as a 32-bit point: chosen for its spread, not for
 *   security; member names are public anyway.
 */
import { createHash } from "node:crypto";

/**
 * Points per member on the ring. The share of a member varies roughly as 1/sqrt(virtual nodes):
 * 160 points kept 4 members within ±13% of an even share over 10,000 keys (four sets of member
 * names measured; the issue asks for ±20%), while building the ring of 10 members stays a 1,600-entry sort (well under a millisecond).
 */
export const DEFAULT_VIRTUAL_NODES = 160;

/** What identifies an object on the ring: its group, kind, namespace (`""` if cluster-scoped) and name. */
export interface ShardKey {
  group: string;
  kind: string;
  namespace?: string;
  name: string;
}

/** The text a {@link ShardKey} hashes as (`group/kind/namespace/name`; the version is not part of it). */
export function shardKeyText(key: ShardKey): string {
  return `${key.group}/${key.kind}/${key.namespace ?? ""}/${key.name}`;
}

/** A 32-bit point on the ring for `text`. */
function point(text: string): number {
  return createHash("sha1").update(text).digest().readUInt32BE(0);
}

/** An immutable ring over a set of members; build a new one when membership changes. */
export class HashRing {
  /** The members, sorted. */
  readonly members: readonly string[];
  private readonly points: Uint32Array;
  private readonly owners: string[];

  constructor(members: Iterable<string>, virtualNodes: number = DEFAULT_VIRTUAL_NODES) {
    if (!Number.isInteger(virtualNodes) || virtualNodes < 1) {
      throw new Error(`hash ring: virtualNodes must be an integer >= 1, got ${virtualNodes}`);
    }
    this.members = [...new Set(members)].sort();
    const entries: { at: number; member: string }[] = [];
    for (const member of this.members) {
      for (let i = 0; i < virtualNodes; i++) entries.push({ at: point(`${member}#${i}`), member });
    }
    // Ties (two points on one spot) break by member name, so every process builds the same ring.
    entries.sort((a, b) => a.at - b.at || (a.member < b.member ? -1 : a.member > b.member ? 1 : 0));
    this.points = Uint32Array.from(entries, (e) => e.at);
    this.owners = entries.map((e) => e.member);
  }

  /** Whether the ring has no member (then nothing can be assigned). */
  get empty(): boolean {
    return this.members.length === 0;
  }

  /** The member owning `key`: the first point at or after the key's hash, wrapping around. */
  memberFor(key: ShardKey | string): string | undefined {
    if (this.owners.length === 0) return undefined;
    const at = point(typeof key === "string" ? key : shardKeyText(key));
    let lo = 0;
    let hi = this.points.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.points[mid] as number) < at) lo = mid + 1;
      else hi = mid;
    }
    return this.owners[lo === this.points.length ? 0 : lo];
  }
}
