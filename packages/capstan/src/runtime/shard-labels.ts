/**
 * The labels of sharding: which member an object is assigned to, that it is being handed over,
 * and which ring a member's Lease belongs to. Every replica and the coordinator read and write the
 * same names, built here.
 *
 * - `shard.capstan.dev/<ring>: <member>` on an object of a ring kind (and on its owned children):
 *   the member that reconciles it; each member's informers select on it.
 * - `drain.shard.capstan.dev/<ring>: "true"`: the coordinator asks the current member to let go
 *   of the object (it finishes an in-flight reconcile, forgets the key, removes both labels).
 * - `capstan.dev/shard-ring: <ring>` on each member's Lease: how the coordinator finds the members.
 */
import type { KubeObject } from "../client/types.ts";

/** Label of a member's Lease naming its ring. */
export const RING_LEASE_LABEL = "capstan.dev/shard-ring";

/** What a shard label's key starts with (the ring's name follows). */
export const SHARD_LABEL_PREFIX = "shard.capstan.dev/";

/** What a drain label's key starts with (the ring's name follows). */
export const DRAIN_LABEL_PREFIX = "drain.shard.capstan.dev/";

// What is at once a label value, the name part of a label key (apimachinery's IsValidLabelValue,
// IsQualifiedName) and part of a Lease's name (a DNS subdomain): at most 63 lower-case
// alphanumerics, '-' or '.', starting and ending with an alphanumeric.
const SHARD_NAME = /^[a-z0-9]([-a-z0-9.]{0,61}[a-z0-9])?$/;

/**
 * Checks a ring or member name (see SHARD_NAME); returns it, or throws an error naming `what`.
 */
export function checkShardName(what: string, name: string): string {
  if (!SHARD_NAME.test(name)) {
    throw new Error(
      `sharding: ${what} "${name}" must be at most 63 lower-case alphanumerics, '-' or '.', starting and ending with an alphanumeric (it is a label key's name, a label value and part of a Lease name)`,
    );
  }
  return name;
}

/**
 * A member name from a host name: lower case, characters a label value refuses replaced by `-`,
 * with `suffix` (a random one by default) so two processes on one host never share a name, at
 * most 63 characters.
 */
export function memberNameFrom(host: string, suffix: string): string {
  const base = host
    .toLowerCase()
    .replace(/[^a-z0-9-.]/g, "-")
    .replace(/^[^a-z0-9]+/, "");
  const tail = `-${suffix}`;
  const head = base.slice(0, 63 - tail.length).replace(/[^a-z0-9]+$/, "");
  return head === "" ? suffix : `${head}${tail}`;
}

/** The label names of one ring. */
export interface ShardLabels {
  readonly ring: string;
  /** `shard.capstan.dev/<ring>`: the member an object is assigned to. */
  readonly shard: string;
  /** `drain.shard.capstan.dev/<ring>`: the object is being handed over. */
  readonly drain: string;
}

/** The label names of `ring` (checked with {@link checkShardName}). */
export function shardLabels(ring: string): ShardLabels {
  checkShardName("ring", ring);
  return { ring, shard: `${SHARD_LABEL_PREFIX}${ring}`, drain: `${DRAIN_LABEL_PREFIX}${ring}` };
}

/** The member `obj` is assigned to (`undefined` when unassigned). */
export function assignedMember(labels: ShardLabels, obj: KubeObject): string | undefined {
  const value = obj.metadata?.labels?.[labels.shard];
  return value === undefined || value === "" ? undefined : value;
}

/** Whether `obj` carries the drain label: its member must let go of it. */
export function isDraining(labels: ShardLabels, obj: KubeObject): boolean {
  return obj.metadata?.labels?.[labels.drain] !== undefined;
}

/** The label selector of a member's informers: `shard.capstan.dev/<ring>=<member>`. */
export function memberSelector(labels: ShardLabels, member: string): string {
  return `${labels.shard}=${member}`;
}

/** `selector` and `extra` together (a label selector's requirements are joined by commas). */
export function andSelectors(selector: string | undefined, extra: string): string {
  return selector === undefined || selector === "" ? extra : `${selector},${extra}`;
}
