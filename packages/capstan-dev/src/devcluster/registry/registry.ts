/**
 * The registry of served resources: what the server answers for, by group/version/plural. It is
 * dynamic: the CRD lifecycle controller adds a resource when a CRD becomes Established and removes it
 * when the CRD goes. Discovery, request routing and the in-process API all read it at request time,
 * so a change is visible to the very next request.
 */
import { groupVersion, type ServedResource } from "./served-resource.ts";

export type RegistryListener = (change: { type: "added" | "removed"; served: ServedResource }) => void;

export class ResourceRegistry {
  /** group/version -> plural -> descriptor. Insertion order is discovery order. */
  private readonly byGroupVersion = new Map<string, Map<string, ServedResource>>();
  private readonly listeners = new Set<RegistryListener>();

  /** Serves a resource, replacing any descriptor with the same group, version and plural. */
  add(served: ServedResource): void {
    const gv = groupVersion(served);
    let plurals = this.byGroupVersion.get(gv);
    if (!plurals) {
      plurals = new Map();
      this.byGroupVersion.set(gv, plurals);
    }
    plurals.set(served.plural, served);
    for (const listener of this.listeners) listener({ type: "added", served });
  }

  /** Stops serving `plural` in `group` (every version, or only `version` when given). Returns what it removed. */
  remove(group: string, plural: string, version?: string): ServedResource[] {
    const removed: ServedResource[] = [];
    for (const [gv, plurals] of this.byGroupVersion) {
      const served = plurals.get(plural);
      if (!served || served.group !== group || (version !== undefined && served.version !== version)) continue;
      plurals.delete(plural);
      if (plurals.size === 0) this.byGroupVersion.delete(gv);
      removed.push(served);
    }
    for (const served of removed) for (const listener of this.listeners) listener({ type: "removed", served });
    return removed;
  }

  /** The descriptor serving `group/version/plural`, if any. */
  get(group: string, version: string, plural: string): ServedResource | undefined {
    return this.byGroupVersion.get(group === "" ? version : `${group}/${version}`)?.get(plural);
  }

  /** Every served version of a group/plural (CRDs can serve several). */
  versionsOf(group: string, plural: string): ServedResource[] {
    return this.all().filter((s) => s.group === group && s.plural === plural);
  }

  /** The first served resource of a group and kind (for owner references, events...). */
  byKind(group: string, kind: string): ServedResource | undefined {
    return this.all().find((s) => s.group === group && s.kind === kind);
  }

  /** Every served resource, in registration order per group/version. */
  all(): ServedResource[] {
    const out: ServedResource[] = [];
    for (const plurals of this.byGroupVersion.values()) out.push(...plurals.values());
    return out;
  }

  /** Served resources of one group/version. */
  inGroupVersion(group: string, version: string): ServedResource[] {
    return [...(this.byGroupVersion.get(group === "" ? version : `${group}/${version}`)?.values() ?? [])];
  }

  /** Called after every add and remove. Returns the unsubscribe function. */
  subscribe(listener: RegistryListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
