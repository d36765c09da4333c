/**
 * The fluent way to build a {@link Controller}, after controller-runtime's builder. Each method
 * says which primitive it stands for:
 *
 * - `for(kind)`: a shared informer on the reconciled kind; each of its events enqueues the
 *   object's own key.
 * - `owns(kind)`: a shared informer on a child kind; each event enqueues the key of the child's
 *   controller owner (the ownerReference with `controller: true` whose group and kind are the
 *   `for` kind's). Children without such an owner are ignored.
 * - `watches(kind, map)`: a shared informer on any kind; each event enqueues the keys `map`
 *   returns (for updates: of the old and the new object).
 * - `withEventFilter(...)`: predicates applied to every watch; per-watch predicates go in the
 *   options of `for` / `owns` / `watches`.
 * - `reconcile(fn)`: builds the controller and registers it with the manager.
 *
 * Informers come from the manager's SharedInformerFactory: two controllers watching the same
 * kind in the same scope share one watch and one cache.
 */
import type { Logger } from "pino";
import type { KubeClient } from "../client/resource-client.ts";
import type { KubeObject, ResourceKind } from "../client/types.ts";
import type { Clock } from "./clock.ts";
import { Controller, controllerOwnerKeys, type ReconcileFunction, type WatchSource } from "./controller.ts";
import type { EventRecorder } from "./event-recorder.ts";
import type { RuntimeMetrics } from "./metrics.ts";
import type { Predicate } from "./predicates.ts";
import type { RateLimiter } from "./rate-limiter.ts";
import type { ObjectRef } from "./reconcile.ts";
import type { HandOverSource } from "./shard-handover.ts";
import type { Sharding } from "./sharding.ts";
import type { SharedInformerFactory } from "./shared-informers.ts";
import type { ThrottlePolicy } from "./throttling.ts";

/** Scope and filters of one watch. */
export interface WatchOptions<T extends KubeObject = KubeObject> {
  /** Watch one namespace; default: the manager's namespace, else all namespaces. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  predicates?: Predicate<T>[];
  /**
   * Cache only metadata (PartialObjectMetadata): for `owns`/`watches` of kinds whose spec and
   * status the reconcile never reads, e.g. owned Secrets or Pods. `ctx.cache(kind)` then holds
   * objects with `metadata` only. A kind watched both ways gets two informers.
   */
  metadataOnly?: boolean;
}

/** Options of the controller as a whole. */
export interface BuilderOptions {
  /** Workers reconciling different keys in parallel (default: the manager's, else 16). */
  maxConcurrentReconciles?: number;
  /** Per-key retry delays (default: client-go's 5 ms .. 1000 s per key, 10 qps / 100 burst overall). */
  rateLimiter?: RateLimiter<string>;
  /** A reconcile's request answered 429 with Retry-After: requeue the key (default) or wait (ControllerOptions.throttled). */
  throttled?: ThrottlePolicy;
}

/** What the builder needs from its manager (tests can provide it directly). */
export interface BuilderEnvironment {
  informers: SharedInformerFactory;
  client?: KubeClient;
  logger?: Logger;
  metrics?: RuntimeMetrics;
  /** The event recorder for a controller name. */
  recorderFor?(controller: string): EventRecorder;
  /** Namespace every watch defaults to (all namespaces when absent). */
  namespace?: string;
  /** `maxConcurrentReconciles` of controllers that do not set their own (16 when absent). */
  maxConcurrentReconciles?: number;
  /** The clock of the controllers' delays and `ctx.now()` (default the system's). */
  clock?: Clock;
  /** Set on a sharded manager: `for` and `owns` watches select the member's share (sharding.ts). */
  sharding?: Sharding;
  /** Passed to each controller as `onSettled` (the manager's idleness). */
  settled?(): void;
  /** Called with the built controller (the manager starts it when it runs). */
  register(controller: Controller<KubeObject>): void;
}

interface PendingWatch {
  kind: ResourceKind<KubeObject>;
  options: WatchOptions<KubeObject>;
  map?: (obj: KubeObject) => readonly (ObjectRef | string)[];
  owns: boolean;
}

/** Builds one controller; see the module documentation. */
export class ControllerBuilder<T extends KubeObject = KubeObject> {
  private primaryKind: ResourceKind<T> | undefined;
  private primaryOptions: WatchOptions<T> = {};
  private readonly watchList: PendingWatch[] = [];
  private readonly filters: Predicate<KubeObject>[] = [];
  private controllerName: string | undefined;
  private options: BuilderOptions = {};
  private built = false;

  constructor(private readonly env: BuilderEnvironment) {}

  /** The reconciled kind. Call once. */
  for<K extends KubeObject>(kind: ResourceKind<K>, options: WatchOptions<K> = {}): ControllerBuilder<K> {
    if (this.primaryKind !== undefined) throw new Error("for() was already called: a controller reconciles one kind");
    const self = this as unknown as ControllerBuilder<K>;
    self.primaryKind = kind;
    self.primaryOptions = options;
    return self;
  }

  /** A child kind whose objects are controlled (ownerReference `controller: true`) by the `for` kind. */
  owns<C extends KubeObject>(kind: ResourceKind<C>, options: WatchOptions<C> = {}): this {
    this.watchList.push({
      kind: kind as ResourceKind<KubeObject>,
      options: options as WatchOptions<KubeObject>,
      owns: true,
    });
    return this;
  }

  /** Any kind, mapped to the keys (`{ namespace, name }` or `"ns/name"`) of objects to reconcile. */
  watches<W extends KubeObject>(
    kind: ResourceKind<W>,
    map: (obj: W) => readonly (ObjectRef | string)[],
    options: WatchOptions<W> = {},
  ): this {
    this.watchList.push({
      kind: kind as ResourceKind<KubeObject>,
      options: options as WatchOptions<KubeObject>,
      map: map as (obj: KubeObject) => readonly (ObjectRef | string)[],
      owns: false,
    });
    return this;
  }

  /** Predicates applied to the events of every watch of this controller. */
  withEventFilter(...predicates: Predicate<KubeObject>[]): this {
    this.filters.push(...predicates);
    return this;
  }

  /** The controller's name (default: the `for` kind in lower case, as controller-runtime names it). */
  named(name: string): this {
    this.controllerName = name;
    return this;
  }

  /** Concurrency and retry tuning. */
  withOptions(options: BuilderOptions): this {
    this.options = { ...this.options, ...options };
    return this;
  }

  /** Builds the controller with `fn` as its reconcile function and registers it with the manager. */
  reconcile(fn: ReconcileFunction<T>): Controller<T> {
    if (this.built) throw new Error("reconcile() was already called on this builder");
    const kind = this.primaryKind;
    if (kind === undefined)
      throw new Error("call for(kind) before reconcile(): a controller needs the kind it reconciles");
    this.built = true;
    const name = this.controllerName ?? kind.kind.toLowerCase();
    const { env } = this;
    const { sharding } = env;
    const primaryScope = this.scope(kind, this.primaryOptions);
    const primary = env.informers.informerFor(kind, sharding?.scope(primaryScope) ?? primaryScope);
    const sources: WatchSource<KubeObject>[] = this.watchList.map((w) => {
      const scope = this.scope(w.kind, w.options);
      // Children of a sharded kind carry their owner's member label: select on it too.
      const informer = env.informers.informerFor(w.kind, w.owns ? (sharding?.scope(scope) ?? scope) : scope);
      const map = w.owns
        ? (obj: KubeObject) => controllerOwnerKeys(kind, obj)
        : (obj: KubeObject) => (w.map?.(obj) ?? []).map(toKey);
      return { source: informer, kind: w.kind, map, predicates: [...this.filters, ...(w.options.predicates ?? [])] };
    });
    const controller = new Controller<T>({
      name,
      kind,
      primary,
      primaryPredicates: [...(this.filters as Predicate<T>[]), ...(this.primaryOptions.predicates ?? [])],
      sources,
      reconcile: fn,
      maxConcurrentReconciles: this.options.maxConcurrentReconciles ?? env.maxConcurrentReconciles,
      rateLimiter: this.options.rateLimiter,
      throttled: this.options.throttled,
      ...(env.clock === undefined ? {} : { clock: env.clock }),
      ...(env.settled === undefined ? {} : { onSettled: () => env.settled?.() }),
      client: env.client,
      logger: env.logger,
      metrics: env.metrics,
      recorder: env.recorderFor?.(name),
      ...(sharding === undefined ? {} : { shard: sharding.controllerShard }),
    });
    sharding?.track(
      kind,
      primaryScope.namespace,
      this.watchList.filter((w) => w.owns).map((w) => w.kind),
      primary as unknown as HandOverSource,
      (key) => controller.release(key),
    );
    env.register(controller as unknown as Controller<KubeObject>);
    return controller;
  }

  private scope(kind: ResourceKind, options: WatchOptions<never>) {
    const namespace = kind.namespaced ? (options.namespace ?? this.env.namespace) : undefined;
    return {
      namespace,
      labelSelector: options.labelSelector,
      fieldSelector: options.fieldSelector,
      metadataOnly: options.metadataOnly ?? false,
    };
  }
}

function toKey(ref: ObjectRef | string): string {
  if (typeof ref === "string") return ref;
  return ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name;
}
