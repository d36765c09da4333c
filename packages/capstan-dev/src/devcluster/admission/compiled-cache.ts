/**
 * Compiled forms of stored configurations (webhook configurations, policies), rebuilt only when an
 * object's resourceVersion changes: a write pays for CEL compilation once per configuration version,
 * not once per request.
 */
export class CompiledByRevision<T> {
  private readonly entries = new Map<string, { rev: number; value: T }>();

  /** The value for `key` at `rev`, built by `build` when none is kept for that revision. */
  get(key: string, rev: number, build: () => T): T {
    const kept = this.entries.get(key);
    if (kept !== undefined && kept.rev === rev) return kept.value;
    const value = build();
    this.entries.set(key, { rev, value });
    return value;
  }

  /** Forgets the entries of objects that are gone (`live`: the keys listed now). */
  retain(live: ReadonlySet<string>): void {
    if (this.entries.size <= live.size) return;
    for (const key of this.entries.keys()) if (!live.has(key)) this.entries.delete(key);
  }
}
