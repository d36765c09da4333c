/**
 * One informer per (kind, namespace, selectors, metadata-only): two controllers watching the same
 * kind the same way share one watch and one cache.
 *
 * ## Expected flow
 * Build the factory with a way to make ListerWatchers (the client's `resource(kind, ns)`), ask it
 * for informers while wiring controllers, `start(signal)`, then `waitForCacheSync(signal)`.
 * Informers asked for after `start` are started at once.
 *
 * ## Guarantees
 * - The same request (same kind identity, namespace, selectors and metadata-only flag) returns
 *   the same {@link Informer} instance, whatever the order of the fields.
 * - `start` resolves once every informer it started has stopped (after the signal aborts).
 *
 * ## Caveats
 * - Options that are not part of the identity (resync period, indexers, store options) are taken
 *   from the first request; later requests get the existing informer as it is. Add indexes with
 *   `informer.addIndexer`, which works on an existing informer.
 */
import type { KubeObject, ListerWatcher, ResourceKind } from "../client/types.ts";
import type { Duration } from "./duration.ts";
import { Informer, type InformerOptions } from "./informer.ts";
import type { RuntimeLogger } from "./log.ts";

/** What identifies a shared informer besides its kind. */
export interface InformerScope {
  /** Namespace to watch; omitted (or `""`) for all namespaces / cluster-scoped kinds. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Watch `PartialObjectMetadata` only (the client's metadata view). */
  metadataOnly?: boolean;
}

/** A shared informer with what it was asked for (health checks name it by these). */
export interface SharedInformerEntry {
  kind: ResourceKind;
  scope: InformerScope;
  informer: Informer<KubeObject>;
}

/** Makes the ListerWatcher for one (kind, scope); the client provides it. */
export type ListerWatcherFactory = <T extends KubeObject>(
  kind: ResourceKind<T>,
  scope: { namespace?: string; metadataOnly: boolean },
) => ListerWatcher<T>;

/**
 * The part of the client a factory needs: full objects, and the metadata-only view
 * (`PartialObjectMetadata`, fetched with the `as=PartialObjectMetadata` Accept header). `KubeClient`
 * satisfies it.
 */
export interface ListerWatcherSource {
  resource<T extends KubeObject>(kind: ResourceKind<T>, namespace?: string): ListerWatcher<T>;
  metadata(kind: ResourceKind, namespace?: string): ListerWatcher<KubeObject>;
}

/**
 * ListerWatchers from a client: `client.resource(kind, ns)`, or `client.metadata(kind, ns)` in
 * metadata-only mode (the informer's objects then hold apiVersion, kind and metadata only).
 */
export function clientListerWatchers(client: ListerWatcherSource): ListerWatcherFactory {
  return <T extends KubeObject>(kind: ResourceKind<T>, scope: { namespace?: string; metadataOnly: boolean }) =>
    scope.metadataOnly
      ? (client.metadata(kind, scope.namespace) as unknown as ListerWatcher<T>)
      : client.resource(kind, scope.namespace);
}

/** Options of a {@link SharedInformerFactory}. */
export interface SharedInformerFactoryOptions {
  listerWatcherFor: ListerWatcherFactory;
  /** Default resync period of the informers it creates (off by default). */
  resyncPeriod?: Duration;
  logger?: RuntimeLogger;
  /** Extra options applied to every informer it creates (tests use it for short backoffs). */
  informerDefaults?: Partial<Omit<InformerOptions<KubeObject>, "listerWatcher">>;
}

/** Hands out shared informers; see the module documentation. */
export class SharedInformerFactory {
  private readonly informers = new Map<string, Informer<KubeObject>>();
  private readonly described: SharedInformerEntry[] = [];
  private readonly runs: Promise<void>[] = [];
  private signal: AbortSignal | undefined;

  constructor(private readonly options: SharedInformerFactoryOptions) {}

  /** The informer for `kind` in `scope`, created on first request. */
  informerFor<T extends KubeObject>(
    kind: ResourceKind<T>,
    scope: InformerScope = {},
    extra: Partial<Omit<InformerOptions<T>, "listerWatcher" | "labelSelector" | "fieldSelector">> = {},
  ): Informer<T> {
    const namespace = scope.namespace || undefined;
    const metadataOnly = scope.metadataOnly ?? false;
    const id = JSON.stringify([
      kind.group,
      kind.version,
      kind.kind,
      namespace ?? "",
      scope.labelSelector ?? "",
      scope.fieldSelector ?? "",
      metadataOnly,
    ]);
    const existing = this.informers.get(id);
    if (existing !== undefined) return existing as unknown as Informer<T>;
    const scopeText = namespace === undefined ? "all namespaces" : `namespace ${namespace}`;
    const informer = new Informer<T>({
      name: `${kind.kind}.${kind.group || "core"}/${kind.version} (${scopeText}${metadataOnly ? ", metadata" : ""})`,
      resyncPeriod: this.options.resyncPeriod,
      logger: this.options.logger,
      ...(this.options.informerDefaults as Partial<InformerOptions<T>>),
      ...extra,
      listerWatcher: this.options.listerWatcherFor(kind, { namespace, metadataOnly }),
      labelSelector: scope.labelSelector,
      fieldSelector: scope.fieldSelector,
    });
    this.informers.set(id, informer as unknown as Informer<KubeObject>);
    this.described.push({
      kind: kind as ResourceKind,
      scope: { ...scope, namespace, metadataOnly },
      informer: informer as unknown as Informer<KubeObject>,
    });
    if (this.signal !== undefined && !this.signal.aborted) this.runs.push(informer.run(this.signal));
    return informer;
  }

  /** Every informer handed out so far. */
  all(): Informer<KubeObject>[] {
    return [...this.informers.values()];
  }

  /** Every informer handed out so far, with the kind and scope it was created for. */
  entries(): readonly SharedInformerEntry[] {
    return this.described;
  }

  /** Runs every informer (and those requested later) until `signal` aborts; resolves when all stopped. */
  async start(signal: AbortSignal): Promise<void> {
    if (this.signal !== undefined) throw new Error("shared informer factory already started");
    this.signal = signal;
    for (const informer of this.informers.values()) this.runs.push(informer.run(signal));
    // Informers requested while we wait join `runs`; loop until no new one appeared.
    let seen = 0;
    while (seen < this.runs.length) {
      const batch = this.runs.slice(seen);
      seen = this.runs.length;
      await Promise.all(batch);
    }
  }

  /**
   * Resolves `true` when every informer handed out so far has synced, `false` if `signal` aborts
   * first. Call it after `start`: informers that are not running never sync.
   */
  async waitForCacheSync(signal?: AbortSignal): Promise<boolean> {
    const results = await Promise.all([...this.informers.values()].map((i) => i.waitForSync(signal)));
    return results.every(Boolean);
  }
}
