/**
 * `op.controller(kind)`: the runtime builder's fluent API recorded while the operator is being
 * declared (it has no client yet) and replayed on the manager when the operator starts. Each step
 * stands for the runtime builder's method of the same name (controller-builder.ts).
 */
import type { KubeObject, ResourceKind } from "../client/types.ts";
import type { ReconcileFunction } from "../runtime/controller.ts";
import type { BuilderOptions, WatchOptions } from "../runtime/controller-builder.ts";
import type { Manager } from "../runtime/manager.ts";
import type { Predicate } from "../runtime/predicates.ts";
import type { ObjectRef } from "../runtime/reconcile.ts";

/**
 * Options of {@link DeferredControllerBuilder.owns}: the watch's, and whether the reconciler writes
 * the children with `ctx.apply`, which is all the RBAC derived for an owned kind covers.
 */
export interface OwnsOptions<C extends KubeObject = KubeObject> extends WatchOptions<C> {
  /**
   * `false`: the reconciler never calls `ctx.apply` on this kind (it creates, updates or deletes
   * children through `ctx.client`, and declares those verbs in `operator({ permissions })`), so
   * the RBAC derived for `owns` is the watch only (list, watch), not apply's create and patch.
   * Default `true`. An apply after all is then refused by the API server with a 403.
   */
  apply?: boolean;
}

type Recorded =
  | { op: "owns"; kind: ResourceKind; options?: WatchOptions<KubeObject>; apply: boolean }
  | {
      op: "watches";
      kind: ResourceKind;
      map: (obj: KubeObject) => readonly (ObjectRef | string)[];
      options?: WatchOptions<KubeObject>;
    }
  | { op: "withEventFilter"; predicates: Predicate<KubeObject>[] }
  | { op: "named"; name: string }
  | { op: "withOptions"; options: BuilderOptions };

/**
 * The runtime builder's fluent API (`owns`, `watches`, `withEventFilter`, `named`, `withOptions`,
 * `reconcile`), recorded and replayed on the manager when the operator starts.
 */
export class DeferredControllerBuilder<T extends KubeObject = KubeObject> {
  private readonly steps: Recorded[] = [];
  private fn: ReconcileFunction<T> | undefined;

  constructor(
    readonly kind: ResourceKind<T>,
    private readonly options: WatchOptions<T> | undefined,
  ) {}

  /**
   * See the runtime's `ControllerBuilder.owns`. Derived RBAC: list and watch (the informer), and
   * create and patch (what `ctx.apply` sends) unless `options.apply` is `false`.
   */
  owns<C extends KubeObject>(kind: ResourceKind<C>, options?: OwnsOptions<C>): this {
    const { apply = true, ...watch } = options ?? {};
    this.steps.push({
      op: "owns",
      kind: kind as ResourceKind,
      options: options === undefined ? undefined : (watch as WatchOptions<KubeObject>),
      apply,
    });
    return this;
  }

  /** See the runtime's `ControllerBuilder.watches`. */
  watches<W extends KubeObject>(
    kind: ResourceKind<W>,
    map: (obj: W) => readonly (ObjectRef | string)[],
    options?: WatchOptions<W>,
  ): this {
    this.steps.push({
      op: "watches",
      kind: kind as ResourceKind,
      map: map as (obj: KubeObject) => readonly (ObjectRef | string)[],
      options: options as WatchOptions<KubeObject>,
    });
    return this;
  }

  /** See the runtime's `ControllerBuilder.withEventFilter`. */
  withEventFilter(...predicates: Predicate<KubeObject>[]): this {
    this.steps.push({ op: "withEventFilter", predicates });
    return this;
  }

  /** See the runtime's `ControllerBuilder.named`. */
  named(name: string): this {
    this.steps.push({ op: "named", name });
    return this;
  }

  /** See the runtime's `ControllerBuilder.withOptions`. */
  withOptions(options: BuilderOptions): this {
    this.steps.push({ op: "withOptions", options });
    return this;
  }

  /** The reconcile function; the controller is built when the operator starts. */
  reconcile(fn: ReconcileFunction<T>): void {
    if (this.fn !== undefined) throw new Error("reconcile() was already called on this builder");
    this.fn = fn;
  }

  /** @internal Kinds this controller watches, split by role; `applies`: the owned kinds it writes with `ctx.apply`. */
  kinds(): { owns: ResourceKind[]; watches: ResourceKind[]; applies: ResourceKind[] } {
    const owns: ResourceKind[] = [];
    const applies: ResourceKind[] = [];
    const watches: ResourceKind[] = [this.kind as ResourceKind];
    for (const s of this.steps) {
      if (s.op === "owns") owns.push(s.kind);
      if (s.op === "owns" && s.apply) applies.push(s.kind);
      if (s.op === "watches") watches.push(s.kind);
    }
    return { owns, watches, applies };
  }

  /** @internal Builds the controller on `mgr`. */
  replay(mgr: Manager): void {
    if (this.fn === undefined) {
      throw new Error(`controller for ${this.kind.kind} was declared without reconcile(fn)`);
    }
    let b = mgr.controller(this.kind, this.options);
    for (const s of this.steps) {
      if (s.op === "owns") b = b.owns(s.kind, s.options);
      else if (s.op === "watches") b = b.watches(s.kind, s.map, s.options);
      else if (s.op === "withEventFilter") b = b.withEventFilter(...s.predicates);
      else if (s.op === "named") b = b.named(s.name);
      else b = b.withOptions(s.options);
    }
    b.reconcile(this.fn);
  }
}
