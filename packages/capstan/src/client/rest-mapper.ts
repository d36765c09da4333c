/**
 * REST mapping: from apiVersion + kind to the `ResourceKind` (plural, scope) the client needs, for kinds the
 * caller has no definition of (e.g. an owner reference's kind, a manifest applied as plain YAML).
 *
 * Guarantees: one discovery request per group-version while it stays cached; a kind missing from the cache
 * triggers one refresh of its group-version (a CRD may have been installed since), so a new kind is found
 * without restarting; concurrent lookups of one group-version share a single request.
 */

import type { Discovery } from "./discovery.ts";
import { isInChain } from "./error-chain.ts";
import { isNotFound } from "./errors.ts";
import type { ResourceKind } from "./types.ts";

/** The server does not serve the kind asked for (apimachinery's `NoKindMatchError`): a CRD not installed, a wrong version. */
export class NoKindMatchError extends Error {
  override readonly name = "NoKindMatchError";
  readonly apiVersion: string;
  readonly kind: string;

  constructor(apiVersion: string, kind: string) {
    super(`the server does not serve kind ${kind} in ${apiVersion}`);
    this.apiVersion = apiVersion;
    this.kind = kind;
  }
}

/** Whether `err` (or an error it wraps) is a {@link NoKindMatchError} (apimachinery's `meta.IsNoMatchError`). */
export function isNoKindMatch(err: unknown): boolean {
  return isInChain(err, NoKindMatchError, "NoKindMatchError");
}

/** Maps apiVersion/kind to resource kinds through discovery. */
export class RestMapper {
  readonly #discovery: Discovery;
  readonly #cache = new Map<string, Promise<Map<string, ResourceKind>>>();

  constructor(discovery: Discovery) {
    this.#discovery = discovery;
  }

  /** The kind for `apiVersion` (`v1`, `apps/v1`) and `kind`; throws a clear error when the server does not serve it. */
  async kindFor(apiVersion: string, kind: string, signal?: AbortSignal): Promise<ResourceKind> {
    let kinds = await this.#load(apiVersion, false, signal);
    let found = kinds.get(kind);
    if (!found) {
      kinds = await this.#load(apiVersion, true, signal);
      found = kinds.get(kind);
    }
    if (!found) throw new NoKindMatchError(apiVersion, kind);
    return found;
  }

  /** Forgets everything (next lookups re-read discovery). */
  reset(): void {
    this.#cache.clear();
  }

  #load(apiVersion: string, refresh: boolean, signal?: AbortSignal): Promise<Map<string, ResourceKind>> {
    const cached = this.#cache.get(apiVersion);
    if (cached && !refresh) return cached;
    const slash = apiVersion.indexOf("/");
    const group = slash === -1 ? "" : apiVersion.slice(0, slash);
    const version = slash === -1 ? apiVersion : apiVersion.slice(slash + 1);
    const loading = this.#discovery.resources(apiVersion, signal).then(
      (resources) => {
        const map = new Map<string, ResourceKind>();
        for (const r of resources) {
          // Several resources can share a kind (e.g. a legacy alias); the first listed is the canonical one.
          if (!map.has(r.kind))
            map.set(r.kind, { group, version, kind: r.kind, plural: r.name, namespaced: r.namespaced });
        }
        return map;
      },
      (err: unknown) => {
        this.#cache.delete(apiVersion); // do not cache failures
        // An unknown group-version is "no such kind", reported by kindFor; anything else is a real failure.
        if (isNotFound(err)) return new Map<string, ResourceKind>();
        throw err;
      },
    );
    this.#cache.set(apiVersion, loading);
    return loading;
  }
}
